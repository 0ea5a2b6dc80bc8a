"""Why one stream of the iperf3 control is slow (issue 15; docs/jobroute.md, "Per-flow rate"):
one round of the bench placement's shift and permutation as concurrent iperf3 streams while a job
holds sdn-optimal's routes for exactly those pairs (bench/jobroute_iperf.py), with what Open
vSwitch, tc and TCP saw.

    flock /tmp/sdnmpi-mininet.lock timeout -s TERM 240 .venv/bin/python bench/rate_probe.py \\
        [--seconds 8] [--idle 8] [--rounds 1] [--variants base,swap,sndbuf,ackclass,ackclass-all] [--sndbuf BYTES]
        [--swap-cores c1,c2] [--rate 5] [--out-dir DIR]

The k=4 fabric of bench/jobroute_rate.py (16 hosts, every link at --rate Mbit/s, D-mod-K default
routes). First an idle interval (lldpd and the controller's LLDP only), then per exchange:
- per stream: the receiver's Mbit/s, the sender's retransmits and RTTs and per-second rates
  (iperf3 -J), and the sender's `ss -tin` mid-run (RTT, cwnd, BBR's estimates);
- its route as installed (walked through every switch's routing table, n_packets per entry);
- before and after: OVS's statistics of every fabric interface, the drops of ovs-vswitchd's
  packet socket on each port (`ss -0 -m`), `tc -s qdisc` of every interface (root namespace and
  hosts), `ovs-appctl coverage/show`, the datapath's pmd counters and the controller's
  packet-ins by kind;
- mid-run and late in the run: the datapath's megaflows (`ovs-appctl dpctl/dump-flows -m`) and
  the packets waiting in each link queue (hosts' and switch ports');
- every 0.1 s: the bytes charged to ovs-vswitchd's send socket (bench/ovs_sendbuf.py).
Each round runs every exchange once per variant (VARIANTS): ``base``; ``swap``: every flow that
sdn-optimal sends through core A goes through core B and the other way round (an override entry
on the flow's source aggregation switch; the cores' default routes take it down), so the routes
stay contention-free and the pairs stay, only the two cores trade places; ``sndbuf``: that socket's
buffer set to --sndbuf bytes (through a duplicate of ovs-vswitchd's descriptor; the old size is
put back right after); ``ackclass``: sndbuf, and pure ACKs skip the data queue of the host's link;
``ackclass-all``: the same on every switch port too. The send buffer and the ACK class are the
bench's emulation choices (bench/emulation.py); the probe's fabric comes up without them, so that
``base`` has Mininet's and OVS's defaults and each variant adds its part.
Outputs bench/results/rate-probe-<timestamp>/: results.json (the per-stream and per-hop figures),
probe.md (the tables), raw/ (the texts, gzipped).
"""
import argparse
import datetime
import gzip
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_common import HERE, csv_list, now_s, software_versions, write_json  # noqa: E402
from bench_flows import BENCH_COOKIE, PRIORITY_OVERRIDE, ofctl, wait_datapath_revalidated  # noqa: E402
import bench_jobroute_mininet as jbm  # noqa: E402
import emulation  # noqa: E402
from jobroute_rate import finish, on_bench  # noqa: E402
import jobroute_links  # noqa: E402
import jobroute_report  # noqa: E402
from jobroute_iperf import iperf_streams, job_routes, pattern_pairs  # noqa: E402
import ovs_sendbuf  # noqa: E402
import rate_probe_parse as parse  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/rate_probe.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--seconds", type=int, default=8, help="each stream's length after iperf3's 1-s omitted start")
    p.add_argument("--idle", type=float, default=8.0, help="the idle interval's length, s")
    p.add_argument("--rate", type=float, default=5.0, help="every link's rate, Mbit/s")
    p.add_argument("--variants", default="base",
                   help="how each exchange runs, of: " + "; ".join("%s: %s" % kv for kv in VARIANTS.items()))
    p.add_argument("--swap-cores", default="c1,c2", help="the variant swap's cores A,B")
    p.add_argument("--sndbuf", type=int, default=4 << 20, help="the variants sndbuf and ackclass: the buffer, bytes")
    p.add_argument("--rounds", type=int, default=1, help="rounds, each running every variant of every exchange")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--prefix", default="rp")
    p.add_argument("--mgmt-subnet", default="172.31.0.0/16")
    args = p.parse_args(argv)
    swap = [c for c in args.swap_cores.split(",") if c]
    if len(swap) != 2 or swap[0] == swap[1]:
        p.error("--swap-cores takes two different core names, e.g. c1,c2")
    if args.seconds < 2 or args.idle < 0 or args.rate <= 0 or args.rounds < 1 or args.sndbuf < 4096:
        p.error("--seconds must be >= 2, --idle >= 0, --rate > 0, --rounds >= 1 and --sndbuf >= 4096")
    try:
        args.variants = csv_list(args.variants, VARIANTS)
    except ValueError as exc:
        p.error(str(exc))
    args.swap = swap
    return args


