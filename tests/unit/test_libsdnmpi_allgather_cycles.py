"""libsdnmpi (C): SDN_MPI_Allgather along the two cycles (allgather_cycles.c) against PMPI_Allgather
under mpirun on localhost, with the stub controller of libsdnmpi_harness: bit for bit (coll_check
compares whole receive buffers), the path every call took, the cycles' routes asked once per
communicator (shared with SDN_MPI_Reduce's chains), and the knob SDN_MPI_ALLGATHER_CYCLES_MIN.

Fake hosts and leaves as in test_libsdnmpi_reduce_chain.py: rank r on 10.255.0.(r % N + 1), host i
on leaf (i's last octet) % L, so the private communicator's ranks are reordered, the leaves are
uneven when L does not divide p, and the two cycles differ from three leaves on.
"""
import re

import pytest

import test_libsdnmpi_coll as coll
from test_libsdnmpi_reduce_chain import cycles_request, leaf_order

pytestmark = pytest.mark.usefixtures("mpirun_path")   # a missing mpirun fails, never skips
RD, RING, CYCLES = 2, 3, 4   # sdnmpi_test_last_allgather()
CHAINS = 3                   # sdnmpi_test_last_reduce()
CYCLES_PLAN = re.compile(r"cycles plan comm=(\d+) ranks=(\d+) steps=1 pairs=\d+ planner=sdn-optimal: ok")


def run_check(np, env, allgather_path, quick=True, shell_prefix=None, options=()):
    return coll.run_check(np, "sdn", env, quick=quick, seed=700 + np, shell_prefix=shell_prefix,
                          options=("--allgather-path", allgather_path, *options))


def stub_env(stub, np, **knobs):
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_MIN_BYTES": "1",
           "SDN_MPI_VERBOSE": "1"}
    env.update(knobs)
    return env


@pytest.mark.parametrize("np,leaves", [(2, 2), (3, 2), (4, 2), (5, 3), (6, 3), (7, 4), (8, 4), (8, 3)])
def test_cycles_give_pmpis_bits(built, stub_factory, np, leaves):
    """Every eligible Allgather runs the two cycles (SDN_MPI_ALLGATHER_CYCLES_MIN=0): every
    datatype coll_check picks, blocks of 1 byte (one half empty), odd sizes (halves a byte apart)
    and large ones, in place or not, on the world, its reverse and its halves (odd p: uneven
    halves); p = 2 .. 8 on 2 .. 4 leaves, uneven ones at (3, 2), (5, 3), (7, 4), (8, 3)."""
    stub = stub_factory(leaves=leaves)
    out = run_check(np, stub_env(stub, np, SDN_MPI_ALLGATHER_CYCLES_MIN="0"), CYCLES, quick=np > 4)
    assert out["allgather_sdn"] > 0
    # 7 signed chars a block: halves of 3 and 4 bytes; without --quick also 1 char: 0 and 1
    assert re.search(r"allgather comm=\d+ block=7 bytes=%d: two cycles" % (7 * np), out["stderr"])
    assert np > 4 or re.search(r"allgather comm=\d+ block=1 bytes=%d: two cycles" % np, out["stderr"])
    stub.wait_idle()
    assert stub.errors == []


@pytest.mark.parametrize("np,leaves", [(8, 3), (6, 3)])
def test_allgather_asks_for_both_cycles(built, stub_factory, np, leaves):
    """Allgather alone (Reduce's chains off: "unlimited") asks for the routes of both cycles, one
    step of their host pairs in the private communicator's leaf order, with the sdn-optimal
    planner: the request of test_libsdnmpi_reduce_chain.py."""
    stub = stub_factory(leaves=leaves)
    env = stub_env(stub, np, SDN_MPI_ALLGATHER_CYCLES_MIN="0", SDN_MPI_REDUCE_CHAIN_MIN="unlimited")
    out = run_check(np, env, CYCLES)
    assert "two chains" not in out["stderr"]
    _hosts, order, _sizes = leaf_order(np, leaves)
    want = cycles_request(np, leaves)
    plans = [r for _i, r in stub.requests("plan_allreduce") if r["steps"] == want]
    assert plans and all(r["planner"] == "sdn-optimal" for r in plans)
    assert re.search(r"sdnmpi\[%d\]: cycles plan comm=\d+ ranks=%d steps=1 pairs=%d planner=sdn-optimal: ok"
                     % (order[0], np, len(want[0])), out["stderr"]), out["stderr"][-3000:]


