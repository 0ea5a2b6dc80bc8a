"""libsdnmpi (C): the numeric SDN_MPI_* knobs (env.c) under bad values -- 0, negative, not a number,
2^63, 2^64 - 1 and above -- on the collectives that use them, under mpirun on localhost with the
stub controller. Every value is either refused (one "ignoring KNOB=VALUE (want ...)" line on each
rank's stderr, the default used) or taken as libsdnmpi/README.md says (a segment of at least one
element, at most the whole vector, at most 1024 segments a chain or hierarchical call, 64 messages
an Alltoall block); either way every result equals PMPI's bit for bit (allreduce_check and
coll_check compare them), on every datatype coll_check knows, the one-byte ones included: a
segment of 2^64 - 1 one-byte elements once wrapped the segment count to 0 (no chain segment moved:
the root kept its own data) and the hierarchical allreduce divided by a segment count of 0
(SIGFPE).
"""
import re

import pytest

import libsdnmpi_checks as checks
import libsdnmpi_harness as harness
import test_libsdnmpi_coll as coll
from libsdnmpi_harness import MPIRUN
from mpi_progs import build_prog

pytestmark = pytest.mark.skipif(MPIRUN is None, reason="Open MPI (mpirun) is not installed")
NP = 4
CHAINS = "3"      # coll_check --reduce-path: sdnmpi_test_last_reduce's two chains
TWO_63, TWO_64 = str(2 ** 63), str(2 ** 64)
MAX64 = str(2 ** 64 - 1)

# (knob, value, refused): every value of a knob runs the collective that reads it
REDUCE = [("SDN_MPI_REDUCE_SEGMENT", v, r) for v, r in (
    ("0", False), ("-1", True), ("abc", True), ("8x", True), (TWO_63, False), (MAX64, False),
    (str(2 ** 64 - 2), False), ("17179869183g", False), (TWO_64, True), ("unlimited", True))]
ALLTOALL = [("SDN_MPI_ALLTOALL_SEGMENT", "0", False), ("SDN_MPI_ALLTOALL_SEGMENT", "1", False),
            ("SDN_MPI_ALLTOALL_SEGMENT", MAX64, False),
            ("SDN_MPI_ALLTOALL_SEGMENT", "-8", True), ("SDN_MPI_ALLTOALL_WINDOW", "0", True),
            ("SDN_MPI_ALLTOALL_WINDOW", "-2", True), ("SDN_MPI_ALLTOALL_WINDOW", TWO_63, True),
            ("SDN_MPI_ALLGATHER_CYCLES_MIN", "0", False), ("SDN_MPI_ALLGATHER_CYCLES_MIN", "-1", True)]
HIER = [("SDN_MPI_HIER_SEGMENT", v, r) for v, r in (
    ("unlimited", False), (MAX64, False), (str(2 ** 64 - 3), False), (TWO_63, False), ("-1", True), ("x", True))] + [("SDN_MPI_HIER_DEPTH", v, True) for v in ("-1", "65", TWO_63, "two")]


def warnings_of(stderr, knob, value):
    """The lines that refuse knob=value."""
    return re.findall(r"^sdnmpi\[\d+\]: ignoring %s=%s \(want .*\)$" % (knob, re.escape(value)), stderr, re.M)


def assert_refusal(stderr, knob, value, refused):
    """One refusal line per rank if refused, else none; no other line of the library's either."""
    lines = [line for line in stderr.splitlines() if line.startswith("sdnmpi[")]
    assert lines == warnings_of(stderr, knob, value) and len(lines) == (NP if refused else 0), stderr[-3000:]


@pytest.mark.parametrize("knob,value,refused", REDUCE + ALLTOALL)
def test_reduce_and_alltoall_knobs(built, stub_factory, knob, value, refused):
    """Reduce on its chains (from every size), Allgather and Alltoall: PMPI's bits under each value."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(NP), "SDN_MPI_MIN_BYTES": "1",
           "SDN_MPI_REDUCE_CHAIN_MIN": "0", knob: value}
    out = coll.run_check(NP, "sdn", env, quick=True, seed=45, options=("--reduce-path", CHAINS))
    assert out["reduce_sdn"] > 0 and out["alltoall_sdn"] > 0 and out["allgather_sdn"] > 0
    assert_refusal(out["stderr"], knob, value, refused)


@pytest.mark.parametrize("knob,value,refused", HIER)
def test_hierarchical_allreduce_knobs(built, stub_factory, knob, value, refused):
    """The hierarchical allreduce (from 1 byte on, two leaves): PMPI's bits under each value."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(NP), "SDN_MPI_HIER_MIN": "1",
           knob: value}
    out = checks.run_check(NP, "sdn", env, quick=True, seed=45)
    assert out["hier"] > 0
    assert_refusal(out["stderr"], knob, value, refused)