VARIANTS = {"base": "Mininet's and OVS's defaults (the probe's fabric has the bench's emulation choices off)",
            "swap": "every flow sdn-optimal sends through core A goes through core B and the other way round",
            "sndbuf": "ovs-vswitchd's send socket's buffer --sndbuf bytes (put back after the exchange)",
            "ackclass": "sndbuf, and each host's link gives TCP packets under 128 bytes (ACKs) a class of their own "
                        "that HTB serves first (put back after the exchange)",
            "ackclass-all": "ackclass on every link: the hosts' and every switch port's (what the bench now does "
                            "by default: bench/emulation.py)"}


def variant_options(name, args):
    """exchange()'s options for a variant (VARIANTS)."""
    return {"base": {}, "swap": {"cores": args.swap}, "sndbuf": {"sndbuf": args.sndbuf},
            "ackclass": {"sndbuf": args.sndbuf, "ack_class": (args.rate, False)},
            "ackclass-all": {"sndbuf": args.sndbuf, "ack_class": (args.rate, True)}}[name]


def run(argv):
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False).stdout


class Probe:
    """One fabric's readings (bench: a started jobroute RouteBench)."""

    def __init__(self, bench, raw_dir):
        self.bench, self.raw_dir = bench, raw_dir
        topo = bench.topo
        self.ports, self.peers, self.edge_of = parse.link_maps(topo)
        self.hosts, self.prefix = set(topo.host_names), topo.prefix
        self.switches = list(topo.switch_names)
        self.mine = set(bench.fabric.interface_names())
        self.ips = bench.fabric.host_ips()
        self.ovs_pid = ovs_sendbuf.ovs_pid()

    def save_raw(self, name, text):
        with gzip.open(os.path.join(self.raw_dir, name + ".txt.gz"), "wt") as f:
            f.write(text)

    def iface(self, node, neighbour):
        """The interface of ``node`` on its link to ``neighbour``."""
        return "%s-eth%d" % (node, self.ports[node, neighbour])

    def tables(self, tag=None):
        texts = {br: ofctl("dump-flows", br).stdout for br in self.switches}
        if tag:
            self.save_raw("flows-" + tag, "".join("== %s\n%s" % kv for kv in texts.items()))
        return {br: parse.flow_entries(text) for br, text in texts.items()}

    def route(self, tables, src, dst):
        """The installed route of host src -> host dst: {"nodes": [...], "hops": [(switch, out port,
        priority, cookie, n_packets)], "complete": bool}."""
        hops, end = parse.walk(tables, self.peers, self.edge_of["h%d" % src], self.ips["h%d" % src],
                               self.ips["h%d" % dst])
        nodes = ["h%d" % src] + [h[0] for h in hops] + ([end] if end else [])
        return {"nodes": nodes, "complete": end == "h%d" % dst,
                "hops": [(sw, port, e and e["priority"], e and hex(e["cookie"]), e and e["n_packets"])
                         for sw, port, e in hops]}

    def snapshot(self, tag):
        """Every counter the probe compares before and after (numbers only); the texts go to raw/."""
        vsctl = run(["ovs-vsctl", "--format=json", "--columns=name,statistics", "list", "Interface"])
        ss0 = run(["ss", "-0", "-m", "-p"])
        tc_root = run(["tc", "-s", "qdisc", "show"])
        tc_hosts = {h.name: h.cmd("tc -s qdisc show") for h in self.bench.fabric.hosts}
        cov = run(["ovs-appctl", "coverage/show"])
        pmd = run(["ovs-appctl", "dpif-netdev/pmd-stats-show"])
        self.save_raw("counters-" + tag, "\n".join(["== ss -0 -m", ss0, "== tc root", tc_root, "== coverage", cov,
                                                    "== pmd", pmd] + ["== tc %s\n%s" % kv for kv in tc_hosts.items()]))
        qdisc = {d: v for d, v in parse.qdisc_stats(tc_root).items() if d in self.mine}
        for text in tc_hosts.values():
            qdisc.update(parse.qdisc_stats(text))
        try:
            packet_in = self.bench.ctl.rest("/sdnmpi/stats").get("packet_in", {})
        except (OSError, ValueError):
            packet_in = {}
        return {"t": now_s(), "ovs_if": parse.interface_stats(vsctl, self.mine),
                "pkt_sock_drops": parse.packet_socket_drops(ss0, self.mine), "qdisc": qdisc,
                "coverage": parse.coverage_totals(cov), "pmd": jobroute_links.datapath_stats(pmd),
                "packet_in": packet_in}

    def sample(self, tag, senders):
        """Mid-run: the datapath's megaflows and each sender's `ss -tin`."""
        dp = run(["ovs-appctl", "dpctl/dump-flows", "-m"])
        self.save_raw("megaflows-" + tag, dp)
        ss = {}
        from sdnmpi.mininet_topos import procs
        for src in senders:
            ss[src] = run(procs.in_host(self.bench.fabric.host("h%d" % src), ["ss", "-tin"]))
        self.save_raw("ss-" + tag, "".join("== h%s\n%s" % kv for kv in ss.items()))
        backlog = {}
        for host in self.bench.fabric.hosts:
            dev = "%s-eth0" % host.name
            text = run(procs.in_host(host, ["tc", "-s", "qdisc", "show", "dev", dev]))
            backlog[dev] = parse.qdisc_stats(text, dev).get(dev, {}).get("backlog_pkts")
        switch_q = parse.qdisc_stats(run(["tc", "-s", "qdisc", "show"]))
        backlog.update({d: q.get("backlog_pkts") for d, q in switch_q.items()
                        if d in self.mine and q.get("backlog_pkts")})
        return {"megaflows": dp, "ss": {src: parse.ss_tcp(text) for src, text in ss.items()}, "backlog": backlog}

    def link_rates(self):
        """{interface: its HTB class's rate} of every fabric interface (switch ports and hosts')."""
        texts = {dev: run(["tc", "class", "show", "dev", dev]) for dev in sorted(self.mine) if "-eth" in dev}
        texts.update({h.name + "-eth0": h.cmd("tc class show dev %s-eth0" % h.name) for h in self.bench.fabric.hosts})
        return {dev: parse.htb_rate(text) for dev, text in texts.items()}

    def swap_overrides(self, tables, pairs, cores):
        """Override entries that send every flow of ``pairs`` routed through core A through core B
        and the other way round: [(aggregation switch, ovs-ofctl flow)]."""
        a, b = [self.prefix + c for c in cores]
        out = []
        for src, dst in pairs:
            nodes = self.route(tables, src, dst)["nodes"]
            for i, node in enumerate(nodes[1:-1], 1):
                if node in (a, b):
                    agg, other = nodes[i - 1], (b if node == a else a)
                    out.append((agg, "table=%d,cookie=0x%x,priority=%d,ip,nw_src=%s,nw_dst=%s,actions=output:%d" % (
                        parse.ROUTING_TABLE, BENCH_COOKIE, PRIORITY_OVERRIDE, self.ips["h%d" % src],
                        self.ips["h%d" % dst], self.ports[agg, other])))
        return out


