"""--sdnmpi-flow-span on the controller (controller/flowdetect.py, flows/sliding.py): 0.5 s polls,
1 s windows sliding every poll, on a simulated k=4 fat-tree (conftest.FabricSim). The option's
checks, the timings in polls of the poll interval, an elephant routed at its first whole window,
and the busy line and the ACK rule's packets read over the window ending at the latest poll."""
import dataclasses
import json
import logging

import pytest

from sdnmpi import flows
from sdnmpi.controller import flowdetect, options
from sdnmpi.flows import sliding

from test_flowdetect import FRAME, LINK, fab, poll, register  # noqa: F401  (fab: the fixture)

HALF = 0.5


def span_settings(**kw):
    return dataclasses.replace(options.Settings(flow_detection="learned", flow_interval=HALF, flow_span=1.0), **kw)


@pytest.mark.parametrize("mode", ["threshold", "learned"])
def test_a_span_of_two_polls_slides_one_second_windows_every_half_second(mode):
    fd = flowdetect.from_settings(span_settings(flow_detection=mode))
    assert isinstance(fd.book, sliding.SlidingCounters) and fd.book.polls == 2 and fd.window_polls == 2
    assert fd.classifier.interval == 1.0 and fd.interval == HALF
    assert (fd.stale_polls, fd.mismatch_polls, fd.hold.polls) == (6, 6, 4)      # seconds in 0.5 s polls
    assert (fd.to_json()["interval_s"], fd.to_json()["window_s"]) == (HALF, 1.0)


def test_without_a_span_the_book_is_todays():
    for span in (0.0, HALF):
        fd = flowdetect.from_settings(span_settings(flow_span=span))
        assert type(fd.book) is flows.PairCounters and fd.classifier.interval == HALF and fd.interval == HALF
    fd = flowdetect.from_settings(options.Settings(flow_detection="learned", flow_interval=1.0, flow_span=0))
    assert type(fd.book) is flows.PairCounters and fd.classifier.interval == fd.interval == 1.0


@pytest.mark.parametrize("mode", ["threshold", "learned"])
def test_by_default_one_second_windows_slide_every_half_second(mode):
    """The defaults (since 2026-11-30, stop 43): 0.5 s polls, the classifiers judging 1 s windows."""
    fd = flowdetect.from_settings(options.Settings(flow_detection=mode))
    assert isinstance(fd.book, sliding.SlidingCounters) and fd.window_polls == 2
    assert (fd.interval, fd.classifier.interval) == (HALF, 1.0)
    assert (fd.stale_polls, fd.mismatch_polls, fd.hold.polls) == (6, 6, 4)


def test_an_interval_the_default_span_cannot_hold_names_the_way_out():
    """Only the interval set, to 2 s: the default 1 s span is no multiple of it, and the one line says
    what to set."""
    with pytest.raises(SystemExit) as stop:
        flowdetect.from_settings(options.Settings(flow_detection="learned", flow_interval=2.0))
    text = str(stop.value.code)
    assert "--sdnmpi-flow-span 1 s is not a whole multiple" in text and "--sdnmpi-flow-interval 2 s" in text
    assert "or 0: the interval itself" in text and "\n" not in text
    fd = flowdetect.from_settings(options.Settings(flow_detection="learned", flow_interval=2.0, flow_span=0))
    assert fd.classifier.interval == fd.interval == 2.0


@pytest.mark.parametrize("span", [0.7, 0.25, 1.2])
def test_a_span_that_is_no_whole_multiple_stops_the_controller_with_one_line(span, caplog):
    with caplog.at_level(logging.ERROR, logger="sdnmpi.controller.flowdetect"):
        with pytest.raises(SystemExit) as stop:
            flowdetect.from_settings(span_settings(flow_span=span))
    text = str(stop.value.code)
    assert text.startswith("sdnmpi: --sdnmpi-flow-span %g s is not a whole multiple" % span)
    assert "--sdnmpi-flow-interval 0.5 s" in text and "\n" not in text
    assert "not a whole multiple" in caplog.text
    # no detection, no check: the option only matters with detection on
    assert flowdetect.from_settings(span_settings(flow_detection="none", flow_span=span)) is None


