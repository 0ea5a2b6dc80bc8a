"""Flow detection's timings in seconds (flows/polls.py): the stale-pair release (STALE_S), the
mismatch withdrawal (MISMATCH_S) and the short-lived flags' hold (HOLD_S) are counted in whole
complete polls of the interval, so that 0.5 s polls wait as long as 1 s polls, not half as long.
At 1 s: the polls of before (test_flowdetect.py, test_flowdetect_declared.py, test_flows_hold.py);
here 0.5 s polls on a simulated k=4 fat-tree (conftest.FabricSim)."""
import logging

import pytest

from sdnmpi import flows
from sdnmpi.controller import flowdetect, options
from sdnmpi.flows.hold import HOLD_S, FlagHold
from sdnmpi.flows.polls import polls_for

from test_flowdetect import LINK, fab, poll, register  # noqa: F401  (fab: the fixture)
from test_flowdetect_declared import _declared_permutation, _mismatched_live_traffic
from test_flows_hold import pairs

HALF = 0.5         # s between polls
LOGGER = "sdnmpi.controller.flowdetect"


def half_threshold():
    """The threshold classifier of test_flowdetect.threshold, polled every 0.5 s."""
    return flows.ThresholdClassifier(link_rate=LINK, interval=HALF, window=2, fraction=0.1)


@pytest.mark.parametrize("seconds, interval, polls", [
    (3.0, 1.0, 3), (2.0, 1.0, 2),         # the default interval: the polls of before
    (3.0, 0.5, 6), (2.0, 0.5, 4),
    (3.0, 0.3, 10), (2.0, 0.3, 7),        # 3.0 / 0.3 is 10.000000000000002 in floats: still 10
    (3.0, 2.0, 2), (2.0, 2.0, 1),         # 1.5 polls: 2, so never shorter than asked
    (0.1, 2.0, 1), (0.0, 1.0, 1),         # at least one poll
    (3.0, 0.1, 30), (0.9, 0.3, 3),
])
def test_seconds_are_whole_polls_of_the_interval(seconds, interval, polls):
    assert polls_for(seconds, interval) == polls


@pytest.mark.parametrize("interval", [0, -1.0])
def test_an_interval_that_is_not_positive_is_refused(interval):
    with pytest.raises(ValueError, match="interval"):
        polls_for(3.0, interval)


def test_the_option_sets_every_timing_in_polls():
    assert (flowdetect.STALE_S, flowdetect.MISMATCH_S, HOLD_S) == (3.0, 3.0, 2.0)
    for interval, expected in [(1.0, (3, 3, 2)), (0.5, (6, 6, 4)), (2.0, (2, 2, 1))]:
        for mode in ("threshold", "learned"):
            fd = flowdetect.from_settings(options.Settings(flow_detection=mode, flow_interval=interval, flow_span=0))
            assert fd.classifier.interval == interval
            assert (fd.stale_polls, fd.mismatch_polls, fd.hold.polls) == expected, (mode, interval)


def test_at_half_second_polls_a_detected_pair_is_released_after_six_quiet_polls(fab, caplog):
    """A pair quiet for 5 polls (2.5 s: a gap between a program's repetitions) stays in the job's
    demand; at the 6th (3 s) it leaves it, as at the 3rd of 1 s polls."""
    sim, jobs, service = fab
    hosts = sim.hosts()
    a, b = [(sim.host_ip[hosts[i]], sim.host_ip[hosts[i + 8]]) for i in (0, 4)]
    fd, job = flowdetect.FlowDetection(half_threshold()), register(sim, jobs, hosts)
    sent = {a: 0, b: 0}

    def step(busy):
        for p in busy:
            sent[p] += int(LINK * HALF)
        return poll(sim, jobs, service, fd, dict(sent))[0]

    step([])
    assert step([a, b]) == {job.id: [(a[0], a[1], 1), (b[0], b[1], 1)]}
    for _ in range(5):
        assert step([b]) == {}
        assert {(s, d) for s, d, _ in job.traffic.demands[0]} == {a, b} and fd.counters["stale_pairs"] == 0
    with caplog.at_level(logging.INFO, logger=LOGGER):
        step([b])
    assert {(s, d) for s, d, _ in job.traffic.demands[0]} == {b} and set(fd.detected[job.id]) == {b}
    assert fd.counters["stale_pairs"] == 1 and "1 detected pairs quiet for 6 polls (3 s)" in caplog.text
    sim.check_job_routes(job)
    sim.check_tables_consistent()


def test_at_half_second_polls_a_flag_is_judged_over_four_polls():
    hold = FlagHold(interval=HALF)
    assert hold.polls == 4 and FlagHold(interval=HALF, polls=2).polls == 2
    long, short = pairs(4), pairs(4, base=10)
    hold.flagged(1, long)
    hold.flagged(2, short)
    for _ in range(3):                    # busy at 3 polls (1.5 s): pending, not judged
        assert hold.judge(set(long) | set(short)) == (0, 0, {})
    assert hold.tally(1) == hold.tally(2) == (0, 0)
    # the 4th: the long pairs held, the short ones ended 1.5 s after their flag: short-lived
    assert hold.judge(set(long)) == (4, 4, {2: True})
    assert hold.tally(1) == (4, 4) and hold.tally(2) == (0, 4) and not hold.pending


def test_at_half_second_polls_a_mismatched_declaration_is_withdrawn_after_six_polls(fab, caplog):
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(half_threshold())
    job = register(sim, jobs, sim.hosts())
    declared = _declared_permutation(sim, jobs, job)
    live = [(sim.host_ip[f.src], sim.host_ip[f.dst]) for f in _mismatched_live_traffic(sim, declared)]
    installed = job.flows()
    sent = {}

    def busy():     # each live pair sends half its link in the interval (a busy pair)
        for p in live:
            sent[p] = sent.get(p, 0) + int(0.5 * LINK * HALF)
        poll(sim, jobs, service, fd, dict(sent))

    poll(sim, jobs, service, fd, {})
    for n in range(1, 6):                 # 5 polls worse (2.5 s): kept
        busy()
        assert fd.mismatch[job.id] == n and fd.hinted(job) and job.flows() == installed
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        busy()                            # the 6th (3 s): withdrawn
    assert not fd.hinted(job) and fd.counters["declared_released"] == 1 and job.id not in fd.mismatch
    [entry] = fd.to_json()["released"]
    assert (entry["poll"], entry["polls_since_seen"]) == (7, 6)
    assert "for 6 polls (3 s): released" in caplog.text
    sim.check_tables_consistent()