def exchange(probe, name, pairs, seconds, tag, cores=None, sndbuf=None, ack_class=None):
    """One exchange's streams and readings (cores: swap them; sndbuf: ovs-vswitchd's send buffer
    for the streams; ack_class: (link rate, on switch ports too), the ACK class on the hosts' links
    or on every rate-limited interface, each at its own rate; see VARIANTS; both through
    bench/emulation.py, put back after)."""
    rec = {"name": name, "tag": tag, "pairs": pairs}
    if ack_class:
        _rate, everywhere = ack_class
        emu = emulation.Emulation(ovs_sndbuf=0, ack_class=True, switch_ports=everywhere)
        emu.apply(probe.bench.rate_limited_interfaces())
        try:
            return exchange(probe, name, pairs, seconds, tag, cores, sndbuf)
        finally:
            emu.restore()
    with job_routes(probe.bench, pairs, "sdn-optimal", probe.bench.ports["rpc"]) as plan:
        rec["plan"] = plan
        touched = set()
        if cores:
            for br, flow in probe.swap_overrides(probe.tables(), pairs, cores):
                out = ofctl("add-flow", br, flow)
                if out.returncode != 0:
                    raise RuntimeError("add-flow %s %s: %s" % (br, flow, out.stdout.strip()))
                touched.add(br)
            rec["overrides"] = len(touched)
            rec["revalidate_s"], _err = wait_datapath_revalidated()
        try:
            samples = {}
            timers = [threading.Timer(at, lambda k=key: samples.__setitem__(k, probe.sample(tag + "-" + k,
                                                                                          [s for s, _ in pairs])))
                      for key, at in (("mid", 1 + seconds / 2.0), ("late", seconds + 0.3))]
            before = probe.snapshot(tag + "-before")
            done, use = False, ovs_sendbuf.UseSampler(probe.ovs_pid)
            buf = emulation.SendBuffer(sndbuf) if sndbuf else None
            try:
                if buf is not None:
                    rec["send_buffer"] = buf.set()
                use.start()
                outputs = iperf_streams(probe.bench, pairs, seconds, on_start=lambda: [t.start() for t in timers])
                done = True
            finally:
                rec["send_buffer_use"] = use.stop()
                if buf is not None:
                    buf.restore()
                for t in timers:
                    if not done:
                        t.cancel()
                    if t.ident is not None:
                        t.join()
            after = probe.snapshot(tag + "-after")
            wait_datapath_revalidated()              # the datapath's last counts pushed to the entries
            tables = probe.tables(tag)
        finally:
            for br in touched:
                ofctl("del-flows", br, "cookie=0x%x/-1" % BENCH_COOKIE)
    probe.save_raw("iperf-" + tag, json.dumps(outputs))
    rec["counters"] = jobroute_links.counter_delta(before, after)
    rec["streams"] = []
    link_flows = {}
    for k, (src, dst) in enumerate(pairs):
        s = parse.iperf_stream(outputs[k])
        route = probe.route(tables, src, dst)
        for u, v in zip(route["nodes"], route["nodes"][1:]):
            link_flows[u, v] = link_flows.get((u, v), 0) + 1
        s.update(pair=[src, dst], route=route, ss_mid=samples.get("mid", {}).get("ss", {}).get(src, {}))
        late = samples.get("late", {}).get("megaflows", "")
        s["megaflows_late"] = parse.megaflows(late, probe.ips["h%d" % src], probe.ips["h%d" % dst])
        rec["streams"].append(s)
    rec["max_flows_per_link"] = max(link_flows.values(), default=0)
    rec["backlog_mid"] = samples.get("mid", {}).get("backlog")
    rec["userspace_megaflows_late"] = [m for m in parse.megaflows(samples.get("late", {}).get("megaflows", ""))
                                       if "userspace" in m["actions"]]
    return rec


