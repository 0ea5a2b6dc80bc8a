"""bench/jobroute_hpcc.py's pure parts: hpccinf.txt and the sections' times of a stopped hpcc run
(the text below is hpcc 1.5.0's output format, from a run on this machine, trimmed)."""
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench"))

import jobroute_hpcc  # noqa: E402

OUTPUT = """Begin of MPIRandomAccess section.
Running on 8 processors (PowerofTwo)
CPU time used = 0.194329 seconds
Real time used = 3.518219 seconds
Found 0 errors in 524288 locations (passed).
Current time (1795848525) is Sat Nov 28 06:48:45 2026

End of MPIRandomAccess section.
Begin of MPIRandomAccess_LCG section.
Real time used = 3.104204 seconds
Found 0 errors in 524288 locations (passed).
End of MPIRandomAccess_LCG section.
Begin of PTRANS section.
TIME   M     N    MB  NB  P   Q     TIME   CHECK   GB/s   RESID
---- ----- ----- --- --- --- --- -------- ------ -------- -----
WALL   500   500  80  80   2   4     0.01 PASSED    0.626  0.00
CPU    500   500  80  80   2   4     0.00 PASSED    3.509  0.00
WALL  2000  2000  80  80   2   4     1.25 PASSED    0.026  0.00
CPU   2000  2000  80  80   2   4     0.30 PASSED    3.509  0.00
End of PTRANS section.
Begin of MPIFFT section.
Computing:     0.002
Inverse FFT:     0.003
End of MPIFFT section.
Begin of LatencyBandwidth section.
"""


def test_parse_sections_reads_each_sections_own_time():
    got = jobroute_hpcc.parse_sections(OUTPUT)
    assert got == {"MPIRandomAccess_time": 3.518219, "MPIRandomAccess_LCG_time": 3.104204,
                   "PTRANS_time": 1.26, "MPIFFT_time": 0.005, "checks_passed": True}


def test_parse_sections_sees_failed_checks_and_missing_sections():
    assert not jobroute_hpcc.parse_sections(OUTPUT.replace("1.25 PASSED", "1.25 FAILED"))["checks_passed"]
    # hpcc's own verdict counts: a few errors pass (up to 1 % of the table), more fail
    assert jobroute_hpcc.parse_sections(OUTPUT.replace("Found 0 errors", "Found 54 errors", 1))["checks_passed"]
    failed = OUTPUT.replace("Found 0 errors in 524288 locations (passed)", "Found 9000 errors in 524288 locations (failed)", 1)
    assert not jobroute_hpcc.parse_sections(failed)["checks_passed"]
    cut = jobroute_hpcc.parse_sections(OUTPUT.split("Begin of PTRANS")[0])
    assert "PTRANS_time" not in cut and not cut["checks_passed"]


def test_write_input_sets_hpl_grid_and_ptrans_sizes(tmp_path):
    jobroute_hpcc.write_input(str(tmp_path), (2, 4), 1200, (2000,))
    lines = (tmp_path / "hpccinf.txt").read_text().splitlines()
    example = open(jobroute_hpcc.EXAMPLE).read().splitlines()
    assert len(lines) == len(example)
    assert lines[5].split()[:2] == ["1200", "Ns"]
    assert lines[10].split()[:2] == ["2", "Ps"] and lines[11].split()[:2] == ["4", "Qs"]
    assert lines[32].split()[0] == "1" and lines[33].split()[0] == "2000"
    # everything else is Debian's example
    assert [a for i, a in enumerate(lines) if i not in (5, 10, 11, 32, 33)] == \
        [b for i, b in enumerate(example) if i not in (5, 10, 11, 32, 33)]


def test_stop_at_fires_once_the_marker_is_written(tmp_path):
    path = tmp_path / "hpccoutf.txt"
    path.write_text("Begin of PTRANS section.\n")
    fired = threading.Event()
    watch = jobroute_hpcc.StopAt(str(path), fired.set, poll_s=0.01)
    watch.start()
    assert not fired.wait(0.1) and watch.seen is None
    before = time.monotonic()
    with open(path, "a") as f:
        f.write(jobroute_hpcc.STOP_MARKER + "\n")
    assert fired.wait(5)
    watch.finish()
    assert watch.seen >= before


def test_report_tables_hpccs_stopped_runs():
    import jobroute_report  # pylint: disable=import-outside-toplevel
    spec = dict(jobroute_report.FABRIC_MODELS["leafspine"], name="leafspine", placement=list(range(1, 9)))
    runs = [{"policy": "dmodk", "rc": 0, "wall_s": 41.0, "hpcc": {"to_latbw_s": 40.0, "PTRANS_time": 20.0}},
            {"policy": "dmodk", "rc": 0, "wall_s": 45.0, "hpcc": {"to_latbw_s": 44.0, "PTRANS_time": 24.0}},
            {"policy": "sdn-optimal", "rc": 0, "wall_s": 31.0, "hpcc": {"to_latbw_s": 30.0, "PTRANS_time": 10.0}},
            {"policy": "sdn-optimal", "rc": 1, "wall_s": 9.0, "hpcc": None}]
    text = jobroute_report.markdown({"method": {"hpcc_n": 1000, "hpcc_ptrans_n": 2000},
                                     "fabrics": {"leafspine": {"spec": spec, "programs": {"hpcc": {"runs": runs}}}}})
    assert "| to_latbw_s | 42.00 (n=2) | 30.00 (n=1) (1.40x) |" in text
    assert "| wall_s | 43.00 (n=2) | 31.00 (n=1) (1.39x) |" in text
    assert "| PTRANS_time | 22.00 (n=2) | 10.00 (n=1) (2.20x) |" in text
