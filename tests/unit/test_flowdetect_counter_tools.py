"""bench/flowdetect_stalls.py and bench/flowdetect_hold.py on the counter logs recorded on
Mininet with the emulation choices (bench/results/flowdetect-20261130T064401Z: permutation and
two-phases, 5 runs a mode; flowdetect-20261130T055727Z: 6 runs a pattern): what each tool prints,
from one parse of each log (flows/counterlog.read_log: counts, poll times and flags)."""
import os

import bench_setup  # noqa: F401  (bench/ on sys.path)
import flowdetect_hold as hold_tool
import flowdetect_stalls as stalls_tool

from test_flows_hold import RESULTS

PERM_TWO = os.path.join(RESULTS, "flowdetect-20261130T064401Z")
FIVE = os.path.join(RESULTS, "flowdetect-20261130T055727Z")


def test_the_emulation_runs_time_follows_the_data_they_moved():
    lines = stalls_tool.report(stalls_tool.rows([PERM_TWO]))
    assert lines[-6:] == [
        "- permutation learned: 5 runs, moving 16.0 s, stalled 0.0 s (medians)",
        "- permutation threshold: 5 runs, moving 15.4 s, stalled 0.0 s (medians)",
        "- two-phases learned: 5 runs, moving 31.9 s, stalled 2.0 s (medians)",
        "- two-phases threshold: 5 runs, moving 32.3 s, stalled 2.8 s (medians)",
        "- run seconds against stalled seconds, 20 runs: correlation 0.95; stalled spans 0.0-3.4 s",
        "- run seconds against moving seconds, 20 runs: correlation 1.00; moving spans 14.7-37.5 s"]
    assert "| flowdetect-20261130T064401Z | two-phases | threshold | 5 | 36.4 | 37.5 | 2.8 | - |" in lines


def test_short_lived_flags_of_the_recorded_patterns():
    paths = list(hold_tool.logs([FIVE]))
    assert len(paths) == 30
    table = hold_tool.table(paths, [1, 2], 0.5).splitlines()
    assert table[2:4] == ["| alltoall | 625000 | 6 | 1 | 87 / 261 | 0.33 | 0.13 | 189 (6) | 124 |",
                          "| alltoall | 625000 | 6 | 2 | 41 / 187 | 0.22 | 0.00 | 207 (6) | 106 |"]
    assert table[-2:] == ["| two-phases | 625000 | 6 | 1 | 156 / 165 | 0.95 | 0.67 | 10 (1) | 155 |",
                          "| two-phases | 625000 | 6 | 2 | 149 / 165 | 0.90 | 0.41 | 11 (1) | 154 |"]
