"""What the profiler tests (test_profiler*.py) share: the profiler's builds for Open MPI and MPICH,
running a program under each with LD_PRELOAD, and reading the rank files with json (not with
sdnmpi.traces, so that the C side is checked on its own)."""
import json
import shutil
import subprocess

import libsdnmpi_harness as harness
from libsdnmpi_harness import LIB

PROF = LIB / "libsdnmpi_prof.so"
PROF_MPICH = LIB / "libsdnmpi_prof-mpich.so"
PATTERNS = LIB / "tests" / "prof_patterns"
PATTERNS_MPICH = LIB / "tests" / "prof_patterns-mpich"
MPIRUN_MPICH = shutil.which("mpirun.mpich")
MPI_TIMEOUT = 120
PFPROF_KEYS = {"n_events", "n_procs", "processor_name", "rank", "rx_bytes", "rx_message_sizes", "rx_messages",
               "tx_bytes", "tx_message_sizes", "tx_messages"}
MATRICES = ("tx_bytes", "tx_messages", "rx_bytes", "rx_messages")


def build_mpich():
    """make prof-mpich (the MPICH profiler and test program); a failure raises with its output."""
    res = subprocess.run(["make", "-C", str(LIB), "prof-mpich"], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]


def run(mpi, np, args, out_dir, env=None, extra=()):
    """Runs prof_patterns ARGS on np ranks of `mpi` ("openmpi" or "mpich") under the profiler,
    writing into out_dir. Returns the CompletedProcess (asserting success)."""
    env = dict(env or {})
    env.setdefault("SDN_MPI_PROF_DIR", str(out_dir))
    if mpi == "openmpi":
        env["LD_PRELOAD"] = str(PROF)
        res, _ = harness.mpirun(np, [PATTERNS, *args], env, timeout=MPI_TIMEOUT, extra=extra)
    else:
        cmd = ["timeout", "-k", "10", str(MPI_TIMEOUT), MPIRUN_MPICH, "-np", str(np),
               "-env", "LD_PRELOAD", str(PROF_MPICH)]
        for key, value in env.items():
            cmd += ["-env", key, value]
        res = subprocess.run(cmd + [str(PATTERNS_MPICH), *map(str, args)], capture_output=True, text=True)
    assert res.returncode == 0, "%s %s failed (rc %d):\n%s\n%s" % (mpi, args, res.returncode, res.stdout[-3000:],
                                                                    res.stderr[-3000:])
    return res


def read_ranks(out_dir, np):
    """[rank file as a dict] for ranks 0..np-1."""
    return [json.loads((out_dir / ("oxton-result%d.json" % r)).read_text()) for r in range(np)]


def matrix(files, key, phase=None):
    """Row r = rank r's `key` list (of phase `phase`'s entry, or the top level)."""
    return [f[key] if phase is None else f["phases"][phase][key] for f in files]


def expected(np, pairs):
    """(tx_bytes, tx_messages) matrices from {(src, dst): (bytes, messages)}."""
    tx_b = [[0] * np for _ in range(np)]
    tx_m = [[0] * np for _ in range(np)]
    for (i, j), (b, m) in pairs.items():
        tx_b[i][j] += b
        tx_m[i][j] += m
    return tx_b, tx_m


def transpose(m):
    return [list(row) for row in zip(*m)]


def assert_matrices(files, pairs, phase=None):
    """The files' tx_* equal `pairs` (see expected) and rx_* their transposes."""
    np = len(files)
    tx_b, tx_m = expected(np, pairs)
    assert matrix(files, "tx_bytes", phase) == tx_b
    assert matrix(files, "tx_messages", phase) == tx_m
    assert matrix(files, "rx_bytes", phase) == transpose(tx_b)
    assert matrix(files, "rx_messages", phase) == transpose(tx_m)
