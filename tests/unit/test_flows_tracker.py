"""flows.PairCounters (the controller's per-poll bookkeeping) and flows.cost (what counting costs),
pure Python."""
import numpy as np
import pytest

from sdnmpi import flows
from sdnmpi.flows import cost
from sdnmpi.primitives import fabric, fattree
from sdnmpi.simulator import flowtraffic, train_flows

LINK = 100.0


def _feed(book, pairs, counts):
    """Polls ``book`` with the cumulative readings of ``counts``; {pair: (poll, delay)}."""
    cum = np.cumsum(counts, axis=1)
    seen = {}
    for t in range(counts.shape[1]):
        for pair, delay in book.poll({p: float(cum[i, t]) for i, p in enumerate(pairs)}).items():
            seen[pair] = (t, delay)
    return seen


@pytest.mark.parametrize("classifier", [
    flows.ThresholdClassifier(link_rate=125e6, interval=1.0),
    flows.load_model(flows.DEFAULT_MODEL, link_rate=125e6, interval=1.0),
])
def test_polling_cumulative_counters_matches_the_batch_classifier(classifier):
    run = flowtraffic.instance("two-phases", 5, 125e6, 1.0, train_flows.TRACE_DIR)
    counts, pairs = run.counts, run.pairs
    seen = _feed(flows.PairCounters(classifier), pairs, counts)
    # the tracker sums the endpoint totals over every pair, flagged ones too, as the batch does
    flags = classifier.flags(counts, flows.endpoint_totals(counts, pairs))
    first, delays = flows.first_flags(flags), flows.detection_delays(counts, flags)
    want = {pairs[i]: (int(first[i]), int(delays[i])) for i in range(len(pairs)) if first[i] >= 0}
    assert want and seen == want


def test_a_restarted_counter_and_a_missing_pair_are_handled():
    book = flows.PairCounters(flows.ThresholdClassifier(link_rate=LINK, interval=1.0, window=2,
                                                        fraction=0.5))
    assert book.poll({"a": 10.0, "b": 0.0}) == {}
    assert book.poll({"a": 30.0}) == {}        # b missing: 0 bytes
    assert book.poll({"a": 25.0, "b": 0.0}) == {}   # a's entry re-installed: 25 bytes this interval
    assert book._series["a"][-2:] == [20.0, 25.0] and book._series["b"][-2:] == [0.0, 0.0]
    assert book.poll({"a": 125.0, "b": 90.0}) == {"a": 4}   # (25 + 100) / 200 > 0.5, 4th poll of a
    assert book.poll({"a": 225.0, "b": 190.0}) == {"b": 2}  # a reported once only
    book.rearm(["b"])                               # b's routes released: flagged anew ...
    assert book.poll({"a": 225.0, "b": 190.0}) == {}   # ... on bytes after its last reading only
    assert book.poll({"a": 225.0, "b": 250.0}) == {}
    assert book.poll({"a": 225.0, "b": 340.0}) == {"b": 2}   # (60 + 90) / 200 > 0.5
    book.forget(["a"])
    assert "a" not in book.flagged and len(book) == 1
    with pytest.raises(ValueError):
        book.poll({"a": -1.0})


def test_counting_entries_on_the_k4_fat_tree():
    g = fattree.kary(4)
    hosts = fabric.hosts(g)
    edge_of = {h: fabric.attachment(g, h)[0] for h in hosts}
    entries = cost.counting_entries([hosts, hosts[:4]], edge_of)  # a second job inside the first
    assert len(entries) == 8 and all(len(v) == 2 * 14 for v in entries.values())   # not to the edge neighbour
    assert sum(len(v) for v in entries.values()) == 16 * 14
    assert all(edge_of[a] == edge for edge, ps in entries.items() for a, _ in ps)
    request, reply = cost.poll_bytes({e: len(v) for e, v in entries.items()})
    assert (request, reply) == (8 * 56, 8 * 16 + 224 * 88)
    assert cost.bound(16, 2) == (224, 28, request + reply)


def test_a_large_reply_is_split_into_messages():
    per_message = (65535 - 16) // 88
    _, reply = cost.poll_bytes({1: per_message + 1})
    assert reply == 2 * 16 + (per_message + 1) * 88
    assert cost.poll_bytes({1: 0}) == (0, 0)
