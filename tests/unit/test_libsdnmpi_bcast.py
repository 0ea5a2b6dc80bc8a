"""libsdnmpi's SDN_MPI_Bcast against PMPI_Bcast under mpirun on localhost: the plan_bcast request,
the multicast protocol over loopback (SDN_MPI_FAKE_HOSTS makes the ranks look like several hosts;
their sockets then use 127.0.0.1), repairs when datagrams are lost, the PMPI_Bcast finish when
none arrive at all, and every fallback.

The stub controller (libsdnmpi_harness.StubController) answers plan_bcast with a multicast group
and port of its choosing (or fails in one of several ways). Lossy and black-hole runs happen in a
private network namespace (`ip netns`), where an nftables rule drops the group's datagrams at the
receivers; the stub's listening socket is created inside that namespace so that the ranks can
reach it.
"""
import functools
import json
import re
import socket
import struct
import subprocess
import uuid

import msgpack
import pytest

import check_runner
import libsdnmpi_harness as harness
from libsdnmpi_harness import LIB, PRELOAD, decode, fake_hosts, frame_body, in_netns, tool
from sdnmpi.controller import rpc_schema

CHECK = LIB / "tests" / "bcast_check"
PLAIN = LIB / "tests" / "plain_bcast"
MPI_TIMEOUT = 240
SUMMARY = re.compile(r"bcast_check: p=(?P<p>\d+) cases=(?P<cases>\d+) failures=(?P<failures>\d+) "
                     r"paths pmpi=(?P<pmpi>\d+) mcast=(?P<mcast>\d+) mcast_pmpi=(?P<mcast_pmpi>\d+) "
                     r"rounds=(?P<rounds>\d+) resent=(?P<resent>\d+) finished=(?P<finished>\d+)")
# This file's stubs: job 11, and one fixed plan_allreduce reply (only the preload test's
# MPI_Allreduce calls ask for plans).
BCAST_STUB = {"job": 11, "server": "sdnmpi-bcast-stub 0",
              "plan_reply": {"flows": 1, "max_load": [1], "lower_bound": [1], "cached": False}}
# Loopback is fast; oversubscribed ranks on 2 cores are not: this rate loses some datagrams now
# and then, which exercises the repair rounds too.
LOCAL_RATE = "400"


# ---------------------------------------------------------------------------------------------
# network namespaces
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
@pytest.fixture
def stub_factory(stub_factory):
    """conftest's stub_factory, with this file's job id, server name and plan_allreduce reply."""
    return functools.partial(stub_factory, **BCAST_STUB)


# ---------------------------------------------------------------------------------------------
# running MPI programs
mpirun = functools.partial(harness.mpirun, timeout=MPI_TIMEOUT)


def run_check(np, expect, env=None, quick=False, big=False, repeat=0, seed=None, netns=None, timeout=MPI_TIMEOUT):
    argv = [CHECK, "--expect", expect, "--seed", seed if seed is not None else 500 + np]
    if quick:
        argv.append("--quick")
    if big:
        argv.append("--big")
    if repeat:
        argv += ["--repeat", repeat]
    return check_runner.run_check(np, argv, SUMMARY, env, timeout=timeout, netns=netns)


def sdn_env(stub, nhosts, **extra):
    """Multicast for every communicator spanning hosts: SDN_MPI_BCAST_MIN_HOSTS=2, so that two-host
    communicators exercise the protocol too (test_two_hosts_use_pmpi_by_default: the default)."""
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts),
           "SDN_MPI_BCAST_RATE_MBPS": LOCAL_RATE, "SDN_MPI_BCAST_MIN_HOSTS": "2"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


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
    for name in ("bcast.o", "bcast_plan.o", "bcast_mcast.o", "bcast_mcast_send.o", "bcast_mcast_recv.o",
                 "bcast_mcast_finish.o", "bcast_wire.o", "mcast.o"):
        undefined = subprocess.run(["nm", "-u", str(built / "build" / name)], capture_output=True, text=True,
                                   check=True).stdout
        assert not re.search(r"\bMPI_[A-Z]", undefined), "%s calls MPI_* instead of PMPI_*" % name
    assert "SDN_MPI_Bcast" in (built / "include" / "sdnmpi.h").read_text()


def test_plan_bcast_request_passes_the_controller_schema(built):
    members = ["10.0.0.%d" % (r % 3 + 1) for r in range(7)]
    body = frame_body(tool("encode", "plan_bcast", 9, "42:c0ffee", 5, "10.0.0.2", *members))
    raw = msgpack.unpackb(body, raw=False)
    assert raw == {"v": 1, "id": 9, "op": "plan_bcast", "job": 42, "token": "c0ffee", "comm": 5, "root": "10.0.0.2",
                   "members": members}
    req = rpc_schema.decode_request(body)
    assert req.op == "plan_bcast" and req.args == {"job": 42, "token": "c0ffee", "comm": 5, "root": "10.0.0.2",
                                                   "members": ["10.0.0.1", "10.0.0.2", "10.0.0.3"], "trees": 1}


