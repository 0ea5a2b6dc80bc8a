"""What the wire saw during one run of bench/jobroute_rate.py: every directed link's byte counter
sampled in the root namespace, plus the controller's log lines as they appear.

The fabric's switch-side interfaces all live in the root namespace, and one read of /proc/net/dev
gives all their counters at once (cheap enough to sample every 0.2 s on the shared 2-core machine).
A switch-side interface on link (switch, peer) counts switch -> peer in its tx bytes and
peer -> switch in its rx bytes, so every direction of every link is covered, host links included.

The pure part (``exchanges``, ``link_flows``, ``host_timeline``) cuts the timeline into
exchanges at the quiet gaps a ``pause`` step leaves between them, and per exchange gives: the
bytes per directed switch link in units of one flow's bytes (more than 1 = two flows shared the
link: the routes were not contention-free), and per receiving host when its first and its last
bytes arrived (so the slowest flow, the start-up delay and stalls show). Nothing here knows MPI.
"""
import gzip
import json
import os
import re
import statistics
import sys
import threading

from bench_common import now_s

FRAME_PAYLOAD = 1448 / 1514        # TCP payload per Ethernet frame (MSS 1448, 1514-byte frames)


def proc_net_dev(path="/proc/net/dev"):
    """{interface: [its 16 counters]} from /proc/net/dev (rx bytes, packets, errs, drop, ... tx
    bytes at index 8, tx drop at 11)."""
    out = {}
    with open(path) as f:
        for line in f.readlines()[2:]:
            name, _, rest = line.partition(":")
            vals = rest.split()
            if len(vals) >= 12:
                out[name.strip()] = [int(v) for v in vals]
    return out


def read_counters(path="/proc/net/dev"):
    """{interface: (rx bytes, tx bytes)} from /proc/net/dev."""
    return {name: (v[0], v[8]) for name, v in proc_net_dev(path).items()}


def directed_links(net_links, is_switch):
    """[(src node, dst node, interface, "rx" | "tx")] for every direction of every link whose
    end is a switch (the counter that sees it in the root namespace)."""
    out = []
    for intf1, intf2 in net_links:
        for intf, peer in ((intf1, intf2), (intf2, intf1)):
            if is_switch(intf.node):
                out.append((intf.node.name, peer.node.name, intf.name, "tx"))
                out.append((peer.node.name, intf.node.name, intf.name, "rx"))
                break
    return out


class LinkSampler:
    """Samples ``links`` (directed_links) every ``interval`` seconds in a thread, and the lines
    ``log_path`` gains (with the time they were seen), between start() and stop()."""

    def __init__(self, links, interval=0.2, log_path=None, reader=read_counters):
        self.links, self.interval, self.log_path, self.reader = links, interval, log_path, reader
        self.times, self.samples, self.events = [], [], []
        self._stop = threading.Event()
        self._thread = None
        self._log_at = 0

    def _sample(self):
        counters = self.reader()
        t = now_s()
        row = []
        for _src, _dst, intf, which in self.links:
            rx_tx = counters.get(intf)
            row.append(None if rx_tx is None else rx_tx[0 if which == "rx" else 1])
        self.times.append(t)
        self.samples.append(row)
        if self.log_path:
            try:
                with open(self.log_path, errors="replace") as f:
                    f.seek(self._log_at)
                    text = f.read()
                    self._log_at = f.tell()
            except OSError:
                text = ""
            self.events.extend((t, line) for line in text.splitlines() if line.strip())

    def _loop(self):
        while not self._stop.wait(self.interval):
            self._sample()

    def start(self):
        if self.log_path and os.path.exists(self.log_path):
            self._log_at = os.path.getsize(self.log_path)
        self._sample()
        self._thread = threading.Thread(target=self._loop, name="link-sampler", daemon=True)
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join()
        self._sample()
        t0 = self.times[0]
        return {"links": ["%s>%s" % (s, d) for s, d, _i, _w in self.links],
                "t": [round(t - t0, 3) for t in self.times], "t0": t0,
                "bytes": [[row[k] for row in self.samples] for k in range(len(self.links))],
                "events": [(round(t - t0, 3), line) for t, line in self.events]}


def _rates(timeline, names):
    """Per sample interval: the total bytes of links ``names`` (indices)."""
    by = timeline["bytes"]
    return [sum((by[k][i + 1] or 0) - (by[k][i] or 0) for k in names) for i in range(len(timeline["t"]) - 1)]


