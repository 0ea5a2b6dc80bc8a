"""The world's allreduce plan requested at SDN_MPI_Init (libsdnmpi/src/plan_ahead.h), with a stub
controller (libsdnmpi_harness.StubController) under mpirun on localhost: the request reaches the
controller before the first collective, the first call takes its reply without a second round trip,
results stay bit-exact (planahead_check compares every call with PMPI_Allreduce; the full datatype
matrix runs with plan-ahead on in test_libsdnmpi_allreduce.py), a silent or vanishing controller
still means the fallback, and SDN_MPI_PLAN_AHEAD=0 turns it off."""
import re

import pytest

import check_runner
from libsdnmpi_checks import MPI_TIMEOUT, expected_steps, leaf_sizes_of, sorted_steps
from libsdnmpi_harness import LIB, MPIRUN, fake_hosts, leaf_of

pytestmark = pytest.mark.skipif(MPIRUN is None, reason="Open MPI (mpirun) is not installed")

CHECK = LIB / "tests" / "planahead_check"
SUMMARY = re.compile(r"planahead_check: p=(?P<p>\d+) first_path=(?P<first>\d+) second_path=(?P<second>\d+) "
                     r"ahead=(?P<ahead>\S+) age=(?P<age>\S+) request=(?P<request>\S+) init=(?P<init>\S+) "
                     r"failures=(?P<failures>\d+)")
RD, PMPI = 2, 1


def run(np, env, *args):
    """planahead_check under mpirun: its summary line as a dict, and the ranks' stderr."""
    out = check_runner.run_check(np, [CHECK, *args], SUMMARY, env, timeout=MPI_TIMEOUT)
    return out, out["stderr"]


@pytest.mark.parametrize("np,nhosts,leaves", [(2, 2, 2), (5, 5, 2), (8, 8, 2), (8, 4, 2)])
def test_plan_sent_at_init_and_taken_by_the_first_call(built, stub_factory, tmp_path, np, nhosts, leaves):
    """Rank 0 waits after SDN_MPI_Init until the stub has the world's plan_allreduce: it was sent
    before any collective. The first SDN_MPI_Allreduce takes that reply (plan_ahead = 1) and asks
    nothing more: one plan request for communicator 0, with the steps of the ranks in leaf order,
    the only requests on the one connection being register, that plan and release."""
    seen = tmp_path / "seen"
    stub = stub_factory(leaves=leaves, seen_file=seen)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts), "SDN_MPI_VERBOSE": "1"}
    out, stderr = run(np, env, "--wait-file", seen)
    assert out["first"] == RD and out["second"] == RD
    assert out["ahead"] == 1 and out["age"] > 0 and out["request"] >= 0
    assert stub.errors == []
    assert [[r["op"] for r in c["requests"]] for c in stub.conns] == [["register", "plan_allreduce", "release"]]
    hosts = fake_hosts(np, nhosts)
    if np >= 3:   # (two ranks keep their order)
        order = sorted(range(np), key=lambda r: (leaf_of(hosts[r], leaves), hosts[r], r))
        want = expected_steps([hosts[r] for r in order], leaf_sizes_of(hosts, order, leaves))
    else:
        want = expected_steps(hosts)
    (plan,) = [r for _, r in stub.requests("plan_allreduce")]
    assert plan["comm"] == 0 and sorted_steps(plan["steps"]) == sorted_steps(want)
    assert re.search(r"sdnmpi\[0\]: plan ahead comm=0 ranks=%d steps=\d+ pairs=\d+: sent" % np, stderr)
    assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=%d .*: ok .*, sent ahead at Init\)" % np, stderr)


