"""libsdnmpi (C): SDN_MPI_Allgather, SDN_MPI_Reduce and SDN_MPI_Alltoall against PMPI under mpirun
on localhost (libsdnmpi/tests/coll_check.c compares every result bit for bit), with the stub
controller of libsdnmpi_harness, without a controller, and under the preload library.

`SDN_MPI_FAKE_HOSTS=N` makes rank r report fabric address 10.255.0.(r % N + 1), so that the plans
carry real host pairs; with `leaves` the stub's locate puts hosts on several leaves, so the ranks of
the private communicator are reordered and the algorithms' rank maps matter.
"""
import functools
import json
import re

import pytest

import check_runner
import libsdnmpi_harness as harness
from libsdnmpi_harness import LIB, PRELOAD, fake_hosts

CHECK = LIB / "tests" / "coll_check"
PLAIN = LIB / "tests" / "plain_coll"
MPI_TIMEOUT = 240
SUMMARY = re.compile(r"coll_check: p=(?P<p>\d+) cases=(?P<cases>\d+) failures=(?P<failures>\d+) "
                     r"allgather sdn=(?P<allgather_sdn>\d+) pmpi=(?P<allgather_pmpi>\d+) "
                     r"reduce sdn=(?P<reduce_sdn>\d+) pmpi=(?P<reduce_pmpi>\d+) "
                     r"alltoall sdn=(?P<alltoall_sdn>\d+) pmpi=(?P<alltoall_pmpi>\d+)")

pytestmark = pytest.mark.usefixtures("mpirun_path")   # a missing mpirun fails, never skips

mpirun = functools.partial(harness.mpirun, timeout=MPI_TIMEOUT)


def run_check(np, expect, env=None, quick=False, seed=None, shell_prefix=None, options=()):
    """coll_check under mpirun; shell_prefix: shell words run before it in each rank (sh -c);
    options: more of coll_check's options."""
    argv = [CHECK, "--expect", expect, "--seed", seed if seed is not None else 500 + np, *options]
    if shell_prefix is not None:
        argv = ["sh", "-c", shell_prefix + ' exec "$0" "$@"'] + argv
    if quick:
        argv.append("--quick")
    return check_runner.run_check(np, argv, SUMMARY, env, timeout=MPI_TIMEOUT)


def shift_of_step(k, p):
    """The exchange's step k (1 .. p-1) sends d = shift_of_step(k, p) ranks ahead and receives from
    d behind: 1, 2, .., p/2, then p-1, p-2, .., p/2+1 (libsdnmpi's sdnmpi_alltoall_shift)."""
    return k if k <= p // 2 else p + p // 2 - k


def pairwise_host_steps(hosts, leaf_sizes=None):
    """The exchange's steps as the library must send them: rank q to the schedule's `to` (shifts:
    q + d (mod p), d the step's shift; with leaf_sizes, the leaf grid where it applies, from
    unit_tool: alltoall_sched.h); same-host pairs dropped, duplicates counted."""
    p = len(hosts)
    if leaf_sizes is None:
        tos = [[(q + shift_of_step(k, p)) % p for q in range(p)] for k in range(1, p)]
    else:
        tos = json.loads(harness.tool("a2a-sched", 1, *leaf_sizes))["to"]
    steps = []
    for to in tos:
        step = {}
        for q in range(p):
            if hosts[q] != hosts[to[q]]:
                step[hosts[q], hosts[to[q]]] = step.get((hosts[q], hosts[to[q]]), 0) + 1
        steps.append(sorted([s, d, c] for (s, d), c in step.items()))
    return steps


@pytest.mark.parametrize("np", range(1, 9))
def test_bit_exact_with_the_stub_controller(built, stub_factory, np):
    """p = 1 .. 8 (non-powers of two included), every datatype, in place or not: every result
    equals PMPI's bit for bit, and every eligible call took the SDN path."""
    stub = stub_factory(leaves=2 if np > 2 else None)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_MIN_BYTES": "1"}
    out = run_check(np, "sdn", env)
    if np > 1:
        assert out["allgather_sdn"] > 0 and out["reduce_sdn"] > 0 and out["alltoall_sdn"] > 0
    # the fallbacks (vector type, intercommunicator, user op, derived type) happened too
    assert out["allgather_pmpi"] > 0 and out["reduce_pmpi"] > 0 and out["alltoall_pmpi"] > 0
    stub.wait_idle()
    assert stub.errors == []
    if np == 1:
        return
    # one alltoall plan per communicator that spans hosts, with the per-step SDN-optimal planner
    plans = [r for _i, r in stub.requests("plan_allreduce") if r.get("planner") == "sdn-optimal"]
    assert plans, "no alltoall plan"
    steps = {len(r["steps"]) for r in plans}
    assert np - 1 in steps


