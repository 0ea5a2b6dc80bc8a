"""What the libsdnmpi tests (test_libsdnmpi*.py) share: the library's paths,
unit_tool, mpirun on localhost, network namespaces, and a stub controller speaking docs/rpc.md.
Their fixtures (`built`, `stub_factory`) live in conftest.py.

The stub controller is a small threaded TCP server. It validates every request with the
controller's own schema (controller/rpc_schema.py), records it per connection, and answers like
the real controller would (or not, depending on its mode). `SDN_MPI_FAKE_HOSTS=N` (a test-only
knob of the library) makes rank r report fabric address 10.255.0.(r % N + 1), so that plans on one
machine contain real host pairs.
"""
import collections
import contextlib
import ctypes
import json
import os
import random
import secrets
import select
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import msgpack

from sdnmpi.controller import rpc_schema

from rpc_helpers import recv_all as recv_exact  # pylint: disable=wrong-import-order

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "libsdnmpi"
TOOL = LIB / "tests" / "unit_tool"
PRELOAD = LIB / "libsdnmpi-preload.so"
MPIRUN = shutil.which("mpirun")

# docs/rpc.md framing
LENGTH = struct.Struct("!I")
MAX_FRAME = 1 << 20

# what the stub answers
SERVER = "sdnmpi-stub 0"
JOB = 7
TIMINGS = {"total_s": 0.001}
PLAN_TIMINGS = {"total_s": 1.0, "plan_s": 0.25, "install_s": 0.5}
BCAST_TIMINGS = {"total_s": 0.5, "plan_s": 0.125, "install_s": 0.25}
BCAST_SWITCHES = 3
BCAST_TOP = "0000000000000101"
GROUP = "239.77.%d.%d"             # a tree's group: 239.77.<stub's base>.<tree number>
GROUP_BASES = (1, 200)             # random.randrange bounds of a stub's base
PORT_BASES = (47000, 47900)        # random.randrange bounds of a stub's first tree port
NOT_A_GROUP = "10.1.2.3"
REFUSED_REGISTER = "no such hosts"
REFUSED_PLAN = "host 10.255.0.9 is not in the topology"
REFUSED_BCAST = "host %s is not in the topology"
REFUSED_TRAFFIC = "planner sdn-adaptive failed"

MODES = {
    "ok": "answers everything",
    "silent_hello": "never answers anything",
    "refuse_register": 'answers register with status "error"',
    "close_after_register": "closes a connection right after answering its register",
    "silent_plan": "never answers plan_allreduce",
    "error_plan": 'answers plan_allreduce with status "error"',
    "error_one_step_plan": 'answers plan_allreduce requests of exactly one step with status "error"',
    "silent_bcast": "never answers plan_bcast",
    "hold_bcast": "answers plan_bcast for the communicator's first member as root only; another root's request "
                  "waits for restart(), which cuts it",
    "error_bcast": 'answers plan_bcast with status "error"',
    "not_group": "answers plan_bcast with a unicast address as the group",
    "error_traffic": 'answers traffic with status "error"',
}
LOADS = ("flat", "descending")


# ---------------------------------------------------------------------------------------------
# framing and replies
def frame(message):
    """One message on the wire: its length, then its msgpack body."""
    body = msgpack.packb(message, use_bin_type=True)
    return LENGTH.pack(len(body)) + body


def frame_body(data):
    """The body of one frame (asserting a well-formed length)."""
    (length,) = LENGTH.unpack(data[:LENGTH.size])
    assert length == len(data) - LENGTH.size and 0 < length <= MAX_FRAME
    return data[LENGTH.size:]


def reply(req_id, error=None, **fields):
    """A reply map; `fields` add the op's keys (and may replace the timings)."""
    message = {"v": 1, "id": req_id, "status": "error" if error else "ok", "error": error or "",
               "timings": dict(TIMINGS)}
    message.update(fields)
    return message


