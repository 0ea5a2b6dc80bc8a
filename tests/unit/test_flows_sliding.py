"""Sliding windows (flows/sliding.py, --sdnmpi-flow-span): the classifiers judge windows of a whole
number of polls ending at every poll. The controller's book (SlidingCounters, poll by poll) flags
what the offline function (sliding_flags, over a whole series) flags, on a recorded 0.5 s counter
log and on made-up series; one phase alone is what a poller of the span reads; the still rule keeps
a burst that straddles a window boundary from reading as an elephant's start."""
import os

import numpy as np
import pytest

from sdnmpi import flows
from sdnmpi.flows import counterlog, sliding

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOGS = [os.path.join(ROOT, "bench", "results", "flowdetect-20261130T085106Z", "counters",   # committed: 0.5 s
                     "%s-learned-%d.jsonl.gz" % (pattern, rep))                            # polls, 5 Mbit/s
        for pattern in ("permutation", "two-phases") for rep in (1, 2)]
LINK = 625000.0     # bytes/s of the logs' host links
HALF = 0.5


def learned(interval=1.0, link=LINK):
    return flows.load_model(flows.DEFAULT_MODEL, link_rate=link, interval=interval)


def threshold(interval=1.0, link=LINK):
    return flows.ThresholdClassifier(link_rate=link, interval=interval, window=2, fraction=0.1)


@pytest.mark.parametrize("span, interval, polls", [
    (0, 0.5, 1), (None, 1.0, 1), (1.0, 1.0, 1), (1.0, 0.5, 2), (0.3, 0.1, 3), (2.0, 0.5, 4), (0.9, 0.3, 3)])
def test_a_span_is_a_whole_number_of_polls(span, interval, polls):
    assert sliding.window_polls(span, interval) == polls


@pytest.mark.parametrize("span, interval", [(0.7, 0.5), (0.25, 0.5), (1.2, 0.5), (-1.0, 0.5)])
def test_a_span_that_is_no_whole_multiple_of_the_interval_is_one_line(span, interval):
    with pytest.raises(ValueError) as err:
        sliding.window_polls(span, interval)
    text = str(err.value)
    assert "\n" not in text and "--sdnmpi-flow-span" in text and "--sdnmpi-flow-interval" in text


def test_window_sums_add_the_polls_of_each_window():
    counts = np.array([[1.0, 2, 3, 4, 5]])
    assert sliding.window_sums(counts, 1).tolist() == counts.tolist()
    assert sliding.window_sums(counts, 2).tolist() == [[1, 3, 5, 7, 9]]
    assert sliding.window_sums(counts, 3).tolist() == [[1, 3, 6, 9, 12]]


def _readings(counts):
    """Cumulative readings, poll by poll, of per-poll ``counts`` (pairs x polls)."""
    return np.cumsum(counts, axis=1)


def _online(book, pairs, counts):
    """{pair: (poll, delay)} of `SlidingCounters` fed ``counts`` poll by poll (cumulative readings)."""
    seen = {}
    cum = _readings(counts)
    for t in range(counts.shape[1]):
        for p, delay in book.poll({p: float(cum[i, t]) for i, p in enumerate(pairs)}).items():
            seen[p] = (t, delay)
    return seen


def _offline(clf, pairs, counts, polls):
    f = sliding.sliding_flags(clf, counts, polls, flows.endpoint_totals(counts, pairs))
    first = flows.first_flags(f)
    return {p: int(first[i]) for i, p in enumerate(pairs) if first[i] >= 0}


@pytest.mark.parametrize("path", LOGS)
def test_the_controllers_book_flags_what_the_offline_function_flags_on_a_recorded_log(path):
    header, polls = counterlog.from_file(path, counterlog.parse)
    assert header["interval_s"] == HALF
    clf = learned(link=header["link_rate_Bps"])
    book = sliding.SlidingCounters(clf, 2)
    online = {}
    for t, poll in enumerate(polls):
        for p in book.poll({(c[0], c[1]): c[3] for c in poll["counts"]}):
            online[p] = t
    log = counterlog.from_file(path, counterlog.read_log)
    assert online and online == _offline(clf, log.pairs, log.counts, 2)


def _series(seed, pairs=12, polls=40):
    """Made-up per-poll bytes: on/off runs at 0-100 % of a 0.5 s poll's link bytes."""
    rng = np.random.default_rng(seed)
    on = rng.random((pairs, polls)) < 0.5
    on = np.logical_or.accumulate(on, axis=1) & (rng.random((pairs, polls)) < 0.8)
    return np.where(on, rng.uniform(0, 1.0, (pairs, polls)) * LINK * HALF, 0.0).round()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("make", [learned, threshold])
@pytest.mark.parametrize("polls", [2, 3])
def test_the_book_and_the_function_agree_on_made_up_series(seed, make, polls):
    pairs = [(f"10.0.0.{i % 4}", f"10.0.1.{i}") for i in range(12)]
    counts = _series(seed)
    clf = make(interval=HALF * polls)
    online = _online(sliding.SlidingCounters(clf, polls), pairs, counts)
    assert {p: t for p, (t, _d) in online.items()} == _offline(clf, pairs, counts, polls)
    starts = flows.start_intervals(counts)
    for i, p in enumerate(pairs):          # delays: polls from the pair's first bytes, both counted
        if p in online:
            assert online[p][1] == online[p][0] - starts[i] + 1


