"""libsdnmpi (C): SDN_MPI_Reduce's two pipelined chains (reduce_chain.c) against PMPI_Reduce under
mpirun on localhost, with the stub controller of libsdnmpi_harness: bit for bit (coll_check's
small integers are exact in every type), the path every call took, and the routes the library asks
for (both cycles of cycles.h, in the private communicator's leaf order).

`SDN_MPI_FAKE_HOSTS=N` gives rank r fabric address 10.255.0.(r % N + 1); the stub's locate with
`leaves=L` puts host i on leaf (i's last octet) % L, so the private communicator's ranks are
reordered and the two cycles differ (from three leaves on).
"""
import re

import pytest

import test_libsdnmpi_coll as coll
from libsdnmpi_checks import leaf_sizes_of
from libsdnmpi_harness import fake_hosts, leaf_of

pytestmark = pytest.mark.usefixtures("mpirun_path")   # a missing mpirun fails, never skips
CHAINS, REDSCAT = 3, 2   # sdnmpi_test_last_reduce()


def run_check(np, env, reduce_path, quick=True, shell_prefix=None):
    return coll.run_check(np, "sdn", env, quick=quick, seed=900 + np, shell_prefix=shell_prefix,
                          options=("--reduce-path", reduce_path))


def leaf_order(np, leaves):
    """The private communicator's ranks (world ranks, leaf by leaf) and its leaves' sizes."""
    hosts = fake_hosts(np, np)
    order = sorted(range(np), key=lambda r: (leaf_of(hosts[r], leaves), hosts[r], r))
    return hosts, order, leaf_sizes_of(hosts, order, leaves)


def chain_cycles(sizes):
    """Both cycles as (from, to) positions in the leaf order, written from the rule in words:
    cycle 0 visits the leaves in order, cycle 1 in reverse order, each leaf's ranks in order."""
    starts = [sum(sizes[:g]) for g in range(len(sizes))]
    leaves = [list(range(s, s + n)) for s, n in zip(starts, sizes)]
    cycles = []
    for visit in (leaves, leaves[::-1]):
        seq = [r for leaf in visit for r in leaf]
        cycles.append([(seq[i], seq[(i + 1) % len(seq)]) for i in range(len(seq))])
    return cycles


def cycles_request(np, leaves):
    """The steps of the cycles' routes' request: one step of both cycles' host pairs (the private
    communicator's leaf order; a pair both cycles use counted twice), as [[src, dst, count]]."""
    hosts, order, sizes = leaf_order(np, leaves)
    step = {}
    for cycle in chain_cycles(sizes):
        for a, b in cycle:
            pair = (hosts[order[a]], hosts[order[b]])
            step[pair] = step.get(pair, 0) + 1
    return [sorted([s, d, c] for (s, d), c in step.items())]


@pytest.mark.parametrize("np,leaves,segment", [(2, 2, "16"), (3, 2, "1"), (5, 3, "40"), (6, 3, "8"),
                                                (8, 4, "16"), (7, 4, "24")])
def test_chains_give_pmpis_bits(built, stub_factory, np, leaves, segment):
    """Every eligible Reduce runs the chains (SDN_MPI_REDUCE_CHAIN_MIN=0) in segments of a few
    bytes (one element at "1": uneven last segments, many messages per chain), on every datatype
    and op, every root, in place or not, on the world, its reverse and its halves; p = 2 .. 8."""
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_MIN_BYTES": "1",
           "SDN_MPI_REDUCE_CHAIN_MIN": "0", "SDN_MPI_REDUCE_SEGMENT": segment}
    out = run_check(np, env, CHAINS, quick=np > 3)
    assert out["reduce_sdn"] > 0
    stub.wait_idle()
    assert stub.errors == []


