"""bench/traffic_patterns.c: the point-to-point patterns of issue 15 under mpirun on localhost
(every received byte is checked by the program itself; a wrong peer would deadlock or fail)."""
import pathlib
import subprocess

import pytest

from libsdnmpi_harness import mpirun

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench"
PROGRAM = BENCH / "build" / "traffic_patterns"


@pytest.fixture(scope="module")
def program():
    res = subprocess.run(["make", "-C", str(BENCH), "build/traffic_patterns"], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.fail("make -C bench build/traffic_patterns failed:\n%s\n%s" % (res.stdout, res.stderr))
    return PROGRAM


@pytest.mark.parametrize("np, argv", [
    (4, ["shift", 1000, 3]), (6, ["shift", 4096, 2, 2]), (4, ["shift", 10, 1, 4]),
    (6, ["perm", 3000, 2, 7]), (5, ["perm", 100, 2, 3]),
    (4, ["halo2d", 2048, 3]), (6, ["halo2d", 100, 2]), (8, ["halo3d", 512, 2]), (2, ["halo3d", 64, 1]),
    (4, ["alltoall", 1000, 3]), (3, ["alltoall", 1, 1]),
])
def test_patterns_deliver_every_byte_and_report_one_line(program, np, argv):
    res, _seconds = mpirun(np, [program, *argv], timeout=120)
    assert res.returncode == 0, res.stderr
    line, = [l for l in res.stdout.splitlines() if l.startswith("pattern=")]
    fields = dict(kv.split("=") for kv in line.split())
    assert fields["pattern"] == argv[0] and int(fields["bytes"]) == argv[1] and int(fields["iters"]) == argv[2]
    assert int(fields["ranks"]) == np and float(fields["seconds"]) > 0


@pytest.mark.parametrize("argv, message", [
    (["spiral", 10, 1], "unknown pattern"),
    (["shift", 0, 1], "BYTES"),
    (["shift", "10x", 1], "BYTES"),
    (["shift", 10, 0], "ITERS"),
    (["shift", 10, 1, -1], "ARG"),
    (["shift"], "wrong number"),
])
def test_bad_arguments_exit_2_with_one_line(program, argv, message):
    res, _seconds = mpirun(2, [program, *argv], timeout=60)
    assert res.returncode == 2
    errors = [l for l in res.stderr.splitlines() if l.startswith("traffic_patterns:")]
    assert len(errors) == 1 and message in errors[0]
