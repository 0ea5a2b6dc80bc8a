#!/bin/sh
# flows-twophase: two-phases' false alarms over 5 seeds, the Mininet logs, two retrained candidates.
# Usage (from the worktree's root): sh bench/results/flows-twophase-.../commands.sh OUT
set -e
OUT=$1
PY=.venv/bin/python
SIM=.venv/bin/sdnmpi-sim
R=bench/results
mkdir -p $OUT/reports $OUT/offline
# 1. what the false alarms are (the shipped model, 1 s polls, seeds 0-4 pooled, 12 instances each)
nice $PY bench/flows_false_alarms.py --pattern two-phases --seeds 0,1,2,3,4 --json $OUT/reports/two-phases.json \
    > $OUT/reports/two-phases.txt
nice $PY bench/flows_false_alarms.py --pattern cg --seeds 0,1,2,3,4 --json $OUT/reports/cg.json > $OUT/reports/cg.txt
for p in shift permutation; do    # a training and a held-out pattern whose bulk sends start 0-0.3 of an interval in
    nice $PY bench/flows_false_alarms.py --pattern $p --seeds 0,1,2,3,4 --json $OUT/reports/$p.json > $OUT/reports/$p.txt
done
# 2. the recorded Mininet logs: mice that read >= 10 % of the link in an interval, and mice flagged
nice $PY bench/flows_false_alarms.py --counter-logs $R/flowdetect-2026113*/counters > $OUT/reports/log-bursts.md
# 3. candidates: the shipped command with 24 instances; the shipped command with the training patterns
#    at a random phase of the polls (phase_train.py.txt); a diagnostic: the shipped weights, young floor 10 %
nice $SIM train-flows --with-simulated --seed 0 --instances 24 --out $OUT/model-i24.json --counter-logs \
    $R/flowdetect-20261128T072002Z/counters $R/flowdetect-20261128T080439Z/counters \
    $R/flowdetect-20261128T080700Z/counters $R/flowdetect-20261128T095015Z/counters > $OUT/reports/train-i24.md
nice $PY $OUT/phase_train.py.txt $OUT/model-phase.json > $OUT/reports/train-phase.md
$PY -c "import json,sys; d=json.load(open('flows/model.json')); d['floor']=[0.1,0.1]; \
d['trained']['note']='diagnostic: the shipped weights with the young floor at 10 %'; \
json.dump(d, open(sys.argv[1], 'w'), indent=1)" $OUT/model-floor10.json
for m in shipped:flows/model.json i24:$OUT/model-i24.json phase:$OUT/model-phase.json floor10:$OUT/model-floor10.json; do
    n=${m%%:*}; f=${m#*:}
    nice $SIM score-flows --model $f --seed 0,1,2,3,4 --instances 12 --interval 1 \
        --report $OUT/reports/$n-pooled.json > $OUT/reports/$n-pooled.md
    nice $SIM score-flows --model $f --seed 0 --instances 12 --interval 1 \
        --report $OUT/reports/$n-seed0.json > $OUT/reports/$n-seed0.md
done
# 4. every recorded log folder flowdetect_offline reads, each model; pooled per pattern
for d in $R/flowdetect-2026113*/counters; do
    n=$(basename $(dirname $d))
    nice $PY bench/flowdetect_offline.py $d --model shipped=flows/model.json --model i24=$OUT/model-i24.json \
        --model phase=$OUT/model-phase.json --model floor10=$OUT/model-floor10.json > $OUT/offline/$n.md
done
$PY $OUT/agg_logs.py.txt $OUT/offline/*.md > $OUT/reports/logs-pooled.md
