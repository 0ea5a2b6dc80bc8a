import gzip
import json

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_ramp

LINK = 1000.0          # bytes a poll (link_rate_Bps x interval_s)


def log_lines(series, flags):
    """A counter log: ``series`` {(src, dst): [bytes per interval]}, ``flags`` {(src, dst): poll}."""
    lines = [json.dumps({"format": "sdnmpi-flow-counters", "version": 2, "interval_s": 1.0,
                         "link_rate_Bps": LINK})]
    n = max(len(v) for v in series.values())
    total = {pair: 0 for pair in series}
    for t in range(n):
        counts = []
        for (src, dst), per in sorted(series.items()):
            total[(src, dst)] += per[t] if t < len(per) else 0
            counts.append([src, dst, 1, total[(src, dst)], None])
        flagged = [[s, d, 1] for (s, d), at in flags.items() if at == t]
        lines.append(json.dumps({"poll": t, "t": float(t), "complete": True, "counts": counts,
                                 "flagged": flagged}))
    return [line + "\n" for line in lines]


def test_a_rerouted_pair_ramps_and_an_unflagged_one_is_left_out():
    lines = log_lines({("a", "b"): [0, 300, 500, 800, 950, 990], ("c", "d"): [0, 900, 900, 900, 900, 900]},
                      {("a", "b"): 2})
    ramps = flowdetect_ramp.pair_ramps(lines, after=3)
    # the first reading counts whole (cumulative 300 at poll 1), so a pair's intervals are its bytes
    assert ramps == [[0.5, 0.8, 0.95, 0.99]]
    assert flowdetect_ramp.to_full(ramps[0], 0.9) == 2
    assert flowdetect_ramp.to_full([0.5, 0.6], 0.9) is None


def test_summary_takes_medians_per_interval_and_counts_pairs_that_never_fill():
    s = flowdetect_ramp.summary([[0.4, 1.0, 1.0], [0.6, 0.5, 0.7], [0.5, 0.95]], after=2, full=0.9)
    assert s == {"pairs": 3, "median_share": [0.5, 0.95, 0.85], "median_to_full": 1.0, "never": 1}


def test_main_reads_a_results_folder_by_pattern_and_mode(tmp_path, capsys):
    counters = tmp_path / "flowdetect-X" / "counters"
    counters.mkdir(parents=True)
    for name, flag in (("permutation-learned-1", 1), ("shift-learned-1", 1), ("permutation-hints-1", None)):
        lines = log_lines({("a", "b"): [0, 600, 1000, 1000]}, {("a", "b"): flag} if flag else {})
        with gzip.open(counters / (name + ".jsonl.gz"), "wt") as f:
            f.writelines(lines)
    assert flowdetect_ramp.main([str(tmp_path / "flowdetect-X"), "--after", "2"]) == 0
    out = capsys.readouterr().out
    assert "1 flagged pairs" in out and "0.60 1.00 1.00" in out and "median 1" in out


def test_a_log_it_cannot_read_is_one_line_naming_it(tmp_path, capsys):
    counters = tmp_path / "flowdetect-X" / "counters"
    counters.mkdir(parents=True)
    lines = log_lines({("a", "b"): [0, 600, 1000, 1000]}, {("a", "b"): 1})
    with gzip.open(counters / "permutation-learned-1.jsonl.gz", "wt") as f:
        f.writelines(lines[:2] + ["{oops\n"])
    assert flowdetect_ramp.main([str(tmp_path / "flowdetect-X")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"flowdetect_ramp: {counters / 'permutation-learned-1.jsonl.gz'}: line 3: not JSON")
    assert err.count("\n") == 1