def path_counters(probe, rec, stream):
    """Per hop of a stream's installed route: the OVS, packet-socket, qdisc and device drop counts of
    the interfaces on both ends of each link, from the exchange's counter deltas."""
    c = rec["counters"]
    rows = []
    nodes = stream["route"]["nodes"]
    for u, v in zip(nodes, nodes[1:]):
        for node, peer in ((u, v), (v, u)):
            dev = "%s-eth0" % node if node in probe.hosts else probe.iface(node, peer)
            st = (c["ovs_if"] or {}).get(dev) or {}
            rows.append({"link": "%s>%s" % (u, v), "dev": dev,
                         "ovs": {k: st.get(k) for k in ("rx_packets", "tx_packets", "rx_dropped", "tx_dropped",
                                                         "rx_errors", "tx_errors") if st.get(k) is not None},
                         "pkt_sock_drops": (c["pkt_sock_drops"] or {}).get(dev),
                         "qdisc": (c["qdisc"] or {}).get(dev)})
    return rows


def summary(probe, rec):
    """The exchange's streams slowest first, and the slowest one's path counters."""
    streams = sorted(rec["streams"], key=lambda s: s.get("mbit", 0))
    rec["slowest"] = {"pair": streams[0]["pair"], "path": path_counters(probe, rec, streams[0])} if streams else None
    rec["median_mbit"] = statistics.median(s["mbit"] for s in streams if "mbit" in s) if streams else None
    return rec