def exchanges(timeline, host_links, quiet_share=0.05, min_quiet=0.8, line_bytes_s=None):
    """[(first sample, last sample)] of the busy stretches of the traffic delivered to hosts,
    split at quiet gaps (delivered < ``quiet_share`` of the busiest interval's rate for at least
    ``min_quiet`` seconds). ``host_links``: indices of the links into hosts."""
    t = timeline["t"]
    delivered = _rates(timeline, host_links)
    if not delivered:
        return []
    dt = [t[i + 1] - t[i] for i in range(len(delivered))]
    peak = line_bytes_s or max(b / d for b, d in zip(delivered, dt) if d > 0)
    busy = [d > 0 and b / d > quiet_share * peak for b, d in zip(delivered, dt)]
    out, start, quiet_from = [], None, None
    for i, is_busy in enumerate(busy):
        if is_busy:
            if start is None:
                start = i
            quiet_from = None
        elif start is not None:
            if quiet_from is None:
                quiet_from = i
            if t[i + 1] - t[quiet_from] >= min_quiet:
                out.append((start, quiet_from))
                start, quiet_from = None, None
    if start is not None:
        out.append((start, quiet_from if quiet_from is not None else len(busy)))
    return out


def link_flows(timeline, span, flow_bytes, switches):
    """{"a>b": bytes / flow_bytes} of the directed switch-to-switch links during ``span`` (sample
    indices [first, last]); ``flow_bytes`` = one flow's bytes on the wire."""
    first, last = span
    out = {}
    for k, name in enumerate(timeline["links"]):
        src, dst = name.split(">")
        if src in switches and dst in switches:
            b0, b1 = timeline["bytes"][k][first], timeline["bytes"][k][last]
            if b0 is not None and b1 is not None:
                out[name] = (b1 - b0) / flow_bytes
    return out


def host_timeline(timeline, span, host_links, flow_bytes, done_share=0.98):
    """{"sw>host": {"start": s, "done": s, "bytes": b}}: per link into a host, when (seconds after
    the span's first sample) its first bytes arrived and when it had ``done_share`` of its bytes
    in the span; ``flow_bytes`` only for "flows" (bytes / flow_bytes)."""
    first, last = span
    t = timeline["t"]
    out = {}
    for k in host_links:
        series = timeline["bytes"][k]
        if series[first] is None or series[last] is None:
            continue
        got = series[last] - series[first]
        start = done = None
        for i in range(first, last + 1):
            b = series[i] - series[first]
            if start is None and b > 0:
                start = t[i] - t[first]
            if done is None and b >= done_share * got:
                done = t[i] - t[first]
        out[timeline["links"][k]] = {"start": start, "done": done, "bytes": got, "flows": got / flow_bytes}
    return out


def restart_gaps(timeline, span, busy_mbit=2.5, idle_mbit=1.0):
    """{sender host: seconds} between the end of its flow's first repetition (its host link's
    rate first falls below ``idle_mbit`` after being above ``busy_mbit``) and the start of the
    next one (back above ``busy_mbit``), for every host link out of a host in ``span``. A sender
    far above the median started its next repetition late (or stalled at its start)."""
    first, last = span
    t = timeline["t"]
    out = {}
    for k, name in enumerate(timeline["links"]):
        src = name.split(">")[0]
        if not HOST_NAME.match(src):
            continue
        series = timeline["bytes"][k]
        if any(series[i] is None for i in (first, last)):
            continue
        busy, idle_at = False, None
        for i in range(first, last):
            mbit = (series[i + 1] - series[i]) * 8 / (t[i + 1] - t[i]) / 1e6
            if not busy:
                busy = mbit > busy_mbit
            elif idle_at is None:
                if mbit < idle_mbit:
                    idle_at = t[i]
            elif mbit > busy_mbit:
                out[src] = round(t[i] - idle_at, 3)
                break
    return out


def idle_senders(timeline, span, busy_share=0.75, busy_mbit=2.5, idle_mbit=0.5):
    """{sender host: seconds} during ``span`` in which the host sent (almost) nothing (its host
    link under ``idle_mbit``: ACKs only) while at least ``busy_share`` of the other senders were
    sending (over ``busy_mbit``); hosts never idle so are left out. A sender that waits while the
    others run (e.g. for a control message of its peer) shows here, whatever its restart gap."""
    first, last = span
    t = timeline["t"]
    ups = [k for k, name in enumerate(timeline["links"]) if HOST_NAME.match(name.split(">")[0])]
    series = {k: timeline["bytes"][k] for k in ups if None not in timeline["bytes"][k][first:last + 1]}
    out = {}
    for i in range(first, last):
        dt = t[i + 1] - t[i]
        mbit = {k: (s[i + 1] - s[i]) * 8 / dt / 1e6 for k, s in series.items()} if dt > 0 else {}
        for k, rate in mbit.items():
            others = [r for j, r in mbit.items() if j != k]
            if rate < idle_mbit and others and sum(r > busy_mbit for r in others) >= busy_share * len(others):
                host = timeline["links"][k].split(">")[0]
                out[host] = round(out.get(host, 0) + dt, 3)
    return out


