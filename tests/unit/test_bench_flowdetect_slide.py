"""bench/flowdetect_slide.py: a replay through today's book puts every first flag where the
controller logged it (on 0.5 s logs recorded without sliding windows and on the sliding run's
logs), a changed rule shows as moved flags, and the onset-to-flag seconds of the flagged elephants;
bench_flowdetect's sliding modes and their delay lines."""
import argparse
import os

import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import bench_flowdetect
import flowdetect_fabric
import flowdetect_slide

from sdnmpi.flows import counterlog, sliding

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "bench", "results")
# committed logs, named: a missing one fails the tests (the run folders are the evidence they replay)
PLAIN = [os.path.join(RESULTS, "flowdetect-20261130T085106Z", "counters", "permutation-%s-1.jsonl.gz" % mode)
         for mode in ("learned", "threshold")]
SLIDE = [os.path.join(RESULTS, "flowdetect-20261130T195251Z", "counters", "permutation-%s-slide-1.jsonl.gz" % mode)
         for mode in ("learned", "threshold")]


def test_the_replay_puts_every_first_flag_where_the_controller_logged_it():
    for path in PLAIN + SLIDE:
        assert os.path.isfile(path), path
        logged, replayed, delays, interval = flowdetect_slide.compare(path)
        assert interval == 0.5 and logged and logged == replayed and len(delays) == len(logged)
    assert counterlog.read_header(SLIDE[0])["window_s"] == 1.0


def test_a_changed_rule_moves_flags(monkeypatch):
    path = SLIDE[0]                                        # the learned classifier's
    monkeypatch.setattr(sliding, "STILL_SHARE", 0.99)      # no poll carries 99 % of the link: no flag
    logged, replayed, _delays, _interval = flowdetect_slide.compare(path)
    assert logged and replayed != logged
    assert flowdetect_slide.main([os.path.dirname(path)]) == 1


def test_onset_to_flag_seconds():
    secs = counterlog.from_file(SLIDE[0], flowdetect_slide.onset_delays)
    assert len(secs) == 12 and all(0 < s < 3 for s in secs)


def test_the_sliding_modes_run_on_their_own_fabrics_at_half_second_polls():
    for mode in ("learned-slide", "threshold-slide"):
        kind, extra = flowdetect_fabric.setup_args(bench_flowdetect.DETECTION[mode])
        assert kind == mode.split("-")[0] and extra == ("--sdnmpi-flow-interval", "0.5", "--sdnmpi-flow-span", "1")
        assert bench_flowdetect.POLL_S[mode] == 0.5
    results = {"permutation": {"learned": [{"seconds": 1, "detected": [("a", "b", 2), ("c", "d", 3)]}],
                               "learned-slide": [{"seconds": 1, "detected": [("a", "b", 4)]}],
                               "hints": [{"seconds": 1, "detected": []}]}}
    text = bench_flowdetect.delay_lines(results, ["permutation"], ["learned", "learned-slide", "hints"], 1.0)
    assert text.splitlines() == [
        "- permutation learned: 2 flags, delay from the first counted bytes (the controller's log) median 2.5 polls "
        "(2.50 s), p90 3 (3.00 s), max 3 (3.00 s) at 1 s polls",
        "- permutation learned-slide: 1 flags, delay from the first counted bytes (the controller's log) median 4 "
        "polls (2.00 s), p90 4 (2.00 s), max 4 (2.00 s) at 0.5 s polls"]


@pytest.mark.parametrize("mode, interval, expected", [
    ("learned", 0.5, (0.5, 0.0)), ("threshold", 2.0, (2.0, 0.0)), ("learned", 1.0, (1.0, 0.0)),
    ("learned-slide", 1.0, (0.5, 1.0)), ("threshold-slide", 2.0, (0.5, 1.0))])
def test_each_modes_controller_reads_the_windows_the_mode_means(mode, interval, expected):
    """Parsed by the controller's own options: threshold and learned judge windows of --interval
    (not the controller's default 1 s span, which would slide at 0.5 s and refuse 2 s), the slide
    set-ups' 0.5 s polls and 1 s windows follow and win."""
    from ryu import cfg
    from sdnmpi.controller import options
    conf = cfg.ConfigOpts()
    options.register_cli(conf)
    args = argparse.Namespace(interval=interval, host_bw=5.0)
    kind, argv = flowdetect_fabric.detection_args(args, bench_flowdetect.DETECTION[mode])
    conf(args=list(argv))
    s = options.settings(conf)
    assert (s.flow_detection, s.flow_interval, s.flow_span) == ((kind,) + expected)
    assert kind == mode.split("-")[0] and s.link_capacity == 5e6
