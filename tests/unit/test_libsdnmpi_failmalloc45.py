"""libsdnmpi (C) when an allocation fails: tests/integration/progs/failmalloc_job45.c (every SDN
collective on MPI_COMM_WORLD and on a duplicate, each checked bit for bit against PMPI's result)
under the failmalloc45.c shim, which makes the N-th allocation the library makes (malloc, calloc or
realloc called from the program's executable, where libsdnmpi.a is linked in, after the program's
own buffers) return NULL on one rank. The library promises PMPI's result or its out-of-memory
abort (sdnmpi_scratch: "sdnmpi[R]: out of memory for a ..., aborting", then MPI_Abort, where every
rank is inside a collective); never a wrong result, an error code of its own, a crash or a hang.

First each job size is run without a failure to count the allocations (and check the program);
then N = 1 .. the most any rank makes (on MPI_COMM_WORLD only; of more than 45, 45 spread evenly,
the first and the last among them, so that the test takes well under a minute), each N once, on
one of the (size p = 2, 3, 4, rank) that make N allocations or more, in turn.
SDNMPI_FAILMALLOC_ALL=1 runs every N on every size and every rank instead, with the duplicate
communicator too (the program's --dup: some 700 jobs, about ten minutes on a quiet machine).
"""
import os
import re

import pytest

import libsdnmpi_harness as harness
from libsdnmpi_harness import MPIRUN
from mpi_progs import build_prog, build_shim

pytestmark = pytest.mark.skipif(MPIRUN is None, reason="Open MPI (mpirun) is not installed")
SIZES = (2, 3, 4)
SPREAD = 45    # the most jobs with a failure (N spread evenly over 1 .. the most allocations)
TIMEOUT = 20   # one job: about 0.6 s on a quiet machine; a hang is a timeout
SUMMARY = re.compile(r"^failmalloc_job45: p=(\d+) wrong=(\d+) errors=(\d+)$", re.M)
COUNTS = re.compile(r"^failmalloc: rank=(\d+) allocations=(\d+) failed=(\d)$", re.M)
OOM = re.compile(r"^sdnmpi\[(\d+)\]: out of memory for an? .*, aborting$", re.M)


@pytest.fixture(scope="module")
def progs(built, tmp_path_factory):
    out = tmp_path_factory.mktemp("failmalloc")
    return build_prog("failmalloc_job45", out), build_shim("failmalloc45", out)


EVERYTHING = os.environ.get("SDNMPI_FAILMALLOC_ALL") == "1"


def run(progs, stub, np, at=None, rank=None):
    exe, shim = progs
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_MIN_BYTES": "1",
           "SDN_MPI_BCAST_MIN_BYTES": "1", "LD_PRELOAD": str(shim)}
    if at is not None:
        env.update(SDNMPI_FAILMALLOC_AT=str(at), SDNMPI_FAILMALLOC_RANK=str(rank))
    res, _seconds = harness.mpirun(np, [exe, "--dup"] if EVERYTHING else [exe], env, timeout=TIMEOUT)
    return res


def verdict(res, np, rank):
    """"ok" (PMPI's results everywhere), "oom" (the library's out-of-memory abort on the failing
    rank), or what went wrong."""
    summary = SUMMARY.search(res.stdout)
    if res.returncode == 0 and summary and summary.groups() == (str(np), "0", "0"):
        return "ok"
    if res.returncode == 124:
        return "hang"
    if res.returncode != 0 and not summary and [int(r) for r in OOM.findall(res.stderr)] == [rank]:
        return "oom"
    return "rc %d: %s %s" % (res.returncode, res.stdout[-1500:], res.stderr[-2500:])


def test_every_allocation_failure_gives_pmpis_result_or_the_oom_abort(progs, stub_factory):
    stub = stub_factory(leaves=2)
    counts = {}
    for np in SIZES:
        res = run(progs, stub, np)
        assert verdict(res, np, None) == "ok", res.stdout + res.stderr[-3000:]
        counts[np] = {int(r): int(n) for r, n, _f in COUNTS.findall(res.stderr)}
        assert sorted(counts[np]) == list(range(np)) and min(counts[np].values()) > 0, res.stderr
    where = [(np, rank) for np in SIZES for rank in range(np)]
    if EVERYTHING:
        cases = [(np, rank, at) for np, rank in where for at in range(1, counts[np][rank] + 1)]
    else:
        cases, most = [], max(max(c.values()) for c in counts.values())
        jobs = min(most, SPREAD)   # N = 1 and N = most among them
        for at in sorted({1 + i * (most - 1) // max(jobs - 1, 1) for i in range(jobs)}):
            fit = [(np, rank) for np, rank in where if counts[np][rank] >= at]
            cases.append(fit[at % len(fit)] + (at,))
    bad, seen = [], {"ok": 0, "oom": 0, "recovered": 0}
    for np, rank, at in cases:
        res = run(progs, stub, np, at, rank)
        what = verdict(res, np, rank)
        if what in seen:
            seen[what] += 1
        else:
            bad.append("p=%d rank=%d N=%d: %s" % (np, rank, at, what))
        # a clean run in which the failing rank's N-th allocation did fail: the library coped
        seen["recovered"] += what == "ok" and bool(
            re.search(r"^failmalloc: rank=%d allocations=\d+ failed=1$" % rank, res.stderr, re.M))
    assert not bad, "\n".join(bad)
    assert seen["recovered"] > 0 and seen["oom"] > 0, seen