def test_the_span_is_an_option_of_the_command_line():
    from ryu import cfg
    conf = cfg.ConfigOpts()
    options.register_cli(conf)
    conf(args=["--sdnmpi-flow-interval", "0.5", "--sdnmpi-flow-span", "1"])
    s = options.settings(conf)
    assert (s.flow_interval, s.flow_span) == (HALF, 1.0)
    conf = cfg.ConfigOpts()
    options.register_cli(conf)
    conf(args=[])
    s = options.settings(conf)
    assert (s.flow_interval, s.flow_span) == (HALF, 1.0) == (options.Settings().flow_interval,
                                                             options.Settings().flow_span)


def test_the_counter_log_names_the_window(tmp_path):
    path = tmp_path / "counters.jsonl"
    fd = flowdetect.from_settings(span_settings(flow_log=str(path)))
    fd.log.close()
    header = json.loads(path.read_text().splitlines()[0])
    assert (header["interval_s"], header["window_s"]) == (HALF, 1.0)


def test_the_threshold_flags_and_the_busy_line_and_the_packets_read_the_window(fab):
    """The threshold (10 % of the link over 2 windows of 1 s) at 0.5 s polls: a pair at 60 % of its
    link from a poll (its reverse carries its ACKs) is flagged there and routed; then the
    busy line and the packets the ACK rule reads are those of the window ending at the poll."""
    sim, jobs, service = fab
    hosts = sim.hosts()
    job = register(sim, jobs, hosts)
    a = (sim.host_ip[hosts[0]], sim.host_ip[hosts[8]])
    fd = flowdetect.FlowDetection(flows.ThresholdClassifier(link_rate=LINK, interval=1.0, window=2, fraction=0.1),
                                  window_polls=2)
    assert fd.interval == HALF
    sent, packets = {a: 0, a[::-1]: 0}, {a: 0, a[::-1]: 0}

    def step(share):
        nbytes = int(share * LINK * HALF)
        sent[a] += nbytes
        packets[a] += -(-nbytes // FRAME)
        sent[a[::-1]] += 66 * -(-nbytes // (2 * FRAME))          # its ACKs
        packets[a[::-1]] += -(-nbytes // (2 * FRAME))
        return poll(sim, jobs, service, fd, dict(sent), dict(packets))[0]

    assert step(0) == {}
    # the threshold (10 % of the link over 2 windows) is reached by the window ending at the first
    # poll with bytes: flagged there, delay 1 poll
    assert step(0.6) == {job.id: [(a[0], a[1], 1)]}
    assert fd.book.latest()[a] == int(0.6 * LINK * HALF)
    step(1.0)
    window = int(0.6 * LINK * HALF) + int(LINK * HALF)
    assert fd.book.latest()[a] == window and fd._busy(job.id) == sorted([a, a[::-1]])
    assert fd.packets[a] == -(-int(0.6 * LINK * HALF) // FRAME) + -(-int(LINK * HALF) // FRAME)
    assert fd._data_pairs([a, a[::-1]]) == [a]            # the ACK stream is told apart over the window
    sim.check_job_routes(job)


def test_learned_flags_at_the_first_whole_window(fab):
    """The shipped model at 0.5 s polls with 1 s windows: a pair at the link's rate from 0.2 s
    before poll 1 is flagged at poll 3 (its window of polls 2-3 is its first whole one), 1.2 s
    after its start, where 1 s polls would flag it at their second poll (1.2-2 s)."""
    sim, jobs, service = fab
    hosts = sim.hosts()
    job = register(sim, jobs, hosts)
    pairs = [(sim.host_ip[hosts[i]], sim.host_ip[hosts[(i + 8) % 16]]) for i in range(16)]
    fd = flowdetect.FlowDetection(flows.load_model(flows.DEFAULT_MODEL, link_rate=LINK, interval=1.0),
                                  window_polls=2)
    sent = dict.fromkeys(pairs, 0)
    found = []
    for share in (0, 0.4, 1, 1, 1):
        for p in pairs:
            sent[p] += int(share * LINK * HALF)
        found.append(poll(sim, jobs, service, fd, dict(sent))[0])
    assert [bool(f) for f in found] == [False, False, False, True, False]
    assert sorted(found[3][job.id]) == sorted((s, d, 3) for s, d in pairs)