@pytest.fixture(scope="module")
def job(built, tmp_path_factory):
    return build_prog("failmalloc_job45", tmp_path_factory.mktemp("knobs45"))


@pytest.mark.parametrize("value,elems", [("0", 4), ("1", 4), ("8", 4), ("64", 8), (None, 1024)])
def test_reduce_segments_are_bounded(job, stub_factory, value, elems):
    """A chain moves at most SDNMPI_MAX_SEGMENTS (1024, segments.h) segments: tiny segments (0 and 1:
    one element) once meant one message per element, and a 1 MiB Reduce under
    SDN_MPI_REDUCE_SEGMENT=0 took 25 s on 4 ranks here (8 KiB segments: 9 ms). failmalloc_job45's
    64 KiB Reduce (8192 doubles, halves of 4096) therefore runs in segments of at least 4 elements;
    the default, 8 KiB, is 1024 doubles."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(NP), "SDN_MPI_MIN_BYTES": "1",
           "SDN_MPI_VERBOSE": "1"}
    if value is not None:
        env["SDN_MPI_REDUCE_SEGMENT"] = value
    res, _seconds = harness.mpirun(NP, [job], env, timeout=60)
    assert res.returncode == 0 and "failmalloc_job45: p=%d wrong=0 errors=0" % NP in res.stdout, res.stderr[-3000:]
    assert re.search(r"^sdnmpi\[\d+\]: reduce comm=0 count=8192 bytes=65536 root=%d: two chains, segments of %d "
                     r"elements$" % (NP - 1, elems), res.stderr, re.M), res.stderr[-3000:]


HIER_LINE = re.compile(r"^sdnmpi\[(\d+)\]: allreduce comm=\d+ count=(\d+) bytes=\d+: hierarchical, (\d+) segments of "
                       r"(\d+) elements$", re.M)
MAX_SEGMENTS = 1024   # segments.h SDNMPI_MAX_SEGMENTS


def ceil_div(a, b):
    return -(-a // b)


def bounded_segments(count):
    """A one-element segment (SDN_MPI_HIER_SEGMENT=1, any extent) raised to the bound: the number of
    segments and the elements of each but the last (even segments; allreduce_hier.c)."""
    nseg = ceil_div(count, max(1, ceil_div(count, MAX_SEGMENTS)))
    segcount = ceil_div(count, nseg)
    return ceil_div(count, segcount), segcount


@pytest.mark.parametrize("value", ["1", "0"])
def test_hierarchical_segments_are_bounded(built, stub_factory, value):
    """The hierarchical allreduce cuts its vector into at most SDNMPI_MAX_SEGMENTS (1024) segments, as
    Reduce's chains: SDN_MPI_HIER_SEGMENT=1 (one element) once meant a message per element and
    every step, and this run took 30 s on 4 local ranks (now 3 s; another run of allreduce_check
    timed out at 150 s). Now the segment is raised to count / 1024 (rounded up), in every call the
    verbose line names. 0 is one segment (libsdnmpi/README.md). Every result is PMPI's, bit for bit."""
    stub = stub_factory(leaves=2)
    env = {"SDN_MPI_CONTROLLER": stub.address, "SDN_MPI_FAKE_HOSTS": str(NP), "SDN_MPI_HIER_MIN": "1",
           "SDN_MPI_VERBOSE": "1", "SDN_MPI_HIER_SEGMENT": value}
    out = checks.run_check(NP, "sdn", env, quick=True, seed=45)
    calls = [tuple(map(int, m)) for m in HIER_LINE.findall(out["stderr"])]
    # rank 0 names each of its hierarchical calls (allreduce_check counts rank 0's, not the in-place repeats)
    assert out["hier"] > 0 and sum(rank == 0 for rank, *_ in calls) >= out["hier"], out["stderr"][-3000:]
    for _rank, count, nseg, segcount in calls:
        assert nseg <= MAX_SEGMENTS
        assert (nseg, segcount) == (bounded_segments(count) if value == "1" else (1, count))
    assert max(count for _, count, _, _ in calls) > 64 * MAX_SEGMENTS   # the bound cut the largest calls