@pytest.mark.parametrize("np,leaves", [(8, 4), (6, 3), (4, 2)])
def test_chain_plan_routes_both_cycles(built, stub_factory, np, leaves):
    """The first chained Reduce on a communicator asks once for one step holding both cycles' host
    pairs in the private communicator's leaf order (same-host pairs dropped, a pair both cycles use
    counted twice), with the sdn-optimal planner."""
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_MIN_BYTES": "1",
           "SDN_MPI_REDUCE_CHAIN_MIN": "0", "SDN_MPI_VERBOSE": "1"}
    out = run_check(np, env, CHAINS)
    stub.wait_idle()
    _hosts, order, _sizes = leaf_order(np, leaves)
    want = cycles_request(np, leaves)
    plans = [r for _i, r in stub.requests("plan_allreduce") if r["steps"] == want]
    assert plans and all(r["planner"] == "sdn-optimal" for r in plans)
    if leaves >= 3:   # the cycles differ between leaves; both run each leaf's pairs the same way
        assert all(c == (2 if leaf_of(s, leaves) == leaf_of(d, leaves) else 1) for s, d, c in want[0])
        assert not {(s, d) for s, d, _c in want[0]} & {(d, s) for s, d, _c in want[0]}
    assert re.search(r"sdnmpi\[%d\]: cycles plan comm=\d+ ranks=%d steps=1 pairs=%d "
                     r"planner=sdn-optimal: ok" % (order[0], np, len(want[0])), out["stderr"]), out["stderr"][-3000:]
    assert re.search(r"reduce comm=0 count=\d+ bytes=\d+ root=\d+: two chains", out["stderr"])


def test_small_reduces_keep_reduce_scatter_gather(built, stub_factory):
    """Below SDN_MPI_REDUCE_CHAIN_MIN (here 1 MiB, above all of coll_check's vectors) and with
    "unlimited", reduce-scatter + gather on the allreduce plan's routes, and no chain plan."""
    for knob in ("1m", "unlimited"):
        stub = stub_factory(leaves=2)
        env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_MIN_BYTES": "1",
               "SDN_MPI_VERBOSE": "1", "SDN_MPI_REDUCE_CHAIN_MIN": knob}
        out = run_check(4, env, REDSCAT)
        assert out["reduce_sdn"] > 0
        assert "reduce-scatter + gather" in out["stderr"]
        assert "cycles plan" not in out["stderr"] and "two chains" not in out["stderr"]


def test_default_is_chains_from_64_kib(built, stub_factory):
    """By default (SDN_MPI_REDUCE_CHAIN_MIN unset) a Reduce of 64 KiB or more runs the chains, a
    smaller one reduce-scatter + gather: coll_check's largest vectors (4099 elements of 16 bytes,
    64.06 KiB) run the chains, its 300-element ones do not."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_MIN_BYTES": "1",
           "SDN_MPI_VERBOSE": "1"}
    out = coll.run_check(4, "sdn", env, quick=False, seed=904)
    chained = [int(b) for b in re.findall(r"reduce comm=\d+ count=\d+ bytes=(\d+) root=\d+: two chains", out["stderr"])]
    rest = [int(b) for b in re.findall(r"reduce comm=\d+ count=\d+ bytes=(\d+) root=\d+: reduce-scatter", out["stderr"])]
    assert chained and rest
    assert min(chained) >= 64 * 1024 > max(rest)


def test_chain_knobs_are_world_rank_0s(built, stub_factory):
    """SDN_MPI_REDUCE_CHAIN_MIN and SDN_MPI_REDUCE_SEGMENT are agreed at SDN_MPI_Init: ranks whose
    environments say otherwise (rank r: chains from r KiB on, segments of 3 r + 1 bytes) still run
    world rank 0's choice (chains for every vector, 1-byte segments), else their messages would not
    match."""
    stub = stub_factory(leaves=3)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "6", "SDN_MPI_MIN_BYTES": "1"}
    prefix = ("SDN_MPI_REDUCE_CHAIN_MIN=$((OMPI_COMM_WORLD_RANK * 1024))"
              " SDN_MPI_REDUCE_SEGMENT=$((OMPI_COMM_WORLD_RANK * 3 + 1))")
    out = run_check(6, env, CHAINS, shell_prefix=prefix)
    assert out["reduce_sdn"] > 0


def test_refused_chain_plan_keeps_reduce_scatter_gather(built, stub_factory):
    """A controller that refuses the chains' routes (here: every one-step plan; the allreduce and
    alltoall plans of 6 ranks and of the halves' 3 have more steps) leaves reduce-scatter + gather
    on the allreduce plan's routes, with PMPI's bits."""
    stub = stub_factory(mode="error_one_step_plan", leaves=3)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "6", "SDN_MPI_MIN_BYTES": "1",
           "SDN_MPI_REDUCE_CHAIN_MIN": "0", "SDN_MPI_VERBOSE": "1"}
    out = run_check(6, env, REDSCAT)
    assert out["reduce_sdn"] > 0
    assert re.search(r"cycles plan comm=\d+ ranks=6 steps=1 pairs=\d+: failed", out["stderr"])
    assert "two chains" not in out["stderr"]
