#!/bin/bash
# raw captures of Open vSwitch's counters while the bench runs (every 15 s once ovs-vswitchd answers)
out=${2:-/tmp/ovsup17-cap}; mkdir -p $out; i=0
while kill -0 $1 2>/dev/null; do
  if ovs-appctl -t ovs-vswitchd --timeout=3 version >/dev/null 2>&1; then
    t=$(date -u +%H%M%S); i=$((i+1))
    { echo "== time $(date -u +%FT%T.%N)"; echo "== ovs-vsctl show"; ovs-vsctl show | head -40
      for c in dpctl/show upcall/show dpif-netdev/pmd-stats-show coverage/show; do echo "== $c"; ovs-appctl -t ovs-vswitchd --timeout=3 $c; done
      echo "== dpctl/dump-flows -m"; ovs-appctl -t ovs-vswitchd --timeout=5 dpctl/dump-flows -m; } > $out/ovs-$i-$t.txt 2>&1
    sleep 15
  else sleep 1; fi
done
