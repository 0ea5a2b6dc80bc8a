"""The still rule's effect offline (docs/flows.md "Sliding windows"): version 8 at 0.5 s polls with
1 s windows on the simulated held-out patterns (seed 0, 12 instances, score-flows --span's data),
without the rule, with it at 0 (any bytes), 1 % and 2 % (shipped: flows.sliding.STILL_SHARE), and
with version 8's own floor by the window's age (2 % young, 10 % old) on the poll.
    .venv/bin/python bench/results/flows-slide-20261130T195838Z/still_rule.py"""
import numpy as np

from sdnmpi import flows
from sdnmpi.flows import classify, sliding
from sdnmpi.simulator import score_flows, slidescore, train_flows

rec = score_flows.trained(flows.DEFAULT_MODEL)
rate = rec["link_rate_Bps"]
pats = score_flows.held_out_patterns(rec)
data, began = slidescore.dataset(pats, 12, 0, rate, 0.5, 1.0, train_flows.TRACE_DIR)
clf = flows.load_model(flows.DEFAULT_MODEL, link_rate=rate, interval=1.0)


class Rule:
    needs_totals = True

    def __init__(self, floor=None, byage=False):
        self.floor, self.byage = floor, byage

    def flags(self, counts, totals=None):
        f = sliding.sliding_flags(clf, counts, 2, totals, still=False)
        if self.byage:
            sums, ages = sliding.window_sums(counts, 2), np.zeros(counts.shape, int)
            for ph in range(2):
                ages[:, ph::2] = flows.pair_ages(sums[:, ph::2], clf.window, rate, classify.BUSY)
            return f & (counts >= np.where(ages < classify.FLOOR_AGE, *clf.floor) * rate * 0.5)
        if self.floor is None:
            return f
        return f & (counts > 0) if self.floor == 0 else f & (counts >= self.floor * rate * 0.5)


rules = [("no rule", Rule()), ("poll > 0", Rule(0)), ("poll >= 1 %", Rule(0.01)), ("poll >= 2 % (shipped)", Rule(0.02)),
         ("poll >= floor by age", Rule(byage=True))]
print("| rule | " + " | ".join(pats) + " | all held-out | precision (all) | within 2 spans (all) |")
print("|" + "---|" * (len(pats) + 4))
for name, rule in rules:
    row = []
    for p in pats:
        row.append("%.3f" % train_flows.score(rule, data[p])["accuracy"])
    runs = [r for p in pats for r in data[p]]
    s = train_flows.score(rule, runs)
    e = slidescore.extras(rule, runs, 0.5, 2)
    print("| %s | %s | %.3f | %.3f | %.3f |" % (name, " | ".join(row), s["accuracy"], s["precision"], e["within_2_spans"]))
assert (Rule(0.02).flags(data["permutation"][0].counts, train_flows.totals(data["permutation"][0]))
        == sliding.Sliding(clf, 2).flags(data["permutation"][0].counts, train_flows.totals(data["permutation"][0]))).all()
