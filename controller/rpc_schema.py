"""The RPC schema, Python side: framing, request validation and replies. docs/rpc.md is the
reference; libsdnmpi/src/rpc.h (rpc.c, rpc_encode.c, rpc_decode.c) is the C side. Nothing else in the
controller parses RPC bytes."""
import dataclasses
import ipaddress
import struct

import msgpack

from sdnmpi.numeric import is_number
from sdnmpi.primitives import PAIR_ROUTERS

VERSION = 1
HEADER = struct.Struct("!I")
MAX_FRAME = 1 << 20
MAX_HOSTS = 65536
MAX_STEPS = 64
MAX_PAIRS = 65536
MAX_TOKEN = 128          # characters of a job token a request may carry (the controller's are 32)
MAX_MAP_KEYS = 32        # keys of a request map (msgpack limits bound what one frame can allocate)
MAX_STR = 4096           # bytes of one string
DEFAULT_LEASE_S = 86400.0
MAX_LEASE_S = 604800.0
PLANNERS = ("balanced", "dmodk", "single", "sdn-optimal")
MAX_PHASE = 64           # `traffic` and `phase`: phases 0 .. MAX_PHASE
MAX_TREES = 8            # `plan_bcast`: trees per (communicator, root)
MAX_RANK = MAX_HOSTS - 1
DEFAULT_TRAFFIC_PLANNER = "sdn-adaptive"


class RpcError(ValueError):
    """A request the controller refuses; ``str(err)`` is the reason sent back."""

    def __init__(self, reason, req_id=-1):
        super().__init__(reason)
        self.req_id = req_id


@dataclasses.dataclass(frozen=True)
class Request:
    id: int
    op: str
    args: dict


def frame(body):
    return HEADER.pack(len(body)) + body


def frame_length(header):
    """Body length from a 4-byte header; raises RpcError if it is out of bounds."""
    (length,) = HEADER.unpack(header)
    if not 0 < length <= MAX_FRAME:
        raise RpcError("oversized request" if length else "empty request")
    return length


def encode_reply(req_id, error=None, timings=None, **fields):
    reply = {"v": VERSION, "id": req_id, "status": "error" if error else "ok", "error": error or "",
             "timings": dict(timings or {})}
    reply.update(fields)
    return frame(msgpack.packb(reply, use_bin_type=True))


def decode_request(body):
    """A validated `Request` from one frame's body; raises RpcError."""
    try:
        msg = msgpack.unpackb(body, raw=False, strict_map_key=True, use_list=True, max_str_len=MAX_STR,
                              max_bin_len=0, max_ext_len=0, max_array_len=max(MAX_HOSTS, MAX_PAIRS) + 1,
                              max_map_len=MAX_MAP_KEYS)
    except Exception as err:  # msgpack raises several kinds on garbage
        raise RpcError("malformed msgpack: %s" % type(err).__name__) from err
    if not isinstance(msg, dict):
        raise RpcError("request is not a map")
    req_id = msg.get("id")
    if not _is_int(req_id):
        raise RpcError("missing or non-integer id")
    if not _is_int(msg.get("v")) or msg["v"] != VERSION:   # true == 1 and 1.0 == 1 in Python
        raise RpcError("unsupported protocol version %r (want %d)" % (msg.get("v"), VERSION), req_id)
    op = msg.get("op")
    validate = _VALIDATORS.get(op) if isinstance(op, str) else None
    if validate is None:
        raise RpcError("unknown op %r" % (op,), req_id)
    try:
        args = validate(msg)
    except RpcError as err:
        raise RpcError(str(err), req_id) from None
    return Request(id=req_id, op=op, args=args)