@pytest.mark.parametrize("np,window", [(6, 1), (8, 2), (7, 3)])
def test_alltoall_window(built, stub_factory, np, window):
    """SDN_MPI_ALLTOALL_WINDOW bounds the exchange's steps in flight (the default, as above: 2): a
    blocking step loop (1) and the other windows give PMPI's bits too."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_MIN_BYTES": "1",
           "SDN_MPI_ALLTOALL_WINDOW": str(window)}
    out = run_check(np, "sdn", env, quick=True)
    assert out["alltoall_sdn"] > 0


@pytest.mark.parametrize("np,window,segment", [(5, 2, "3"), (8, 2, "1k"), (3, 1, "7")])
def test_alltoall_segments(built, stub_factory, np, window, segment):
    """SDN_MPI_ALLTOALL_SEGMENT cuts every block into messages of that many bytes (the last one the
    rest; at most 64 a block, so 3 and 7 bytes become block / 64 on the large blocks: remainders
    either way; 1 KiB splits only the large ones), all posted at once: PMPI's bits still, in
    place or not, on every communicator."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_MIN_BYTES": "1",
           "SDN_MPI_ALLTOALL_WINDOW": str(window), "SDN_MPI_ALLTOALL_SEGMENT": segment}
    out = run_check(np, "sdn", env, quick=True)
    assert out["alltoall_sdn"] > 0


