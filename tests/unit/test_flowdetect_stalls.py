"""bench/flowdetect_stalls.py: a run's seconds split into data moved and stall, and the pairs that
crawled through the stall, on a synthetic counter log with a known answer and on an all-to-all
log recorded on Mininet at 5/5 Mbit/s."""
import gzip
import json
import os

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_stalls as stalls_tool

from test_flows_hold import RESULTS

LINK = 625000.0          # B/s (5 Mbit/s)
ALLTOALL_SLOW = "flowdetect-20261130T012042Z"   # its learned run 2 took 75.4 s


def _log(polls):
    """The lines of a version-2 counter log, 1 s polls; ``polls``: per poll {(src, dst): (bytes
    in that interval, packets in it)} (made cumulative here)."""
    lines = [json.dumps({"format": "sdnmpi-flow-counters", "version": 2, "started": 0.0, "interval_s": 1.0,
                         "link_rate_Bps": LINK, "pattern": "synthetic", "mode": "learned", "rep": 1}) + "\n"]
    total = {}
    for t, poll in enumerate(polls):
        for pair in set(total) | set(poll):
            b, n = poll.get(pair, (0, 0))
            old = total.get(pair, (0, 0))
            total[pair] = (old[0] + b, old[1] + n)
        counts = [[s, d, 1, b, n] for (s, d), (b, n) in sorted(total.items())]
        lines.append(json.dumps({"poll": t, "t": float(t), "complete": True, "counts": counts, "flagged": []}) + "\n")
    return lines


def test_a_crawler_that_holds_up_the_round_is_found_and_its_stall_timed():
    busy = {("a", "b"): (int(2 * LINK), 1400), ("b", "a"): (int(2 * LINK), 1400)}
    crawl = {("a", "b"): (1514, 1), ("b", "a"): (66, 1)}
    quiet = {("c", "d"): (1514 * 3, 3)}                       # data, but in under 3 stalled polls
    polls = [{}] + [busy] * 4 + [crawl] * 5 + [{**crawl, **quiet}] * 2 + [busy] * 3 + [{}]
    header, found = stalls_tool.stalls(_log(polls))
    assert header["pattern"] == "synthetic"
    assert found["stalled_s"] == 7.0 and found["moving_s"] == 7.0
    assert found["crawlers"] == [("a", "b", 1.0, 1.0)]       # an ACK back for each segment
    assert stalls_tool.stalls(_log(polls), crawl_polls=2)[1]["crawlers"] == [("a", "b", 1.0, 1.0), ("c", "d", 3.0, None)]


def test_a_job_that_never_moves_a_link_interval_has_no_span():
    assert stalls_tool.stalls(_log([{}, {("a", "b"): (1000, 1)}, {}]))[1] is None


def test_the_slow_recorded_alltoall_run_lost_its_time_to_a_crawling_pair():
    found = {(r["mode"], r["rep"]): r for r in stalls_tool.rows([os.path.join(RESULTS, ALLTOALL_SLOW)], {"alltoall"})}
    assert len(found) == 10                                   # 5 learned, 5 threshold (none and hints log nothing)
    slow = found[("learned", 2)]
    assert slow["run_s"] > 75 and slow["stalled_s"] > 45
    assert ("10.0.0.16", "10.0.0.12", 1.0, 1.0) in slow["crawlers"]
    moving = [r["moving_s"] for r in found.values()]
    assert max(moving) - min(moving) < 6                      # the data moved in about the same time in every run
    lines = stalls_tool.report(list(found.values()))
    assert any(line.startswith("- run seconds against stalled seconds, 10 runs") for line in lines)


SS = """## t=100.000 h1 (exit 0)
Recv-Q Send-Q Local Address:Port  Peer Address:Port Process
0      5000     10.0.0.1:1024      10.0.0.2:40000
\t bbr wscale:9,9 rto:3300 rtt:1099/549.5 mss:1448 cwnd:1 pacing_rate 29592bps minrtt:1099
0      0        10.0.0.1:1025      10.0.0.3:40001
\t bbr wscale:9,9 rto:208 rtt:5/2 mss:1448 cwnd:10 pacing_rate 65984904bps minrtt:4.5
## t=101.000 h1 (exit 0)
Recv-Q Send-Q Local Address:Port  Peer Address:Port Process
0      3552     10.0.0.1:1024      10.0.0.2:40000
\t bbr wscale:9,9 rto:3300 rtt:1099/549.5 mss:1448 cwnd:1 pacing_rate 29592bps minrtt:1099
"""


def test_socket_samples_read_ss_and_the_summary_counts_slow_handshakes_and_crawling_sockets():
    samples = stalls_tool.socket_samples(SS)
    assert [(t, h, local) for t, h, local, _peer, _f in samples] == [
        (100.0, "h1", "10.0.0.1:1024"), (100.0, "h1", "10.0.0.1:1025"), (101.0, "h1", "10.0.0.1:1024")]
    assert samples[0][4] == {"cc": "bbr", "send_q": 5000.0, "minrtt": 1099.0, "cwnd": 1.0, "pacing_rate": 29592.0}
    assert stalls_tool.socket_summary(SS) == (
        "congestion control bbr; 3 socket samples, 2 with a minimum RTT over 500 ms (highest 1099 ms); 1 sockets "
        "held unsent data paced under 100 kbit/s, for up to 2 samples")
    assert stalls_tool.socket_summary("") == "no socket samples"


def test_socket_samples_of_a_loopback_sockets_file():
    """Two samples of `ss -tni state established` on this project's machine (tests/data/ss/): 12
    sockets each, two senders with unsent data, one of them paced at 40 kbit/s."""
    path = os.path.join(os.path.dirname(__file__), os.pardir, "data", "ss", "sockets-loopback.txt.gz")
    with gzip.open(path, "rt") as f:
        text = f.read()
    samples = stalls_tool.socket_samples(text)
    assert len(samples) == 24 and {(t, h) for t, h, *_ in samples} == {(1796024675.609, "h1"), (1796024678.238, "h2")}
    assert samples[0] == (1796024675.609, "h1", "127.0.0.1:44098", "127.0.0.1:51665",
                          {"cc": "bbr", "send_q": 0.0, "minrtt": 0.003, "cwnd": 11.0, "pacing_rate": 80000.0})
    unsent = [(h, local, f["send_q"], f["pacing_rate"]) for _t, h, local, _p, f in samples if f["send_q"] > 0]
    assert unsent == [("h1", "127.0.0.1:43826", 131070.0, 178370738432.0), ("h1", "127.0.0.1:43838", 73155.0, 40000.0),
                      ("h2", "127.0.0.1:43826", 131070.0, 178370738432.0), ("h2", "127.0.0.1:43838", 98155.0, 40000.0)]
    assert stalls_tool.socket_summary(text) == (
        "congestion control bbr, cubic, reno; 24 socket samples, 0 with a minimum RTT over 500 ms (highest 0 ms); "
        "2 sockets held unsent data paced under 100 kbit/s, for up to 1 samples")
