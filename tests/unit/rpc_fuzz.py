"""Hostile RPC input for the live fuzz test (test_rpc_live_fuzz.py): hypothesis strategies that
generate and mutate requests, and a client that sends them and classifies what comes back.

A script is the list of `Msg`s one connection sends, in order, each waiting for its answer. A
`Msg` is framed request fields (packed at send time: the values "$job"/"$token" become the job the
connection registered last, so hostile values reach a live job's planner), a framed body, or raw
bytes. Raw bytes, and frames the controller cannot read past (length 0 or over 1 MiB) are
terminal: the client sends them, half-closes, and reads to the end.

Outcomes (`Tally` keys): "ok", "error" (a well-formed reply), "closed" (the controller closed the
connection after a terminal message, with or without an error reply first), "refused" (the
connection limit's reply), and the failures "timeout" (no answer), "hangup" (closed without
answering a readable frame), "garbled" (a reply that is not a version-1 reply map) and
"internal" (the controller's own "internal error": a request it failed to handle).
"""
import collections
import dataclasses
import socket
import struct

import msgpack
from hypothesis import strategies as st

from sdnmpi.controller import rpc_schema as schema

from rpc_helpers import recv_all  # pylint: disable=wrong-import-order

OPS = ("hello", "register", "locate", "plan_allreduce", "plan_bcast", "release", "traffic", "phase")
FAILURES = ("timeout", "hangup", "garbled", "internal")
HOSTILE_STRINGS = ("10.0.0.1\x00", "10.0.0.256", "0x0a000001", " 10.0.0.1", "10.0.0.1 ", "1e3", "::1",
                   "10.0.0", "10.0.0.1/32", "255.255.255.255", "0.0.0.0", "127.0.0.1", "%s", "%d%n",
                   "\u202e", "$job", "$token", "a" * 4096, "a" * 4097)


@dataclasses.dataclass
class Msg:
    kind: str
    fields: dict = None      # a request map, packed at send time
    body: bytes = None       # a body, framed at send time
    raw: bytes = None        # bytes sent as they are (terminal)

    def wire(self, job):
        """The bytes to send and whether the controller may close after them."""
        if self.raw is not None:
            return self.raw, True
        body = self.body if self.body is not None else msgpack.packb(_substitute(self.fields, job),
                                                                     use_bin_type=True)
        return schema.frame(body), not 0 < len(body) <= schema.MAX_FRAME


def _substitute(fields, job):
    """``fields`` with the top-level values "$job" and "$token" replaced by ``job`` = (id, token)."""
    if job is None or not isinstance(fields, dict):
        return fields
    names = {"$job": job[0], "$token": job[1]}
    return {k: names[v] if isinstance(v, str) and v in names else v for k, v in fields.items()}


class Tally(collections.Counter):
    def failures(self):
        return {k: self[k] for k in FAILURES if self[k]}


# -- the client -------------------------------------------------------------------------------
def read_reply(sock):
    """The next reply map; None at the end of the stream; "garbled" if it is no reply."""
    header = recv_all(sock, 4)
    if header is None:
        return None
    body = recv_all(sock, struct.unpack("!I", header)[0])
    if body is None:
        return "garbled"
    try:
        reply = msgpack.unpackb(body)
    except ValueError:
        return "garbled"
    ok = (isinstance(reply, dict) and reply.get("v") == 1 and isinstance(reply.get("id"), int)
          and reply.get("status") in ("ok", "error") and isinstance(reply.get("error"), str)
          and (reply["status"] == "ok") == (reply["error"] == "") and isinstance(reply.get("timings"), dict))
    return reply if ok else "garbled"


def _classify(reply, tally):
    """Counts one reply; False if the connection is over (a refusal)."""
    if reply == "garbled":
        tally["garbled"] += 1
    elif reply["status"] == "ok":
        tally["ok"] += 1
    elif reply["error"] == "too many connections":
        tally["refused"] += 1
        return False
    elif reply["error"] == "internal error":
        tally["internal"] += 1
    else:
        tally["error"] += 1
    return True


