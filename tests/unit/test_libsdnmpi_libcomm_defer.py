"""The library's own communicator started at SDN_MPI_Init and completed where first needed
(SDN_MPI_LIB_COMM=defer; libsdnmpi/src/plan_comm.h), with a stub controller under mpirun on
localhost. The deferred creation is an MPI_Comm_idup of the world, whose
context-id agreement has the id of any creation on MPI_COMM_WORLD in Open MPI 4.1: every such
creation the library sees must complete it first. An unmodified program (plain_worldcomms) makes
communicators of the world right after MPI_Init under the preload library, in several orders; the
library's test hook says whether its creation was under way before the first one and after it;
every MPI_Allreduce is compared with PMPI_Allreduce's, bit for bit."""
import re

import pytest

from libsdnmpi_checks import MPI_TIMEOUT
from libsdnmpi_harness import LIB, PRELOAD, mpirun
from test_libsdnmpi_planahead import RD, run
from test_libsdnmpi_planahead_kinds import PRIV_GROUP, PRIV_LIBWORLD, idup_line

WORLDCOMMS = LIB / "tests" / "plain_worldcomms"
LINE = re.compile(r"worldcomms: rank=(\d+) pending_before=(-?\d+) pending_after=(-?\d+) calls=(\d+)")
STARTED = "init: the library's communicator started (deferred"
COMPLETED = re.compile(r"sdnmpi\[(\d+)\]: the library's communicator completed \(waited [\d.]+ ms\)")


def worldcomms(np, env, order):
    """plain_worldcomms ORDER under the preload library: {rank: (before, after, calls)}, stderr."""
    env = {"LD_PRELOAD": str(PRELOAD), "SDN_MPI_FAKE_HOSTS": str(np), "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_MIN_BYTES": "0", **env}
    proc, _ = mpirun(np, [WORLDCOMMS, order], env, timeout=MPI_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    found = {int(m[0]): tuple(int(v) for v in m[1:]) for m in LINE.findall(proc.stdout)}
    assert sorted(found) == list(range(np)), proc.stdout
    return found, proc.stderr


def compared(order):
    """The calls plain_worldcomms compares for ORDER: 2 per communicator, the world twice if it
    made an idup (its first call while the idup is pending), else once."""
    return 2 * (order.count("i") + 1 + sum(order.count(k) for k in "idsc"))


@pytest.mark.parametrize("order", ["idsc", "dsic", "sidw", "cwdi", "wsdi"])
def test_world_creations_right_after_init_complete_it_first(built, stub_factory, order):
    """MPI_Comm_idup, MPI_Comm_dup, MPI_Comm_split, MPI_Cart_create and MPI_Win_create of the world
    as the program's first calls after MPI_Init, each kind first in some order: the library's
    creation was under way before it on every rank and complete after it (the wrapper waited, so
    the two agreements never ran at once); then every MPI_Allreduce on the world and on each
    communicator is bit-exact, and the world's plan was asked and taken."""
    np = 4
    stub = stub_factory(leaves=2)
    found, stderr = worldcomms(np, {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_LIB_COMM": "defer"}, order)
    assert all(v == (1, 0, compared(order)) for v in found.values()), found
    assert stderr.count(STARTED) == np
    assert sorted(int(r) for r in COMPLETED.findall(stderr)) == list(range(np))
    stub.wait_idle()
    assert stub.errors == []
    assert stub.requests("plan_allreduce")
    assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=%d .*: ok" % np, stderr), stderr


def test_finalize_while_it_is_under_way(built, stub_factory):
    """No communicator, no collective: MPI_Finalize completes the library's communicator (still
    under way on every rank) and frees it; the job ends cleanly, the job released."""
    np = 4
    stub = stub_factory(leaves=2)
    found, stderr = worldcomms(np, {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_LIB_COMM": "defer"}, "-")
    assert all(v == (1, -1, 0) for v in found.values()), found
    assert sorted(int(r) for r in COMPLETED.findall(stderr)) == list(range(np))
    stub.wait_idle()
    assert stub.errors == []
    assert "sdnmpi[0]: finalize: job" in stderr and "released" in stderr


@pytest.mark.parametrize("value", ["1", "0", None])
def test_preload_blocking_or_off(built, stub_factory, value):
    """SDN_MPI_LIB_COMM=1 (the default) under the preload library: made at Init (nothing under way
    when the program starts); 0: none at all (plans split, so no idup here: Open MPI 4.1.4 may hang
    the split beside it). Results bit-exact either way."""
    np = 4
    stub = stub_factory(leaves=2)
    knob = {} if value is None else {"SDN_MPI_LIB_COMM": value}
    order = "dsc" if value == "0" else "ids"   # 0: the world's plan splits it (hangs beside an idup)
    found, stderr = worldcomms(np, {"SDN_MPI_CONTROLLER": stub.address, **knob}, order)
    assert all(v == (0, 0, compared(order)) for v in found.values()), found
    assert STARTED not in stderr and not COMPLETED.search(stderr)
    stub.wait_idle()
    assert stub.errors == []
    assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=%d .*: ok" % np, stderr), stderr
    assert "init: the library's communicator could not be made" not in stderr


@pytest.mark.parametrize("np,nhosts,leaves,world", [(6, 2, 2, PRIV_GROUP), (4, 4, None, PRIV_LIBWORLD)])
def test_linked_deferred_plans_under_pending_idups(built, stub_factory, np, nhosts, leaves, world):
    """Linked, SDN_MPI_LIB_COMM=defer: the world's first SDN_MPI_Allreduce completes the library's
    communicator, then 20 communicators planned while an idup of each is pending make their private
    communicators on it, as with the blocking creation (test_libsdnmpi_planahead_kinds.py);
    bit-exact, no hang. Linked, the default stays the blocking creation: nothing deferred."""
    stub = stub_factory(leaves=leaves)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(nhosts), "SDN_MPI_VERBOSE": "1",
           "SDN_MPI_LIB_COMM": "defer"}
    out, stderr = run(np, env, "--comms", "3", "--rounds", "20")
    assert out["first"] == RD
    assert idup_line(out) == (20, 1, world, 40, 40, 0)
    assert stderr.count(STARTED) == np
    assert sorted(int(r) for r in COMPLETED.findall(stderr)) == list(range(np))
    stub.wait_idle()
    assert stub.errors == []


def test_linked_default_is_blocking(built, stub_factory):
    """Linked, SDN_MPI_LIB_COMM unset: the creation blocks in SDN_MPI_Init (the library does not see
    an application's own MPI_Comm_split of the world, which could run beside a deferred one)."""
    stub = stub_factory(leaves=None)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": "4", "SDN_MPI_VERBOSE": "1"}
    out, stderr = run(4, env, "--comms", "3", "--rounds", "2")
    assert out["first"] == RD
    assert idup_line(out) == (2, 1, PRIV_LIBWORLD, 4, 4, 0)
    assert STARTED not in stderr and not COMPLETED.search(stderr)
    stub.wait_idle()
    assert stub.errors == []
