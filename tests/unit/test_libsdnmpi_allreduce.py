"""SDN_MPI_Allreduce with a stub controller (libsdnmpi_harness.StubController) under mpirun on
localhost: every request against the Python schedule, rank order by leaf, Rabenseifner, the
hierarchical algorithm on even and uneven leaf layouts, and the library's log (the runners:
libsdnmpi_checks.py)."""
import re
import sys

import pytest

from libsdnmpi_checks import (HOSTS_PER_P, check_stub_records, expected_steps, leaf_sizes_of,
                              non_loopback_addresses, run_check, sorted_steps)
from libsdnmpi_harness import LIB, fake_hosts, leaf_of

sys.path.insert(0, str(LIB.parent / "bench"))
import hier_trace  # noqa: E402  (bench/hier_trace.py reads SDN_MPI_HIER_TRACE's files)

pytestmark = pytest.mark.usefixtures("mpirun_path")   # a missing mpirun fails, never skips


@pytest.mark.parametrize("np", range(1, 10))
def test_with_controller_full_matrix(built, stub_factory, np):
    stub = stub_factory()
    nhosts = HOSTS_PER_P[np]
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts)}
    out = run_check(np, "sdn", env, calls_per_comm=3)
    assert out["rd"] > 0 and out["empty"] > 0
    if np > 1:
        assert out["rab"] > 0
    check_stub_records(stub, np, nhosts)


@pytest.mark.parametrize("np", [3, 5, 8])
def test_rabenseifner_for_small_vectors(built, stub_factory, np):
    stub = stub_factory()
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_RABENSEIFNER_MIN": "16"}
    out = run_check(np, "sdn", env, quick=True, seed=77)
    assert out["rab"] > out["rd"] > 0


@pytest.mark.parametrize("np", [4, 6, 8, 9])
def test_rabenseifner_in_the_controllers_order(built, stub_factory, np):
    """Loads falling step by step: the halving starts at the largest distance, and the results
    still equal PMPI's (allreduce_check compares every case)."""
    stub = stub_factory(loads="descending")
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_RABENSEIFNER_MIN": "16",
           "SDN_MPI_VERBOSE": "1"}
    out = run_check(np, "sdn", env, quick=True, seed=91)
    assert out["rab"] > out["rd"] > 0
    dims = (1 << (np.bit_length() - 1)).bit_length() - 1
    want = ",".join(str(1 << k) for k in reversed(range(dims)))
    assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=%d .* halving=\[%s\] in" % (np, want), out["stderr"])


@pytest.mark.parametrize("np,nhosts,leaves,old", [(8, 8, 2, False), (6, 3, 2, True), (9, 9, 3, False),
                                                  (8, 8, 2, True)])
def test_ranks_are_ordered_by_leaf(built, stub_factory, np, nhosts, leaves, old):
    """The leader learns where the hosts are (world rank 0 from register's reply; from locate if
    the controller's register reply has no locality, `old`) and orders the ranks leaf by leaf,
    then host by host: the plan's pairs are those of the reordered ranks, and the results still
    equal PMPI's."""
    stub = stub_factory(leaves=leaves, old_register=old)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts), "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_RABENSEIFNER_MIN": "16"}
    out = run_check(np, "sdn", env, quick=True, seed=93)
    assert out["rab"] > 0 and out["rd"] > 0
    assert "registered" in out["stderr"] and stub.token[:8] not in out["stderr"]   # verbose, yet no token
    assert stub.errors == []
    hosts = fake_hosts(np, nhosts)
    locates = [r for i, r in stub.requests("locate") if i == 0]
    if old:
        assert locates and locates[0]["hosts"] == hosts
        assert [r["op"] for r in stub.conns[0]["requests"][:2]] == ["register", "locate"]
    else:
        assert locates == []
    order = sorted(range(np), key=lambda r: (int(hosts[r].rsplit(".", 1)[1]) % leaves, hosts[r], r))
    world = [r for i, r in stub.requests("plan_allreduce") if i == 0 and r["comm"] == 0]
    want = expected_steps([hosts[r] for r in order], leaf_sizes_of(hosts, order, leaves))
    assert [sorted_steps(r["steps"]) for r in world] == [sorted_steps(want)]
    moved = sum(r != i for i, r in enumerate(order))
    assert "sdnmpi[0]: plan ranks=%d: ranks ordered by leaf and host (%d moved)" % (np, moved) in out["stderr"]
    # SDN_MPI_REORDER=0: no locate, the ranks keep their order
    stub2 = stub_factory(leaves=leaves)
    run_check(np, "sdn", dict(env, SDN_MPI_CONTROLLER=stub2.address, SDN_MPI_REORDER="0"), quick=True, seed=93)
    assert stub2.requests("locate") == []
    world = [r for i, r in stub2.requests("plan_allreduce") if i == 0 and r["comm"] == 0]
    assert [sorted_steps(r["steps"]) for r in world] == [sorted_steps(expected_steps(hosts))]


