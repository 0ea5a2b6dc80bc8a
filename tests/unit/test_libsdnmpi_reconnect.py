"""libsdnmpi after a controller restart (issue 12): world rank 0 registers the job again, every
rank switches to the new job id and token at the same agreement step, and the communicators'
cached plans and Bcast trees are made again by the new controller (libsdnmpi/src/reconnect.h).

The job is tests/integration/progs/fault_job.c (SDN_MPI_Allreduce and SDN_MPI_Bcast repeated, every
result checked) under mpirun on localhost; the controller is the stub of libsdnmpi_harness.py,
closed and started again on the same port. Take the machine-wide lock (COMMON.md):
`flock /tmp/sdnmpi-mininet.lock timeout 900 .venv/bin/python -m pytest tests/unit/test_libsdnmpi_reconnect.py`.
"""
import functools
import os
import re
import threading

import pytest

import libsdnmpi_harness as harness
from libsdnmpi_harness import fake_hosts
from mpi_progs import build_prog
from sdnmpi.mininet_topos.polling import poll_until

NP = 4
BYTES = 65536        # SDN_MPI_Bcast's default threshold: both collectives take the SDN path
AFTER = 24           # rounds after the test's "fault" file (each: one Allreduce, one Bcast)
MPI_TIMEOUT = 240
WAIT = 120           # seconds for a condition the job must reach

pytestmark = pytest.mark.usefixtures("mpirun_path")   # a missing mpirun fails, never skips
mpirun = functools.partial(harness.mpirun, timeout=MPI_TIMEOUT)


@pytest.fixture(scope="module")
def fault_job(built, tmp_path_factory):
    return build_prog("fault_job", tmp_path_factory.mktemp("reconnect"))


def wait_for(what, predicate, thread):
    """Waits (polling, WAIT s) until predicate() holds; fails at once if the job ended first."""
    def holds():
        if predicate():
            return True
        assert thread.is_alive(), "the job ended before %s" % what
        return False
    poll_until(holds, WAIT, what, interval=0.05)


class Job:
    """fault_job in a thread; `hold` is its hand-shake directory (holdfile.h)."""

    def __init__(self, exe, hold, env):
        self.hold = hold
        self.result = {}
        argv = [exe, BYTES, AFTER, hold]
        self.thread = threading.Thread(target=lambda: self.result.update(res=mpirun(NP, argv, env)[0]))
        self.thread.start()

    def wait_file(self, name):
        wait_for("file %s" % name, lambda: os.path.exists(os.path.join(self.hold, name)), self.thread)

    def touch(self, name):
        with open(os.path.join(self.hold, name), "w"):
            pass

    def finish(self):
        """Lets it finish (whatever state it is in); its CompletedProcess."""
        self.touch("fault")
        self.touch("go")
        self.thread.join(MPI_TIMEOUT + 30)
        return self.result.get("res")


def env_for(stub, **extra):
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(NP), "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_BCAST_RATE_MBPS": "400", "SDN_MPI_BCAST_MIN_HOSTS": "2"}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def seen(stub, op):
    """The requests of `op` the stub has received so far (while the job runs)."""
    with stub.lock:
        return [r for c in stub.conns for r in c["requests"] if r["op"] == op]


def job_requests(stub):
    """The requests naming a job, (connection, request) in order."""
    return [(i, r) for i, r in stub.requests() if "job" in r]


def assert_ok(res, *stubs):
    assert res is not None, "the job did not end"
    assert res.returncode == 0 and "fault_job OK" in res.stdout, (res.stdout[-3000:], res.stderr[-6000:])
    for stub in stubs:
        assert stub.token not in res.stdout + res.stderr  # never printed


