"""Ops in flight: what a failed RPC op of a job puts back (docs/rpc.md, "Ops of one job in flight
together").

An op that changes a job (`traffic`, `phase`, `plan_allreduce`, `plan_bcast`) applies its change,
then waits for the switches' barrier replies, and other connections' ops of the same job may run
meanwhile. Each op in flight records, per entry of the job's state it wrote (a phase's demand, a
rank's phase, a communicator's plan, a tree set: key -> value, the callers' choice), the value
before and after. When an op fails, each of its entries goes back to the last value that no failed
op made:

- if a later op in flight wrote the entry, the entry is that op's, and that op's ``before`` becomes
  this op's ``before`` (so its own failure goes back past this op; its success keeps its value);
- else, if the entry still holds this op's value, it gets this op's ``before`` (if something else
  changed it since, that stays).

Each job keeps its own ops in flight (``Job.in_flight``). An op that succeeds takes its entries out
of the earlier ops in flight: their failure no longer
touches what it confirmed. So in whatever order the ops of a job end, the job ends as its
successful ops made it, each in the order it was applied.
"""
import dataclasses


@dataclasses.dataclass(eq=False)
class Op:
    changes: dict        # key -> [before, after] (None: no entry)


class InFlight:
    """The ops in flight of one job (``Job.in_flight``), oldest first."""

    def __init__(self):
        self.ops = []

    def begin(self, before, after, writes=()):
        """Records an op that took the job's entries from ``before`` to ``after`` ({key: value}),
        writing those of ``writes`` even where it left their value as it was. Returns the op."""
        keys = set(writes) | {k for k in set(before) | set(after) if not same(before.get(k), after.get(k))}
        op = Op({k: [before.get(k), after.get(k)] for k in keys})
        self.ops.append(op)
        return op

    def failed(self, op, now):
        """Ends the failed ``op``; {key: value (None: no entry)} of the entries to put back, given
        ``now``, the job's entries as they are."""
        later = self.ops[self.ops.index(op) + 1:]
        self.ops.remove(op)
        out = {}
        for key, (before, after) in op.changes.items():
            heir = next((other for other in later if key in other.changes), None)
            if heir is not None:
                if same(heir.changes[key][0], after):
                    heir.changes[key][0] = before
            elif same(now.get(key), after):
                out[key] = before
        return out

    def done(self, op):
        """Ends ``op``, unless `failed` did: its changes stay."""
        if op not in self.ops:
            return
        for earlier in self.ops[:self.ops.index(op)]:
            for key in op.changes:
                earlier.changes.pop(key, None)
        self.ops.remove(op)

    def unconfirmed(self, key, value):
        """True if an op in flight made entry ``key`` ``value``: the switches have not confirmed it
        yet, and it goes if that op fails (so a request for the same value is not answered as
        cached, but made again, as an op of its own)."""
        return any(key in op.changes and same(op.changes[key][1], value) for op in self.ops)


def same(a, b):
    """True if ``a`` and ``b`` are the very same value: one object, equal numbers, strings or
    booleans, or tuples of such (a value stored anew is a new object, so it never counts as the
    same as the one it replaced)."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, (bool, int, float, str)):
        return type(a) is type(b) and a == b
    return a is b