def test_alltoall_segment_is_world_rank_0s(built, stub_factory):
    """The segment size is agreed at SDN_MPI_Init (world rank 0's): ranks that read different values
    still cut the same messages (else their receives would not match the sends). Here rank r's
    environment says 5 r + 1 bytes."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_MIN_BYTES": "1"}
    out = run_check(4, "sdn", env, quick=True,
                    shell_prefix="SDN_MPI_ALLTOALL_SEGMENT=$((OMPI_COMM_WORLD_RANK * 5 + 1))")
    assert out["alltoall_sdn"] > 0


@pytest.mark.parametrize("grid", [1, 0, None])
@pytest.mark.parametrize("np,leaves", [(4, 2), (6, 3), (8, 2)])
def test_alltoall_plan_is_the_exchange_of_the_reordered_ranks(built, stub_factory, np, leaves, grid):
    """The world communicator's exchange plan names the host pairs of the private communicator's
    order (leaf by leaf), one step per permutation: the leaf grid on these equal leaves with
    SDN_MPI_ALLTOALL_GRID=1 (the default), the shifts with 0."""
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_MIN_BYTES": "1"}
    if grid is None:    # unset: the default, the leaf grid
        grid = 1
    else:
        env["SDN_MPI_ALLTOALL_GRID"] = str(grid)
    out = run_check(np, "sdn", env, quick=True)
    assert out["alltoall_sdn"] > 0
    stub.wait_idle()
    hosts = fake_hosts(np, np)
    order = sorted(range(np), key=lambda r: (int(hosts[r].rsplit(".", 1)[1]) % leaves, hosts[r], r))
    want = pairwise_host_steps([hosts[r] for r in order], [np // leaves] * leaves if grid else None)
    # the leader is rank 0 of the private communicator (the first rank of the first leaf), on its
    # own connection; the reversed communicator's plan has the same hosts in the same leaf order
    plans = [r for _i, r in stub.requests("plan_allreduce") if r.get("planner") == "sdn-optimal"]
    assert plans and all(r["steps"] == want for r in plans if len(r["steps"]) == np - 1)
    # No connection carries data both ways while two steps are in flight (the default window):
    # not within a step (but the swap at shift p/2, p even, or the grid's intra-leaf swap at lane
    # shift m/2) and not in consecutive steps.
    for k, (step, nxt) in enumerate(zip(want, want[1:] + [[]]), start=1):
        sent = {(src, dst) for src, dst, _count in step}
        back = {(dst, src) for src, dst, _count in step + nxt}
        swap_ok = 2 * shift_of_step(k, np) == np if not grid else all(
            order.index(hosts.index(s)) // (np // leaves) == order.index(hosts.index(d)) // (np // leaves)
            for s, d, _c in step)
        assert not sent & back or swap_ok, (k, step, nxt)
        assert not {(s, d) for s, d, _c in step} & {(d, s) for s, d, _c in nxt}, (k, step, nxt)
    assert re.search(r"sdnmpi\[%d\]: alltoall comm=\d+ block=\d+ bytes=\d+: pairwise exchange, %s"
                     % (order[0], "leaf grid" if grid else "shifts"), out["stderr"]), out["stderr"][-3000:]
    assert re.search(r"sdnmpi\[%d\]: alltoall plan comm=\d+ ranks=%d steps=%d pairs=\d+ planner=sdn-optimal: ok"
                     % (order[0], np, np - 1), out["stderr"]), out["stderr"][-3000:]
    assert "allgather comm=0 " in out["stderr"] and "reduce comm=0 " in out["stderr"]


def test_alltoall_plan_sorts_each_step_by_dotted_quads(built, stub_factory):
    """With ten hosts, 10.255.0.1 .. 10.255.0.10, the dotted-quad order of a step's pairs differs
    from the numeric one ("10.255.0.10" sorts before "10.255.0.2"): the library sends each step in
    the dotted-quad order (sdnmpi_host_steps_from, as for every other plan). The order carries no
    meaning: the controller's schema, which the stub applies to every request, reads the step in
    numeric order as the same step."""
    np, leaves = 10, 2
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_MIN_BYTES": "1"}
    out = run_check(np, "sdn", env, quick=True)
    assert out["alltoall_sdn"] > 0
    hosts = fake_hosts(np, np)
    octet = [int(h.rsplit(".", 1)[1]) for h in hosts]
    # the private communicator's order: by leaf, then by address as a number (plan_leader.c)
    order = sorted(range(np), key=lambda r: (octet[r] % leaves, octet[r], r))
    want = pairwise_host_steps([hosts[r] for r in order], [np // leaves] * leaves)
    plans = [r for _i, r in stub.requests("plan_allreduce") if r.get("planner") == "sdn-optimal"
             and len(r["steps"]) == np - 1]
    assert plans and all(r["steps"] == want for r in plans) and stub.errors == []
    by_number = [sorted(step, key=lambda pair: [tuple(map(int, ip.split("."))) for ip in pair[:2]])
                 for step in want]
    assert by_number != want   # the two orders differ here
    assert harness.request_args(dict(plans[0], steps=by_number)) == harness.request_args(plans[0])


def test_planner_knob_overrides_the_alltoall_planner(built, stub_factory):
    stub = stub_factory()
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_PLANNER": "dmodk",
           "SDN_MPI_MIN_BYTES": "1"}
    run_check(4, "sdn", env, quick=True)
    stub.wait_idle()
    planners = {r.get("planner") for _i, r in stub.requests("plan_allreduce")}
    assert planners == {"dmodk"}


@pytest.mark.parametrize("np", [3, 4])
def test_no_controller_falls_back(built, np):
    out = run_check(np, "pmpi", {}, quick=True)
    assert out["allgather_sdn"] == out["reduce_sdn"] == out["alltoall_sdn"] == 0


def test_refused_plans_fall_back(built, stub_factory):
    stub = stub_factory(mode="error_plan")
    out = run_check(4, "pmpi", {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4"}, quick=True)
    assert out["allgather_sdn"] == out["reduce_sdn"] == out["alltoall_sdn"] == 0


def test_small_calls_stay_on_pmpi_by_default(built, stub_factory):
    """Without SDN_MPI_MIN_BYTES the three take the SDN path from 64 KiB on (the whole message for
    Allgather and Alltoall, the vector for Reduce); coll_check checks every call's path against
    that."""
    stub = stub_factory()
    out = run_check(4, "sdn", {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4"})
    assert out["allgather_sdn"] > 0 and out["reduce_sdn"] > 0 and out["alltoall_sdn"] > 0
    assert out["allgather_pmpi"] > out["allgather_sdn"] and out["alltoall_pmpi"] > out["alltoall_sdn"]


def test_size_window(built, stub_factory):
    """Below SDN_MPI_MIN_BYTES (of the whole message for Allgather and Alltoall, of the vector for
    Reduce) PMPI; coll_check knows the rule and checks every call's path."""
    stub = stub_factory()
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_MIN_BYTES": "4096"}
    out = run_check(4, "sdn", env, quick=True)
    assert out["allgather_sdn"] > 0 and out["allgather_pmpi"] > 0 and out["reduce_pmpi"] > 0


def test_preload_unmodified_binary(built, stub_factory):
    """MPI_Allgather, MPI_Reduce and MPI_Alltoall of a program that knows nothing of sdnmpi go the
    SDN way under LD_PRELOAD, and the program's own checks pass."""
    stub = stub_factory()
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_MIN_BYTES": "65536", "LD_PRELOAD": str(PRELOAD)}
    res, _seconds = mpirun(4, [PLAIN], env)
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]
    assert "plain_coll: ok" in res.stdout
    # 4 x 64 KiB: from SDN_MPI_ALLGATHER_CYCLES_MIN's default (256 KiB) on, the two cycles
    assert re.search(r"sdnmpi\[0\]: allgather comm=0 block=65536 bytes=262144: two cycles", res.stderr)
    # 64 KiB: from SDN_MPI_REDUCE_CHAIN_MIN's default (64 KiB) on, the two chains
    assert re.search(r"sdnmpi\[0\]: reduce comm=0 count=\d+ bytes=65536 root=\d+: two chains", res.stderr)
    assert re.search(r"sdnmpi\[0\]: alltoall comm=\d+ block=\d+ bytes=\d+: pairwise exchange", res.stderr)