def test_plan_bcast_request_with_trees(built):
    members = ["10.0.0.%d" % (r % 3 + 1) for r in range(5)]
    body = frame_body(tool("encode", "plan_bcast_trees", 9, "42:c0ffee", 5, 3, "10.0.0.2", *members))
    raw = msgpack.unpackb(body, raw=False)
    assert raw["trees"] == 3 and raw["members"] == members
    req = rpc_schema.decode_request(body)
    assert req.args["trees"] == 3
    for bad in (0, 9):
        with pytest.raises(subprocess.CalledProcessError):
            tool("encode", "plan_bcast_trees", 9, "42:c0ffee", 5, bad, "10.0.0.2", *members)


def test_plan_bcast_reply_with_trees_decoding(built):
    trees = [{"group": "239.77.0.%d" % i, "port": 47000 + i, "switches": 3, "top": "%016x" % (0x100 + i)}
             for i in range(1, 4)]
    real = rpc_schema.encode_reply(4, group="239.77.0.1", port=47001, switches=3, top="0000000000000101",
                                   cached=False, trees=trees)
    got = json.loads(tool("decode", stdin=frame_body(real)))
    assert got["valid"] and got["n_trees"] == 3
    assert got["trees"] == [{"group": t["group"], "port": t["port"]} for t in trees]
    old = decode({"v": 1, "id": 1, "status": "ok", "group": "239.77.0.1", "port": 47001})
    assert old["n_trees"] == 0 and old["trees"] == []
    many = [{"group": "239.77.0.%d" % i, "port": 47000 + i} for i in range(1, 10)]   # 9 > SDNMPI_RPC_MAX_TREES
    got = decode({"v": 1, "id": 1, "status": "ok", "trees": many})
    assert got["n_trees"] == 9 and got["trees"] == [{"group": t["group"], "port": t["port"]} for t in many[:8]]
    for bad in ({"trees": 1}, {"trees": [1]}, {"trees": [{"group": "239.77.0.1"}]},
                {"trees": many + [{"group": 5, "port": 1}]},
                {"trees": [{"group": 5, "port": 1}]}, {"trees": [{"group": "239.77.0.1", "port": "1"}]}):
        assert decode(dict({"v": 1, "id": 1, "status": "ok"}, **bad)) == {"valid": False}, bad


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


@pytest.mark.parametrize("np", [2, 4])
def test_two_hosts_use_pmpi_by_default(built, stub_factory, np):
    """With one receiving host the switches have nothing to copy: PMPI_Bcast, and no tree."""
    stub = stub_factory()
    env = sdn_env(stub, 2, SDN_MPI_VERBOSE=1)
    del env["SDN_MPI_BCAST_MIN_HOSTS"]
    out = run_check(np, "pmpi", env, quick=True)
    assert out["mcast"] == out["mcast_pmpi"] == 0 and out["pmpi"] == out["cases"]
    assert stub.requests("plan_bcast") == [] and stub.errors == []
    assert re.search(r"sdnmpi\[0\]: bcast plan comm=0 root=\d+ ranks=%d hosts=2: fewer than "
                     r"SDN_MPI_BCAST_MIN_HOSTS=3 hosts, PMPI_Bcast" % np, out["stderr"])


@pytest.mark.parametrize("mode,reason", [
    ("error_bcast", r"controller error: host 10\.255\.0\.\d is not in the topology"),
    ("not_group", r"reply without a valid group \(\"10\.1\.2\.3\"\)"),
    ("silent_bcast", r"no reply: Connection timed out"),
])
def test_failed_plans_fall_back(built, stub_factory, mode, reason):
    stub = stub_factory(mode)
    env = sdn_env(stub, 4, SDN_MPI_VERBOSE=1)
    if mode == "silent_bcast":
        env["SDN_MPI_TIMEOUT_MS"] = "1000"
    out = run_check(4, "pmpi", env, quick=True)
    assert re.search(r"sdnmpi\[\d\]: bcast plan comm=\d+ root=\d+ \(10\.255\.0\.\d\) ranks=\d hosts=\d: failed "
                     r"after \S+ \(" + reason, out["stderr"]), out["stderr"][-3000:]
    assert "no multicast tree for this root" in out["stderr"]
    plans = stub.requests("plan_bcast")
    if mode == "silent_bcast":
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
    stub.wait_idle()
    assert stub.errors == []
    plans = stub.requests("plan_bcast")
    assert all(r["job"] == 11 and r["token"] == stub.token for _, r in plans)
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


