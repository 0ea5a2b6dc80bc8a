"""libsdnmpi's SDN_MPI_Bcast against PMPI_Bcast under mpirun on localhost: the plan_bcast request,
the multicast protocol over loopback (SDN_MPI_FAKE_HOSTS makes the ranks look like several hosts;
their sockets then use 127.0.0.1), repairs when datagrams are lost, the PMPI_Bcast finish when
none arrive at all, and every fallback.

The stub controller here answers plan_bcast with a multicast group and port of its choosing (or
fails in one of several ways). Lossy and black-hole runs happen in a private network namespace
(`ip netns`), where an nftables rule drops the group's datagrams at the receivers; the stub's
listening socket is created inside that namespace so that the ranks can reach it.
"""
import contextlib
import ctypes
import json
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import threading
import time
import uuid
from pathlib import Path

import msgpack
import pytest

from sdnmpi.controller import rpc_schema

ROOT = Path(__file__).resolve().parents[2]
LIB = ROOT / "libsdnmpi"
CHECK = LIB / "tests" / "bcast_check"
PLAIN = LIB / "tests" / "plain_bcast"
TOOL = LIB / "tests" / "unit_tool"
PRELOAD = LIB / "libsdnmpi-preload.so"
MPIRUN = shutil.which("mpirun")
MPI_TIMEOUT = 240
SUMMARY = re.compile(r"bcast_check: p=(\d+) cases=(\d+) failures=(\d+) paths pmpi=(\d+) mcast=(\d+) "
                     r"mcast_pmpi=(\d+) rounds=(\d+) resent=(\d+) finished=(\d+)")
# Loopback is fast; oversubscribed ranks on 2 cores are not: this rate loses some datagrams now
# and then, which exercises the repair rounds too.
LOCAL_RATE = "400"


