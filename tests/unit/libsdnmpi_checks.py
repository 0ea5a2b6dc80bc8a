"""Runners and expectations shared by the libsdnmpi test files: allreduce_check under mpirun and
its summary, the plan steps the Python schedule expects, and what a stub controller must have
recorded for one allreduce_check run."""
import functools
import re
import shutil
import subprocess

import check_runner
import libsdnmpi_harness as harness
from libsdnmpi_harness import LIB, fake_hosts, leaf_of
from sdnmpi.primitives.schedule import (hierarchical_cross_steps, hierarchical_routes_needed, host_steps,
                                       recursive_doubling_steps)

CHECK = LIB / "tests" / "allreduce_check"
PLAIN = LIB / "tests" / "plain_allreduce"
MPI_TIMEOUT = 150
SUMMARY = re.compile(r"allreduce_check: p=(?P<p>\d+) cases=(?P<cases>\d+) failures=(?P<failures>\d+) "
                     r"paths pmpi=(?P<pmpi>\d+) rd=(?P<rd>\d+) rabenseifner=(?P<rab>\d+) empty=(?P<empty>\d+) "
                     r"hier=(?P<hier>\d+)")



# ---------------------------------------------------------------------------------------------
# running MPI programs
mpirun = functools.partial(harness.mpirun, timeout=MPI_TIMEOUT)


def run_check(np, expect, env=None, quick=False, calls_per_comm=0, seed=None, timeout=MPI_TIMEOUT,
              force_hier=False, force=None):
    """allreduce_check under mpirun; ``force``: "rd" or "pmpi", the path its test hook forces
    (``force_hier``: the hierarchical algorithm). With a controller SDN_MPI_MIN_BYTES defaults to 0
    here, so that the algorithms are checked at every size, below SDN_MPI_Allreduce's default
    threshold too; None leaves it unset (the library's default)."""
    env = with_min_bytes(env)
    argv = [CHECK, "--expect", expect]
    if quick:
        argv.append("--quick")
    if force_hier:
        argv.append("--force-hier")
    if force:
        argv.append("--force-" + force)
    if calls_per_comm:
        argv += ["--calls-per-comm", calls_per_comm]
    argv += ["--seed", seed if seed is not None else 1000 + np]
    return check_runner.run_check(np, argv, SUMMARY, env, timeout=timeout)


def with_min_bytes(env):
    """``env`` with SDN_MPI_MIN_BYTES=0 unless given when it names a controller (a None value:
    left unset) -- the checks that exercise SDN_MPI_Allreduce's algorithms at small sizes."""
    env = dict(env or {})
    if "SDN_MPI_CONTROLLER" in env:
        env.setdefault("SDN_MPI_MIN_BYTES", "0")
    return {key: value for key, value in env.items() if value is not None}


def expected_steps(hosts, leaf_sizes=None):
    """The plan's steps for ranks on ``hosts`` (in the private communicator's order): recursive
    doubling's, then the hierarchical algorithm's cross-leaf pairs when the leaf layout (leaf
    sizes, ranks leaf by leaf) needs routes of its own."""
    rank_steps = recursive_doubling_steps(len(hosts))
    if leaf_sizes and len(leaf_sizes) >= 2 and hierarchical_routes_needed(leaf_sizes):
        rank_steps = rank_steps + hierarchical_cross_steps(leaf_sizes)
    return [[[src, dst, count] for (src, dst), count in step] for step in host_steps(rank_steps, hosts)]


def leaf_sizes_of(hosts, order, leaves):
    """The ranks per leaf of the stub's layout, for ranks in ``order`` (leaf by leaf)."""
    sizes = {}
    for r in order:
        leaf = leaf_of(hosts[r], leaves)
        sizes[leaf] = sizes.get(leaf, 0) + 1
    return [sizes[leaf] for leaf in sorted(sizes)]


def sorted_steps(steps):
    return [sorted(map(list, step)) for step in steps]



# ---------------------------------------------------------------------------------------------
# what a stub controller must have recorded for one allreduce_check run
HOSTS_PER_P = {1: 1, 2: 2, 3: 3, 4: 2, 5: 3, 6: 4, 7: 3, 8: 8, 9: 4}


def comm_members(np):
    """The communicators allreduce_check plans, in order: world, even half, odd half, dup."""
    return {"world": list(range(np)), "even": list(range(0, np, 2)), "odd": list(range(1, np, 2)),
            "dup": list(range(np))}


def check_stub_records(stub, np, nhosts):
    """register carried every rank's address; one plan per communicator that spans hosts, from
    its leader, with the Python schedule; one connection per leader; release at the end."""
    stub.wait_idle()
    assert stub.errors == []
    hosts = fake_hosts(np, nhosts)
    registers = stub.requests("register")
    assert len(registers) == 1 and registers[0][0] == 0
    assert registers[0][1]["hosts"] == hosts
    conn0 = stub.conns[0]["requests"]
    # Init: register alone (its reply names the server and the hosts' leaves: no hello, no locate)
    assert conn0[0]["op"] == "register" and conn0[-1]["op"] == "release"
    assert not any(r["op"] in ("hello", "locate") for r in conn0)
    assert conn0[-1]["job"] == 7 and conn0[-1]["token"] == stub.token
    members = comm_members(np)
    needed = {name: expected_steps([hosts[r] for r in ranks]) for name, ranks in members.items()
              if ranks and any(step for step in expected_steps([hosts[r] for r in ranks]))}
    leaders = {0} | ({1} if "odd" in needed else set())
    assert len(stub.conns) == len(leaders), [c["requests"] for c in stub.conns]
    plans = stub.requests("plan_allreduce")
    assert len(plans) == len(needed), plans  # cached: no second request for any communicator
    by_conn0 = [r for i, r in plans if i == 0]
    want0 = [needed[name] for name in ("world", "even", "dup") if name in needed]
    assert [sorted_steps(r["steps"]) for r in by_conn0] == [sorted_steps(s) for s in want0]
    if "world" in needed:
        assert by_conn0[0]["comm"] == 0
    if "odd" in needed:
        odd = [r for i, r in plans if i == 1]
        assert len(odd) == 1 and sorted_steps(odd[0]["steps"]) == sorted_steps(needed["odd"])
        locate = ["locate"] if len(members["odd"]) >= 3 else []   # (the stub knows no leaves: no reordering)
        assert [r["op"] for r in stub.conns[1]["requests"]] == ["hello"] + locate + ["plan_allreduce"]
    ids = [r["comm"] for _, r in plans]
    assert len(set(ids)) == len(ids), ids
    assert all(r["job"] == 7 and r["token"] == stub.token for _, r in plans)  # every leader has it
    for conn in stub.conns:
        assert conn["closed"]



def non_loopback_addresses():
    """IPv4 addresses of this machine's interfaces other than lo (empty if `ip` is missing)."""
    if not shutil.which("ip"):
        return set()
    out = subprocess.run(["ip", "-4", "-o", "addr"], capture_output=True, text=True).stdout
    return {line.split()[3].split("/")[0] for line in out.splitlines() if line.split()[1] != "lo"}