@pytest.mark.parametrize("np,nhosts,leaves,quick", [(4, 4, 2, True), (6, 6, 2, False), (8, 8, 4, False),
                                                    (8, 8, 2, True), (8, 4, 2, True)])
def test_hierarchical(built, stub_factory, np, nhosts, leaves, quick):
    """Leaves holding equal numbers of ranks (k = 2, 3, 4 per leaf; 2 or 4 leaves; 8 ranks on 4
    hosts too): the hierarchical algorithm, pipelined in 64-byte segments (many segments, some
    smaller than a chunk), from 1 byte on. Every datatype and op (the full matrix for p = 6 and
    8), in place; allreduce_check compares every result with PMPI's and across ranks."""
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts), "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_HIER_MIN": "1", "SDN_MPI_HIER_SEGMENT": "64"}
    out = run_check(np, "sdn", env, quick=quick, seed=95)
    assert out["hier"] > 0 and out["empty"] > 0
    assert re.search(r"sdnmpi\[0\]: allreduce comm=0 count=\d+ bytes=\d+: hierarchical", out["stderr"])
    # one segment, and the default threshold (hierarchical only for the larger counts)
    counts = []
    for extra in ({"SDN_MPI_HIER_SEGMENT": "0"}, {"SDN_MPI_HIER_MIN": "16384", "SDN_MPI_HIER_SEGMENT": "4096"}):
        out2 = run_check(np, "sdn", dict(env, SDN_MPI_CONTROLLER=stub_factory(leaves=leaves).address, **extra),
                         quick=True, seed=96)
        counts.append(out2["hier"])
    assert 0 < counts[1] < counts[0]


@pytest.mark.parametrize("np,nhosts,leaves,sizes", [(6, 6, 3, [2, 2, 2]), (8, 8, 3, [2, 3, 3]),
                                                    (7, 7, 2, [3, 4]), (5, 5, 2, [2, 3]),
                                                    (9, 9, 7, [1, 2, 2, 1, 1, 1, 1])])
def test_hierarchical_uneven_leaves(built, stub_factory, np, nhosts, leaves, sizes):
    """Leaves holding different numbers of ranks, or a number of leaves that is not a power of two:
    hierarchical (extra ranks fold into the smallest leaf's lanes, extra leaves into the first
    ones), every result as PMPI's; the plan carries the cross-leaf pairs as steps of their own,
    after recursive doubling's (primitives.schedule.hierarchical_cross_steps)."""
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts), "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_HIER_MIN": "1", "SDN_MPI_HIER_SEGMENT": "64"}
    out = run_check(np, "sdn", env, quick=True, seed=97)
    assert out["hier"] > 0   # (a half communicator on one leaf takes Rabenseifner)
    assert re.search(r"sdnmpi\[0\]: allreduce comm=0 count=\d+ bytes=\d+: hierarchical", out["stderr"])
    assert not re.search(r"sdnmpi\[0\]: allreduce comm=0 count=\d+ bytes=\d+: Rabenseifner", out["stderr"])
    hosts = fake_hosts(np, nhosts)
    order = sorted(range(np), key=lambda r: (leaf_of(hosts[r], leaves), hosts[r], r))
    assert leaf_sizes_of(hosts, order, leaves) == sizes
    world = [r for i, r in stub.requests("plan_allreduce") if i == 0 and r["comm"] == 0]
    want = expected_steps([hosts[r] for r in order], sizes)
    assert len(want) > len(expected_steps(hosts))
    assert [sorted_steps(r["steps"]) for r in world] == [sorted_steps(want)]