def markdown(results):
    lines = []
    for rec in results["exchanges"]:
        lines += ["", "### %s (plan: %s; max flows on a link, installed: %s)" % (rec["tag"], rec["plan"],
                                                                              rec["max_flows_per_link"]), "",
                  "| pair | route (installed) | its entries' n_packets | Mbit/s | retrans | RTT min/mean/max ms | "
                  "ss mid: rtt ms, BBR bw Mbit/s, delivery Mbit/s | megaflows late (in_port:packets) |",
                  "|---|---|---|---|---|---|---|---|"]
        for s in sorted(rec["streams"], key=lambda s: s.get("mbit", 0)):
            ss = s["ss_mid"]
            lines.append("| h%d>h%d | %s%s | %s | %.2f | %s | %s | %s | %s |" % (
                s["pair"][0], s["pair"][1], "-".join(n.replace(results["prefix"], "") for n in s["route"]["nodes"]),
                "" if s["route"]["complete"] else " (INCOMPLETE)", "/".join(str(h[4]) for h in s["route"]["hops"]),
                s.get("mbit", float("nan")), s.get("retransmits"),
                "/".join("%.0f" % s[k] for k in ("min_rtt_ms", "mean_rtt_ms", "max_rtt_ms") if k in s),
                "%s, %s, %s" % (ss.get("rtt_ms"), _mbit(ss.get("bbr_bw")), _mbit(ss.get("delivery_rate"))),
                ", ".join("%s:%d" % (m["in_port"].replace(results["prefix"], ""), m["packets"])
                          for m in s["megaflows_late"]) or "-"))
        c = rec["counters"]
        lines += ["", "ovs-vswitchd's send buffer: %s; its use during the streams: %s" % (
            rec.get("send_buffer", "unchanged"), rec.get("send_buffer_use")),
                  "packets queued mid-run (hosts' links; switch ports with any): %s" % (
                      " ".join("%s:%s" % (d.replace(results["prefix"], ""), n)
                               for d, n in sorted((rec.get("backlog_mid") or {}).items(),
                                                  key=lambda kv: -(kv[1] or 0)))),
                  "coverage (nonzero deltas): %s" % {k: v for k, v in (c["coverage"] or {}).items() if v},
                  "packet-ins: %s; pmd: %s" % (c["packet_in"], c["pmd"]),
                  "megaflows with a userspace action (late): %d, packets %d" % (
                      len(rec["userspace_megaflows_late"]), sum(m["packets"] for m in rec["userspace_megaflows_late"])),
                  "packet-socket drops (nonzero): %s" % {d: n for d, n in (c["pkt_sock_drops"] or {}).items() if n},
                  "qdisc drops (nonzero): %s" % {d: q["dropped"] for d, q in (c["qdisc"] or {}).items()
                                                 if q and q.get("dropped")}]
        if rec.get("slowest"):
            lines += ["", "slowest h%d>h%d, per interface on its path (deltas):" % tuple(rec["slowest"]["pair"]), "",
                      "| link | interface | OVS rx/tx packets, rx/tx dropped | packet socket drops | "
                      "qdisc sent, dropped,"
                      " overlimits |", "|---|---|---|---|---|"]
            for row in rec["slowest"]["path"]:
                o, q = row["ovs"], row["qdisc"] or {}
                lines.append("| %s | %s | %s/%s, %s/%s | %s | %s, %s, %s |" % (
                    row["link"], row["dev"], o.get("rx_packets"), o.get("tx_packets"), o.get("rx_dropped"),
                    o.get("tx_dropped"), row["pkt_sock_drops"], q.get("sent_pkts"), q.get("dropped"),
                    q.get("overlimits")))
    if results.get("link_rates"):
        lines.insert(0, "HTB rates of the fabric's interfaces: %s" % {
            r: len(devs) for r, devs in results["link_rates"].items()})
    idle = results.get("idle")
    if idle:
        lines = ["idle %.1f s: coverage (nonzero): %s; packet-ins: %s" % (
            idle["seconds"], {k: v for k, v in (idle["coverage"] or {}).items() if v}, idle["packet_in"])] + lines
    return "\n".join(lines) + "\n"


