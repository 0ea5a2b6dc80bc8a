"""The traffic profiler (libsdnmpi_prof.so) on known patterns, under Open MPI and MPICH, on localhost:
exact matrices for point-to-point, split communicators, MPI_ANY_SOURCE, collectives attributed to
their standard algorithm, phases summing to the whole run, the job archive, install/pkg-config.

Open MPI 4.1.4 as Debian ships it cannot give the "mpi_t" source: its pml_monitoring component
unloads itself at MPI_Init (open-mpi/ompi#9260), so the profiler falls back to "pmpi" there, and the
expectations below are those of the pmpi source on both MPI libraries (docs/profiler.md).
"""
import json
import os
import re
import subprocess
import tarfile

import pytest

import profiler_harness as ph
from libsdnmpi_harness import LIB, MPIRUN

MPIS = ["openmpi", "mpich"]
DURATION = re.compile(r'"duration": [0-9.e+-]+')


@pytest.fixture(scope="module")
def mpich_built(built):
    if ph.MPIRUN_MPICH is None:
        pytest.fail("mpirun.mpich is missing: scripts/install-deps.sh installs the mpich package")
    ph.build_mpich()
    return True


@pytest.fixture(params=MPIS)
def mpi(request, built):
    if MPIRUN is None:
        pytest.fail("Open MPI's mpirun is missing")
    if request.param == "mpich":
        request.getfixturevalue("mpich_built")
    return request.param


