"""SDN_MPI_Bcast's state made while an MPI_Comm_idup of its communicator is pending (issue 17), with
a stub controller under mpirun on localhost (multicast over loopback, SDN_MPI_FAKE_HOSTS).

A communicator's first eligible Bcast makes its private communicator. It used to be a
PMPI_Comm_dup of the application's communicator, whose context-id agreement Open MPI 4.1.4 may
hang against a pending MPI_Comm_idup of the same communicator (libsdnmpi/README.md, "Known
issues"); it is now a PMPI_Comm_create_group on the library's own communicator
(libsdnmpi/src/plan_comm.h), the world's too, and a duplicate only when some rank has no library
communicator (agreed). bcast_idup (linked: SDN_MPI_Bcast) and plain_bcast_idup (the same program
calling MPI_Bcast, under the preload library) compare every call with PMPI_Bcast, bit for bit;
rank 0 of every communicator logs where its private communicator came from."""
import functools
import re

import pytest

import check_runner
from libsdnmpi_harness import LIB, PRELOAD
from test_libsdnmpi_bcast import BCAST_STUB, MPI_TIMEOUT, sdn_env

LINKED = LIB / "tests" / "bcast_idup"
PLAIN = LIB / "tests" / "plain_bcast_idup"
SUMMARY = re.compile(r"bcast_idup: p=(?P<p>\d+) rounds=(?P<rounds>\d+) idup=(?P<idup>\d) cases=(?P<cases>\d+) "
                     r"failures=(?P<failures>\d+) mcast=(?P<mcast>-?\d+)")
GROUP = re.compile(r"sdnmpi\[\d+\]: bcast comm=\d+ ranks=(\d+): private communicator: a group's creation on "
                   r"the library's \(tag (\d+)\)")
DUP = re.compile(r"sdnmpi\[\d+\]: bcast comm=\d+ ranks=(\d+): private communicator: a duplicate of the "
                 r"communicator \(no library communicator on some rank\)")
STARTED = "init: the library's communicator started (deferred"
ROUNDS = 8


@pytest.fixture
def stub_factory(stub_factory):
    """conftest's stub_factory, with test_libsdnmpi_bcast.py's job id, server and replies."""
    return functools.partial(stub_factory, **BCAST_STUB)


def run(np, nhosts, stub, *args, preload=False, **knobs):
    """bcast_idup (or plain_bcast_idup under the preload library) with multicast for every
    communicator; its summary fields, stderr and stdout."""
    env = sdn_env(stub, nhosts, SDN_MPI_VERBOSE=1, **knobs)
    if preload:
        env["LD_PRELOAD"] = str(PRELOAD)
    argv = [PLAIN if preload else LINKED, "--rounds", ROUNDS, *args]
    out = check_runner.run_check(np, argv, SUMMARY, env, timeout=MPI_TIMEOUT)
    # the world twice (its first call, then a second root while its idup is pending) unless its
    # first call is under the idup; its copy once; each round's communicator and its copy once
    world_first = "--world-idup" not in args
    assert out["cases"] == 2 + world_first + 2 * ROUNDS, out
    return out


def origins(out, np):
    """(group creations, duplicates) logged, each communicator's size checked (every one has all
    np ranks), and the group creations' tags distinct."""
    groups, dups = GROUP.findall(out["stderr"]), DUP.findall(out["stderr"])
    assert all(int(size) == np for size, *_ in groups + dups), (groups, dups)
    tags = [int(tag) for _, tag in groups]
    assert len(set(tags)) == len(tags), tags
    return len(groups), len(dups)


COMMS = 2 + 2 * ROUNDS     # the world, its copy, each round's communicator and its copy


@pytest.mark.parametrize("np,nhosts", [(3, 3), (4, 2), (5, 5), (6, 3)])
def test_states_made_while_an_idup_is_pending(built, stub_factory, np, nhosts):
    """The world's first Bcast while an idup of the world is pending, then 8 communicators (dups,
    reversed splits) whose first Bcast, from a different root each round, makes the Bcast state
    while an idup of that communicator is pending, then the idup'ed copies' first Bcasts: every
    private communicator a group's creation on the library's communicator, none a duplicate of the
    application's; every call multicast, bit-exact against PMPI_Bcast (no hang: the job's timeout)."""
    stub = stub_factory()
    out = run(np, nhosts, stub, "--world-idup")
    assert out["mcast"] == out["cases"], out
    assert origins(out, np) == (COMMS, 0)
    stub.wait_idle()
    assert stub.errors == []
    assert len(stub.requests("plan_bcast")) == out["cases"]     # one tree per (communicator, root)


@pytest.mark.parametrize("lib_comm", [None, "defer"])
def test_preload_states_made_while_an_idup_is_pending(built, stub_factory, lib_comm):
    """The same unmodified program calling MPI_Bcast under the preload library (and with the
    library's communicator deferred: the preload's MPI_Comm_idup of the world completes it first):
    bit-exact, every private communicator a group's creation, every call multicast."""
    stub = stub_factory()
    knobs = {} if lib_comm is None else {"SDN_MPI_LIB_COMM": lib_comm}
    out = run(5, 3, stub, "--world-idup", preload=True, **knobs)
    assert origins(out, 5) == (COMMS, 0)
    assert len(re.findall(r"sdnmpi\[\d+\]: bcast comm=\d+ root=\d+ epoch=0 bytes=262144 datagrams=\d+: multicast",
                          out["stderr"])) == out["cases"]
    assert out["stderr"].count(STARTED) == (5 if lib_comm == "defer" else 0)
    stub.wait_idle()
    assert stub.errors == []


def test_linked_deferred(built, stub_factory):
    """Linked, SDN_MPI_LIB_COMM=defer: the world's first Bcast (before any idup of the world)
    completes the library's communicator; then every Bcast state under a pending idup is a group's
    creation on it, as with the blocking creation."""
    stub = stub_factory()
    out = run(4, 4, stub, SDN_MPI_LIB_COMM="defer")
    assert out["mcast"] == out["cases"], out
    assert origins(out, 4) == (COMMS, 0)
    assert out["stderr"].count(STARTED) == 4
    assert re.search(r"sdnmpi\[0\]: the library's communicator completed", out["stderr"])
    stub.wait_idle()
    assert stub.errors == []


@pytest.mark.parametrize("knob", [{"SDN_MPI_LIB_COMM": "0"}, {"SDN_MPI_TEST_NO_LIBCOMM": "2"}])
def test_duplicate_without_the_library_communicator(built, stub_factory, knob):
    """SDN_MPI_LIB_COMM=0 (world rank 0's, for all), or the library's communicator failed on world
    rank 2 alone (every rank learns it from the state's agreement, none hangs): every Bcast state
    duplicates its communicator, as before; bit-exact, every call multicast (no idup here: the
    duplicate may hang against one)."""
    stub = stub_factory()
    out = run(5, 5, stub, "--no-idup", **knob)
    assert out["mcast"] == out["cases"], out
    assert origins(out, 5) == (0, COMMS)
    failed = "sdnmpi[2]: init: the library's communicator could not be made" in out["stderr"]
    assert failed == ("SDN_MPI_TEST_NO_LIBCOMM" in knob)
    stub.wait_idle()
    assert stub.errors == []