def steady_rates(timeline, span, busy_share=0.8, trim=2):
    """{sender host: Mbit/s of frames on its host link while it sent steadily}: per link out of a
    host, the stretches of samples above ``busy_share`` of the link's median sample in the span,
    with ``trim`` samples cut at each end (the start-up and the drain of each repetition), bytes
    over time of what is left (None if nothing is); a sample under that share counts as a pause. The link carries the host's data and the ACKs of what it receives; at the link's rate it
    is the fabric, not the flow, that sets the rate."""
    first, last = span
    t = timeline["t"]
    out = {}
    for k, name in enumerate(timeline["links"]):
        src = name.split(">")[0]
        series = timeline["bytes"][k]
        if not HOST_NAME.match(src) or any(series[i] is None for i in range(first, last + 1)):
            continue
        rate = [(series[i + 1] - series[i]) * 8 / (t[i + 1] - t[i]) / 1e6 for i in range(first, last)]
        busy_mbit = busy_share * statistics.median(rate) if rate else 0
        nbytes = seconds = 0.0
        i = 0
        while i < len(rate):
            if rate[i] <= busy_mbit:
                i += 1
                continue
            j = i
            while j < len(rate) and rate[j] > busy_mbit:
                j += 1
            for m in range(i + trim, j - trim):
                nbytes += series[first + m + 1] - series[first + m]
                seconds += t[first + m + 1] - t[first + m]
            i = j
        out[src] = round(nbytes * 8 / seconds / 1e6, 3) if seconds > 0 else None
    return out


HOST_NAME = re.compile(r"^h\d+$")


def summary(timeline, hosts, switches, flow_bytes):
    """Per exchange found: its span (seconds), the busiest switch links in flows, and the hosts'
    first and last arrival; plus the controller log lines about phases and routes."""
    names = [n.split(">") for n in timeline["links"]]
    into_hosts = [k for k, (src, dst) in enumerate(names) if dst in hosts and src in switches]
    t = timeline["t"]
    out = {"exchanges": [], "events": [(s, line) for s, line in timeline["events"]
                                       if "phase" in line or "routes" in line or "traffic" in line]}
    for span in exchanges(timeline, into_hosts):
        flows = link_flows(timeline, span, flow_bytes, switches)
        arrivals = host_timeline(timeline, span, into_hosts, flow_bytes)
        done = [a["done"] for a in arrivals.values() if a["done"] is not None and a["flows"] > 0.5]
        starts = [a["start"] for a in arrivals.values() if a["start"] is not None and a["flows"] > 0.5]
        gaps = restart_gaps(timeline, span)
        out["exchanges"].append({
            "from_s": t[span[0]], "to_s": t[span[1]],
            "restart_gaps_s": gaps,
            "restart_gap_median_s": statistics.median(gaps.values()) if gaps else None,
            "idle_senders_s": idle_senders(timeline, span),
            "uplink_steady_mbit": steady_rates(timeline, span),
            "max_link_flows": max(flows.values()) if flows else None,
            "links_over_1_2": {n: round(v, 2) for n, v in sorted(flows.items()) if v > 1.2},
            "host_start_s": [min(starts), max(starts)] if starts else None,
            "host_done_s": [min(done), max(done)] if done else None,
            "hosts": {n: {k: (round(v, 3) if isinstance(v, float) else v) for k, v in a.items()}
                      for n, a in sorted(arrivals.items())}})
    return out


# -- counters read before and after a run (wire_counters; differences: counter_delta) ----------
def tcp_retrans(snmp_text):
    """RetransSegs from a /proc/net/snmp text (None if it has none)."""
    rows = [line.split() for line in snmp_text.splitlines() if line.startswith("Tcp:")]
    if len(rows) < 2 or "RetransSegs" not in rows[0]:
        return None
    return int(rows[1][rows[0].index("RetransSegs")])


