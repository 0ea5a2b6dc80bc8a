"""flows/hold.py: a job whose flagged pairs end before they can be routed is short-lived (its
detected pairs are left to the fabric), on synthetic flag series and on the live flags of counter
logs recorded on Mininet at the bench's 5/5 Mbit/s. The controller's side: test_flowdetect_hold.py."""
import os

import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_hold as hold_tool
from sdnmpi.flows.hold import HOLD_MEMORY, HOLD_MIN, HOLD_S, HOLD_SHARE, FlagHold

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULTS = os.path.join(ROOT, "bench", "results")
ALLTOALL = "flowdetect-20261129T235201Z/counters/alltoall-learned-1.jsonl.gz"
LONG_FLOWS = ["flowdetect-20261129T224040Z/counters/permutation-learned-%d.jsonl.gz" % r for r in range(1, 6)] + \
    ["flowdetect-20261129T224040Z/counters/shift-learned-%d.jsonl.gz" % r for r in range(1, 6)] + \
    ["flowdetect-20261129T233016Z/counters/two-phases-learned-%d.jsonl.gz" % r for r in range(1, 6)] + \
    ["flowdetect-20261129T235201Z/counters/halo3d-learned-1.jsonl.gz"]


def pairs(n, base=0):
    return [("10.0.0.%d" % (base + i), "10.0.1.%d" % i) for i in range(n)]


def test_the_defaults():
    assert (HOLD_SHARE, HOLD_MEMORY, HOLD_MIN, HOLD_S, FlagHold().polls) == (0.5, 16, 4, 2.0, 2)


def test_flags_that_end_by_the_next_poll_make_the_job_short_lived_at_once():
    """A dense pattern's bursts: every flagged pair is idle at the next poll. Idle verdicts come at
    that poll; the job is short-lived once HOLD_MIN flags are judged."""
    hold = FlagHold()
    hold.flagged(1, pairs(3))
    assert hold.judge(set()) == (0, 3, {})           # 3 judged: under HOLD_MIN, still routed
    assert not hold.short_lived(1)
    hold.flagged(1, pairs(2, base=10))
    assert hold.judge(set()) == (0, 2, {1: True})
    assert hold.short_lived(1) and hold.tally(1) == (0, 5)
    hold.flagged(1, pairs(4, base=20))
    assert hold.judge(set()) == (0, 4, {})           # no change: nothing to report
    assert hold.short_lived(1)


def test_stable_elephants_hold_after_two_polls_and_the_job_is_never_short_lived():
    """A permutation's elephants run for seconds: each flag holds at its 2nd complete poll (HOLD_S at 1 s)."""
    hold = FlagHold()
    flows = pairs(8)
    hold.flagged(1, flows)
    assert hold.judge(set(flows)) == (0, 0, {}) and hold.tally(1) == (0, 0)     # busy once: pending
    assert hold.judge(set(flows)) == (8, 0, {}) and hold.tally(1) == (8, 8)
    assert not hold.short_lived(1) and not hold.pending
    # a permutation's last flags, whose pairs end at the next poll, do not tip it
    hold.flagged(1, pairs(2, base=10))
    assert hold.judge(set()) == (0, 2, {}) and not hold.short_lived(1)


def test_a_pair_busy_once_then_idle_did_not_hold():
    hold = FlagHold()
    flows = pairs(4)
    hold.flagged(1, flows)
    hold.judge(set(flows))
    assert hold.judge(set(flows[:1])) == (1, 3, {1: True})
    assert hold.tally(1) == (1, 4)


def test_long_flags_after_a_dense_phase_bring_routing_back():
    """An all-to-all (16 idle verdicts) then a permutation: the job is routed again once half of
    its last HOLD_MEMORY flags held (8 held flags), not before."""
    hold = FlagHold()
    hold.flagged(1, pairs(16))
    hold.judge(set())
    assert hold.short_lived(1) and hold.tally(1) == (0, 16)
    perm = pairs(7, base=30)
    hold.flagged(1, perm)
    hold.judge(set(perm))
    assert hold.judge(set(perm)) == (7, 0, {}) and hold.short_lived(1)        # 7 of 16
    more = pairs(1, base=50)
    hold.flagged(1, more)
    hold.judge(set(perm + more))
    assert hold.judge(set(perm + more)) == (1, 0, {1: False})                 # 8 of 16
    assert not hold.short_lived(1)


def test_jobs_are_judged_apart_and_forgotten():
    hold = FlagHold()
    hold.flagged(1, pairs(4))
    long = pairs(4, base=10)
    hold.flagged(2, long)
    assert hold.judge(set(long)) == (0, 4, {1: True})
    assert hold.short_lived(1) and not hold.short_lived(2)
    assert hold.to_json() == {"1": {"held": 0, "judged": 4, "short_lived": True},
                              "2": {"held": 0, "judged": 0, "short_lived": False}}
    hold.forget(1)
    assert not hold.short_lived(1) and hold.tally(1) == (0, 0)
    hold.forget(2)
    assert not hold.pending


def test_share_zero_never_leaves_a_job_to_the_fabric():
    hold = FlagHold(share=0.0)
    for k in range(4):
        hold.flagged(1, pairs(8, base=10 * k))
        assert hold.judge(set())[2] == {}
    assert not hold.short_lived(1) and hold.tally(1) == (0, 16)


def _left(name):
    """(flags left to the fabric, flags routed) when the log's live flags are judged by FlagHold."""
    return hold_tool.left(hold_tool.read(os.path.join(RESULTS, name))[2], HOLD_SHARE, FlagHold().polls)


def test_the_recorded_all_to_all_is_left_to_the_fabric_after_its_first_flags():
    """5/5 Mbit/s, 196 live flags, 0.43 precision: the first two polls' flags (4 + 25) are judged
    routable, every later one is left to the fabric (its pairs end within a poll or two)."""
    assert _left(ALLTOALL) == (167, 29)
    polls = hold_tool.read(os.path.join(RESULTS, ALLTOALL))[2]
    # busy for the 2 polls after the flag: 10 of 195 (the last poll's flag not judged); 1 poll: 63
    assert hold_tool.held_share(polls, 2) == (10, 195) and hold_tool.held_share(polls, 1) == (63, 195)
    # judged on 1 poll, the start of its second round (12 of 18 flags last one more poll) is routed
    assert hold_tool.left(polls, HOLD_SHARE, 1) == (157, 39)


@pytest.mark.parametrize("name", LONG_FLOWS)
def test_recorded_long_flows_are_never_left_to_the_fabric(name):
    """Shift, permutation, two-phases and halo3d at 5/5 Mbit/s: every live flag is routable."""
    left, routed = _left(name)
    assert left == 0 and routed > 10


def test_the_tool_tables_patterns_by_rate(tmp_path):
    table = hold_tool.table([os.path.join(RESULTS, ALLTOALL)], [1, 2], HOLD_SHARE).splitlines()
    assert table[2:] == ["| alltoall | 625000 | 1 | 1 | 63 / 195 | 0.32 | 0.32 | 157 (1) | 39 |",
                         "| alltoall | 625000 | 1 | 2 | 10 / 195 | 0.05 | 0.05 | 167 (1) | 29 |"]