def test_ring_any_source_and_archive(mpi, tmp_path):
    np, size = 4, 1000
    res = ph.run(mpi, np, ["ring", size], tmp_path, env={"SDN_MPI_PROF_JOB": "ring-job"})
    files = ph.read_ranks(tmp_path, np)
    ph.assert_matrices(files, {(r, (r + 1) % np): (3 * size, 3) for r in range(np)})
    for r, f in enumerate(files):
        assert f["rank"] == r and f["n_procs"] == np and f["source"] == "pmpi"
        assert ph.PFPROF_KEYS <= set(f) and f["n_phases"] == 1 and len(f["phases"]) == 1
        assert f["tx_message_sizes"] == [{"frequency": 3, "message_size": size}]
        assert f["rx_message_sizes"] == [{"frequency": 3, "message_size": size}]
        assert f["n_events"] == 3 and f["duration"] > 0
        for key in ph.MATRICES:   # phase 0 = the whole run
            assert f["phases"][0][key] == f[key]
        # PFProf's layout (Python's json.dump, indent 4, sorted keys), durations aside (%.6f here)
        text = (tmp_path / ("oxton-result%d.json" % r)).read_text()
        python = json.dumps(f, indent=4, sort_keys=True) + "\n"
        assert DURATION.sub("D", text) == DURATION.sub("D", python)
    with tarfile.open(tmp_path / "ring-job.tar.gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar}
    assert members == {"oxton-result%d.json" % r: (tmp_path / ("oxton-result%d.json" % r)).read_bytes()
                       for r in range(np)}
    assert "sdnmpi-prof" not in res.stderr


def test_alltoall_distinct_sizes(mpi, tmp_path):
    np = 5
    ph.run(mpi, np, ["alltoall"], tmp_path)
    files = ph.read_ranks(tmp_path, np)
    ph.assert_matrices(files, {(i, j): ((i * np + j + 1) * 8, 1) for i in range(np) for j in range(np) if i != j})
    for i, f in enumerate(files):
        assert f["tx_message_sizes"] == [{"frequency": 1, "message_size": (i * np + j + 1) * 8}
                                         for j in range(np) if j != i]


def test_split_communicator_maps_to_world_ranks(mpi, tmp_path):
    """split by r % 2 with key -r: in each half the sub-ranks run backwards over the world ranks."""
    np, size = 6, 100
    ph.run(mpi, np, ["split", size], tmp_path)
    files = ph.read_ranks(tmp_path, np)
    pairs = {}
    for color in (0, 1):
        members = sorted((r for r in range(np) if r % 2 == color), reverse=True)  # sub-rank order
        for s, w in enumerate(members):
            pairs[(w, members[(s + 1) % len(members)])] = (size + w, 1)
    ph.assert_matrices(files, pairs, phase=1)
    assert all(f["n_phases"] == 2 for f in files)


def test_dup_cart_and_create_group_map_to_world_ranks(mpi, tmp_path):
    np, size = 6, 48
    ph.run(mpi, np, ["comms", size], tmp_path)
    files = ph.read_ranks(tmp_path, np)
    world_ring = {(r, (r + 1) % np): (size, 1) for r in range(np)}
    ph.assert_matrices(files, world_ring, phase=1)    # dup
    ph.assert_matrices(files, world_ring, phase=2)    # cart, not reordered
    evens = [4, 2, 0]                                 # the group's order: sub-rank s = evens[s]
    ph.assert_matrices(files, {(w, evens[(s + 1) % 3]): (size, 1) for s, w in enumerate(evens)}, phase=3)


def test_phases_sum_to_the_whole_run(mpi, tmp_path):
    np, size = 4, 64
    ph.run(mpi, np, ["phases", size], tmp_path)
    files = ph.read_ranks(tmp_path, np)
    ring = {(r, (r + 1) % np): (2 * size, 2) for r in range(np)}
    alltoall = {(i, j): ((i * np + j + 1) * 8, 1) for i in range(np) for j in range(np) if i != j}
    ph.assert_matrices(files, ring, phase=1)
    ph.assert_matrices(files, alltoall, phase=2)
    for key in ph.MATRICES:
        for f in files:
            assert [a + b for a, b in zip(f["phases"][1][key], f["phases"][2][key])] == f[key]
    for f in files:
        assert f["n_phases"] == 3 and [p["phase"] for p in f["phases"]] == [0, 1, 2]
        assert f["phases"][1]["n_events"] == 2 and f["phases"][2]["n_events"] == np - 1  # sends only


# Recursive doubling on 6 ranks: ranks 0 and 2 fold into 1 and 3 (newranks 0..3 = ranks 1, 3, 4,
# 5), two exchange steps, then 1 and 3 hand the result back.
ALLREDUCE_6 = [(0, 1), (2, 3), (1, 3), (3, 1), (4, 5), (5, 4), (1, 4), (4, 1), (3, 5), (5, 3), (1, 0), (3, 2)]
# Binomial tree from rank 0 on 5 ranks.
BCAST_5 = [(0, 4), (0, 2), (0, 1), (2, 3)]
PIN = ("--mca", "coll_tuned_use_dynamic_rules", "1", "--mca", "coll_tuned_allreduce_algorithm", "3",
       "--mca", "coll_tuned_bcast_algorithm", "6")


@pytest.mark.parametrize("np,edges", [(4, [(r, r ^ m) for r in range(4) for m in (1, 2)]), (6, ALLREDUCE_6)])
def test_allreduce_attributed_to_recursive_doubling(mpi, tmp_path, np, edges):
    size = 8000
    ph.run(mpi, np, ["allreduce", size], tmp_path, extra=PIN if mpi == "openmpi" else ())
    files = ph.read_ranks(tmp_path, np)
    ph.assert_matrices(files, {e: (size, 1) for e in edges})


def test_nonblocking_allreduce_counted_like_the_blocking_one(mpi, tmp_path):
    np, size = 6, 800
    ph.run(mpi, np, ["iallreduce", size], tmp_path)
    ph.assert_matrices(ph.read_ranks(tmp_path, np), {e: (size, 1) for e in ALLREDUCE_6})


def test_bcast_attributed_to_binomial_tree(mpi, tmp_path):
    np, size = 5, 3000
    ph.run(mpi, np, ["bcast", size], tmp_path, extra=PIN if mpi == "openmpi" else ())
    files = ph.read_ranks(tmp_path, np)
    ph.assert_matrices(files, {e: (size, 1) for e in BCAST_5})


def test_mpi_t_request_falls_back_with_a_warning(built, tmp_path):
    """SDN_MPI_PROF_SOURCE=mpi_t where pml_monitoring's variables are unusable: pmpi, said once."""
    res = ph.run("openmpi", 2, ["ring", 10], tmp_path, env={"SDN_MPI_PROF_SOURCE": "mpi_t"})
    assert res.stderr.count("pml_monitoring's MPI_T variables are missing: using pmpi") == 1
    assert all(f["source"] == "pmpi" for f in ph.read_ranks(tmp_path, 2))


def test_unwritable_directory_is_reported_not_fatal(built, tmp_path):
    missing = tmp_path / "no" / "such" / "dir"
    res = ph.run("openmpi", 2, ["ring", 10], tmp_path, env={"SDN_MPI_PROF_DIR": str(missing)})
    assert res.stderr.count("cannot write %s/oxton-result" % missing) == 2
    assert not missing.exists()


def test_exports_and_install(built, tmp_path):
    dyn = subprocess.run(["nm", "-D", "--defined-only", str(ph.PROF)], capture_output=True, text=True,
                         check=True).stdout
    exported = {line.split()[-1] for line in dyn.splitlines() if " T " in line}
    assert {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Pcontrol", "MPI_Send", "MPI_Isend",
            "MPI_Allreduce", "MPI_Bcast", "MPI_Alltoallv"} <= exported
    assert not any(s.startswith(("prof_", "sdnmpi_")) for s in exported)
    prefix = tmp_path / "prefix"
    subprocess.run(["make", "-C", str(LIB), "install", "PREFIX=%s" % prefix], check=True, capture_output=True)
    assert (prefix / "lib/libsdnmpi_prof.so").is_file()
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib/pkgconfig"))
    preload = subprocess.run(["pkg-config", "--variable=preload", "sdnmpi-prof"], env=env, capture_output=True,
                             text=True, check=True).stdout.strip()
    assert preload == str(prefix / "lib/libsdnmpi_prof.so")


def test_phase_module_contract(built):
    """phase.h, the phase bookkeeping the profiler and the routing hints share (tests/phase_check.c)."""
    res = subprocess.run([str(LIB / "tests" / "phase_check")], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0 and res.stdout == "phase_check: ok\n", res.stdout + res.stderr
