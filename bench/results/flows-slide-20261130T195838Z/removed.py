"""What the still rule removes (docs/flows.md "Sliding windows"): the pairs version 8 flags at 0.5 s
polls with 1 s windows without the rule but not with it, on the simulated held-out patterns (seed 0):
mice or elephants by the label, their bytes in link-seconds, the bytes of the flag's poll and of the
polls after it. .venv/bin/python bench/results/flows-slide-20261130T195838Z/removed.py"""
import numpy as np

from sdnmpi import flows
from sdnmpi.flows import sliding
from sdnmpi.simulator import score_flows, slidescore, train_flows

rec = score_flows.trained(flows.DEFAULT_MODEL)
rate = rec["link_rate_Bps"]
pats = score_flows.held_out_patterns(rec)
data, _began = slidescore.dataset(pats, 12, 0, rate, 0.5, 1.0, train_flows.TRACE_DIR)
clf = flows.load_model(flows.DEFAULT_MODEL, link_rate=rate, interval=1.0)
for p in pats:
    mice = elephants = 0
    seconds, at_flag, after = [], [], []
    for run in data[p]:
        tot = train_flows.totals(run)
        loose = sliding.sliding_flags(clf, run.counts, 2, tot, still=False)
        kept = sliding.sliding_flags(clf, run.counts, 2, tot)
        gone = loose.any(axis=1) & ~kept.any(axis=1)
        first = flows.first_flags(loose)
        for i in np.nonzero(gone)[0]:
            mice += not run.labels[i]
            elephants += bool(run.labels[i])
            seconds.append(run.counts[i].sum() / rate)
            at_flag.append(run.counts[i, first[i]] / (rate * 0.5))
            after.append(run.counts[i, first[i] + 1:].sum() / rate)
    if mice + elephants:
        print("%s: %d pairs no longer flagged (%d mice, %d elephants); their bytes %.2f-%.2f link-seconds "
              "(median %.2f); the flag's poll carried %.1f-%.1f %% of the link; after it %.3f link-seconds at most"
              % (p, mice + elephants, mice, elephants, min(seconds), max(seconds), float(np.median(seconds)),
                 100 * min(at_flag), 100 * max(at_flag), max(after)))
    else:
        print("%s: none" % p)
