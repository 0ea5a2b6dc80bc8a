"""Whether a job's flagged pairs last long enough to be worth routing (issue 16, docs/flows.md
"Short-lived flags").

Detection routes a pair at the poll that flags it, one or two polls after its bytes began, and
routing a running pair moves it: at link-bound rates a moved TCP flow takes 1-2 s to reach its
rate again through the fabric's 1000-packet queues. That pays for a flow that goes on for seconds
(a shift's, a permutation's, a halo's), not for one that is over about when it is flagged (an
all-to-all's pair: 128 KiB at 5 Mbit/s, about a poll). On the counter logs recorded on Mininet at
the bench's 5/5 Mbit/s up to 2026-11-30 (bench/flowdetect_hold.py), the share of the live flags
whose pair was still busy at both polls after the flag: shift, permutation, two-phases and halo3d
0.86-1.00 per pattern, all-to-all 0.05 (at the next poll alone: 0.32, as a round's first flags
last one more poll).

`FlagHold` keeps per job the outcomes of its last HOLD_MEMORY flags, each judged at the complete
polls after it: held when the pair is still busy (the caller's busy data pairs) at each of the
complete polls that span HOLD_S seconds (`polls.polls_for`: 4 at the default 0.5 s polls, 2 at 1 s),
not held at the first where it is not. A job with
at least HOLD_MIN judged flags of which under ``share`` held is *short-lived*: the controller
leaves its detected pairs to the fabric (no plan, no route change) until the share is back at
``share``. Its flags are judged all along, so a later phase of long flows (a permutation after
an all-to-all) brings routing back once enough of them held. Pure.
"""
import collections

from .classify import DEFAULT_INTERVAL
from .polls import polls_for

HOLD_SHARE = 0.5     # default --sdnmpi-flow-hold-share: under this share of flags held, short-lived
HOLD_S = 2.0         # a flag holds when its pair is busy at each of the complete polls of the next HOLD_S s
HOLD_MEMORY = 16     # the last flags judged per job
HOLD_MIN = 4         # judged flags before a job can be short-lived (its first flags are routed)


class FlagHold:
    def __init__(self, share=HOLD_SHARE, memory=HOLD_MEMORY, least=HOLD_MIN, polls=None, interval=DEFAULT_INTERVAL):
        """``polls``: complete polls a flag must stay busy at; None: those of HOLD_S at ``interval`` s."""
        self.share = share
        self.least = least
        self.polls = polls_for(HOLD_S, interval) if polls is None else polls
        self._memory = memory
        self.pending = {}          # job id -> {pair: complete polls it must still be busy at}
        self.outcomes = {}         # job id -> deque of bools (held), the last ``memory``
        self.short = set()         # job ids short-lived now

    def flagged(self, job_id, pairs):
        """Pairs flagged for a job at this poll: judged at the next complete polls."""
        self.pending.setdefault(job_id, {}).update((p, self.polls) for p in pairs)

    def judge(self, busy):
        """At a complete poll, ``busy`` the busy data pairs (any job's): a pending flag whose pair is
        not in ``busy`` did not hold; one that has been in it at ``polls`` complete polls since its
        flag held. Returns (held, idle, changed): the flags judged each way and {job id: True (now
        short-lived) or False (no longer)} of the jobs whose state changed."""
        held = idle = 0
        changed = {}
        for job_id, flags in sorted(self.pending.items()):
            out = self.outcomes.setdefault(job_id, collections.deque(maxlen=self._memory))
            for pair, left in sorted(flags.items()):
                if pair in busy and left > 1:
                    flags[pair] = left - 1
                    continue
                del flags[pair]
                out.append(pair in busy)
                held += pair in busy
                idle += pair not in busy
            short = self._short(out)
            if short != (job_id in self.short):
                changed[job_id] = short
                (self.short.add if short else self.short.discard)(job_id)
        self.pending = {j: f for j, f in self.pending.items() if f}
        return held, idle, changed

    def _short(self, out):
        return len(out) >= self.least and sum(out) < self.share * len(out)

    def short_lived(self, job_id):
        return job_id in self.short

    def tally(self, job_id):
        """(held, judged) among the job's last flags."""
        out = self.outcomes.get(job_id, ())
        return sum(out), len(out)

    def forget(self, job_id):
        """A job released or gone idle: its next busy phase is judged anew."""
        self.pending.pop(job_id, None)
        self.outcomes.pop(job_id, None)
        self.short.discard(job_id)

    def to_json(self):
        return {str(j): {"held": self.tally(j)[0], "judged": self.tally(j)[1], "short_lived": j in self.short}
                for j in sorted(self.outcomes)}
