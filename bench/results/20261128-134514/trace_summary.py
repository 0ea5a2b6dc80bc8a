"""Summary of traces.txt (diagnostic.patch's time-stamps, CLOCK_MONOTONIC seconds, one machine):
per variant, medians over the warm jobs of the slowest rank's Init, world rank 0's agreement, the
last rank's Init end after rank 0 left the agreement, and the controller's timeline of the
world's plan_allreduce (receipt after rank 0's send, planning, building and sending the
flow-mods, until every barrier reply), and in how many jobs the last rank's Init ended inside that
install window.   python3 trace_summary.py traces.txt"""
import re
import statistics as st
import sys

jobs, ctl = {}, []
for line in open(sys.argv[1]):
    who, _, rest = line.partition(": ")
    if who == "controller":
        ctl.append(rest.strip())
        continue
    m = re.search(r"TRACE init rank (\d+): (.*)", rest)
    if m:
        jobs.setdefault(who, {})[int(m.group(1))] = [float(x) for x in m.group(2).split()]


def first(t0, t1, pat):
    for line in ctl:
        m = re.search(pat, line)
        if m and t0 <= float(m.group(1)) <= t1:
            return [float(x) for x in m.groups()]
    return None


rows = {}
for name, ranks in sorted(jobs.items()):
    if "warm" not in name or "gap" in name:
        continue
    r0 = ranks[0]
    send = r0[5]   # rank 0 after plan_ahead_start (the request sent, if ahead)
    last_end = max(v[6] for v in ranks.values())
    plan = first(send - 0.001, send + 0.1, r"plan t0 (\S+) planned (\S+) msgs (\S+)")
    if plan is None:   # rank 0 itself was descheduled after sending: receipt before `send`
        print("skipped (plan received before rank 0's time-stamp):", name)
        continue
    allsent = first(plan[0], plan[0] + 0.2, r"confirm all sent (\S+)")[0]
    conf = first(plan[0], plan[0] + 0.2, r"plan confirmed (\S+)")[0]
    rows.setdefault(re.sub(r"\d+$", "", name), []).append(dict(
        init=max(v[6] - v[0] for v in ranks.values()) * 1e3, agree=(r0[4] - r0[3]) * 1e3,
        tail=(last_end - r0[4]) * 1e3, recv=(plan[0] - send) * 1e3, planning=(plan[1] - plan[0]) * 1e3,
        build=(plan[2] - plan[1]) * 1e3, sendmsgs=(allsent - plan[2]) * 1e3, conf=(conf - plan[0]) * 1e3,
        endrel=(last_end - plan[0]) * 1e3, inside=plan[0] <= last_end <= conf))
for key, v in sorted(rows.items()):
    med = lambda f: st.median(x[f] for x in v)  # noqa: E731
    print("%-32s n=%d Init %.1f ms | rank 0's agreement %.2f | last rank's end after it %.1f | controller: "
          "request received %.1f after rank 0's send, planning %.2f, build flow-mods %.1f, send them %.1f, "
          "receipt to last barrier %.1f | last Init end - receipt %.1f; inside the install window %d/%d"
          % (key, len(v), med("init"), med("agree"), med("tail"), med("recv"), med("planning"), med("build"),
             med("sendmsgs"), med("conf"), med("endrel"), sum(x["inside"] for x in v), len(v)))