@pytest.mark.parametrize("leaves", [9, 17])
def test_hierarchical_leaf_fold_and_an_uneven_leaf(built, stub_factory, leaves):
    """One leaf of 2 ranks, the others of 1 (F = 1), and one leaf more than a power of two (the
    cross-leaf fold): 9 and 17 leaves; the forced hierarchical algorithm still gives PMPI's
    results. 18 ranks are more than the 10 whose 8-bit
    SUMs stayed below 256 with allreduce_check's old data: Open MPI 4.1's op/avx 8-bit SUM
    saturates, in an order-dependent way, so the uint8_t SUM differed from PMPI's though both were
    "right"; the check's 8-bit SUM terms now shrink with the number of ranks."""
    np = nhosts = leaves + 1
    stub = stub_factory(leaves=leaves)
    hosts = fake_hosts(np, nhosts)
    order = sorted(range(np), key=lambda r: (leaf_of(hosts[r], leaves), hosts[r], r))
    assert leaf_sizes_of(hosts, order, leaves) == [1, 2] + [1] * (leaves - 2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts), "SDN_MPI_HIER_MIN": "1",
           "SDN_MPI_HIER_SEGMENT": "96"}
    out = run_check(np, "sdn", env, quick=True, seed=100, force_hier=True)
    assert out["hier"] > 0


@pytest.mark.parametrize("np,nhosts,leaves,sizes", [(7, 3, 2, [2, 5]), (9, 9, 3, [3, 3, 3])])
def test_hierarchical_forced_on_any_layout(built, stub_factory, np, nhosts, leaves, sizes):
    """A leaf more than twice the smallest (two fold steps): the selection rule takes Rabenseifner,
    the forced hierarchical algorithm still gives PMPI's results, in place too, the full matrix."""
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts), "SDN_MPI_HIER_MIN": "1",
           "SDN_MPI_HIER_SEGMENT": "96"}
    hosts = fake_hosts(np, nhosts)
    order = sorted(range(np), key=lambda r: (leaf_of(hosts[r], leaves), hosts[r], r))
    assert leaf_sizes_of(hosts, order, leaves) == sizes
    out = run_check(np, "sdn", env, seed=98, force_hier=True)
    assert out["hier"] > 0
    if min(sizes) * 2 < max(sizes):
        out2 = run_check(np, "sdn", dict(env, SDN_MPI_CONTROLLER=stub_factory(leaves=leaves).address),
                         quick=True, seed=99)
        assert out2["hier"] == 0 and out2["rab"] > 0


def test_size_window(built, stub_factory):
    stub = stub_factory()
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_MIN_BYTES": "100",
           "SDN_MPI_MAX_BYTES": "20000", "SDN_MPI_RABENSEIFNER_MIN": "1048576"}
    out = run_check(4, "sdn", env, quick=True)
    assert out["pmpi"] > 0 and out["rd"] > 0 and out["rab"] == 0


# SDN_MPI_Allreduce's size threshold when SDN_MPI_MIN_BYTES is unset (libsdnmpi/src/env.h).
DEFAULT_MIN_BYTES = int(re.search(r"#define SDNMPI_ALLREDUCE_DEFAULT_MIN_BYTES (\d+)",
                                  (LIB / "src" / "env.h").read_text()).group(1))


def test_default_size_threshold(built, stub_factory):
    """Without SDN_MPI_MIN_BYTES the calls below the default threshold take PMPI_Allreduce and the
    others the SDN algorithms (allreduce_check checks every case's path and result: bit-exact where
    the op allows it); SDN_MPI_MIN_BYTES=0 takes the SDN path at every size, count 0 included."""
    base = {"SDN_MPI_FAKE_HOSTS": "4"}
    default = run_check(4, "sdn", dict(base, SDN_MPI_CONTROLLER=stub_factory().address, SDN_MPI_MIN_BYTES=None),
                        quick=True, seed=61)
    every = run_check(4, "sdn", dict(base, SDN_MPI_CONTROLLER=stub_factory().address, SDN_MPI_MIN_BYTES="0"),
                      quick=True, seed=61)
    assert default["cases"] == every["cases"]
    assert every["empty"] > 0 and every["rd"] > 0
    assert default["rd"] + default["rab"] + default["hier"] > 0
    if DEFAULT_MIN_BYTES > 0:   # count 0 and the small vectors fall back by default
        assert default["empty"] == 0 and default["pmpi"] > every["pmpi"] and default["rd"] < every["rd"]


