"""Plan-ahead for the other ways to make a communicator (libsdnmpi/src/comm_create.c), with a stub
controller under mpirun on localhost: SDN_MPI_Comm_split_type (MPI_COMM_TYPE_SHARED, and
MPI_UNDEFINED on one rank), SDN_MPI_Comm_dup_with_info (of a split before its first collective, of
the world), SDN_MPI_Comm_create_group on a subgroup (called by its members alone), a split whose
ranks are all on one host, and MPI_Comm_idup, which has no plan ahead (its first collective plans);
then the same calls of an unmodified program under the preload library, against the same program
without it. Every result is compared with PMPI's, bit for bit (planahead_check: Allreduce,
Allgather, Reduce; plain_allreduce: the sorted output of both runs)."""
import re

import pytest

from libsdnmpi_harness import LIB, PRELOAD, mpirun
from libsdnmpi_checks import MPI_TIMEOUT
from test_libsdnmpi_planahead import COMM, PMPI, RD, run

PLAIN = LIB / "tests" / "plain_allreduce"

KINDS = ("shared", "shareddup", "undef", "group", "dupinfo", "onehost", "idup")
# (world rank 0's connection registered the job and carries the world's plan, sent at Init, and
# the idup's, asked at its first call; world rank p - 1 leads shared (and shareddup, which shares
# its request) and group; world rank 1 leads undef, and onehost, which asks nothing)
CONN_OPS = sorted([["register", "plan_allreduce", "plan_allreduce", "release"],
                   ["hello", "locate", "plan_allreduce", "locate", "plan_allreduce"],
                   ["hello", "locate", "plan_allreduce"]])


def kinds(out, np):
    """planahead_check --comms 2's lines: name -> (leader, path, ahead, age), leaders checked."""
    found = {m[0]: (int(m[1]), int(m[2]), float(m[3]), float(m[4])) for m in COMM.findall(out["stdout"])}
    assert set(found) == set(KINDS), out["stdout"]
    leaders = {"shared": np - 1, "shareddup": np - 1, "undef": 1, "group": np - 1, "dupinfo": 0,
               "onehost": 1, "idup": 0}
    assert {name: v[0] for name, v in found.items()} == leaders
    return found


