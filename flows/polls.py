"""Flow detection's timings are durations in seconds; the controller counts them in complete polls
of ``--sdnmpi-flow-interval`` (issue 16, docs/flows.md "The pipeline"). One conversion for all of
them (controller/flowdetect.py's STALE_S and MISMATCH_S, flows/hold.py's HOLD_S), so that a faster
poll does not shorten them: 3 s is 3 polls at 1 s and 6 at 0.5 s. Pure."""
import math

DIGITS = 9     # the quotient is rounded to this many decimals before its ceiling


def polls_for(seconds, interval):
    """The complete polls of ``interval`` s that span at least ``seconds`` s: ceil(seconds /
    interval), at least 1. The quotient is rounded first, so float error adds no poll (3.0 / 0.3 is
    10.000000000000002 in floats: 10 polls, not 11)."""
    if not interval > 0:
        raise ValueError(f"interval must be > 0 s, got {interval!r}")
    return max(1, math.ceil(round(seconds / interval, DIGITS)))