def _mbit(value):
    return "-" if value is None else "%.2f" % (value / 1e6)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if os.geteuid() != 0:
        print("bench/rate_probe.py needs root (Mininet, Open vSwitch)", file=sys.stderr)
        return 2
    from sdnmpi.mininet_topos.net import ensure_ovs
    ensure_ovs()
    out_dir = os.path.join(args.out_dir, "rate-probe-%s" % datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(os.path.join(out_dir, "raw"))
    os.makedirs(os.path.join(out_dir, "logs"))
    # the variants set the emulation choices per exchange: the fabric comes up without them
    bargs = argparse.Namespace(prefix=args.prefix, mgmt_subnet=args.mgmt_subnet, k4_bw=args.rate, seed=7,
                               ovs_sndbuf=0, ack_class=False)
    spec = jbm.fabric_spec("k4", bargs)
    n, placement = spec["hosts"], spec["placement"]
    results = {"command": [sys.executable] + sys.argv, "software": software_versions(), "rate": args.rate,
               "seconds": args.seconds, "prefix": args.prefix, "placement": placement, "exchanges": [], "failed": None}

    def probe_all(bench):
        probe = Probe(bench, os.path.join(out_dir, "raw"))
        rates = probe.link_rates()
        results["link_rates"] = {r: sorted(d for d, v in rates.items() if v == r) for r in set(rates.values())}
        if args.idle:
            t0 = probe.snapshot("idle-before")
            time.sleep(args.idle)                  # nothing to wait for: the idle interval itself
            results["idle"] = dict(jobroute_links.counter_delta(t0, probe.snapshot("idle-after")), seconds=args.idle)
        exchanges = (("shift", pattern_pairs(placement, shift=spec["shift"])),
                     ("perm", pattern_pairs(placement, perm=jobroute_report.pattern_perm(spec["perm"], n))))
        runs = [(rnd, v, e) for rnd in range(1, args.rounds + 1) for v in args.variants for e in exchanges]
        for rnd, variant, (name, pairs) in runs:
            tag = "%s-%s-r%d" % (name, variant, rnd)
            rec = summary(probe, exchange(probe, name, pairs, args.seconds, tag, **variant_options(variant, args)))
            results["exchanges"].append(rec)
            write_json(os.path.join(out_dir, "results.json"), results)
            print("%s: slowest %s, median %.2f Mbit/s" % (rec["tag"], rec["slowest"]["pair"], rec["median_mbit"]),
                  flush=True)
    on_bench(spec, bargs, os.path.join(out_dir, "logs"), results, probe_all)
    return finish(out_dir, results, markdown(results), "probe.md")


if __name__ == "__main__":
    sys.exit(main())