def test_one_phase_alone_is_a_poller_of_the_span():
    """Phase 1 of 0.5 s polls with 1 s windows (windows ending at polls 1, 3, 5, ...) flags what
    the 1 s classifier flags over every other cumulative reading."""
    pairs = [(f"10.0.0.{i % 4}", f"10.0.1.{i}") for i in range(12)]
    counts = _series(7)
    clf = learned()
    phase = sliding.sliding_flags(clf, counts, 2, flows.endpoint_totals(counts, pairs), phases=(1,), still=False)
    assert not phase[:, 0::2].any()
    book, cum = flows.PairCounters(clf), _readings(counts)
    flagged = {}
    for j, t in enumerate(range(1, counts.shape[1], 2)):
        for p in book.poll({p: float(cum[i, t]) for i, p in enumerate(pairs)}):
            flagged[p] = t
    first = flows.first_flags(phase)
    assert flagged and flagged == {p: int(first[i]) for i, p in enumerate(pairs) if first[i] >= 0}


def _one_pair(per_poll):
    return np.array([per_poll], dtype=float) * LINK * HALF


def test_an_elephant_is_flagged_one_to_one_and_a_half_seconds_after_its_start():
    """An elephant starting 0.2 s before a poll at full rate: its first whole 1 s window ends two
    polls later (1.2 s after its start), where the 1 s model flags it (delay 3 polls)."""
    counts = _one_pair([0, 0, 0.4, 1, 1, 1, 1, 1, 1])
    seen = _online(sliding.SlidingCounters(learned(), 2), [("a", "b")], counts)
    assert seen == {("a", "b"): (4, 3)}


def test_a_burst_straddling_a_window_boundary_is_not_an_elephants_start():
    """A 0.8 s burst at full rate from 0.1 s after poll 1 (0.4 of polls 2 and 3, then nothing): the
    window ending at poll 4 holds 0.4 of the link after a partial window of 0.4 (the look of a slow
    elephant's first whole window), but poll 4 alone carried nothing: not flagged. Without the
    still rule the model flags it."""
    counts = _one_pair([0, 0, 0.8, 0.8, 0, 0, 0, 0])
    clf = learned()
    assert not sliding.sliding_flags(clf, counts, 2, flows.endpoint_totals(counts, [("a", "b")])).any()
    loose = sliding.sliding_flags(clf, counts, 2, flows.endpoint_totals(counts, [("a", "b")]), still=False)
    assert loose[0].tolist() == [False] * 4 + [True] + [False] * 3
    assert _online(sliding.SlidingCounters(clf, 2), [("a", "b")], counts) == {}


def test_a_flag_dropped_by_the_still_rule_is_judged_again():
    """The window ending at poll 4 flags the pair but poll 4 carried under 2 % of the link; it keeps
    sending at full rate, and the next window flags it."""
    counts = _one_pair([0, 0, 0.8, 0.8, 0.01, 1, 1, 1, 1])
    clf = learned()
    assert sliding.sliding_flags(clf, counts, 2, flows.endpoint_totals(counts, [("a", "b")]), still=False)[0, 4]
    seen = _online(sliding.SlidingCounters(clf, 2), [("a", "b")], counts)
    assert seen == {("a", "b"): (5, 4)}


def test_at_one_poll_a_window_the_book_is_the_pair_counters():
    clf = threshold()
    assert type(sliding.counters(clf, 1)) is flows.PairCounters
    assert isinstance(sliding.counters(clf, 2), sliding.SlidingCounters)
    counts = _series(3)
    plain = sliding.sliding_flags(clf, counts, 1)
    assert (plain == clf.flags(counts)).all()


def test_rearm_counts_only_the_bytes_after_it_and_forget_drops_the_pair():
    """A flagged pair rearmed at poll 5 (its routes released): the next windows start from that
    poll's reading, so the bytes before do not flag it again at once; it is flagged again as a new
    pair, two whole polls of bytes later (the model's first whole window), with a delay counted from
    its first bytes after the rearm."""
    book = sliding.SlidingCounters(threshold(), 2)
    pair, total = ("a", "b"), 0.0
    flags = []
    for t in range(12):
        total += LINK * HALF
        flags.append(book.poll({pair: total}))
        if t == 5:
            assert book.flagged == {pair}
            book.rearm([pair])
            assert book.flagged == set() and book.latest() == {}
    assert [t for t, f in enumerate(flags) if f] == [0, 6]
    assert flags[6] == {pair: 1} and book.latest()[pair] == pytest.approx(2 * LINK * HALF)
    book.forget([pair])
    assert book.pairs() == set() and len(book) == 0 and book.flagged == set()


def test_latest_is_the_window_ending_at_the_latest_poll():
    book = sliding.SlidingCounters(threshold(), 2)
    assert book.latest() == {}
    for total in (100.0, 300.0, 600.0, 1000.0):
        book.poll({("a", "b"): total})
    assert book.latest() == {("a", "b"): 700.0}
    book.poll({})            # missing at poll 4: its window counts 0 (as a 1 s poller's missing reading)
    assert book.latest() == {("a", "b"): 0.0}
    book.poll({("a", "b"): 1500.0})       # poll 5: the window from poll 3's reading
    assert book.latest() == {("a", "b"): 500.0}
    book.poll({("a", "b"): 2100.0})       # poll 6: the difference from poll 2's, the last of its phase
    assert book.latest() == {("a", "b"): 1500.0}


def test_a_negative_reading_is_refused_before_any_book_changes():
    book = sliding.SlidingCounters(threshold(), 2)
    book.poll({("a", "b"): 10.0})
    with pytest.raises(ValueError):
        book.poll({("a", "b"): -1.0})
    assert book.count == 1 and book.latest() == {("a", "b"): 10.0}