def qdisc_drops(tc_text):
    """{device: packets dropped} of the root qdiscs in a `tc -s qdisc show` text."""
    out, dev = {}, None
    for line in tc_text.splitlines():
        words = line.split()
        if line.startswith("qdisc ") and "root" in words and "dev" in words:
            dev = words[words.index("dev") + 1]
        elif line.startswith("qdisc "):
            dev = None
        elif dev and "(dropped" in line:
            out[dev] = int(line.split("(dropped", 1)[1].split(",", 1)[0])
            dev = None
    return out


def datapath_stats(text):
    """{"emc hits": n, "megaflow hits": n, "miss with success upcall": n, ...} summed over the
    threads of `ovs-appctl dpif-netdev/pmd-stats-show` (integer counters only)."""
    out = {}
    for line in text.splitlines():
        name, sep, value = line.strip().partition(":")
        if sep and value.strip().isdigit():
            out[name] = out.get(name, 0) + int(value)
    return out


def counter_delta(before, after):
    """after - before, key by key, for nested dicts of numbers (None where either lacks it)."""
    if isinstance(after, dict):
        return {k: counter_delta((before or {}).get(k), v) for k, v in after.items()}
    if isinstance(after, (int, float)) and isinstance(before, (int, float)):
        return after - before
    return None


TCP_EXT = ("TCPTimeouts", "TCPSpuriousRTOs", "TCPLossProbes", "TCPFastRetrans", "TCPSlowStartRetrans",
           "TCPDSACKRecv", "TCPSACKReorder", "TCPOFODrop", "TCPRcvQDrop", "TCPBacklogDrop")


def tcp_ext(netstat_text, names=TCP_EXT):
    """{name: count} of the TcpExt counters ``names`` in a /proc/net/netstat text."""
    rows = [line.split() for line in netstat_text.splitlines() if line.startswith("TcpExt:")]
    if len(rows) < 2:
        return {}
    values = dict(zip(rows[0][1:], rows[1][1:]))
    return {n: int(values[n]) for n in names if n in values}


def coverage_drops(text):
    """{counter: total} of the `ovs-appctl coverage/show` counters whose name holds "drop"."""
    out = {}
    for line in text.splitlines():
        words = line.split()
        if words and "drop" in words[0] and "total:" in words:
            out[words[0]] = int(words[words.index("total:") + 1])
    return out


def dev_drops(path="/proc/net/dev"):
    """{interface: (rx dropped, tx dropped)} from /proc/net/dev."""
    return {name: (v[3], v[11]) for name, v in proc_net_dev(path).items()}


def save(path, timeline):
    """A timeline as gzipped JSON."""
    with gzip.open(path, "wt") as f:
        json.dump(timeline, f)


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def main(argv=None):
    """Re-analyses saved timelines: python bench/jobroute_links.py FLOW_BYTES FILE..."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        print("usage: jobroute_links.py FLOW_BYTES TIMELINE.json[.gz] ...", file=sys.stderr)
        return 2
    try:
        flow_bytes = float(argv[0])
        timelines = [(path, load(path)) for path in argv[1:]]
    except (ValueError, OSError) as exc:
        print("jobroute_links.py: %s" % exc, file=sys.stderr)
        return 2
    for path, tl in timelines:
        nodes = {n for name in tl["links"] for n in name.split(">")}
        hosts = {n for n in nodes if HOST_NAME.match(n)}
        out = summary(tl, hosts, nodes - hosts, flow_bytes)
        for k, ex in enumerate(out["exchanges"]):
            late = {h: g for h, g in ex["restart_gaps_s"].items()
                    if ex["restart_gap_median_s"] is not None and g > ex["restart_gap_median_s"] + 0.5}
            print("%s exchange %d: %.1f-%.1f s, busiest switch link %.2f flows, hosts done %s s, "
                  "restart gap median %s s, late senders %s, senders idle while the others sent (s) %s" % (
                      os.path.basename(path), k, ex["from_s"], ex["to_s"], ex["max_link_flows"] or 0,
                      ex["host_done_s"], ex["restart_gap_median_s"], late or "none",
                      {h: v for h, v in ex["idle_senders_s"].items() if v >= 0.5} or "none"))
            steady = sorted((v, h) for h, v in ex["uplink_steady_mbit"].items() if v is not None)
            if steady:
                print("  host links while sending steadily (Mbit/s of frames, data + ACKs): slowest %s, median %.3f, "
                      "fastest %s" % (" ".join("%s %.3f" % (h, v) for v, h in steady[:5]),
                                      statistics.median(v for v, _h in steady), "%s %.3f" % steady[-1][::-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
