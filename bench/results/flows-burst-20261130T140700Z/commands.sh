#!/bin/sh
# flows-burst: model inputs that tell a burst that ended inside its interval from a rising elephant,
# trained on phase-randomised runs (issue 16, two-phases' false alarms). Offline, niced, no lock.
# Usage (from the worktree's root): sh bench/results/flows-burst-.../commands.sh OUT
# The runs are pickled to $CACHE (default /tmp/burst40; a local cache, never committed).
set -e
OUT=$1
D=$(dirname "$0")
PY=.venv/bin/python
export CACHE=${CACHE:-/tmp/burst40}
mkdir -p "$CACHE" $OUT/reports $OUT/candidates
# 1. the simulated runs: every pattern at seed 0 (12 instances, the shipped command's), the same patterns at a
#    random phase of the polls (flowtraffic.instance(phase=True), 24 instances: 0-11 are those 12 delayed), and
#    the held-out patterns at seeds 0-4 (what `sdnmpi-sim score-flows --seed 0,1,2,3,4` scores)
nice $PY $D/cache.py.txt train plain 12
nice $PY $D/cache.py.txt train phase 24
for s in 0 1 2 3 4; do nice $PY $D/cache.py.txt held $s; done
# 2. version 8 and the candidates (exp.py.txt EXTRA: inputs added to version 8's 23; data: phase = the simulated
#    training patterns' 12 instances at a random phase, mix = those and the 12 plain ones), each trained as the
#    shipped command trains (the Mininet logs of the command, cutoff and floor chosen by the training folds), and
#    scored pooled over seeds 0-4 and on every recorded log folder (run in these batches, in this order)
nice $PY $D/exp.py.txt v8:none > $OUT/reports/v8.txt
nice $PY $D/exp.py.txt none:phase fell:phase rise:phase fell:mix rise:mix fell-s:mix rise2:mix > $OUT/reports/batch1.txt
nice $PY $D/exp.py.txt alone:mix > $OUT/reports/batch2.txt    # (alone-fell:mix, after it, was stopped unfinished)
nice $PY $D/exp.py.txt slow:mix slow:phase slow-both:mix short:mix > $OUT/reports/batch3.txt
nice $PY $D/exp.py.txt tail-s:mix tail:mix > $OUT/reports/batch4.txt
cp $CACHE/cand-*.json $CACHE/res-*.json $OUT/candidates/
$PY $D/summary.py.txt > $OUT/reports/summary.md
# 3. diagnostics: every candidate's weights at version 8's floor (2 % young, 10 % old; not candidates: the floor is
#    chosen here by looking at the held-out errors); per training fold, the floors a candidate's folds chose among;
#    two-phases' version 8 flags at age 1 by the two intervals' sum
nice $PY $D/refloor.py.txt $(for f in $CACHE/cand-*.json; do echo $f,0.02,0.1; done) > $OUT/reports/refloor-v8-floor.txt
nice $PY $D/folds.py.txt fell-s:mix > $OUT/reports/folds-fell-s-mix.txt
nice $PY $D/ambig.py.txt > $OUT/reports/ambig-two-phases.txt
nice $PY $D/halo3d.py.txt > $OUT/reports/halo3d-floor.txt
