#!/bin/sh
# the commands of bench/results/flows-interval-*/results.md, from the worktree's root
set -e
O=$1
R=bench/results
S="nice .venv/bin/sdnmpi-sim score-flows"
mkdir -p $O/reports
$S --interval 1 --report $O/reports/sim-1s.json > $O/reports/sim-1s.md
$S --interval 0.5 --report $O/reports/sim-0.5s.json > $O/reports/sim-0.5s.md
$S --interval 0.5 --label-seconds 1 --report $O/reports/sim-0.5s-label-1s.json > $O/reports/sim-0.5s-label-1s.md
$S --interval 1 --seed 0,1,2,3,4 --report $O/reports/sim-1s-seeds0-4.json > $O/reports/sim-1s-seeds0-4.md
$S --interval 0.5 --seed 0,1,2,3,4 --report $O/reports/sim-0.5s-seeds0-4.json > $O/reports/sim-0.5s-seeds0-4.md
$S --counter-logs $R/flowdetect-20261130T085106Z/counters --report $O/reports/mininet-0.5s-085106Z.json > $O/reports/mininet-0.5s-085106Z.md
$S --counter-logs $R/flowdetect-20261130T081514Z/counters --report $O/reports/mininet-1s-081514Z.json > $O/reports/mininet-1s-081514Z.md
$S --counter-logs $R/flowdetect-20261130T074503Z/counters --report $O/reports/mininet-1s-074503Z.json > $O/reports/mininet-1s-074503Z.md
nice .venv/bin/python bench/flowdetect_offline.py $R/flowdetect-20261130T085106Z/counters > $O/reports/offline-0.5s-085106Z.md
nice .venv/bin/python bench/flowdetect_offline.py $R/flowdetect-20261130T081514Z/counters > $O/reports/offline-1s-081514Z.md
# the shipped command at --interval 0.5 (a candidate, not shipped), scored at both intervals
nice .venv/bin/sdnmpi-sim train-flows --with-simulated --seed 0 --interval 0.5 --out $O/model-0.5s.json \
    --report $O/reports/train-0.5s.json --counter-logs $R/flowdetect-20261128T072002Z/counters \
    $R/flowdetect-20261128T080439Z/counters $R/flowdetect-20261128T080700Z/counters \
    $R/flowdetect-20261128T095015Z/counters > $O/reports/train-0.5s.md
$S --model $O/model-0.5s.json --interval 0.5 --report $O/reports/retrained-sim-0.5s.json > $O/reports/retrained-sim-0.5s.md
$S --model $O/model-0.5s.json --interval 1 --report $O/reports/retrained-sim-1s.json > $O/reports/retrained-sim-1s.md