@pytest.mark.parametrize("np,nhosts", [(3, 3), (5, 3), (8, 4)])
def test_multicast_over_two_trees_equals_pmpi(built, stub_factory, np, nhosts):
    """The message split over two trees (issue 17): datagram i on tree i mod 2, bit-exact."""
    stub = stub_factory(bcast_trees=4)
    out = run_check(np, "sdn", sdn_env(stub, nhosts, SDN_MPI_VERBOSE=1), big=np == 5, quick=np != 5)
    assert out["mcast"] + out["mcast_pmpi"] > 0
    plans = stub.requests("plan_bcast")
    assert plans and all(r["trees"] == 2 for _, r in plans)   # SDN_MPI_BCAST_TREES' default
    assert re.search(r"sdnmpi\[0\]: bcast plan comm=0 root=0 .* trees=2 switches=3", out["stderr"])
    assert re.search(r"datagrams=\d+: multicast, \d+ rounds?, .* 2 trees, pacing", out["stderr"])
    assert stub.errors == []


def test_bcast_trees_knob_and_an_older_controller(built, stub_factory):
    stub = stub_factory(bcast_trees=4)
    out = run_check(3, "sdn", sdn_env(stub, 3, SDN_MPI_VERBOSE=1, SDN_MPI_BCAST_TREES=3), quick=True)
    plans = stub.requests("plan_bcast")
    assert plans and all(r["trees"] == 3 for _, r in plans)
    assert "trees=3 switches" in out["stderr"] and " 3 trees, pacing" in out["stderr"]
    old = stub_factory()   # answers without `trees`: one tree
    out = run_check(3, "sdn", sdn_env(old, 3, SDN_MPI_VERBOSE=1), quick=True)
    assert out["mcast"] > 0 and "trees=1 switches" in out["stderr"] and " 1 tree, pacing" in out["stderr"]
    one = stub_factory(bcast_trees=4)
    run_check(3, "sdn", sdn_env(one, 3, SDN_MPI_BCAST_TREES=1), quick=True)
    plans = one.requests("plan_bcast")
    assert plans and all("trees" not in r for _, r in plans)   # 1: the field left out


def test_verbose_log(built, stub_factory):
    stub = stub_factory()
    out = run_check(3, "sdn", sdn_env(stub, 3, SDN_MPI_VERBOSE=1), quick=True)
    text = out["stderr"]
    assert re.search(r"sdnmpi\[0\]: bcast plan comm=0 root=0 \(10\.255\.0\.1\) ranks=3 hosts=3: ok "
                     r"group=239\.77\.\d+\.\d+:\d+ trees=1 switches=3 top=0000000000000101 in \d+\.\d+s "
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


def test_a_lossy_tree_is_repaired_and_slowed_down_on_its_own(built, stub_factory, netns):
    """Loss on one of two trees: its datagrams are sent again, and its rate, not the other
    tree's, goes down."""
    stub = stub_factory(netns=netns, bcast_trees=2)
    nft_drop(netns, "%d-%d" % (stub.port_base + 1, stub.port_base + 1), 20)   # tree 1 of the first plan
    out = run_check(4, "sdn", sdn_env(stub, 4, SDN_MPI_VERBOSE=1), quick=True, repeat=3, netns=netns)
    assert nft_dropped(netns) > 0 and out["resent"] > 0
    slowed = re.findall(r"sdnmpi\[0\]: bcast comm=0 root=0 round=\d+ tree=(\d): worst receiver lost \d+%, "
                        r"rate \S+ -> (\S+) Mbit/s", out["stderr"])
    lowered = [int(tree) for tree, rate in slowed if float(rate) < float(LOCAL_RATE)]
    assert lowered.count(1) > lowered.count(0), slowed


def test_a_silent_tree_finishes_with_pmpi_and_is_planned_again(built, stub_factory, netns):
    """One of two trees a black hole (what the receivers see when the controller dropped it after
    a topology change): the first round ends at once with PMPI_Bcast for that tree's datagrams,
    instead of repair rounds on a dead tree, and after two such calls the trees are planned again."""
    stub = stub_factory(netns=netns, bcast_trees=2)
    nft_drop(netns, "%d-%d" % (stub.port_base + 1, stub.port_base + 1), 100)   # tree 1 of the first plan
    env = sdn_env(stub, 4, SDN_MPI_VERBOSE=1, SDN_MPI_BCAST_IDLE_MS=100)
    out = run_check(4, "any", env, quick=True, repeat=3, netns=netns)
    text = out["stderr"]
    assert nft_dropped(netns) > 0 and out["mcast_pmpi"] > 0 and out["finished"] > 0
    assert "finishing them with PMPI_Bcast (a rank heard nothing of one of the trees)" in text
    assert not re.search(r"comm=0 root=0 epoch=\d+ round=1", text)   # no repair round on a dead tree
    assert "sdnmpi[0]: bcast comm=0 root=0: 2 calls in a row reached some rank not at all, planning the " \
           "tree again (1 of 2)" in text
    world_root0 = [r for _, r in stub.requests("plan_bcast") if r["comm"] == 0 and r["root"] == "10.255.0.1"]
    assert len(world_root0) == 3


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
