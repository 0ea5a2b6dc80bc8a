"""libsdnmpi/tests/traffic_patterns.c: the patterns of issue 15 under mpirun on localhost (every
received byte of every repetition is checked by the program itself; a wrong peer would deadlock or
fail), its output lines and its bad-argument handling.

Runs mpirun: take the machine-wide lock (COMMON.md):
`flock /tmp/sdnmpi-mininet.lock timeout 900 .venv/bin/python -m pytest tests/unit/test_traffic_patterns.py`.
"""
import pathlib
import subprocess
import threading
import time

import pytest

from libsdnmpi_harness import mpirun

LIB = pathlib.Path(__file__).resolve().parents[2] / "libsdnmpi"
PROGRAM = LIB / "tests" / "traffic_patterns"
HOLD_FOR = 2.0   # seconds before test_hold's file appears


@pytest.fixture(scope="module")
def program():
    res = subprocess.run(["make", "-C", str(LIB), "tests/traffic_patterns"], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.fail("make -C libsdnmpi tests/traffic_patterns failed:\n%s\n%s" % (res.stdout, res.stderr))
    return PROGRAM


def result_lines(stdout):
    """The per-exchange lines as dicts, and the final `ranks=P ok seconds=S cpu_min=C cpu_max=C` line's
    fields."""
    lines = [dict(kv.split("=") for kv in l.split()[1:]) for l in stdout.splitlines()
             if l.startswith("traffic_patterns: pattern=")]
    final = [l.split() for l in stdout.splitlines() if l.startswith("traffic_patterns: ranks=")]
    return lines, final


@pytest.mark.parametrize("np, reps, step, wait", [
    (4, 3, ["shift", 1, 1000], []), (6, 2, ["shift", 2, 4096], []), (4, 1, ["shift", 4, 10], []),
    (6, 2, ["perm", 7, 3000], []), (5, 2, ["perm", 3, 100], []),
    (4, 3, ["halo2d", 2048], []), (6, 2, ["halo2d", 100], []), (8, 2, ["halo3d", 512], []), (2, 1, ["halo3d", 64], []),
    (4, 3, ["alltoall", 1000], []), (3, 1, ["alltoall", 1], []),
    # --wait-sleep: the nonblocking barrier, test-and-sleep waits and reduce deliver the same
    (4, 3, ["shift", 1, 100000], ["--wait-sleep", 1000]), (6, 2, ["perm", 7, 3000], ["--wait-sleep", 200]),
    (8, 2, ["halo3d", 512], ["--wait-sleep", 1]), (4, 2, ["alltoall", 1000], ["--wait-sleep", 1000]),
    # --window: the bytes to each peer as W messages in flight (uneven split; more messages than bytes)
    (4, 2, ["shift", 1, 100003], ["--window", 4]), (6, 2, ["perm", 7, 3001], ["--window", 3]),
    (8, 2, ["halo3d", 513], ["--window", 2, "--wait-sleep", 100]), (4, 2, ["alltoall", 5], ["--window", 8]),
])
def test_patterns_deliver_every_byte_and_report(program, np, reps, step, wait):
    res, _seconds = mpirun(np, [program, *wait, "--reps", reps, "phase", 1, *step, "phase", 0], timeout=120)
    assert res.returncode == 0, res.stderr
    lines, final = result_lines(res.stdout)
    (fields,) = lines
    assert fields["pattern"] == step[0] and int(fields["bytes"]) == step[-1] and int(fields["reps"]) == reps
    assert int(fields["ranks"]) == np and float(fields["seconds"]) >= 0
    ((_, ranks, ok, total, cpu_min, cpu_max),) = final
    assert ranks == "ranks=%d" % np and ok == "ok" and float(total.split("=")[1]) == float(fields["seconds"])
    assert 0 <= float(cpu_min.split("=")[1]) <= float(cpu_max.split("=")[1])


def cpu_of(stdout):
    """(cpu_min, cpu_max) of the final line."""
    _lines, ((*_, cpu_min, cpu_max),) = result_lines(stdout)
    return float(cpu_min.split("=")[1]), float(cpu_max.split("=")[1])


def test_wait_sleep_leaves_the_cpu_while_a_rank_waits(program):
    """Rank 0 computes 2 s of CPU time (skew) while rank 1 waits for it in the next exchange's
    barrier: with --wait-sleep the waiting rank sleeps (almost no CPU), while spinning it burns CPU
    (Open MPI polls even with mpi_yield_when_idle); rank 0's 2 s are the most either way. The skew
    counts CPU time, not wall time, so a busy machine (other jobs on its 2 cores) stretches the run
    but not rank 0's CPU; the waiting rank is judged against the spinning one, which shares the
    machine's load with it, never against a wall-clock share of a CPU."""
    argv = ["skew", 2000, "shift", 1, 1000]
    slept, _ = mpirun(2, [program, "--wait-sleep", 1000, *argv], timeout=120)
    assert slept.returncode == 0, slept.stderr
    spun, _ = mpirun(2, [program, *argv], timeout=120)
    assert spun.returncode == 0, spun.stderr
    (sleep_min, sleep_max), (spin_min, spin_max) = cpu_of(slept.stdout), cpu_of(spun.stdout)
    assert sleep_max >= 1.95 and spin_max >= 1.95   # rank 0's skew: 2 s of its CPU (rusage rounds)
    # rank 1 slept through its wait, and spun without the option: a ratio of the same rank's CPU in
    # two runs, which a busy machine scales alike (at load 21: 0.02 against 0.90 s)
    assert sleep_min < 0.2 * spin_min, (slept.stdout, spun.stdout)


def test_several_exchanges_one_line_each_and_the_sum(program):
    res, _seconds = mpirun(4, [program, "shift", 1, 500, "pause", 10, "halo3d", 64, "alltoall", 32], timeout=120)
    assert res.returncode == 0, res.stderr
    lines, final = result_lines(res.stdout)
    assert [(l["pattern"], int(l["bytes"]), int(l["reps"])) for l in lines] == [
        ("shift", 500, 1), ("halo3d", 64, 1), ("alltoall", 32, 1)]
    ((_, _, _, total, _cpu_min, _cpu_max),) = final
    assert float(total.split("=")[1]) == pytest.approx(sum(float(l["seconds"]) for l in lines), abs=3e-6)


def test_hold_sleeps_until_the_file_appears(program, tmp_path):
    go = tmp_path / "go"
    created = {}

    def create_later():
        time.sleep(HOLD_FOR)     # the delay under test, not a wait for a condition
        created["before"] = time.monotonic()   # stamped first: the file cannot exist before this moment
        go.touch()

    later = threading.Thread(target=create_later)
    later.start()
    try:
        res, _seconds = mpirun(2, [program, "shift", 1, 100, "hold", go, "shift", 1, 200], timeout=120)
        finished = time.monotonic()
    finally:
        later.join()
    assert res.returncode == 0, res.stderr
    assert [l["bytes"] for l in result_lines(res.stdout)[0]] == ["100", "200"]
    assert finished > created["before"]    # the run did not end before the file came


def test_hold_past_its_limit_fails_the_run(program, tmp_path):
    res, seconds = mpirun(2, [program, "--hold-max", 1, "hold", tmp_path / "never", "shift", 1, 100], timeout=120)
    assert res.returncode == 1
    assert res.stderr.count("did not appear in 1 s") == 2, res.stderr   # each rank says so
    assert " ok " not in res.stdout


@pytest.mark.parametrize("argv, message", [
    (["spiral", 10], "unknown pattern spiral"),
    (["shift", 1, 0], "bad number 0"),
    (["shift", 1, "10x"], "bad number 10x"),
    (["--reps", 0, "shift", 1, 10], "bad number 0"),
    (["--bogus", "shift", 1, 10], "unknown option --bogus"),
    (["pause", -1], "bad number -1"),
    (["skew", "x"], "bad number x"),
    (["--wait-sleep", -1, "shift", 1, 10], "bad number -1"),
    (["--wait-sleep", "1ms", "shift", 1, 10], "bad number 1ms"),
    (["--window", 0, "shift", 1, 10], "bad number 0"),
    (["--window", 1025, "shift", 1, 10], "bad number 1025"),
    (["shift", 1], "1 needs an argument"),
    (["hold"], "hold needs an argument"),
    (["--hold-max", -1, "hold", "x"], "bad number -1"),
    ([], "no pattern given"),
])
def test_bad_arguments_exit_2_with_one_line(program, argv, message):
    res, _seconds = mpirun(2, [program, *argv], timeout=60)
    assert res.returncode == 2
    errors = [l for l in res.stderr.splitlines() if l.startswith("traffic_patterns")]
    assert len(errors) == 1 and message in errors[0], res.stderr
    assert "pattern=" not in res.stdout
