#!/bin/bash
# Raw captures of Open vSwitch's counters while a bench run goes on (issue 17): every 15 s once
# ovs-vswitchd answers, `ovs-vsctl show`, dpctl/show, upcall/show, pmd-stats-show, coverage/show and
# the megaflows. Usage: bench/ovs_capture.sh PID_OF_THE_RUN [OUT_DIR]; the captures of
# 20261130-195102 and -200712 are in their counters/.
out=${2:-/tmp/ovs-capture}; mkdir -p "$out"; i=0
appctl() { ovs-appctl -t ovs-vswitchd --timeout=5 "$@"; }
while kill -0 "$1" 2>/dev/null; do
  if appctl version >/dev/null 2>&1; then
    t=$(date -u +%H%M%S); i=$((i+1))
    { echo "== time $(date -u +%FT%T.%N)"; echo "== ovs-vsctl show"; ovs-vsctl show | head -40
      for c in dpctl/show upcall/show dpif-netdev/pmd-stats-show coverage/show; do echo "== $c"; appctl $c; done
      echo "== dpctl/dump-flows -m"; appctl dpctl/dump-flows -m; } > "$out/ovs-$i-$t.txt" 2>&1
    sleep 15
  else sleep 1; fi
done