def test_reduce_and_allgather_share_one_cycles_plan(built, stub_factory):
    """With both collectives on the cycles, each communicator's private communicator asks for the
    cycles' routes once (its leader logs one "cycles plan" line): the world, its reverse and the
    two halves of 3, four in all, not one per collective."""
    stub = stub_factory(leaves=3)
    env = stub_env(stub, 6, SDN_MPI_ALLGATHER_CYCLES_MIN="0", SDN_MPI_REDUCE_CHAIN_MIN="0")
    out = run_check(6, env, CYCLES, options=("--reduce-path", CHAINS))
    assert out["allgather_sdn"] > 0 and out["reduce_sdn"] > 0
    assert "two cycles" in out["stderr"] and "two chains" in out["stderr"]
    plans = CYCLES_PLAN.findall(out["stderr"])
    assert sorted(int(ranks) for _comm, ranks in plans) == [3, 3, 6, 6], out["stderr"][-3000:]
    assert len({comm for comm, _ranks in plans}) == 4
    assert "cycles plan" not in CYCLES_PLAN.sub("", out["stderr"])   # no other (failed) request


def test_cycles_knob_is_world_rank_0s(built, stub_factory):
    """SDN_MPI_ALLGATHER_CYCLES_MIN is agreed at SDN_MPI_Init: ranks whose environments say
    otherwise (rank r: from r KiB on) still run world rank 0's choice (the cycles for every call),
    else their messages would not match."""
    stub = stub_factory(leaves=3)
    env = stub_env(stub, 6)
    out = run_check(6, env, CYCLES,
                    shell_prefix="SDN_MPI_ALLGATHER_CYCLES_MIN=$((OMPI_COMM_WORLD_RANK * 1024))")
    assert out["allgather_sdn"] > 0
    assert not re.search(r"allgather comm=\d+ block=\d+ bytes=\d+: (ring|recursive doubling)", out["stderr"])


@pytest.mark.parametrize("np,knob,path", [(6, None, RING), (4, "unlimited", RD), (6, "1m", RING)])
def test_below_the_knob_todays_algorithms(built, stub_factory, np, knob, path):
    """Below SDN_MPI_ALLGATHER_CYCLES_MIN (default 256 KiB, above all of coll_check's quick
    buffers; 1 MiB) and with "unlimited", today's choice: recursive doubling for a power of two,
    the ring otherwise, and no cycles plan."""
    stub = stub_factory(leaves=3 if np == 6 else 2)
    env = stub_env(stub, np)
    if knob is not None:
        env["SDN_MPI_ALLGATHER_CYCLES_MIN"] = knob
    out = run_check(np, env, path)
    assert out["allgather_sdn"] > 0
    assert "cycles plan" not in out["stderr"] and "two cycles" not in out["stderr"]


def test_refused_cycles_plan_keeps_the_ring(built, stub_factory):
    """A controller that refuses the cycles' routes (every one-step plan; the allreduce and
    alltoall plans of 6 ranks and of the halves' 3 have more steps) leaves the ring on the
    allreduce plan's routes, with PMPI's bits."""
    stub = stub_factory(mode="error_one_step_plan", leaves=3)
    out = run_check(6, stub_env(stub, 6, SDN_MPI_ALLGATHER_CYCLES_MIN="0"), RING)
    assert out["allgather_sdn"] > 0
    assert re.search(r"cycles plan comm=\d+ ranks=6 steps=1 pairs=\d+: failed", out["stderr"])
    assert "two cycles" not in out["stderr"]