def run_script(sock, script, tally):
    """Sends ``script`` on the connected ``sock``, waiting for each answer; counts every message
    sent in tally["messages"] and its outcome. Closes the socket."""
    job = None
    with sock:
        for msg in script:
            data, terminal = msg.wire(job)
            tally["messages"] += 1
            tally["kind:" + msg.kind] += 1
            try:
                sock.sendall(data)
                if terminal:
                    sock.shutdown(socket.SHUT_WR)
                    while True:
                        reply = read_reply(sock)
                        if reply is None:
                            tally["closed"] += 1
                            return
                        if not _classify(reply, tally):
                            return
                reply = read_reply(sock)
            except socket.timeout:
                tally["timeout"] += 1
                return
            except OSError:   # reset, broken pipe, not connected: the controller closed first
                tally["closed" if terminal else "hangup"] += 1  # unread bytes make the close a reset
                return
            if reply is None:
                tally["hangup"] += 1
                return
            if not _classify(reply, tally):
                return
            if reply != "garbled" and reply["status"] == "ok" and "token" in reply:
                job = (reply["job"], reply["token"])


# -- strategies -------------------------------------------------------------------------------
ATOMS = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 63, 2 ** 64 - 1), st.floats(),
                  st.text(max_size=16), st.binary(max_size=16))
ANYTHING = st.recursive(ATOMS, lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=6), kids,
                                                                                          max_size=4),
                        max_leaves=12)


def _request(op, **fields):
    return dict(v=1, id=7, op=op, **fields)


def _mutate(body, edits):
    out = bytearray(body)
    for where, byte, how in edits:
        i = where % (len(out) + 1)
        if how == "flip" and out:
            out[i % len(out)] ^= byte or 1
        elif how == "insert":
            out[i:i] = bytes([byte])
        elif how == "delete" and out:
            del out[i % len(out)]
        elif how == "cut":
            del out[i:]
    return bytes(out)