def test_forced_pmpi_at_every_size(built, stub_factory):
    """The test hook's PMPI path (the bench's `--sdn-algs pmpi`): every call, whatever its size,
    falls back and gives PMPI_Allreduce's result."""
    env = {"SDN_MPI_CONTROLLER": stub_factory().address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_MIN_BYTES": "0"}
    out = run_check(4, "sdn", env, quick=True, seed=62, force="pmpi")
    assert out["pmpi"] == out["cases"] > 0


def test_forced_rd_below_min_bytes(built, stub_factory):
    """A forced algorithm ignores the size threshold (the bench times it where the rule falls
    back), not the other fallbacks (derived datatypes, user ops, intercommunicators)."""
    env = {"SDN_MPI_CONTROLLER": stub_factory().address, "SDN_MPI_FAKE_HOSTS": "4",
           "SDN_MPI_MIN_BYTES": str(1 << 40)}
    plain = run_check(4, "sdn", env, quick=True, seed=63)
    assert plain["rd"] == plain["rab"] == plain["empty"] == 0
    forced = run_check(4, "sdn", dict(env, SDN_MPI_CONTROLLER=stub_factory().address), quick=True, seed=63,
                       force="rd")
    assert forced["rd"] > 0 and forced["empty"] > 0 and forced["rab"] == forced["hier"] == 0
    assert 0 < forced["pmpi"] < plain["pmpi"]


def test_single_host_needs_no_request(built, stub_factory):
    stub = stub_factory()
    out = run_check(4, "sdn", {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FABRIC_IP": "10.9.9.9"}, quick=True)
    assert out["rd"] > 0
    assert stub.requests("register")[0][1]["hosts"] == ["10.9.9.9"] * 4
    assert stub.requests("plan_allreduce") == []
    assert len(stub.conns) == 1


def test_fabric_address_selection(built, stub_factory):
    stub = stub_factory()
    run_check(2, "any", {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FABRIC_SUBNET": "127.0.0.0/8"}, quick=True)
    assert stub.requests("register")[0][1]["hosts"] == ["127.0.0.1"] * 2
    stub = stub_factory()
    before = non_loopback_addresses()
    run_check(2, "any", {"SDN_MPI_CONTROLLER": stub.address}, quick=True)
    others = before | non_loopback_addresses()
    hosts = stub.requests("register")[0][1]["hosts"]
    # The controller is reached over loopback, so any other interface's address wins.
    assert hosts[0] == hosts[1] and (hosts[0] in others if others else hosts[0] == "127.0.0.1")



def test_verbose_log(built, stub_factory):
    stub = stub_factory()
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "2", "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_RABENSEIFNER_MIN": "1024"}
    out = run_check(2, "sdn", env, quick=True)
    lines = [line for line in out["stderr"].splitlines() if line.startswith("sdnmpi[")]
    assert lines and all(re.match(r"sdnmpi\[\d+\]: \S", line) for line in lines)
    text = "\n".join(lines)
    assert re.search(r"sdnmpi\[0\]: init: job 7 registered with 2 hosts at 127\.0\.0\.1:\d+ \(sdnmpi-stub 0\)", text)
    assert "sdnmpi[1]: init: job 7, SDN path on" in text
    assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=2 hosts=2 steps=1 pairs=2: ok flows=2 max_load=\[1\] "
                     r"halving=\[1\] in \d+\.\d+s \(controller total 1\.000s plan 0\.250s install 0\.500s, "
                     r"sent ahead at Init\)", text)
    assert re.search(r"sdnmpi\[1\]: allreduce comm=0 count=\d+ bytes=\d+: Rabenseifner", text)
    assert re.search(r"sdnmpi\[0\]: allreduce comm=0 count=7 bytes=\d+: recursive doubling", text)
    assert "sdnmpi[0]: allreduce count=301: PMPI_Allreduce (user-defined op)" in text
    assert "sdnmpi[1]: allreduce count=3: PMPI_Allreduce (intercommunicator)" in text
    assert "sdnmpi[0]: finalize: job 7 released" in text
    assert re.search(r"sdnmpi\[0\]: fabric address 10\.255\.0\.1 \(SDN_MPI_FAKE_HOSTS=2", text)




def _pipeline_trace(directory, np):
    """The SDN_MPI_HIER_TRACE files of one run: {(rank in its communicator, pid): [(header, rows)]}
    (allreduce_check also reduces over split communicators); every one of the np processes wrote."""
    files = {}
    for f in sorted(directory.glob("hier-*-*.txt")):
        _, rank, pid = f.stem.split("-")
        files[(int(rank), int(pid))] = hier_trace.parse_file(str(f))
    assert len({pid for _, pid in files}) == np
    return files


@pytest.mark.parametrize("np,nhosts,leaves,depth", [(8, 8, 4, "1"), (8, 8, 4, "3"), (7, 7, 2, "64")])
def test_hierarchical_pipeline_depth(built, stub_factory, tmp_path, np, nhosts, leaves, depth):
    """SDN_MPI_HIER_DEPTH segments in the pipeline's first step at once (1, 3, and more than there
    are segments; 7 ranks: uneven leaves; the default depth with many small segments:
    test_hierarchical*): every result as PMPI's, and the trace
    (SDN_MPI_HIER_TRACE) shows every segment take every step once, each step posted before it
    completed and after the previous one completed, never more than `depth` segments in the first
    step at once, and more than one at once when the depth allows it."""
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts), "SDN_MPI_HIER_MIN": "1",
           "SDN_MPI_HIER_SEGMENT": "2048", "SDN_MPI_HIER_DEPTH": depth, "SDN_MPI_HIER_TRACE": str(tmp_path)}
    out = run_check(np, "sdn", env, quick=True, seed=99)   # 2 KiB segments: up to 33 per call
    assert out["hier"] > 0
    files = _pipeline_trace(tmp_path, np)
    assert sum(len(calls) for calls in files.values()) > 0
    most_at_once = 0
    for (rank, _), calls in files.items():
        for hdr, rows in calls:
            assert hdr["rank"] == rank and 2 <= hdr["p"] <= np and hdr["depth"] == int(depth)
            assert hdr["t1"] >= hdr["t0"]
            assert sorted((s, i) for s, i, *_ in rows) == [(s, i) for s in range(hdr["nseg"])
                                                          for i in range(hdr["nsteps"])]
            hier_trace.step_kinds(hdr["nsteps"], hdr["lanes"], hdr["leaves"])   # a consistent layout
            by = {(s, i): (po, do) for s, i, po, do, *_ in rows}
            for (s, i), (po, do) in by.items():
                assert 0 <= po <= do
                if i > 0:
                    assert po >= by[(s, i - 1)][1]
            first = [by[(s, 0)] for s in range(hdr["nseg"])]
            for s, (po, _) in enumerate(first):   # segments in step 0 when s entered it
                at_once = 1 + sum(1 for s2, (po2, do2) in enumerate(first) if s2 != s and po2 <= po < do2)
                assert at_once <= int(depth)
                most_at_once = max(most_at_once, at_once)
    if int(depth) > 1:
        assert most_at_once > 1


def _segments(count, extent, segment):
    """allreduce_hier.c's number of segments of a call of count elements of extent bytes."""
    seg_elems = max(1, segment // extent)
    nseg = -(-count // seg_elems)
    segcount = -(-count // nseg)
    return -(-count // segcount)


@pytest.mark.parametrize("np,nhosts,leaves,lanes", [(8, 8, 2, 4), (8, 8, 4, 2)])
def test_hierarchical_segment_follows_the_leaf_layout(built, stub_factory, tmp_path, np, nhosts, leaves, lanes):
    """SDN_MPI_HIER_SEGMENT unset: 4 KiB per rank of a leaf, at least 8 KiB (allreduce_algorithms.h):
    16 KiB with 4 ranks a leaf, 8 KiB with 2; the trace's segment counts say which the calls took.
    Every result as PMPI's."""
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts), "SDN_MPI_HIER_MIN": "1",
           "SDN_MPI_HIER_TRACE": str(tmp_path)}
    out = run_check(np, "sdn", env, quick=True, seed=100)
    assert out["hier"] > 0
    want = max(8192, 4096 * lanes)
    checked = 0
    for calls in _pipeline_trace(tmp_path, np).values():
        for hdr, _rows in calls:
            if hdr["p"] == np and hdr["leaves"] == leaves and hdr["lanes"] == lanes:
                assert hdr["nseg"] == _segments(hdr["count"], hdr["extent"], want), hdr
                checked += hdr["count"] * hdr["extent"] > 2 * 16384   # where 8 and 16 KiB differ
    assert checked > 0
