"""The world's allreduce plan requested at SDN_MPI_Init (libsdnmpi/src/plan_ahead.h), with a stub
controller (libsdnmpi_harness.StubController) under mpirun on localhost: the request reaches the
controller before the first collective, the first call takes its reply without a second round trip,
the same for communicators made through SDN_MPI_Comm_split / SDN_MPI_Comm_dup (requested at their
creation, a dup of a planned communicator reusing its routes),
results stay bit-exact (planahead_check compares every call with PMPI_Allreduce; the full datatype
matrix runs with plan-ahead on in test_libsdnmpi_allreduce.py), a silent or vanishing controller
still means the fallback, and SDN_MPI_PLAN_AHEAD=0 turns it off."""
import re

import pytest

import check_runner
from libsdnmpi_checks import MPI_TIMEOUT, expected_steps, leaf_sizes_of, sorted_steps, with_min_bytes
from libsdnmpi_harness import LIB, fake_hosts, leaf_of

pytestmark = pytest.mark.usefixtures("mpirun_path")   # a missing mpirun fails, never skips

CHECK = LIB / "tests" / "planahead_check"
SUMMARY = re.compile(r"planahead_check: p=(?P<p>\d+) first_path=(?P<first>\d+) second_path=(?P<second>\d+) "
                     r"ahead=(?P<ahead>\S+) age=(?P<age>\S+) request=(?P<request>\S+) init=(?P<init>\S+) "
                     r"failures=(?P<failures>\d+)")
RD, PMPI = 2, 1


def run(np, env, *args):
    """planahead_check under mpirun: its summary line as a dict, and the ranks' stderr. Its calls
    are small (64 elements): SDN_MPI_MIN_BYTES defaults to 0 (libsdnmpi_checks.with_min_bytes)."""
    out = check_runner.run_check(np, [CHECK, *args], SUMMARY, with_min_bytes(env), timeout=MPI_TIMEOUT)
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
    assert "sdnmpi[0]: plan ahead ranks=4: not sent, no collective can be above SDN_MPI_MIN_BYTES" in stderr


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


COMM = re.compile(r"planahead_comm: name=(\w+) leader=(-?\d+) path=(-?\d+) ahead=(\S+) age=(\S+)")
# planahead_comms.c's communicators at np=4: their leaders (world ranks), and the plan requests
# each leader's connection carries (rank 0: the one that registered the job)
LEADERS = {"split0": 2, "split1": 3, "sub": 1, "splitdup0": 2, "splitdup1": 3, "dup": 0}
# (splitdup shares split's request, dup the world's routes or request)
CONN_OPS = sorted([["register", "plan_allreduce", "release"],                # world
                   ["hello", "locate", "plan_allreduce"],                    # sub (3 ranks: ordered)
                   ["hello", "plan_allreduce"],                              # split0
                   ["hello", "locate"] + ["plan_allreduce"] * 2])            # unused, split1


def comm_lines(out):
    """planahead_check --comms 1's lines: name -> (leader, path, ahead, age)."""
    found = {m[0]: (int(m[1]), int(m[2]), float(m[3]), float(m[4])) for m in COMM.findall(out["stdout"])}
    assert set(found) == set(LEADERS), out["stdout"]
    assert {name: v[0] for name, v in found.items()} == LEADERS
    return found


@pytest.mark.parametrize("world_first", [True, False])
def test_communicators_planned_at_creation(built, stub_factory, world_first):
    """Communicators made back to back through SDN_MPI_Comm_split / SDN_MPI_Comm_dup (one freed
    before any collective, an MPI_UNDEFINED split giving MPI_COMM_NULL on world rank 0): each new
    communicator's leader sent its plan_allreduce at creation (plan_ahead = 1, aged by the gap
    before the first collective), the first collective asked nothing more, every result is
    bit-exact. A dup shares what its parent has: the planned world's routes (plan_ahead = 2), or
    the request ahead of a split or of a world not planned yet (world_first False: the dup's first
    call takes the reply of the world's request sent at Init)."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1"}
    out, stderr = run(4, env, "--comms", "1", "--gap-ms", "300", "--calls", "2" if world_first else "0")
    assert out["first"] == (RD if world_first else 0)
    comms = comm_lines(out)
    for name in ("split0", "split1", "sub", "splitdup0", "splitdup1") + (() if world_first else ("dup",)):
        leader, path, ahead, age = comms[name]
        assert (path, ahead) == (RD, 1) and age >= 0.3, (name, comms[name])
    stub.wait_idle()
    assert stub.errors == []
    assert sorted([r["op"] for r in c["requests"]] for c in stub.conns) == CONN_OPS
    plans = stub.requests("plan_allreduce")
    ids = [r["comm"] for _, r in plans]
    assert len(plans) == 5 and len(set(ids)) == 5, ids    # world, unused, split0/1, sub: one each
    assert stderr.count(", sent ahead at creation)") == 5
    assert len(re.findall(r"sdnmpi\[[23]\]: plan ahead ranks=2: shares comm=\d+'s request \(same group\)",
                          stderr)) == 2
    if world_first:
        assert comms["dup"][1:3] == (RD, 2)
        assert re.search(r"sdnmpi\[0\]: plan ahead ranks=4: the routes of comm=0 \(same group\), no request", stderr)
        assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=4 .*: ok, the routes of the same group's plan", stderr)
    else:
        assert "sdnmpi[0]: plan ahead ranks=4: shares comm=0's request (same group)" in stderr
        assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=4 .*: ok .*, sent ahead at Init\)", stderr)


@pytest.mark.parametrize("mode", ["error_plan", "silent_plan"])
def test_communicators_fall_back_when_the_controller_fails(built, stub_factory, mode):
    """The controller refuses every plan, or never answers one: each communicator's first
    collective falls back exactly as without plan-ahead (no hang: the wait is SDN_MPI_TIMEOUT_MS
    per connection at most), results bit-exact. A refused world has no routes to reuse: its dup
    asks for its own; splitdup shares split's request, and so its refusal."""
    stub = stub_factory(mode, leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_TIMEOUT_MS": "1500"}
    out, stderr = run(4, env, "--comms", "1")
    assert out["first"] == PMPI and out["second"] == PMPI
    comms = comm_lines(out)
    assert all(v[1] == PMPI for v in comms.values()), comms
    if mode == "error_plan":
        assert all(v[2] == 1 for v in comms.values()), comms    # each took its own refused reply
        assert len(stub.requests("plan_allreduce")) == 6
        assert stderr.count(", sent ahead at creation), falling back") == 6
    assert out["seconds"] < 60