def messages(ips, victim_job):
    """(non-terminal, terminal) message strategies for a fabric with hosts ``ips``; ``victim_job``
    is the id of a job the test holds (its token is never given to the fuzzer)."""
    ip = st.one_of(st.sampled_from(ips), st.ip_addresses(v=4).map(str), st.sampled_from(HOSTILE_STRINGS),
                   st.text(max_size=20))
    integer = st.one_of(st.integers(-2 ** 63, 2 ** 64 - 1),
                        st.sampled_from([0, -1, 1, 2 ** 24 - 1, 2 ** 24, 2 ** 63 - 1, 2 ** 64 - 1, victim_job]))
    value = st.one_of(integer, ANYTHING)
    job = st.one_of(st.just("$job"), integer, ANYTHING)
    token = st.one_of(st.just("$token"), st.none(), st.text(max_size=40), st.binary(max_size=8),
                      st.text("0123456789abcdef", min_size=32, max_size=32), st.text(min_size=129, max_size=140), integer)
    pair = st.one_of(st.tuples(ip, ip, st.one_of(st.integers(-3, 70000), value)).map(list), value)
    steps = st.one_of(st.lists(st.lists(pair, max_size=6), max_size=5), value,
                      st.integers(63, 66).map(lambda n: [[[ips[0], ips[-1], 1]]] * n),
                      st.integers(1, 3).map(lambda n: [[[ips[0], ips[-1], 1]] * 65537] * n))
    hosts = st.one_of(st.lists(ip, min_size=1, max_size=10), st.lists(st.sampled_from(ips), min_size=1, max_size=10),
                      value)
    common = {"v": st.one_of(st.just(1), value), "id": integer}
    job_fields = {"job": job, "token": token}

    def op(name, required, optional=None):
        return st.fixed_dictionaries(dict(common, op=st.just(name), **required), optional=optional or {}) \
            .map(lambda d, n=name: Msg("op:" + n, fields=d))

    hostile = st.one_of(
        op("hello", {}, {"extra": value}),
        op("register", {"hosts": hosts}, {"lease_s": st.one_of(st.floats(), value)}),
        op("locate", dict(job_fields, hosts=hosts)),
        op("plan_allreduce", dict(job_fields, comm=st.one_of(st.integers(0, 3), integer, value), steps=steps),
           {"planner": st.one_of(st.sampled_from(schema.PLANNERS), value)}),
        op("plan_bcast", dict(job_fields, comm=st.one_of(st.integers(0, 3), integer), root=ip, members=hosts)),
        op("release", job_fields),
        op("traffic", dict(job_fields, phase=st.one_of(st.integers(-1, 66), value),
                           pairs=st.one_of(st.lists(pair, max_size=8), value)),
           {"add": st.one_of(st.booleans(), value), "planner": st.one_of(st.sampled_from(["sdn-adaptive", "sdn-greedy"]), value)}),
        op("phase", dict(job_fields, rank=st.one_of(st.integers(-1, 12), integer, value),
                         phase=st.one_of(st.integers(-1, 66), value))),
    )
    valid = [_request("hello"), _request("register", hosts=ips[:4]), _request("locate", job="$job", token="$token",
                                                                                hosts=ips),
             _request("plan_allreduce", job="$job", token="$token", comm=0,
                      steps=[[[ips[0], ips[-1], 1], [ips[-1], ips[0], 1]]]),
             _request("plan_bcast", job="$job", token="$token", comm=1, root=ips[0], members=ips),
             _request("traffic", job="$job", token="$token", phase=1, pairs=[[ips[0], ips[-1], 100]]),
             _request("phase", job="$job", token="$token", rank=0, phase=1),
             _request("release", job=victim_job, token="0" * 32)]
    edits = st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255),
                               st.sampled_from(["flip", "insert", "delete", "cut"])), min_size=1, max_size=6)
    mutated = st.tuples(st.sampled_from(valid), edits).map(
        lambda v: Msg("mutated", body=_mutate(msgpack.packb(_substitute(v[0], (victim_job, "f" * 32))), v[1])))
    # Heavy messages (near 1 MiB, or tens of thousands of elements) are one draw in 16 of a branch.
    heavy = st.one_of(
        st.integers(2 ** 16 + 1, 70000).map(lambda n: Msg("huge_array", fields=_request("register", hosts=[ips[0]] * n))),
        st.integers(1, 3).map(lambda n: Msg("huge_array", fields=_request(
            "plan_allreduce", job="$job", token="$token", comm=0, steps=[[[ips[0], ips[-1], 1]] * 40000] * n))),
        st.integers(2 ** 20 - 64, 2 ** 20).map(lambda n: Msg("big_frame", body=b"\xc1" * n)),
        st.integers(2 ** 19, 2 ** 20).map(lambda n: Msg("deep_nesting", body=b"\x91" * n + b"\xc0")),
    )
    nonterminal = st.one_of(
        hostile,
        mutated,
        st.binary(min_size=1, max_size=200).map(lambda b: Msg("random_body", body=b)),
        ANYTHING.map(lambda v: Msg("wrong_type", body=msgpack.packb(v, use_bin_type=True))),
        st.fixed_dictionaries({"v": value, "id": value, "op": st.one_of(st.sampled_from(OPS), value)})
        .map(lambda d: Msg("wrong_type", fields=d)),
        st.text(max_size=30).filter(lambda s: s not in OPS).map(lambda s: Msg("unknown_op", fields=_request(s))),
        st.integers(2, 5000).map(lambda n: Msg("deep_nesting", body=b"\x91" * n + b"\xc0")),
        st.integers(2, 5000).map(lambda n: Msg("deep_nesting", body=b"\x81\xa1k" * n + b"\xc0")),
        st.integers(2 ** 16 + 1, 2 ** 32 - 1).map(lambda n: Msg("huge_array", body=b"\xdd" + struct.pack("!I", n) + b"\xc0")),
        st.integers(33, 1000).map(lambda n: Msg("huge_array", fields={"k%d" % i: i for i in range(n)})),
        st.integers(0, 15).flatmap(lambda i: heavy if i == 7 else hostile),
    )
    terminal = st.one_of(
        st.binary(min_size=1, max_size=300).map(lambda b: Msg("random_bytes", raw=b)),
        st.tuples(st.sampled_from(valid), st.integers(0, 400)).map(
            lambda v: Msg("truncated", raw=schema.frame(msgpack.packb(_substitute(v[0], (victim_job, "f" * 32))))[:v[1]])),
        st.integers(2 ** 20 + 1, 2 ** 32 - 1).map(lambda n: Msg("oversized", raw=struct.pack("!I", n))),
        st.just(Msg("empty", raw=struct.pack("!I", 0))),
        st.integers(0, 15).flatmap(lambda i: st.integers(1, 4096).map(
            lambda n: Msg("oversized", body=b"\xc0" * (2 ** 20 + n))) if i == 7 else st.just(Msg("empty", raw=b"\0\0\0\0"))),
    )
    return nonterminal, terminal


def scripts(ips, victim_job, max_messages=8):
    """A connection's messages: sometimes first a valid register (so "$job" names a live job of the
    connection), then hostile messages, sometimes ending with a terminal one."""
    nonterminal, terminal = messages(ips, victim_job)
    register = Msg("valid_register", fields=_request("register", hosts=list(ips)))
    return st.tuples(st.booleans(), st.lists(nonterminal, min_size=1, max_size=max_messages),
                     st.one_of(st.none(), terminal)).map(
        lambda t: ([register] if t[0] else []) + t[1] + ([t[2]] if t[2] is not None else []))