def test_after_a_gap_the_reply_is_waiting(built, stub_factory):
    """With work between Init and the first collective (500 ms here) the controller has answered
    by then: the first call takes the reply it finds."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4"}
    out, _ = run(4, env, "--gap-ms", "500")
    assert out["first"] == RD and out["ahead"] == 1 and out["age"] >= 0.5
    assert len(stub.requests("plan_allreduce")) == 1


def test_opt_out(built, stub_factory):
    """SDN_MPI_PLAN_AHEAD=0: Init sends nothing after register; the first call asks as before."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_PLAN_AHEAD": "0"}
    out, stderr = run(4, env, "--gap-ms", "200")
    assert out["first"] == RD and out["second"] == RD and out["ahead"] == 0 and out["age"] == -1
    assert [[r["op"] for r in c["requests"]] for c in stub.conns] == [["register", "plan_allreduce", "release"]]
    assert "plan ahead" not in stderr and "sent ahead at Init" not in stderr
    assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=4 .*: ok .*install [0-9.]+s\)", stderr)


def test_old_controller_without_locality(built, stub_factory):
    """A register reply without the hosts' leaves: Init does not ask locate, so nothing is sent
    ahead; the first call orders the ranks with locate and plans, as before."""
    stub = stub_factory(leaves=2, old_register=True)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1"}
    out, stderr = run(4, env)
    assert out["first"] == RD and out["ahead"] == 0
    assert [r["op"] for r in stub.conns[0]["requests"]] == ["register", "locate", "plan_allreduce", "release"]
    assert "sdnmpi[0]: plan ahead: register's reply had no locality" in stderr


def test_silent_controller_falls_back(built, stub_factory, tmp_path):
    """The controller receives the request sent at Init and never answers: Init does not wait for
    it, the first call waits SDN_MPI_TIMEOUT_MS and falls back on every rank, results exact."""
    seen = tmp_path / "seen"
    stub = stub_factory("silent_plan", leaves=2, seen_file=seen)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_TIMEOUT_MS": "3000"}
    out, stderr = run(4, env, "--wait-file", seen)
    assert out["first"] == PMPI and out["second"] == PMPI and out["init"] < 3.0
    assert len(stub.requests("plan_allreduce")) == 1
    assert re.search(r"sdnmpi\[0\]: plan comm=0 .*: failed after .*, sent ahead at Init\), falling back", stderr)


def test_controller_gone_after_register(built, stub_factory):
    """The controller closes the connection right after register (and every later one): the
    request sent ahead has no reply, the library registers again or falls back, results exact."""
    stub = stub_factory("close_after_register", leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_TIMEOUT_MS": "3000"}
    out, _ = run(4, env, "--gap-ms", "100")
    assert out["first"] == PMPI and out["second"] == PMPI
    assert stub.errors == []


@pytest.mark.parametrize("limits", [{"SDN_MPI_MIN_BYTES": "1024g"},
                                    {"SDN_MPI_MIN_BYTES": "2m", "SDN_MPI_MAX_BYTES": "1m"}])
def test_nothing_ahead_when_no_call_can_take_the_sdn_path(built, stub_factory, limits):
    """SDN_MPI_MIN_BYTES above what any collective can move (an int count of the largest
    predefined datatype, p blocks) or above SDN_MPI_MAX_BYTES, as a job sets it to keep its
    collectives off the SDN path: Init plans nothing ahead, so no routes are installed for them."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1", **limits}
    out, stderr = run(4, env, "--gap-ms", "50")
    assert out["first"] == PMPI and out["second"] == PMPI
    assert [[r["op"] for r in c["requests"]] for c in stub.conns] == [["register", "release"]]
    assert "sdnmpi[0]: plan ahead comm=0: not sent, no collective can be above SDN_MPI_MIN_BYTES" in stderr


def test_world_never_used_leaks_nothing(built, stub_factory, tmp_path):
    """Init sends the request ahead and the job makes no collective at all: SDN_MPI_Finalize's
    release reads the reply first (the stream stays in step) and is answered; the plan is never
    taken (no path, no plan slots)."""
    seen = tmp_path / "seen"
    stub = stub_factory(leaves=2, seen_file=seen)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1"}
    out, stderr = run(4, env, "--wait-file", seen, "--calls", "0")
    assert out["first"] == 0 and out["ahead"] == -1
    assert [[r["op"] for r in c["requests"]] for c in stub.conns] == [["register", "plan_allreduce", "release"]]
    assert "sdnmpi[0]: finalize: job 7 released" in stderr
    assert stub.errors == []