# ---------------------------------------------------------------------------------------------
# build
@pytest.fixture(scope="session")
def built():
    res = subprocess.run(["make", "-C", str(LIB), "all", "check"], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.fail("make -C libsdnmpi all check failed:\n%s\n%s" % (res.stdout[-4000:], res.stderr[-4000:]))
    return LIB


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


@pytest.fixture
def netns():
    """A private network namespace with only lo (up); deleted afterwards with all its rules."""
    name = "sdnbc-%s" % uuid.uuid4().hex[:8]
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"], check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False)


def nft_drop(ns, ports, percent):
    """Drops `percent` % of the UDP datagrams to `ports` ("A-B") arriving in namespace `ns`."""
    rule = "udp dport %s counter drop" % ports if percent >= 100 else \
        "udp dport %s numgen random mod 100 lt %d counter drop" % (ports, percent)
    script = "add table inet sdnbc\nadd chain inet sdnbc in { type filter hook input priority 0; }\n" \
             "add rule inet sdnbc in %s\n" % rule
    subprocess.run(["ip", "netns", "exec", ns, "nft", "-f", "-"], input=script, text=True, check=True)


def nft_dropped(ns):
    """Packets the rule dropped so far."""
    out = subprocess.run(["ip", "netns", "exec", ns, "nft", "list", "table", "inet", "sdnbc"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"counter packets (\d+)", out)
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------------------------------------
# stub controller
class BcastStub:
    """docs/rpc.md on 127.0.0.1 (optionally inside a network namespace). plan_bcast modes:
    ok         a group 239.77.X.Y and a port of its own (one per (comm, root)), like the controller
    error      status "error"
    silent     never answers plan_bcast
    not_group  answers with a unicast address as the group
    Everything else is answered like the real controller would."""

    def __init__(self, mode="ok", netns=None):
        self.mode = mode
        self.lock = threading.Lock()
        self.conns = []
        self.errors = []
        self.trees = {}
        rnd = random.Random()
        self.base = rnd.randrange(1, 200)
        self.port_base = rnd.randrange(47000, 47900)
        ctx = in_netns(netns) if netns else contextlib.nullcontext()
        with ctx:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.address = "127.0.0.1:%d" % self.port
        self._stop = False
        self._clients = []
        self._threads = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self._stop:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            record = {"requests": [], "closed": False}
            with self.lock:
                self.conns.append(record)
                self._clients.append(client)
            thread = threading.Thread(target=self._serve, args=(client, record), daemon=True)
            thread.start()
            self._threads.append(thread)

    @staticmethod
    def _recv_exact(client, n):
        data = b""
        while len(data) < n:
            chunk = client.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    @staticmethod
    def _reply(client, req_id, error=None, **fields):
        reply = {"v": 1, "id": req_id, "status": "error" if error else "ok", "error": error or "",
                 "timings": {"total_s": 0.001}}
        reply.update(fields)
        body = msgpack.packb(reply, use_bin_type=True)
        client.sendall(struct.pack("!I", len(body)) + body)

    def tree_for(self, comm, root):
        """(group, port) of (comm, root): a new pair per new tree, the same one when repeated."""
        with self.lock:
            key = (comm, root)
            if key not in self.trees:
                n = len(self.trees)
                self.trees[key] = ("239.77.%d.%d" % (self.base, n + 1), self.port_base + n)
            return self.trees[key]

    def _serve(self, client, record):
        try:
            while True:
                header = self._recv_exact(client, 4)
                if header is None:
                    break
                (length,) = struct.unpack("!I", header)
                body = self._recv_exact(client, length) if 0 < length <= 1 << 20 else None
                if body is None:
                    break
                raw = msgpack.unpackb(body, raw=False)
                try:
                    req = rpc_schema.decode_request(body)
                except rpc_schema.RpcError as err:
                    with self.lock:
                        self.errors.append("schema refused %r: %s" % (raw, err))
                    self._reply(client, raw.get("id", -1) if isinstance(raw, dict) else -1, error=str(err))
                    continue
                with self.lock:
                    record["requests"].append(raw)
                if req.op == "hello":
                    self._reply(client, req.id, server="sdnmpi-bcast-stub 0")
                elif req.op == "register":
                    self._reply(client, req.id, job=11)
                elif req.op == "plan_allreduce":
                    self._reply(client, req.id, flows=1, max_load=[1], lower_bound=[1], cached=False)
                elif req.op == "plan_bcast":
                    if self.mode == "silent":
                        continue
                    if self.mode == "error":
                        self._reply(client, req.id, error="host %s is not in the topology" % req.args["root"])
                        continue
                    group, port = self.tree_for(req.args["comm"], req.args["root"])
                    if self.mode == "not_group":
                        group = "10.1.2.3"
                    self._reply(client, req.id, group=group, port=port, switches=3, top="0000000000000101",
                                cached=False, timings={"total_s": 0.5, "plan_s": 0.125, "install_s": 0.25})
                elif req.op == "release":
                    self._reply(client, req.id)
        except OSError:
            pass
        finally:
            record["closed"] = True
            try:
                client.close()
            except OSError:
                pass

    def requests(self, op=None):
        with self.lock:
            return [(i, r) for i, c in enumerate(self.conns) for r in c["requests"] if op is None or r["op"] == op]

    def close(self):
        self._stop = True
        try:
            self.sock.close()
        except OSError:
            pass
        with self.lock:
            for client in self._clients:
                try:
                    client.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for thread in self._threads:
            thread.join(timeout=5)


@pytest.fixture
def stub_factory():
    stubs = []

    def make(mode="ok", netns=None):
        stub = BcastStub(mode, netns)
        stubs.append(stub)
        return stub

    yield make
    for stub in stubs:
        stub.close()


# ---------------------------------------------------------------------------------------------
# running MPI programs
def mpirun(np, argv, env=None, timeout=MPI_TIMEOUT, netns=None):
    """argv under mpirun on localhost (inside `netns` if given); env: SDN_MPI_* knobs and
    LD_PRELOAD, exported to the ranks. Returns (CompletedProcess, seconds)."""
    env = dict(env or {})
    if "SDN_MPI_CONTROLLER" in env:
        env.setdefault("SDN_MPI_TIMEOUT_MS", "30000")  # a busy 2-core machine must not cause fallbacks
    full = {k: v for k, v in os.environ.items() if not k.startswith("SDN_MPI_") and k != "LD_PRELOAD"}
    full.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    cmd = ["ip", "netns", "exec", netns] if netns else []
    cmd += ["timeout", "-k", "10", str(timeout), MPIRUN, "--oversubscribe", "-np", str(np),
            "--mca", "btl", "self,vader", "--mca", "mpi_yield_when_idle", "1"]
    for key, value in env.items():
        if key == "LD_PRELOAD":
            cmd += ["-x", "LD_PRELOAD=%s" % value]
        else:
            full[key] = value
            cmd += ["-x", key]
    start = time.monotonic()
    res = subprocess.run(cmd + [str(a) for a in argv], env=full, capture_output=True, text=True)
    return res, time.monotonic() - start


def run_check(np, expect, env=None, quick=False, big=False, repeat=0, seed=None, netns=None, timeout=MPI_TIMEOUT):
    argv = [CHECK, "--expect", expect, "--seed", seed if seed is not None else 500 + np]
    if quick:
        argv.append("--quick")
    if big:
        argv.append("--big")
    if repeat:
        argv += ["--repeat", repeat]
    res, seconds = mpirun(np, argv, env, timeout=timeout, netns=netns)
    assert res.returncode == 0, "bcast_check -np %d failed (rc %d, %.1fs):\n%s\n%s" % (
        np, res.returncode, seconds, res.stdout[-3000:], res.stderr[-8000:])
    match = SUMMARY.search(res.stdout)
    assert match, res.stdout
    p, cases, failures, pmpi, mcast, mcast_pmpi, rounds, resent, finished = map(int, match.groups())
    assert p == np and failures == 0 and cases > 0
    return {"cases": cases, "pmpi": pmpi, "mcast": mcast, "mcast_pmpi": mcast_pmpi, "rounds": rounds,
            "resent": resent, "finished": finished, "stderr": res.stderr, "seconds": seconds}


def sdn_env(stub, nhosts, **extra):
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts),
           "SDN_MPI_BCAST_RATE_MBPS": LOCAL_RATE}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def fake_hosts(np, n):
    return ["10.255.0.%d" % (r % n + 1) for r in range(np)]