def _is_int(value):
    """The check of every integer field (the version, ids, ranks, counts, ...): a msgpack int, never
    a bool (msgpack's true is Python's True, and True == 1) nor a float (1.0 == 1)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _job(msg):
    """{"job": id, "token": str or None}: the job a request names and the token it presents (the
    service checks the token; a request without one is refused there, naming the job)."""
    job = msg.get("job")
    if not _is_int(job) or job <= 0:
        raise RpcError("missing or invalid job id")
    token = msg.get("token")
    if token is not None and (not isinstance(token, str) or len(token) > MAX_TOKEN):
        raise RpcError("token must be a string of at most %d characters" % MAX_TOKEN)
    return {"job": job, "token": token}


def _ipv4(value, what):
    if not isinstance(value, str):
        raise RpcError("%s is not a string" % what)
    try:
        address = ipaddress.IPv4Address(value)
    except ValueError:
        raise RpcError("%s %r is not an IPv4 address" % (what, value[:64])) from None
    return str(address)


def _hello(_msg):
    return {}


def _ipv4_list(msg, key, what):
    """msg[key] as a list of 1..MAX_HOSTS IPv4 addresses (strs, in order)."""
    values = msg.get(key)
    if not isinstance(values, list) or not 1 <= len(values) <= MAX_HOSTS:
        raise RpcError("%s must be a list of 1..%d IPv4 addresses" % (key, MAX_HOSTS))
    return [_ipv4(v, what) for v in values]


def _register(msg):
    hosts = _ipv4_list(msg, "hosts", "host")
    lease = msg.get("lease_s", DEFAULT_LEASE_S)
    if not is_number(lease) or not 1 <= lease <= MAX_LEASE_S:
        raise RpcError("lease_s must be a number of seconds in 1..%d" % MAX_LEASE_S)
    return {"hosts": hosts, "lease_s": float(lease)}


def _locate(msg):
    hosts = _ipv4_list(msg, "hosts", "host")
    return dict(_job(msg), hosts=hosts)


def _pair(item, third):
    """(src, dst, third value) of a ``[src_ip, dst_ip, <third>]`` list with src != dst."""
    if not isinstance(item, list) or len(item) != 3:
        raise RpcError("a pair must be [src_ip, dst_ip, %s]" % third)
    src, dst = _ipv4(item[0], "src"), _ipv4(item[1], "dst")
    if src == dst:
        raise RpcError("pair %s -> %s has src == dst" % (src, dst))
    return src, dst, item[2]


def _plan_allreduce(msg):
    comm = msg.get("comm")
    if not _is_int(comm) or comm < 0:
        raise RpcError("missing or invalid comm id")
    planner = msg.get("planner", "balanced")
    if planner not in PLANNERS:
        raise RpcError("unknown planner %r" % (planner,))
    steps = msg.get("steps")
    if not isinstance(steps, list) or len(steps) > MAX_STEPS:
        raise RpcError("steps must be a list of at most %d steps" % MAX_STEPS)
    total = 0
    out = []
    for step in steps:
        if not isinstance(step, list):
            raise RpcError("a step is not a list")
        total += len(step)
        if total > MAX_PAIRS:
            raise RpcError("more than %d pairs" % MAX_PAIRS)
        pairs = {}
        for item in step:
            src, dst, count = _pair(item, "count")
            if not _is_int(count) or not 1 <= count <= MAX_PAIRS:
                raise RpcError("count of %s -> %s must be 1..%d" % (src, dst, MAX_PAIRS))
            pairs[(src, dst)] = pairs.get((src, dst), 0) + count
        out.append(sorted(pairs.items()))
    return dict(_job(msg), comm=comm, planner=planner, steps=out)


def _plan_bcast(msg):
    comm = msg.get("comm")
    if not _is_int(comm) or comm < 0:
        raise RpcError("missing or invalid comm id")
    members = sorted(set(_ipv4_list(msg, "members", "member")))
    root = _ipv4(msg.get("root"), "root")
    if root not in members:
        raise RpcError("root %s is not among the members" % root)
    trees = msg.get("trees", 1)
    if not _is_int(trees) or not 1 <= trees <= MAX_TREES:
        raise RpcError("trees must be an integer in 1..%d" % MAX_TREES)
    return dict(_job(msg), comm=comm, root=root, members=members, trees=trees)


def _phase_number(msg):
    phase = msg.get("phase")
    if not _is_int(phase) or not 0 <= phase <= MAX_PHASE:
        raise RpcError("phase must be an integer in 0..%d" % MAX_PHASE)
    return phase


def _traffic(msg):
    """A job's demand for one phase: pairs [src_ip, dst_ip, bytes] (the service checks that the
    hosts are the job's)."""
    phase = _phase_number(msg)
    planner = msg.get("planner", DEFAULT_TRAFFIC_PLANNER)
    if not isinstance(planner, str) or planner not in PAIR_ROUTERS:
        named = planner if isinstance(planner, str) else type(planner).__name__
        raise RpcError("unknown planner %r (known: %s)" % (named, ", ".join(sorted(PAIR_ROUTERS))))
    add = msg.get("add", False)
    if not isinstance(add, bool):
        raise RpcError("add must be true or false")
    items = msg.get("pairs")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_PAIRS:
        raise RpcError("pairs must be a list of 1..%d [src_ip, dst_ip, bytes]" % MAX_PAIRS)
    out = []
    for item in items:
        src, dst, nbytes = _pair(item, "bytes")
        if not _is_int(nbytes) or nbytes < 1:
            raise RpcError("bytes of %s -> %s must be an integer >= 1" % (src, dst))
        out.append((src, dst, nbytes))
    return dict(_job(msg), phase=phase, pairs=out, add=add, planner=planner)


def _phase(msg):
    rank = msg.get("rank")
    if not _is_int(rank) or not 0 <= rank <= MAX_RANK:
        raise RpcError("missing or invalid rank")
    return dict(_job(msg), rank=rank, phase=_phase_number(msg))


def _release(msg):
    return _job(msg)


_VALIDATORS = {
    "hello": _hello,
    "register": _register,
    "locate": _locate,
    "plan_allreduce": _plan_allreduce,
    "plan_bcast": _plan_bcast,
    "release": _release,
    "traffic": _traffic,
    "phase": _phase,
}