def test_restarted_controller_gets_the_job_again(fault_job, tmp_path, stub_factory):
    """The stub goes away while the job runs and comes back on its port as a new controller (new
    job id, new token): world rank 0 registers the job again with the same hosts, every rank
    switches to the new id and token, the new controller plans MPI_COMM_WORLD's Allreduce and Bcast
    again and the duplicate's, every request it gets carries the new token, and every result is
    right."""
    old = stub_factory(job=7)
    job = Job(fault_job, str(tmp_path), env_for(old))
    try:
        job.wait_file("running")
        assert [r["comm"] for r in seen(old, "plan_allreduce")] == [0]
        old.close()
        new = stub_factory(job=8, port=old.port)
        wait_for("new registration", lambda: seen(new, "register"), job.thread)
    finally:
        res = job.finish()
    assert_ok(res, old, new)
    assert new.errors == []
    registers = new.requests("register")
    assert len(registers) == 1 and registers[0][1]["hosts"] == fake_hosts(NP, NP) == old.requests("register")[0][1]["hosts"]
    named = job_requests(new)
    assert named and all(r["job"] == 8 and r["token"] == new.token for _, r in named)
    plans = [r["comm"] for _, r in new.requests("plan_allreduce")]
    assert plans[0] == 0 and len(plans) == 2 and plans[1] != 0  # the world's again, then the duplicate's
    trees = {r["comm"] for _, r in new.requests("plan_bcast")}   # (the duplicate's Bcast has an id of its own)
    assert 0 in trees and len(trees) == 2
    conn = registers[0][0]   # the registering connection released the new job at the end
    assert new.conns[conn]["requests"][-1]["op"] == "release"
    for rank in range(NP):
        assert "sdnmpi[%d]: reconnect: job 7 is now job 8 (registration 1)" % rank in res.stderr
    assert "sdnmpi[0]: reconnect: the connection that registered job 7 is gone" in res.stderr
    # the world's Allreduce ran by the SDN algorithms under both registrations
    assert len(re.findall(r"sdnmpi\[0\]: plan comm=0 ranks=4 hosts=4 \S+ \S+: ok", res.stderr)) == 2
    assert "sdnmpi[0]: finalize: job 8 released" in res.stderr


@pytest.mark.parametrize("cut", ["idle", "mid_request"])
def test_reconnect_attempts_are_bounded(fault_job, tmp_path, stub_factory, cut):
    """A controller that comes back at once but refuses the job: SDN_MPI_RECONNECT_TRIES=2 allows
    three attempts in a row, each on a new connection, spaced by the back-off; then rank 0 gives
    up, the job keeps its cached plans and every result is right. The same three whether the
    restart found world rank 0's connection idle (rank 0 notices it at an agreement step) or cut
    it in the middle of a request (the plan_bcast of round 1's root, held by the stub until then):
    losing the registering connection is not itself a failed attempt."""
    stub = stub_factory("hold_bcast" if cut == "mid_request" else "ok")
    job = Job(fault_job, str(tmp_path), env_for(stub, SDN_MPI_RECONNECT_TRIES=2))
    try:
        job.wait_file("running")
        if cut == "mid_request":
            wait_for("the held plan_bcast", lambda: any(r["root"] != r["members"][0] for r in seen(stub, "plan_bcast")), job.thread)
        before = stub.restart("refuse_register")
        wait_for("three register attempts", lambda: len(seen(stub, "register")) >= 4, job.thread)
    finally:
        res = job.finish()
    assert_ok(res, stub)
    stub.wait_idle()
    if cut == "mid_request":   # the held request's connection is the one the restart cut
        assert stub.conns[before - 1]["requests"][-1]["op"] == "plan_bcast" and stub.conns[before - 1]["closed"]
    after = [[r["op"] for r in c["requests"]] for c in stub.conns[before:]]
    assert after == [["hello", "register"]] * 3, after
    assert "sdnmpi[0]: reconnect: giving up on registering job 7 again (controller error: %s)" % (
        harness.REFUSED_REGISTER) in res.stderr
    assert "reconnect: job 7 is now" not in res.stderr


def test_no_reconnect_when_tries_is_zero(fault_job, tmp_path, stub_factory):
    """SDN_MPI_RECONNECT_TRIES=0: the first loss is final, as before reconnection existed."""
    old = stub_factory()
    job = Job(fault_job, str(tmp_path), env_for(old, SDN_MPI_RECONNECT_TRIES=0))
    try:
        job.wait_file("running")
        old.close()
        new = stub_factory(port=old.port)
    finally:
        res = job.finish()
    assert_ok(res, old, new)
    assert new.requests() == []
    assert "sdnmpi[0]: reconnect: giving up on registering job 7 again" in res.stderr