@pytest.mark.parametrize("np,nhosts,world_first", [(5, 5, True), (6, 2, False)])
def test_each_kind_planned_at_creation(built, stub_factory, np, nhosts, world_first):
    """Each new communicator's leader sent its plan_allreduce when it was made (plan_ahead = 1,
    aged by the 300 ms gap): the shared split in reverse order, the MPI_UNDEFINED split_type's
    p - 1 ranks, the create_group of 3 ranks (whose other ranks waited for it without taking
    part); the dup_with_info of the shared split shares its request; the world's dup_with_info
    reuses the world's routes (world_first) or shares its Init request. The ranks of one host ask
    nothing, not even locate (np=6 on 2 hosts: world ranks 1, 3, 5). The idup'ed communicator's
    first call asks (plan_ahead = 0). One plan request per communicator that needs one: the
    check's 64 KiB Reduce and Allgather stay off the two cycles, whose own request (one more per
    communicator, at its first such call) test_libsdnmpi_reduce_chain.py and
    test_libsdnmpi_allgather_cycles.py check."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts), "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_REDUCE_CHAIN_MIN": "unlimited", "SDN_MPI_ALLGATHER_CYCLES_MIN": "unlimited"}
    out, stderr = run(np, env, "--comms", "2", "--hosts", str(nhosts), "--gap-ms", "300",
                      "--calls", "2" if world_first else "0")
    comms = kinds(out, np)
    for name in ("shared", "shareddup", "undef", "group") + (() if world_first else ("dupinfo",)):
        _, path, ahead, age = comms[name]
        assert (path, ahead) == (RD, 1) and age >= 0.3, (name, comms[name])
    assert comms["idup"][1:] == (RD, 0, -1)
    stub.wait_idle()
    assert stub.errors == []
    assert sorted([r["op"] for r in c["requests"]] for c in stub.conns) == CONN_OPS
    plans = stub.requests("plan_allreduce")
    ids = [r["comm"] for _, r in plans]
    assert len(plans) == 5 and len(set(ids)) == 5, ids    # world, shared, undef, group, idup
    assert stderr.count(", sent ahead at creation)") == 4
    assert re.search(r"sdnmpi\[%d\]: plan ahead ranks=%d: shares comm=\d+'s request \(same group\)" % (np - 1, np),
                     stderr)
    assert re.search(r"sdnmpi\[%d\]: plan ahead comm=\d+ ranks=3 steps=\d+ pairs=\d+: sent" % (np - 1), stderr)
    assert re.search(r"sdnmpi\[1\]: plan ahead comm=\d+ ranks=%d steps=\d+ pairs=\d+: sent" % (np - 1), stderr)
    if world_first:
        assert comms["dupinfo"][1:3] == (RD, 2)
        assert re.search(r"sdnmpi\[0\]: plan ahead ranks=%d: the routes of comm=0 \(same group\), no request" % np,
                         stderr)
    else:
        assert "sdnmpi[0]: plan ahead ranks=%d: shares comm=0's request (same group)" % np in stderr
        assert stderr.count(", sent ahead at Init)") == 2    # the world (during the idup), dupinfo
    if nhosts == 2:
        assert comms["onehost"][2] == 0
        assert "sdnmpi[1]: plan ahead ranks=3: all ranks on one host, nothing to ask" in stderr
        assert "sdnmpi[1]: plan ranks=3 hosts=1: all ranks on one host, no request needed" in stderr


@pytest.mark.parametrize("mode", ["error_plan", "silent_plan"])
def test_each_kind_falls_back_when_the_controller_fails(built, stub_factory, mode):
    """The controller refuses every plan, or never answers one: every new communicator's first
    collective falls back to PMPI (no hang), results bit-exact. Refused: the world's dup_with_info
    has no routes to reuse and asks for its own; each communicator took its own refused reply."""
    stub = stub_factory(mode, leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "5", "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_TIMEOUT_MS": "1500"}
    out, stderr = run(5, env, "--comms", "2", "--hosts", "5")
    assert out["first"] == PMPI and out["second"] == PMPI
    comms = kinds(out, 5)
    assert all(comms[name][1] == PMPI for name in KINDS if name != "onehost"), comms   # (onehost: 1 rank)
    if mode == "error_plan":
        assert all(comms[name][2] == 1 for name in ("shared", "shareddup", "undef", "group", "dupinfo")), comms
        assert len(stub.requests("plan_allreduce")) == 6    # world, shared, undef, group, dupinfo, idup
        assert stderr.count(", sent ahead at creation), falling back") == 5
    assert out["seconds"] < 60


def test_preload_new_kinds_bit_exact(built, stub_factory):
    """An unmodified program making communicators with MPI_Comm_split_type, MPI_Comm_dup_with_info,
    MPI_Comm_create_group and MPI_Comm_idup (the world's MPI_Allreduce calls run while the idup is
    pending) prints the same results under the preload library as without it. The wrappers sent
    the shared split's and the group's requests at creation (the world's dup_with_info reuses the
    world's routes); the idup'ed communicator is planned at its first MPI_Allreduce."""
    np = 5
    plain, _ = mpirun(np, [PLAIN, "kinds"], timeout=MPI_TIMEOUT)
    assert plain.returncode == 0, plain.stderr
    stub = stub_factory(leaves=2)
    env = {"LD_PRELOAD": str(PRELOAD), "SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(np),
           "SDN_MPI_VERBOSE": "1"}
    pre, _ = mpirun(np, [PLAIN, "kinds"], env, timeout=MPI_TIMEOUT)
    assert pre.returncode == 0, pre.stderr
    lines = sorted(pre.stdout.splitlines())
    assert lines == sorted(plain.stdout.splitlines())
    names = {line.split()[0] for line in lines}
    assert names == {"world", "even", "odd", "world-idup", "shared", "dupinfo", "group", "idup"}, lines
    stub.wait_idle()
    assert stub.errors == []
    plans = stub.requests("plan_allreduce")
    # world, the halves, shared, group, idup: one each (dupinfo reuses the world's routes)
    assert len(plans) == 6 and len({r["comm"] for _, r in plans}) == 6, plans
    assert pre.stderr.count(", sent ahead at creation)") == 4    # the halves, shared, group
    assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=%d .*: ok, the routes of the same group's plan" % np,
                     pre.stderr)


IDUP = re.compile(r"planahead_idup: rounds=(\d+) idup=(\d) world=(-?\d+) sdn=(\d+) group=(\d+) split=(\d+)")
# sdnmpi_test_plan_priv: where a plan's private communicator came from (libsdnmpi/src/plan.h)
PRIV_LIBWORLD, PRIV_GROUP, PRIV_SPLIT = 1, 2, 3


def idup_line(out):
    """planahead_check --comms 3|4's line: (rounds, idup, world, sdn, group, split)."""
    m = IDUP.search(out["stdout"])
    assert m, out["stdout"]
    return tuple(int(v) for v in m.groups())


@pytest.mark.parametrize("np,nhosts,leaves,world", [(6, 2, 2, PRIV_GROUP), (4, 4, None, PRIV_LIBWORLD)])
def test_plans_made_while_an_idup_of_their_communicator_is_pending(built, stub_factory, np, nhosts, leaves, world):
    """20 communicators (MPI_Comm_dup of the world, MPI_Comm_split in reverse order), each planned
    by its first SDN_MPI_Allreduce while an MPI_Comm_idup of it is pending, then the idup'ed one's
    first call: every plan's private communicator is a group's creation on the library's own
    communicator (plan_comm.h), never made from the application's communicator, whose context-id
    agreement Open MPI 4.1.4 may hang against the pending idup's. The world's plan uses the
    library's communicator itself where the ranks keep the world's order (no leaves known), a
    group's creation on it where the leader reorders them by leaf (2 leaves: the fake hosts
    alternate). Every call took the SDN path, bit-exact (no hang: the job's timeout)."""
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts)}
    out, _ = run(np, env, "--comms", "3", "--rounds", "20")
    assert out["first"] == RD
    assert idup_line(out) == (20, 1, world, 40, 40, 0)
    stub.wait_idle()
    assert stub.errors == []


@pytest.mark.parametrize("knob", [{"SDN_MPI_TEST_NO_LIBCOMM": "1"}, {"SDN_MPI_LIB_COMM": "0"}])
def test_plans_split_without_the_library_communicator(built, stub_factory, knob):
    """World rank 1 acts as if making the library's communicator at SDN_MPI_Init had failed
    (SDN_MPI_TEST_NO_LIBCOMM=1: every rank learns it from the plan's Allreduce), or world rank 0's
    SDN_MPI_LIB_COMM=0 turns it off for all: every plan, the world's included, splits its
    communicator as before plan_comm.h; results bit-exact, the SDN path kept (no idup here: the
    split may hang against one)."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1", **knob}
    out, stderr = run(4, env, "--comms", "4", "--rounds", "4")
    assert out["first"] == RD
    assert idup_line(out) == (4, 0, PRIV_SPLIT, 8, 0, 8)
    failed = "sdnmpi[1]: init: the library's communicator could not be made" in stderr
    assert failed == ("SDN_MPI_TEST_NO_LIBCOMM" in knob)