def tool(*args, stdin=None):
    return subprocess.run([str(TOOL), *map(str, args)], input=stdin, capture_output=True, check=True).stdout


def comms(np):
    """The communicators bcast_check uses: {name: world ranks in communicator rank order}."""
    return {"world": list(range(np)),
            "even": sorted(range(0, np, 2), reverse=True),   # MPI_Comm_split key -rank
            "odd": sorted(range(1, np, 2), reverse=True),
            "dup": list(range(np))}


def expected_trees(np, nhosts):
    """{(members tuple, root ip)} bcast_check plans, one per communicator spanning hosts and root."""
    hosts = fake_hosts(np, nhosts)
    out = []
    for name, ranks in comms(np).items():
        p = len(ranks)
        if p < 2 or len({hosts[r] for r in ranks}) < 2:
            continue
        for root in sorted({0, p - 1, p // 2}):
            out.append((name, tuple(hosts[r] for r in ranks), hosts[ranks[root]]))
    return out


# ---------------------------------------------------------------------------------------------
# build, RPC, wire format
def test_build_exports(built):
    dyn = subprocess.run(["nm", "-D", "--defined-only", str(built / "libsdnmpi.so")], capture_output=True,
                         text=True, check=True).stdout
    exported = {line.split()[-1] for line in dyn.splitlines() if " T " in line}
    assert "SDN_MPI_Bcast" in exported
    assert "sdnmpi_test_last_bcast" not in exported and not any(s.startswith("MPI_") for s in exported)
    dyn = subprocess.run(["nm", "-D", "--defined-only", str(PRELOAD)], capture_output=True, text=True,
                         check=True).stdout
    exported = {line.split()[-1] for line in dyn.splitlines() if " T " in line}
    assert {"MPI_Bcast", "SDN_MPI_Bcast", "MPI_Allreduce"} <= exported
    for name in ("bcast.o", "bcast_plan.o", "bcast_mcast.o", "bcast_wire.o", "mcast.o"):
        undefined = subprocess.run(["nm", "-u", str(built / "build" / name)], capture_output=True, text=True,
                                   check=True).stdout
        assert not re.search(r"\bMPI_[A-Z]", undefined), "%s calls MPI_* instead of PMPI_*" % name
    assert "SDN_MPI_Bcast" in (built / "include" / "sdnmpi.h").read_text()


def frame_body(frame):
    (length,) = struct.unpack("!I", frame[:4])
    assert length == len(frame) - 4 and 0 < length <= 1 << 20
    return frame[4:]


def test_plan_bcast_request_passes_the_controller_schema(built):
    members = ["10.0.0.%d" % (r % 3 + 1) for r in range(7)]
    body = frame_body(tool("encode", "plan_bcast", 9, 42, 5, "10.0.0.2", *members))
    raw = msgpack.unpackb(body, raw=False)
    assert raw == {"v": 1, "id": 9, "op": "plan_bcast", "job": 42, "comm": 5, "root": "10.0.0.2",
                   "members": members}
    req = rpc_schema.decode_request(body)
    assert req.op == "plan_bcast" and req.args == {"job": 42, "comm": 5, "root": "10.0.0.2",
                                                   "members": ["10.0.0.1", "10.0.0.2", "10.0.0.3"]}


def decode(reply):
    return json.loads(tool("decode", stdin=msgpack.packb(reply, use_bin_type=True)))


def test_plan_bcast_reply_decoding(built):
    real = rpc_schema.encode_reply(4, timings={"total_s": 0.5, "plan_s": 0.125, "install_s": 0.25},
                                   group="239.77.0.3", port=47003, switches=5, top="0000000000000102", cached=True)
    got = json.loads(tool("decode", stdin=frame_body(real)))
    assert got["valid"] and got["ok"] == 1
    assert (got["group"], got["port"], got["switches"], got["top"], got["cached"]) == \
        ("239.77.0.3", 47003, 5, "0000000000000102", 1)
    assert (got["total_s"], got["plan_s"], got["install_s"]) == (0.5, 0.125, 0.25)
    # An allreduce reply leaves the Bcast fields unset.
    ar = decode({"v": 1, "id": 1, "status": "ok", "error": "", "flows": 3, "cached": False})
    assert ar["group"] == "" and ar["port"] == -1 and ar["switches"] == -1 and ar["cached"] == 0
    for bad in ({"group": 5}, {"port": "47000"}, {"top": 1}, {"cached": 1}, {"switches": 1.5}):
        assert decode(dict({"v": 1, "id": 1, "status": "ok"}, **bad)) == {"valid": False}, bad


def test_datagram_header(built):
    hexed = tool("wire", 0xdeadbeef, 7, 2, 1, 123456).decode().strip()
    assert bytes.fromhex(hexed) == struct.pack("!IIIHHI", 0x53444E42, 0xdeadbeef, 7, 2, 1, 123456)
    assert tool("unwire", hexed).decode().split() == [str(0xdeadbeef), "7", "2", "1", "123456"]
    assert tool("unwire", "00" + hexed[2:]).decode().strip() == "invalid"   # bad magic
    assert tool("unwire", hexed[:38]).decode().strip() == "invalid"         # 19 bytes


# ---------------------------------------------------------------------------------------------
# no multicast: everything equals PMPI_Bcast
@pytest.mark.parametrize("np", [1, 2, 4])
def test_without_controller_equals_pmpi(built, np):
    out = run_check(np, "pmpi", quick=True)
    assert out["mcast"] == out["mcast_pmpi"] == 0 and out["pmpi"] == out["cases"]


def test_min_bytes_unlimited_never_plans(built, stub_factory):
    stub = stub_factory()
    run_check(3, "pmpi", sdn_env(stub, 3, SDN_MPI_BCAST_MIN_BYTES="unlimited"), quick=True)
    assert stub.requests("plan_bcast") == [] and stub.errors == []


def test_single_host_needs_no_tree(built, stub_factory):
    stub = stub_factory()
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FABRIC_IP": "10.9.9.9", "SDN_MPI_VERBOSE": "1"}
    out = run_check(3, "pmpi", env, quick=True)
    assert stub.requests("plan_bcast") == []
    assert "all ranks on one host, PMPI_Bcast (shared memory) is faster" in out["stderr"]


@pytest.mark.parametrize("mode,reason", [
    ("error", r"controller error: host 10\.255\.0\.\d is not in the topology"),
    ("not_group", r"reply without a valid group \(\"10\.1\.2\.3\"\)"),
    ("silent", r"no reply: Connection timed out"),
])
def test_failed_plans_fall_back(built, stub_factory, mode, reason):
    stub = stub_factory(mode)
    env = sdn_env(stub, 4, SDN_MPI_VERBOSE=1)
    if mode == "silent":
        env["SDN_MPI_TIMEOUT_MS"] = "1000"
    out = run_check(4, "pmpi", env, quick=True)
    assert re.search(r"sdnmpi\[\d\]: bcast plan comm=\d+ root=\d+ \(10\.255\.0\.\d\) ranks=\d hosts=\d: failed "
                     r"after \S+ \(" + reason, out["stderr"]), out["stderr"][-3000:]
    assert "no multicast tree for this root" in out["stderr"]
    plans = stub.requests("plan_bcast")
    if mode == "silent":
        # A timeout kills the leader's connection: one attempt per leader (world rank 0 for world
        # and dup, 2 and 3 for the halves), never again.
        assert len(plans) == 3 and "an earlier failure closed the connection" in out["stderr"]
        assert out["seconds"] < 60
    else:
        # Cached as failed: one request per (communicator, root), never repeated.
        keys = [(r["comm"], r["root"]) for _, r in plans]
        assert len(keys) == len(set(keys)) == len(expected_trees(4, 4))


# ---------------------------------------------------------------------------------------------
# multicast over loopback
@pytest.mark.parametrize("np,nhosts,full", [(2, 2, False), (3, 3, True), (5, 3, False), (8, 4, False)])
def test_multicast_equals_pmpi(built, stub_factory, np, nhosts, full):
    stub = stub_factory()
    out = run_check(np, "sdn", sdn_env(stub, nhosts), quick=not full, big=full, repeat=4 if full else 1)
    assert out["mcast"] + out["mcast_pmpi"] > 0 and out["pmpi"] > 0
    time.sleep(0.2)
    assert stub.errors == []
    plans = stub.requests("plan_bcast")
    assert all(r["job"] == 11 for _, r in plans)
    got = sorted((tuple(r["members"]), r["root"]) for _, r in plans)
    want = sorted((members, root) for _name, members, root in expected_trees(np, nhosts))
    assert got == want  # one request per (communicator, root): later calls hit the cache
    # One communicator id per communicator (world: 0), unique within the job.
    by_id = {}
    for _, r in plans:
        by_id.setdefault(r["comm"], set()).add(tuple(r["members"]))
    assert all(len(members) == 1 for members in by_id.values())
    assert len(by_id) == len({name for name, _m, _r in expected_trees(np, nhosts)})
    assert by_id[0] == {tuple(fake_hosts(np, nhosts))}
    for conn in stub.conns:
        assert conn["closed"]


def test_verbose_log(built, stub_factory):
    stub = stub_factory()
    out = run_check(3, "sdn", sdn_env(stub, 3, SDN_MPI_VERBOSE=1), quick=True)
    text = out["stderr"]
    assert re.search(r"sdnmpi\[0\]: bcast plan comm=0 root=0 \(10\.255\.0\.1\) ranks=3 hosts=3: ok "
                     r"group=239\.77\.\d+\.\d+:\d+ switches=3 top=0000000000000101 in \d+\.\d+s "
                     r"\(controller total 0\.500s plan 0\.125s install 0\.250s\)", text)
    assert re.search(r"sdnmpi\[0\]: bcast comm=0 root=0 epoch=\d+ round=0: sent 723 datagrams in", text)
    assert re.search(r"sdnmpi\[1\]: bcast comm=0 root=0 epoch=\d+ round=0: have 723 of 723 datagrams "
                     r"\(complete\)", text)
    assert re.search(r"sdnmpi\[0\]: bcast comm=0 root=0 epoch=\d+ bytes=1048576 datagrams=723: multicast, "
                     r"\d+ rounds?, \d+ resent, \d+ by PMPI_Bcast, in", text)
    assert "sdnmpi[2]: bcast count=1000 root=0: PMPI_Bcast (below SDN_MPI_BCAST_MIN_BYTES)" in text
    assert re.search(r"sdnmpi\[0\]: bcast count=\d+ root=\d: PMPI_Bcast \(non-contiguous datatype\)", text)
    # Only the root's type has gaps: the others learn it from the agreement.
    assert re.search(r"sdnmpi\[\d\]: bcast count=\d+ root=\d: PMPI_Bcast \(another rank cannot use multicast "
                     r"for this call\)", text)
    assert "sdnmpi[1]: bcast count=0 root=0: PMPI_Bcast (empty message)" in text


def test_receiver_socket_failure_is_agreed(built, stub_factory, netns):
    """A receiver that cannot bind the group's port makes every rank fall back for that root."""
    stub = stub_factory(netns=netns)
    with in_netns(netns):
        squatter = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        squatter.bind(("0.0.0.0", stub.port_base))   # the first tree's port, without SO_REUSEADDR
        out = run_check(4, "any", sdn_env(stub, 4, SDN_MPI_VERBOSE=1), quick=True, netns=netns)
    finally:
        squatter.close()
    assert re.search(r"sdnmpi\[[123]\]: bcast comm=0 root=0: cannot open the receiving socket \(bind to the "
                     r"group: Address already in use\)", out["stderr"])
    assert "sdnmpi[0]: bcast comm=0 root=0: some rank could not open its socket, falling back for this root" \
        in out["stderr"]
    assert out["pmpi"] > 0 and out["mcast"] > 0   # the other roots and communicators still multicast


# ---------------------------------------------------------------------------------------------
# lost datagrams (in a private network namespace)
@pytest.mark.parametrize("percent", [2, 5])
def test_lost_datagrams_are_repaired(built, stub_factory, netns, percent):
    stub = stub_factory(netns=netns)
    nft_drop(netns, "%d-%d" % (stub.port_base, stub.port_base + 99), percent)
    out = run_check(4, "sdn", sdn_env(stub, 4, SDN_MPI_VERBOSE=1), quick=True, repeat=3, netns=netns)
    assert nft_dropped(netns) > 0
    assert out["resent"] > 0 and out["rounds"] > out["mcast"] + out["mcast_pmpi"]
    assert "multicasting them again" in out["stderr"]


def test_black_hole_finishes_with_pmpi_and_gives_up_the_tree(built, stub_factory, netns):
    """A group nobody forwards: no datagram ever arrives. Every call still completes correctly
    (PMPI_Bcast finishes it after the first round); after two such calls in a row the tree is
    planned again, twice, and then given up."""
    stub = stub_factory(netns=netns)
    nft_drop(netns, "%d-%d" % (stub.port_base, stub.port_base + 99), 100)
    env = sdn_env(stub, 4, SDN_MPI_VERBOSE=1, SDN_MPI_BCAST_IDLE_MS=100)
    out = run_check(4, "any", env, quick=True, repeat=3, netns=netns)
    text = out["stderr"]
    assert nft_dropped(netns) > 0
    assert out["mcast"] == 0 and out["mcast_pmpi"] > 0 and out["finished"] > 0
    assert re.search(r"sdnmpi\[[123]\]: bcast comm=0 root=0 epoch=0 round=0: have 0 of \d+ datagrams "
                     r"\(idle timeout\)", text)
    assert "finishing them with PMPI_Bcast (a rank heard nothing of this round)" in text
    assert not re.search(r"round=1", text)   # no repair round is wasted on a black hole
    for k in (1, 2):
        assert "sdnmpi[0]: bcast comm=0 root=0: 2 calls in a row reached some rank not at all, planning the " \
               "tree again (%d of 2)" % k in text
    assert "sdnmpi[0]: bcast comm=0 root=0: 2 calls in a row reached some rank not at all, PMPI_Bcast for " \
           "this root from now on" in text
    world_root0 = [r for _, r in stub.requests("plan_bcast") if r["comm"] == 0 and r["root"] == "10.255.0.1"]
    assert len(world_root0) == 3
    assert out["seconds"] < 90


def test_idle_timeout_bounds_a_lost_end_marker(built, stub_factory, netns):
    """With every datagram but the end markers dropped at random, no rank waits longer than the
    idle time per round, and the rounds knob bounds the rounds."""
    stub = stub_factory(netns=netns)
    nft_drop(netns, "%d-%d" % (stub.port_base, stub.port_base + 99), 30)
    env = sdn_env(stub, 3, SDN_MPI_BCAST_ROUNDS=2, SDN_MPI_BCAST_IDLE_MS=50, SDN_MPI_VERBOSE=1)
    out = run_check(3, "sdn", env, quick=True, netns=netns)
    assert out["mcast_pmpi"] > 0 and out["finished"] > 0
    assert "no rounds left" in out["stderr"]
    assert not re.search(r"round=[2-9]", out["stderr"])


# ---------------------------------------------------------------------------------------------
# transparent mode
def test_preload_unmodified_binary(built, stub_factory):
    args = ["200000:0", "1048576:2x2", "65536:1", "1000:0"]
    plain, _ = mpirun(4, [PLAIN] + args)
    assert plain.returncode == 0 and "plain_bcast OK" in plain.stdout, plain.stdout + plain.stderr
    assert "sdnmpi[" not in plain.stderr
    stub = stub_factory()
    env = dict(sdn_env(stub, 4, SDN_MPI_VERBOSE=1), LD_PRELOAD=str(PRELOAD))
    pre, _ = mpirun(4, [PLAIN] + args, env)
    assert pre.returncode == 0 and "plain_bcast OK" in pre.stdout, pre.stdout + pre.stderr[-3000:]
    assert len(re.findall(r"^bcast bytes=\d+ root=\d rep=\d seconds=\S+ errors=0$", pre.stdout, re.M)) == 5
    assert re.search(r"bytes=1048576 datagrams=723: multicast", pre.stderr)
    assert "PMPI_Bcast (below SDN_MPI_BCAST_MIN_BYTES)" in pre.stderr
    assert sorted((tuple(r["members"]), r["root"]) for _, r in stub.requests("plan_bcast")) == \
        sorted({(tuple(fake_hosts(4, 4)), "10.255.0.%d" % (root + 1)) for root in (0, 2, 1)})
    # --split: the two halves
    pre, _ = mpirun(4, [PLAIN, "--split", "1048576:1", "300000:0"], env)
    assert pre.returncode == 0 and "plain_bcast OK" in pre.stdout, pre.stdout + pre.stderr[-3000:]
