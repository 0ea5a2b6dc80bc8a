"""bench/flowdetect_age0.py: the age-0 rule on hand-made series (a pair is flagged at the poll
ending its first busy, partial interval when that interval reached the floor F and its share of its
endpoints' bytes reached S; never later than the shipped model alone would; none: the model's own
flags), its `scored` count of elephants flagged at the first poll, and the reason the issue's
measure cannot prefer it (a flag at the 1st or 2nd poll counts the same). Pure Python, no lock."""
import numpy as np

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_age0 as a0
from sdnmpi import flows
from sdnmpi.simulator import flowtraffic, train_flows

MODEL = flows.load_model(flows.DEFAULT_MODEL)
LB = MODEL.link_rate * MODEL.interval


def _run(rows, labels, starts, pairs):
    counts = np.array(rows, dtype=float) * LB
    return flowtraffic.Run(counts, np.array(labels), np.array(starts), pairs)


# pair 0 -> 1: an elephant whose partial first interval carried 40 % of the link (alone on its hosts);
# pair 2 -> 3: a burst of 60 % in one interval, then nothing (a mouse by the label), alone on its hosts;
# pair 4 -> 5 and 6 -> 5: two pairs sharing host 5 (share 0.5), 40 % each in their first interval
RUN = _run([[0, 0.4, 0.9, 0.9, 0.9], [0, 0.6, 0, 0, 0], [0, 0.4, 0.45, 0.45, 0.45], [0, 0.4, 0.45, 0.45, 0.45]],
           [True, False, True, True], [1, 1, 1, 1], [(0, 1), (2, 3), (4, 5), (6, 5)])


def _flags(rule):
    return a0.Age0(MODEL, rule, {}).flags(RUN.counts, train_flows.totals(RUN))


def test_no_rule_is_the_shipped_model_which_waits_for_a_whole_interval():
    f = _flags(a0.NONE)
    assert np.array_equal(f, MODEL.flags(RUN.counts, train_flows.totals(RUN)))
    assert not f[:, 1].any()                   # age 0: min_age 1 never flags there
    assert f[0, 2] and f[2, 2] and f[3, 2]      # the elephants at their first whole interval


def test_the_rule_flags_at_the_partial_interval_by_floor_and_share():
    f = _flags((0.3, 0.95))
    assert f[0, 1] and not f[2, 1] and not f[3, 1]     # the shared pairs are under S
    assert f[1, 1]                                      # the one-interval burst too: the cost
    f = _flags((0.3, 0.5))
    assert f[2, 1] and f[3, 1]
    f = _flags((0.5, 0.0))
    assert not f[0, 1] and f[1, 1]                      # 40 % is under F = 0.5, the 60 % burst is not


def test_scored_counts_the_first_poll_and_timely_accuracy_does_not_reward_it():
    late, early = a0.scored(a0.Age0(MODEL, a0.NONE, {}), [RUN]), a0.scored(a0.Age0(MODEL, (0.3, 0.5), {}), [RUN])
    assert late["delay1"] == 0 and early["delay1"] == 3
    assert late["within_2"] == early["within_2"] == 1.0
    assert early["timely_accuracy"] < late["timely_accuracy"]    # only the burst's false alarm shows
