#!/bin/sh
# sliding windows offline (sh commands.sh OUT) (docs/flows.md "Sliding windows"); OUT: the results folder
set -e
OUT=${1:?results folder}
S=".venv/bin/sdnmpi-sim score-flows"
R=bench/results
$S --interval 1 > $OUT/sim-1s.md
$S --interval 1 --span 1 --report $OUT/sim-1s-span1.json > $OUT/sim-1s-span1.md
$S --interval 0.5 --span 1 --report $OUT/sim-0.5s-span1.json > $OUT/sim-0.5s-span1.md
$S --interval 1 --span 1 --seed 0,1,2,3,4 --report $OUT/sim-1s-span1-seeds.json > $OUT/sim-1s-span1-seeds.md
$S --interval 0.5 --span 1 --seed 0,1,2,3,4 --report $OUT/sim-0.5s-span1-seeds.json > $OUT/sim-0.5s-span1-seeds.md
$S --span 1 --counter-logs $R/flowdetect-20261130T085106Z/counters $R/flowdetect-20261130T121222Z/counters \
   $R/flowdetect-20261130T143319Z/counters $R/flowdetect-20261130T144336Z/counters \
   --report $OUT/logs-0.5s-span1.json > $OUT/logs-0.5s-span1.md
$S --interval 0.25 --span 1 --report $OUT/sim-0.25s-span1.json > $OUT/sim-0.25s-span1.md   # added by the lead, 20:45
