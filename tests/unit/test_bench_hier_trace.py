"""bench/hier_trace.py (offline reader of SDN_MPI_HIER_TRACE's files) on a hand-made trace: the step
kinds of hier_layout.h, the wall time against the bound, each stage's link time, wait and transfer,
and the pipeline's overlap."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import hier_trace  # noqa: E402


def test_step_kinds_of_the_layouts():
    assert hier_trace.step_kinds(10, 4, 4) == ["ring-rs"] * 3 + ["halve"] * 2 + ["double"] * 2 + ["ring-ag"] * 3
    assert hier_trace.step_kinds(6, 2, 4) == ["ring-rs", "halve", "halve", "double", "double", "ring-ag"]
    # 3 leaves: one fold across the leaves each way; ranks beyond the smallest leaf fold too
    assert hier_trace.step_kinds(6, 2, 3) == ["ring-rs", "xfold", "halve", "double", "xunfold", "ring-ag"]
    assert hier_trace.step_kinds(6, 1, 2) == ["fold", "fold", "halve", "double", "unfold", "unfold"]
    with pytest.raises(AssertionError):
        hier_trace.step_kinds(7, 4, 4)


def write_rank(directory, rank, t0, rows, t1):
    """One rank of p=4 (2 leaves x 2 lanes), 1 segment of 64 doubles (512 B), 4 steps."""
    with open(os.path.join(str(directory), "hier-%d-%d.txt" % (rank, 100 + rank)), "w") as f:
        f.write("C %d 4 2 2 64 8 1 4 %.6f %.6f 0.001 0 5 2\n" % (rank, t0, t1))
        for step, (post_us, done_us, to, frm) in enumerate(rows):
            n = 32 if step in (0, 3) else 16
            f.write("S 0 %d %.1f %.1f %d %d %d %d\n" % (step, post_us, done_us, n, n, to, frm))


def test_analysis_of_a_hand_made_call(tmp_path):
    # ranks 0,1 on leaf 0, 2,3 on leaf 1; ring partner = the other lane, cross partner = the same
    # lane of the other leaf. Ranks 1 and 3 start 1 ms after ranks 0 and 2 (t0 100.001, 100.000).
    partner = {0: (1, 2), 1: (0, 3), 2: (3, 0), 3: (2, 1)}
    for r in range(4):
        ring, cross = partner[r]
        t0 = 100.0 + (0.001 if r in (1, 3) else 0.0)
        rows = [(0.0, 2000.0, ring, ring), (2000.0, 4000.0, cross, cross), (4000.0, 6000.0, cross, cross),
                (6000.0, 8000.0, ring, ring)]
        write_rank(tmp_path, r, t0, rows, t0 + 0.008)
    (job,) = hier_trace.jobs(str(tmp_path))
    res = hier_trace.analyse_call({r: calls[0] for r, calls in job.items()}, 30e6, 15e6, 2)
    assert res["p"] == 4 and res["bytes"] == 512 and res["depth"] == 2
    assert res["wall_s"] == pytest.approx(0.009)                       # 100.000 .. 100.009
    assert res["bound_s"] == pytest.approx(2 * 3 / 4 * 512 * 8 / 30e6)
    ring = res["stages"]["ring-rs"]
    assert ring["link_s"] == pytest.approx(256 * 8 / 30e6) and ring["msg_bytes"] == 256
    # ranks 0 and 2 posted their ring step 1 ms before their peers did: waited 1 ms, then 1 ms of
    # transfer; their peers' peers had posted first: no wait, 2 ms of transfer (medians over 4)
    assert ring["wait_ms"] == pytest.approx(0.5) and ring["xfer_ms"] == pytest.approx(1.5)
    halve = res["stages"]["halve"]
    # the leaf's uplinks carry both lanes' 128 B: 2 x 128 B over 2 x 15 Mbit/s, as one host link
    assert halve["link_s"] == pytest.approx(2 * 128 * 8 / 30e6)
    assert res["link_sum_s"] == pytest.approx(sum(s["link_s"] for s in res["stages"].values()))
    assert halve["wait_ms"] == pytest.approx(0.0) and halve["xfer_ms"] == pytest.approx(2.0)
    assert res["inflight"] == pytest.approx(1.0) and res["idle"] == pytest.approx(0.0)
    assert res["xfer_p99_ms"] == pytest.approx(2.0) and res["slow_steps"] == 0
    slow = hier_trace.analyse_call({r: calls[0] for r, calls in job.items()}, 30e6, 15e6, 2, slow_s=0.0015)
    assert slow["slow_steps"] == 12   # the 2 ms transfers: 2 ring steps x 2 ranks, 2 cross steps x 4
    assert res["cpu_s"] == pytest.approx(0.001) and res["ivcsw"] == 5


def test_cli(tmp_path, capsys):
    assert hier_trace.main([str(tmp_path / "missing")]) == 2
    for r in range(4):
        write_rank(tmp_path, r, 50.0, [(0.0, 10.0, r ^ 1, r ^ 1), (10.0, 20.0, r ^ 2, r ^ 2),
                                       (20.0, 30.0, r ^ 2, r ^ 2), (30.0, 40.0, r ^ 1, r ^ 1)], 50.00004)
    assert hier_trace.main([str(tmp_path), "--min-bytes", "0"]) == 0
    out = capsys.readouterr().out
    assert "job 0 call 0: p=4 0 KiB, 1 segments, depth 2" in out and "ring-ag" in out
    assert hier_trace.main([str(tmp_path)]) == 0                     # 512 B < the default 256 KiB
    assert capsys.readouterr().out == ""