# ---------------------------------------------------------------------------------------------
# requests
def request_args(raw):
    """The args of a recorded request map, as the controller's schema validates them."""
    return rpc_schema.decode_request(msgpack.packb(raw, use_bin_type=True)).args


def node_load(pairs):
    """NL_D: the most flows out of or into one host."""
    load = collections.Counter()
    for src, dst, _ in pairs:
        load["out", src] += 1
        load["in", dst] += 1
    return max(load.values())


# ---------------------------------------------------------------------------------------------
# network namespaces
_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000


@contextlib.contextmanager
def in_netns(name):
    """This thread inside network namespace `name` (sockets made here stay in it)."""
    orig = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open("/run/netns/%s" % name, os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns into %s" % name)
        try:
            yield
        finally:
            if _libc.setns(orig, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back")
    finally:
        os.close(orig)
        os.close(target)


# ---------------------------------------------------------------------------------------------
# stub controller
def leaf_of(ip, leaves):
    """The stub's locate answer for ``ip``: leaf (last octet % leaves), or -1 if leaves is None."""
    return -1 if leaves is None else int(ip.rsplit(".", 1)[1]) % leaves


class StubController:
    """docs/rpc.md on 127.0.0.1:<port>, optionally inside network namespace `netns`.

    mode        one of MODES: which requests it answers, and how
    loads       plan_allreduce replies' max_load: "flat" (all 1) or "descending"
    job         the job id every register gets (with the stub's random token, which every later
                request naming the job must carry, as with the controller)
    server      the hello reply's server name
    plan_reply  if given, the fields of every plan_allreduce reply (instead of ones computed from
                the steps)
    leaves      locate replies: None, every host unknown (-1: the library keeps the ranks' order);
                K, host a.b.c.d on leaf d % K
    old_register  register replies without `server` and `locality` (a controller before issue 17:
                the library then says hello and asks locate)
    port        the port to listen on (0: any free one); a stub restarted on a closed one's port
                is a restarted controller
    seen_file   if given, a path the stub creates when it has recorded a plan_allreduce (a test
                program waits for it: the request arrived before the program's next step)

    plan_bcast gets a group 239.77.X.Y and a port of the stub's own per (comm, root), like the
    controller; the same pair when repeated. With ``bcast_trees`` = K, the reply also lists
    min(K, the trees asked for) trees (`trees`, issue 17), each with its own group and port, the
    first the one above; without it, the reply has no `trees`, as from a controller before that.

    traffic with a host outside the registered job is refused; phase 0 is answered as installed at once (flows =
    its pairs, max_load = NL_D), other phases as stored; phase replies say installed when some
    traffic op named the phase.
    """

    def __init__(self, mode="ok", loads="flat", netns=None, job=JOB, server=SERVER, plan_reply=None,
                 leaves=None, bcast_trees=None, port=0, old_register=False, seen_file=None):
        if mode not in MODES or loads not in LOADS:
            raise ValueError("unknown mode %r or loads %r" % (mode, loads))
        self.mode = mode
        self.loads = loads
        self.job = job
        self.token = secrets.token_hex(16)
        self.server = server
        self.plan_reply = plan_reply
        self.leaves = leaves
        self.old_register = old_register
        self.seen_file = seen_file
        self.bcast_trees = bcast_trees
        self.hosts = set()       # the registered job's hosts
        self.lock = threading.Lock()
        self.idle = threading.Condition(self.lock)   # notified when a connection closes
        self.open_conns = 0
        self.conns = []          # one dict per connection: {"requests": [...], "closed": bool}
        self.errors = []         # requests the schema refused, protocol violations
        self.trees = {}          # (comm, root, tree index) -> (group, port)
        rnd = random.Random()
        self.base = rnd.randrange(*GROUP_BASES)
        self.port_base = rnd.randrange(*PORT_BASES)
        with in_netns(netns) if netns else contextlib.nullcontext():
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(64)
        self.sock.setblocking(False)   # accepted under self.lock only (_accept_one)
        self.port = self.sock.getsockname()[1]
        self.address = "127.0.0.1:%d" % self.port
        self._stop = False
        self._clients = []
        self._threads = []
        self._acceptor = threading.Thread(target=self._accept, daemon=True)
        self._acceptor.start()

    def _accept(self):
        while not self._stop:
            try:
                select.select([self.sock], [], [], 0.5)
                with self.lock:
                    self._accept_one()
            except (OSError, ValueError):   # closed
                return

    def _accept_one(self):
        """Accepts one pending connection, if any, and starts serving it; whether it did. Called
        with self.lock held, so that a connection is always either still pending or counted in
        open_conns (wait_idle relies on it)."""
        if self._stop:
            return False   # closed: nothing is pending any more
        try:
            client, _ = self.sock.accept()
        except (BlockingIOError, InterruptedError):
            return False
        client.setblocking(True)
        record = {"requests": [], "closed": False}
        self.conns.append(record)
        self._clients.append(client)
        self.open_conns += 1
        thread = threading.Thread(target=self._serve, args=(client, record), daemon=True)
        thread.start()
        self._threads.append(thread)
        return True

    def _error(self, text):
        with self.lock:
            self.errors.append(text)

    def _serve(self, client, record):
        try:
            while True:
                header = recv_exact(client, LENGTH.size)
                if header is None:
                    break
                (length,) = LENGTH.unpack(header)
                if not 0 < length <= MAX_FRAME:
                    self._error("bad frame length %d" % length)
                    break
                body = recv_exact(client, length)
                if body is None:
                    break
                raw = msgpack.unpackb(body, raw=False)
                try:
                    req = rpc_schema.decode_request(body)
                except rpc_schema.RpcError as err:
                    self._error("schema refused %r: %s" % (raw, err))
                    client.sendall(frame(reply(raw.get("id", -1) if isinstance(raw, dict) else -1, error=str(err))))
                    continue
                with self.lock:
                    record["requests"].append(raw)
                if req.op == "plan_allreduce" and self.seen_file is not None:
                    Path(self.seen_file).touch()
                answer = None if self.mode == "silent_hello" else self._answer(req)
                if answer is not None:
                    client.sendall(frame(answer))
                if req.op == "register" and self.mode == "close_after_register":
                    break
        except OSError:
            pass
        finally:
            try:
                client.close()
            except OSError:
                pass
            with self.lock:
                record["closed"] = True
                self.open_conns -= 1
                self.idle.notify_all()

    def wait_idle(self, timeout=30.0):
        """Waits until the stub has served every connection made to it to its end: after mpirun
        returned, the ranks' sockets are closed, but on a busy machine the stub may not have
        accepted a connection yet (a rank that gave up waiting for a silent stub), read its
        requests or seen its end. requests() calls it, so that its answer is complete."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                left = deadline - time.monotonic()
                if not self.idle.wait_for(lambda: self.open_conns == 0, max(left, 0)):
                    raise AssertionError("stub: %d connections still open after %.0f s" % (self.open_conns, timeout))
                if not self._accept_one():   # nothing pending either: every connection has ended
                    return

    def _answer(self, req):
        """The reply to a valid request, or None to stay silent."""
        if req.op == "hello":
            return reply(req.id, server=self.server)
        if req.op == "register":
            if self.mode == "refuse_register":
                return reply(req.id, error=REFUSED_REGISTER)
            self.hosts = set(req.args["hosts"])
            if self.old_register:
                return reply(req.id, job=self.job, token=self.token)
            return reply(req.id, job=self.job, token=self.token, server=self.server,
                         locality=[leaf_of(ip, self.leaves) for ip in req.args["hosts"]])
        if req.args.get("token") != self.token:
            self._error("%s with a bad token" % req.op)
            return reply(req.id, error="bad token for job %d" % req.args["job"])
        if req.op == "locate":
            return reply(req.id, locality=[leaf_of(ip, self.leaves) for ip in req.args["hosts"]])
        if req.op == "plan_allreduce":
            return self._answer_plan(req)
        if req.op == "plan_bcast":
            return self._answer_bcast(req)
        if req.op == "release":
            return reply(req.id)
        if req.op == "traffic":
            return self._answer_traffic(req)
        if req.op == "phase":
            return self._answer_phase(req)
        return None

    def _answer_traffic(self, req):
        """Like the controller (docs/rpc.md): hosts must be the job's; phase 0 is installed at once, others stored."""
        if self.mode == "error_traffic":
            return reply(req.id, error=REFUSED_TRAFFIC)
        pairs = req.args["pairs"]
        outside = sorted({h for s, d, _ in pairs for h in (s, d)} - self.hosts)
        if outside:
            return reply(req.id, error="host %s is not in job %d" % (outside[0], self.job))
        stored = req.args["phase"] != 0
        load = node_load(pairs)
        return reply(req.id, flows=0 if stored else len(pairs), node_load=load, max_load=-1 if stored else load,
                     stored=stored)

    def _answer_phase(self, req):
        with self.lock:
            demand = any(r["op"] == "traffic" and r["phase"] == req.args["phase"]
                         for c in self.conns for r in c["requests"])
        return reply(req.id, installed=bool(req.args["phase"]) and demand, flows=0)

    def _answer_plan(self, req):
        if self.mode == "silent_plan":
            return None
        if self.mode == "error_plan" or (self.mode == "error_one_step_plan" and len(req.args["steps"]) == 1):
            return reply(req.id, error=REFUSED_PLAN)
        if self.plan_reply is not None:
            return reply(req.id, **self.plan_reply)
        steps = req.args["steps"]
        loads = [1] * len(steps) if self.loads == "flat" else list(range(len(steps), 0, -1))
        return reply(req.id, flows=sum(len(s) for s in steps), max_load=loads, lower_bound=[1] * len(steps),
                     timings=dict(PLAN_TIMINGS))

    def _answer_bcast(self, req):
        if self.mode == "silent_bcast" or (self.mode == "hold_bcast" and req.args["root"] != req.args["members"][0]):
            return None
        if self.mode == "error_bcast":
            return reply(req.id, error=REFUSED_BCAST % req.args["root"])
        group, port = self.tree_for(req.args["comm"], req.args["root"])
        if self.mode == "not_group":
            group = NOT_A_GROUP
        extra = {}
        if self.bcast_trees is not None:
            trees = [(group, port)] + [self.tree_for(req.args["comm"], req.args["root"], i)
                                       for i in range(1, min(self.bcast_trees, req.args["trees"]))]
            extra["trees"] = [{"group": g, "port": p, "switches": BCAST_SWITCHES, "top": BCAST_TOP} for g, p in trees]
        return reply(req.id, group=group, port=port, switches=BCAST_SWITCHES, top=BCAST_TOP, cached=False,
                     timings=dict(BCAST_TIMINGS), **extra)

    def tree_for(self, comm, root, index=0):
        """(group, port) of tree ``index`` of (comm, root): a new pair per new tree, the same one
        when repeated."""
        with self.lock:
            key = (comm, root, index)
            if key not in self.trees:
                n = len(self.trees)
                self.trees[key] = (GROUP % (self.base, n + 1), self.port_base + n)
            return self.trees[key]

    def requests(self, op=None):
        """[(connection index, request)] in order, of one op or all, once every connection has
        ended (wait_idle)."""
        self.wait_idle()
        with self.lock:
            return [(i, r) for i, c in enumerate(self.conns) for r in c["requests"] if op is None or r["op"] == op]

    def restart(self, mode=None, job=None):
        """A controller restart without a gap: every open connection is closed, and the stub
        answers as a new controller from now on (a new token; `mode` and `job` if given) on the
        same port. The number of connections it had served until then."""
        with self.lock:
            if mode is not None and mode not in MODES:
                raise ValueError("unknown mode %r" % mode)
            self.mode = mode or self.mode
            self.job = job or self.job
            self.token = secrets.token_hex(16)
            self.hosts = set()
            self.trees = {}
            for client in self._clients:
                try:
                    client.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            return len(self.conns)

    def close(self):
        self._stop = True
        with self.lock:
            try:
                self.sock.close()
            except OSError:
                pass
            for client in self._clients:
                try:
                    client.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        # The listening socket is gone (its port free again) only once the acceptor's select()
        # returned: the kernel keeps a socket that a waiting poll holds.
        for thread in [self._acceptor] + self._threads:
            thread.join(timeout=5)


# ---------------------------------------------------------------------------------------------
# running programs
def mpirun(np, argv, env=None, *, timeout, extra=(), netns=None):
    """Runs argv under mpirun on localhost (inside network namespace `netns` if given); env holds
    the SDN_MPI_* knobs (and LD_PRELOAD), exported to the ranks with -x; `extra`: more mpirun
    options. Returns (CompletedProcess, seconds).

    The result's stdout and stderr are mpirun's own followed by each rank's, in rank order. Each
    rank writes to its own files (--output-filename): mpirun's forwarding of the ranks' pipes
    splits lines at its buffer boundaries, so merged streams can interleave ranks mid-line."""
    env = dict(env or {})
    if "SDN_MPI_CONTROLLER" in env:
        env.setdefault("SDN_MPI_TIMEOUT_MS", "30000")  # a busy 2-core machine must not cause fallbacks
    full = {k: v for k, v in os.environ.items() if not k.startswith("SDN_MPI_") and k != "LD_PRELOAD"}
    full.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    cmd = ["ip", "netns", "exec", netns] if netns else []
    cmd += ["timeout", "-k", "10", str(timeout), MPIRUN, "--oversubscribe", "-np", str(np),
            "--mca", "btl", "self,vader", "--mca", "mpi_yield_when_idle", "1", *extra]
    for key, value in env.items():
        if key == "LD_PRELOAD":
            cmd += ["-x", "LD_PRELOAD=%s" % value]   # only the ranks, not mpirun itself
        else:
            full[key] = value
            cmd += ["-x", key]
    with tempfile.TemporaryDirectory(prefix="sdnmpi-mpirun-") as out_dir:
        cmd += ["--output-filename", out_dir + ":nocopy"]
        start = time.monotonic()
        res = subprocess.run(cmd + [str(a) for a in argv], env=full, capture_output=True, text=True)
        seconds = time.monotonic() - start
        res.stdout += rank_output(out_dir, "stdout")
        res.stderr += rank_output(out_dir, "stderr")
    return res, seconds


def rank_output(out_dir, stream):
    """Every rank's `stream` file under an --output-filename directory, concatenated in rank order."""
    files = sorted(Path(out_dir).glob("*/rank.*/%s" % stream),
                   key=lambda path: (int(path.parent.parent.name), int(path.parent.name.split(".")[1])))
    return "".join(path.read_text(errors="replace") for path in files)


def tool(*args, stdin=None):
    """unit_tool's output (bytes); a non-zero exit raises."""
    return subprocess.run([str(TOOL), *map(str, args)], input=stdin, capture_output=True, check=True).stdout


def decode(message):
    """unit_tool's reading of a reply map."""
    return json.loads(tool("decode", stdin=msgpack.packb(message, use_bin_type=True)))


def closed_port():
    """A local TCP port nothing listens on (a dead controller)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def fake_hosts(np, n):
    """The fabric addresses SDN_MPI_FAKE_HOSTS=n gives ranks 0..np-1."""
    return ["10.255.0.%d" % (r % n + 1) for r in range(np)]
