"""SDN_MPI_Init's two collectives (libsdnmpi/src/init_exchange.c) under mpirun on localhost with a
stub controller: a Gather of every rank's (address, memory flag) to world rank 0, then one Bcast of
the agreement with every rank's address. A rank whose allocations fail (the test-only knob
SDN_MPI_TEST_INIT_NOMEM=R) takes part through the spare buffer, and every rank falls back without
registering; a world larger than the spare (SDN_MPI_TEST_INIT_SPARE=N lowers its size) agrees on
memory first. Every result still equals PMPI_Allreduce's (allreduce_check)."""
import pytest

from libsdnmpi_checks import HOSTS_PER_P, check_stub_records, run_check

pytestmark = pytest.mark.usefixtures("mpirun_path")   # a missing mpirun fails, never skips

FELL_BACK = "init: out of memory, falling back to PMPI_Allreduce"


def env_of(stub, np, **knobs):
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(HOSTS_PER_P[np]), "SDN_MPI_VERBOSE": "1"}
    env.update({"SDN_MPI_TEST_INIT_" + k.upper(): str(v) for k, v in knobs.items()})
    return env


@pytest.mark.parametrize("np,spare", [(5, None), (5, 2), (8, 7)])
def test_addresses_reach_rank_0_and_every_rank(built, stub_factory, np, spare):
    """register names every rank's address in world rank order (the Gather), and world rank 1,
    which leads the odd half, plans it with the addresses the Bcast gave it; with a spare smaller
    than the world the memory Allreduce comes first, and the outcome is the same."""
    stub = stub_factory()
    env = env_of(stub, np) if spare is None else env_of(stub, np, spare=spare)
    out = run_check(np, "sdn", env, quick=True)
    assert out["rd"] > 0 and FELL_BACK not in out["stderr"]
    check_stub_records(stub, np, HOSTS_PER_P[np])


@pytest.mark.parametrize("np,rank,spare", [(4, 0, None), (4, 2, None), (5, 4, None), (5, 3, 2), (5, 0, 2)])
def test_a_rank_without_memory_turns_the_path_off_everywhere(built, stub_factory, np, rank, spare):
    """One rank (world rank 0 or another) cannot allocate Init's tables: every rank falls back
    with the same reason, world rank 0 never connects, and every call equals PMPI's; through the
    spare buffer (two collectives) or, with a spare smaller than the world, after the Allreduce
    that agrees on memory."""
    stub = stub_factory()
    knobs = {"nomem": rank} if spare is None else {"nomem": rank, "spare": spare}
    out = run_check(np, "pmpi", env_of(stub, np, **knobs), quick=True)
    assert out["rd"] == out["rab"] == 0
    for r in range(np):
        assert "sdnmpi[%d]: %s" % (r, FELL_BACK) in out["stderr"], (r, out["stderr"][-3000:])
    stub.wait_idle()
    assert stub.conns == []


def test_malformed_test_knobs_are_ignored_like_every_knob(built, stub_factory):
    """The test knobs are read by env.c like every SDN_MPI_* knob: a value that is not an integer
    in range is ignored with one warning line per rank, and Init goes on as without it."""
    np = 4
    stub = stub_factory()
    out = run_check(np, "sdn", env_of(stub, np, nomem="1x", spare=-3), quick=True)
    assert out["rd"] > 0 and FELL_BACK not in out["stderr"]
    for r in range(np):
        for warning in ("ignoring SDN_MPI_TEST_INIT_NOMEM=1x (want an integer in -1..2147483647)",
                        "ignoring SDN_MPI_TEST_INIT_SPARE=-3 (want an integer in 0..4096)"):
            assert out["stderr"].count("sdnmpi[%d]: %s" % (r, warning)) == 1, (r, out["stderr"][-3000:])
    check_stub_records(stub, np, HOSTS_PER_P[np])
