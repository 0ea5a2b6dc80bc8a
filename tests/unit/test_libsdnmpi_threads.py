"""libsdnmpi under MPI_THREAD_MULTIPLE: two threads of every rank call SDN_MPI_Allreduce at once,
each on its own world-spanning communicator, in another order on each rank. The reconnect
agreement steps (libsdnmpi/src/reconnect.h) counted such calls process-wide, so a step fell on one
communicator on one rank and on the other elsewhere: a hang. Under MPI_THREAD_MULTIPLE there are
no agreement steps now (world rank 0's thread level, agreed at SDN_MPI_Init).

tests/integration/progs/threads_job.c under mpirun on localhost with the stub controller of
libsdnmpi_harness.py. Take the machine-wide lock (COMMON.md):
`flock /tmp/sdnmpi-mininet.lock .venv/bin/python -m pytest tests/unit/test_libsdnmpi_threads.py`.
"""
import functools

import pytest

import libsdnmpi_harness as harness
from libsdnmpi_harness import StubController
from mpi_progs import build_prog

NP = 4
MPI_TIMEOUT = 90     # a hang is the failure; the job takes a few seconds

pytestmark = pytest.mark.usefixtures("mpirun_path")   # a missing mpirun fails, never skips
mpirun = functools.partial(harness.mpirun, timeout=MPI_TIMEOUT)


@pytest.fixture(scope="module")
def threads_job(built, tmp_path_factory):
    return build_prog("threads_job", tmp_path_factory.mktemp("threads"))


@pytest.mark.parametrize("order", ["stagger", "together"])
def test_two_threads_on_two_world_communicators(threads_job, order):
    stub = StubController("ok")
    try:
        env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "2", "SDN_MPI_MIN_BYTES": "0"}
        res, _seconds = mpirun(NP, [threads_job, order], env)
        assert res.returncode == 0, (res.stdout[-3000:], res.stderr[-3000:])
        assert sorted(l for l in res.stdout.splitlines() if l.startswith("threads_job:")) == [
            "threads_job: rank %d ok" % r for r in range(NP)]
        plans = stub.requests("plan_allreduce")
        assert plans, "the SDN path was not taken"
    finally:
        stub.close()
