"""Where the per-flow goal's limit lies (issue 15: "every flow of a random permutation and of a
shift at >= 90 % of the host-link rate under SDN-optimal", k=4 fat-tree): the same shift and
permutation at several link rates, with MPI and with iperf3 as a control.

    .venv/bin/python bench/jobroute_rate.py [--fabric k4|leafspine] [--rates 2,5,10,20] [--rounds 2]
        [--seconds 3] [--kinds K,...] [--links] [--shift-only]

One fabric of the job-routing bench (k4: 16 hosts, every link at the rate; leafspine: 8 hosts,
host links at twice the rate, leaf-spine links at the rate), one controller (D-mod-K default
routes). The pattern program (phase 1 a shift, phase 2 the bench's permutation) is profiled once
per placement that needs a trace. Then per rate (every link's HTB class changed in place) and
round, the kinds chosen (``--kinds``, default all):

- ``mpi-sdn-optimal``: the program with its trace under sdn-optimal, the bench's placement and
  shift (what bench_jobroute_mininet.py measures);
- ``mpi-sdn-optimal-host-order``: the same with ranks in host order and CONTROL_SHIFT (its own
  trace): the same hosts, pairs and program as the next one, so only the routes differ;
- ``mpi-dmodk-host-order``: ranks in host order, CONTROL_SHIFT, D-mod-K (every flow between
  leaves, contention-free too by the model), no traffic routes;
- ``iperf3-dmodk-host-order``: the same flows (host i -> host i+shift) as iperf3 TCP streams at
  once, no MPI;
- ``iperf3-single``: one of them alone (the best one TCP flow gets at that rate).

Per flow: payload bits per second / the rate (the slowest link on an inter-leaf path). MPI: bytes
x reps / the slowest rank's exchange time; iperf3: each receiver's rate (min and median over the
flows). Also the CPU busy share of the whole machine (both cores, /proc/stat) during each
measurement, other sessions included. ``--links``: what the wire saw during each MPI run
(bench/jobroute_links.py; a pause after the shift splits the exchanges): the busiest switch link
in flows, each host's first and last bytes, restart gaps, TCP retransmissions and drops; the
timelines go to timelines/. ``--shift-only``: the MPI runs do the shift alone.
Outputs bench/results/jobroute-rate-<fabric>-<timestamp>/results.json and results.md.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_common import HERE, csv_list, now_s, software_versions, write_json  # noqa: E402
import bench_jobroute_mininet as jbm  # noqa: E402
import jobroute_links  # noqa: E402
import jobroute_report  # noqa: E402

PORT0 = 5401
# The control's shift with ranks in host order: every flow between leaves, and D-mod-K
# contention-free (max 1 flow per switch link; tests/unit/test_jobroute_bench.py checks both).
CONTROL_SHIFT = {"k4": 9, "leafspine": 2}
KINDS = ("mpi-sdn-optimal", "mpi-sdn-optimal-host-order", "mpi-dmodk-host-order", "iperf3-dmodk-host-order",
         "iperf3-single")
HOST_TCP_SYSCTLS = ("net.ipv4.tcp_congestion_control", "net.ipv4.tcp_limit_output_bytes",
                    "net.ipv4.tcp_slow_start_after_idle", "net.core.default_qdisc")
PAUSE_MS = 1500           # --links: the quiet gap between the exchanges that splits the timeline


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/jobroute_rate.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--fabric", default="k4", choices=("k4", "leafspine"))
    p.add_argument("--rates", default="2,5,10,20", help="rates, Mbit/s (leafspine: of its leaf-spine links)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--seconds", type=float, default=3.0,
                   help="each exchange's length at line rate (its bytes scale with the rate)")
    p.add_argument("--kinds", default=",".join(KINDS), help="the measurements, of " + ", ".join(KINDS))
    p.add_argument("--links", action="store_true",
                   help="sample every link's counters during the MPI runs (jobroute_links.py; a %d ms pause "
                        "after the shift splits the exchanges): bytes per switch link, arrival per host" % PAUSE_MS)
    p.add_argument("--shift-only", action="store_true",
                   help="the MPI runs do the shift alone (phase 1), so each run's counters are the shift's")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--prefix", default="jt")
    p.add_argument("--mgmt-subnet", default="172.31.0.0/16")
    args = p.parse_args(argv)
    try:
        args.rates = [float(r) for r in csv_list(args.rates)]
        args.kinds = csv_list(args.kinds, KINDS)
    except ValueError as exc:
        p.error(str(exc))
    if args.rounds < 1 or any(r <= 0 for r in args.rates):
        p.error("--rounds and every rate must be > 0")
    return args


OVS_PIDFILE = "/var/run/openvswitch/ovs-vswitchd.pid"


def cpu_times():
    """(machine ticks, idle ticks, ovs-vswitchd's ticks or None, wall seconds)."""
    with open("/proc/stat") as f:
        vals = [int(v) for v in f.readline().split()[1:]]
    try:
        with open(OVS_PIDFILE) as f:
            pid = int(f.read().strip())
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ovs = int(fields[11]) + int(fields[12])      # utime + stime
    except (OSError, ValueError, IndexError):
        ovs = None
    return sum(vals), vals[3] + vals[4], ovs, now_s()


def busy_share(before, after):
    """The machine's busy share (both cores) between two cpu_times()."""
    total, idle = after[0] - before[0], after[1] - before[1]
    return 1.0 - idle / total if total > 0 else None


def ovs_cores(before, after):
    """ovs-vswitchd's CPU use between two cpu_times(), in cores (1.0 = one core all the time)."""
    if before[2] is None or after[2] is None or after[3] <= before[3]:
        return None
    return (after[2] - before[2]) / os.sysconf("SC_CLK_TCK") / (after[3] - before[3])


def set_rate(bench, mbit):
    """Every rate-limited fabric interface's HTB class (Mininet's 5:1) to ``mbit``, the host links'
    to ``mbit`` x the fabric's host/fabric rate ratio."""
    from mininet.node import Host
    host_factor = bench.spec["host_bw"] / bench.spec["fabric_bw"]
    changed = 0
    for link in bench.fabric.net.links:
        rate = mbit * (host_factor if isinstance(link.intf1.node, Host) or isinstance(link.intf2.node, Host) else 1)
        for intf in (link.intf1, link.intf2):
            if intf.params.get("bw") is None:
                continue
            out = intf.cmd("tc class change dev %s parent 5:0 classid 5:1 htb rate %fMbit burst 15k"
                           % (intf.name, rate))
            # tc warns 'sch_htb: quantum of class 50001 is big' at high rates (harmless, as at start-up)
            errors = [ln for ln in out.splitlines() if ln.strip() and not ln.startswith("Warning: sch_htb: quantum")]
            if errors:
                raise RuntimeError("tc on %s: %s" % (intf.name, " ".join(errors)))
            changed += 1
    return changed


def pattern_run(bench, placement, steps, env, lib, timeout=300):
    bench.spec["placement"] = placement
    wdir = tempfile.mkdtemp(prefix="jr-rate-", dir=bench.fabric.tmpdir)
    try:
        rc, out, wall, _stopped = bench.mpirun([jbm.PATTERNS, "--reps", 2] + steps, env, lib, timeout, wdir=wdir)
    finally:
        shutil.rmtree(wdir, ignore_errors=True)
    return rc, out, wall


def iperf_flows(bench, pairs, seconds):
    """TCP streams ``pairs`` [(src host number, dst host number)] at once; receiver Mbit/s each."""
    from sdnmpi.mininet_topos import procs
    from sdnmpi.mininet_topos.demo import _wait_listening
    net, ips = bench.fabric, bench.fabric.host_ips()
    servers, clients, got = [], [], []
    try:
        for k, (_src, dst) in enumerate(pairs):
            host = net.host("h%d" % dst)
            servers.append(procs.popen_in_host(host, ["iperf3", "-s", "-1", "-p", PORT0 + k]))
            _wait_listening(host, PORT0 + k)
        for k, (src, dst) in enumerate(pairs):
            argv = procs.in_host(net.host("h%d" % src), ["iperf3", "-c", ips["h%d" % dst], "-p", PORT0 + k,
                                                         "-t", seconds, "-O", 1, "-J"])
            clients.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, universal_newlines=True,
                                            start_new_session=True))
        for client in clients:
            out, _ = client.communicate(timeout=seconds + 30)
            try:
                got.append(json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e6)
            except (ValueError, KeyError, TypeError):
                got.append(None)
    finally:
        procs.terminate(clients + servers, timeout=2)
    return got


def measure(bench, rate, traces, args, log_dir=None):
    """One round at ``rate``: {kind: {"shift"/"perm"/"flows": share of the link, "cpu_busy", ...}}.
    ``traces``: {"bench": the bench placement's trace, "host-order": the host order's}."""
    nbytes = int(rate * 1e6 / 8 * args.seconds / 2)          # 2 reps per exchange
    out = {}
    env = {"SDN_MPI_CONTROLLER": "%s:%d" % (bench.fabric.mgmt.root_ip, bench.ports["rpc"]),
           "SDN_MPI_FABRIC_SUBNET": jbm.FABRIC_SUBNET, **jbm.NO_COLLECTIVES}
    n, shift = bench.spec["hosts"], CONTROL_SHIFT[bench.spec["name"]]
    host_order = list(range(1, n + 1))
    optimal = dict(env, SDN_MPI_TRAFFIC_PLANNER="sdn-optimal")
    # Every MPI kind runs the same program: the bench's shift and permutation, each in its phase.
    # mpi-sdn-optimal-host-order and mpi-dmodk-host-order run it on the same hosts (shift 9 in host
    # order: D-mod-K contention-free), so the two differ in the routes only.
    runs = {"mpi-sdn-optimal": (jobroute_report.bench_placement(n), dict(optimal, SDN_MPI_TRAFFIC=traces.get("bench"))),
            "mpi-sdn-optimal-host-order": (host_order, dict(optimal, SDN_MPI_TRAFFIC=traces.get("host-order"))),
            "mpi-dmodk-host-order": (host_order, env)}
    argv = steps(bench.spec, nbytes, shift=shift, pause=args.links, shift_only=args.shift_only)
    for kind in [k for k in args.kinds if k in runs]:
        hosts, run_env = runs[kind]
        if kind == "mpi-sdn-optimal":
            argv_k = steps(bench.spec, nbytes, pause=args.links, shift_only=args.shift_only)
        else:
            argv_k = argv
        sampler = link_sampler(bench) if args.links else None
        w0 = wire_counters(bench) if args.links else None
        c0 = cpu_times()
        if sampler:
            sampler.start()
        try:
            rc, output, wall = pattern_run(bench, hosts, argv_k, run_env, jbm.PRELOAD)
        finally:
            timeline = sampler.stop() if sampler else None
        pats = jbm.parse_patterns(output) if rc == 0 else None
        c1 = cpu_times()
        rec = {"rc": rc, "wall_s": wall, "cpu_busy": busy_share(c0, c1), "ovs_cores": ovs_cores(c0, c1)}
        for name in ("shift", "perm"):
            if pats and name in pats:
                p = pats[name]
                rec[name] = p["bytes"] * p["reps"] * 8 / p["seconds"] / 1e6 / rate
                rec[name + "_s"] = p["seconds"]
        if timeline is not None:
            rec["links"] = link_summary(bench, timeline, nbytes)
            rec["wire"] = wire_delta(w0, wire_counters(bench))
            if log_dir:
                jobroute_links.save(os.path.join(log_dir, "links-%s-%g-%d.json.gz" % (kind, rate, int(now_s()))),
                                    timeline)
        out[kind] = rec
    seconds = max(4, int(round(args.seconds * 2)))
    for kind, pairs in (("iperf3-dmodk-host-order", [(h, (h - 1 + shift) % n + 1) for h in range(1, n + 1)]),
                        ("iperf3-single", [(1, 1 + shift)])):
        if kind not in args.kinds:
            continue
        c0 = cpu_times()
        got = iperf_flows(bench, pairs, seconds)
        c1 = cpu_times()
        ok = [g for g in got if g is not None]
        out[kind] = {"cpu_busy": busy_share(c0, c1), "ovs_cores": ovs_cores(c0, c1), "flows_mbit": got,
                     "min": min(ok) / rate if ok else None, "median": statistics.median(ok) / rate if ok else None}
    return out


def link_sampler(bench):
    from mininet.node import Host
    net = bench.fabric.net
    links = jobroute_links.directed_links([(ln.intf1, ln.intf2) for ln in net.links],
                                          lambda node: not isinstance(node, Host) and node.name in bench.topo.switch_names)
    return jobroute_links.LinkSampler(links, log_path=bench.ctl.log_path)


def wire_counters(bench):
    """TCP retransmissions per host, packets dropped per fabric interface (root qdiscs, both
    sides) and the userspace datapath's cache counters (emc/megaflow hits, upcalls)."""
    out = {"retrans": {}, "drops": {}, "tcp": {}}
    for host in bench.fabric.hosts:
        out["retrans"][host.name] = jobroute_links.tcp_retrans(host.cmd("cat /proc/net/snmp"))
        out["drops"].update(jobroute_links.qdisc_drops(host.cmd("tc -s qdisc show")))
        for name, n in jobroute_links.tcp_ext(host.cmd("cat /proc/net/netstat")).items():
            out["tcp"][name] = out["tcp"].get(name, 0) + n
    tc = subprocess.run(["tc", "-s", "qdisc", "show"], capture_output=True, text=True, check=False).stdout
    mine = set(bench.fabric.interface_names())
    out["drops"].update({dev: n for dev, n in jobroute_links.qdisc_drops(tc).items() if dev in mine})
    dp = subprocess.run(["ovs-appctl", "dpif-netdev/pmd-stats-show"], capture_output=True, text=True, check=False)
    out["datapath"] = jobroute_links.datapath_stats(dp.stdout)
    cov = subprocess.run(["ovs-appctl", "coverage/show"], capture_output=True, text=True, check=False)
    out["ovs_drops"] = jobroute_links.coverage_drops(cov.stdout)
    devs = jobroute_links.dev_drops()
    out["dev_drops"] = {dev: sum(devs[dev]) for dev in mine if dev in devs}
    return out


def wire_delta(before, after):
    """The run's TCP retransmissions (total and per host that had any), drops (per interface
    that had any) and datapath counters."""
    d = jobroute_links.counter_delta(before, after)
    retrans = {h: n for h, n in d["retrans"].items() if n}
    drops = {dev: n for dev, n in d["drops"].items() if n}
    dev = {k: n for k, n in d["dev_drops"].items() if n}
    return {"retrans_total": sum(retrans.values()), "retrans": retrans, "drops_total": sum(drops.values()),
            "drops": drops, "datapath": d["datapath"], "tcp": d["tcp"],
            "ovs_drops": {k: n for k, n in d["ovs_drops"].items() if n}, "dev_drops": dev}


def link_summary(bench, timeline, nbytes):
    """jobroute_links.summary with one flow = one exchange's bytes (2 reps) on the wire."""
    return jobroute_links.summary(timeline, set(bench.topo.host_names), set(bench.topo.switch_names),
                                  2 * nbytes / jobroute_links.FRAME_PAYLOAD)


def steps(spec, nbytes, shift=None, pause=False, shift_only=False):
    """The pattern program's steps: phase 1 the bench's shift (or ``shift``), phase 2 its
    permutation (not with ``shift_only``); ``pause``: PAUSE_MS of computing after the shift,
    still in phase 1."""
    gap = ["pause", PAUSE_MS] if pause and not shift_only else []
    perm = [] if shift_only else ["phase", 2, "perm", spec["perm"], nbytes]
    return ["phase", 1, "shift", spec["shift"] if shift is None else shift, nbytes] + gap + perm + ["phase", 0]


def markdown(results):
    lines = ["| Mbit/s | MPI sdn-optimal shift / perm | MPI sdn-optimal host order shift | MPI D-mod-K host order shift | "
             "iperf3 all flows min / median | iperf3 one flow | CPU busy (MPI sdn-optimal, iperf3 all) | "
             "ovs-vswitchd cores (MPI sdn-optimal, iperf3 all) |",
             "|---|---|---|---|---|---|---|---|"]

    def pct(v):
        return "-" if v is None else "%.0f%%" % (100 * v)

    def cores(v):
        return "-" if v is None else "%.2f" % v

    for rate, rounds in sorted(results["rates"].items(), key=lambda kv: float(kv[0])):
        def med(kind, key):
            vals = [r[kind][key] for r in rounds if r.get(kind, {}).get(key) is not None]
            return statistics.median(vals) if vals else None
        lines.append("| %s | %s / %s | %s | %s | %s / %s | %s | %s, %s | %s, %s |" % (
            rate, pct(med("mpi-sdn-optimal", "shift")), pct(med("mpi-sdn-optimal", "perm")),
            pct(med("mpi-sdn-optimal-host-order", "shift")),
            pct(med("mpi-dmodk-host-order", "shift")), pct(med("iperf3-dmodk-host-order", "min")),
            pct(med("iperf3-dmodk-host-order", "median")), pct(med("iperf3-single", "median")),
            pct(med("mpi-sdn-optimal", "cpu_busy")), pct(med("iperf3-dmodk-host-order", "cpu_busy")),
            cores(med("mpi-sdn-optimal", "ovs_cores")), cores(med("iperf3-dmodk-host-order", "ovs_cores"))))
    done = ", ".join("%s: %d" % (rate, len(rounds)) for rate, rounds in results["rates"].items())
    text = "\n".join(lines) + "\n\n%s: medians of the rounds measured (Mbit/s: rounds %s); %% of the rate " \
        "(payload); %g s per exchange at line rate.\n" % (results.get("fabric", "k4"), done, results["seconds"])
    return text + links_markdown(results)


def links_markdown(results):
    """Per MPI run sampled (--links): each exchange's busiest switch link (in flows) and when the
    receiving hosts got their first and last bytes (seconds from the exchange's first bytes)."""
    rows = []
    for rate, rounds in sorted(results["rates"].items(), key=lambda kv: float(kv[0])):
        for rnd, rec in enumerate(rounds, 1):
            for kind in KINDS:
                links = rec.get(kind, {}).get("links")
                if not links:
                    continue
                for name, ex in zip(("shift", "perm"), links["exchanges"]):
                    rows.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
                        rate, rnd, kind, name, "-" if ex["max_link_flows"] is None else "%.2f" % ex["max_link_flows"],
                        ", ".join("%s %.2f" % kv for kv in ex["links_over_1_2"].items()) or "-",
                        "%.1f-%.1f" % tuple(ex["host_start_s"]) if ex["host_start_s"] else "-",
                        "%.1f-%.1f" % tuple(ex["host_done_s"]) if ex["host_done_s"] else "-"))
    if not rows:
        return ""
    return ("\n| Mbit/s | round | kind | exchange | max flows on a switch link | links > 1.2 flows | "
            "hosts' first bytes (s) | hosts 98 % done (s) |\n|---|---|---|---|---|---|---|---|\n"
            + "\n".join(rows) + "\n")


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if os.geteuid() != 0:
        print("bench/jobroute_rate.py needs root (Mininet, Open vSwitch)", file=sys.stderr)
        return 2
    for path in (jbm.PATTERNS, jbm.PRELOAD, jbm.PROF):
        if not os.access(path, os.X_OK if path == jbm.PATTERNS else os.R_OK):
            print("bench/jobroute_rate.py: %s is not built (make -C libsdnmpi all tests/traffic_patterns)" % path,
                  file=sys.stderr)
            return 2
    from sdnmpi.mininet_topos.net import ensure_ovs
    ensure_ovs()
    out_dir = os.path.join(args.out_dir, "jobroute-rate-%s-%s" % (args.fabric,
                                                                  datetime.datetime.now().strftime("%Y%m%d-%H%M%S")))
    os.makedirs(os.path.join(out_dir, "traces"))
    bargs = argparse.Namespace(prefix=args.prefix, mgmt_subnet=args.mgmt_subnet, k4_bw=args.rates[0], seed=7)
    spec = jbm.fabric_spec(args.fabric, bargs)
    if args.fabric != "k4":   # start at the first rate, the fabric's host/fabric ratio kept
        spec["host_bw"], spec["fabric_bw"] = args.rates[0] * spec["host_bw"] / spec["fabric_bw"], args.rates[0]
    results = {"command": [sys.executable] + sys.argv, "software": software_versions(), "rounds": args.rounds,
               "fabric": args.fabric, "seconds": args.seconds, "shift": spec["shift"], "perm": spec["perm"],
               "placement": spec["placement"], "rates": {}, "failed": None}
    os.makedirs(os.path.join(out_dir, "logs"))
    if args.links:
        os.makedirs(os.path.join(out_dir, "timelines"))
    bench = jbm.RouteBench(spec, bargs, os.path.join(out_dir, "logs"))   # controller, lldpd, Mininet logs
    t0 = now_s()
    try:
        bench.start_controller("dmodk")
        bench.start_fabric()
        bench.wait_ready(180)
        h1 = bench.fabric.hosts[0]     # the hosts' TCP settings (their namespaces' sysctls)
        results["host_tcp"] = {key: h1.cmd("sysctl -n " + key).strip() for key in HOST_TCP_SYSCTLS}
        traces = profile(bench, spec, args, out_dir)
        for rnd in range(args.rounds):
            for rate in (args.rates if rnd % 2 == 0 else args.rates[::-1]):
                results["rates"].setdefault(str(rate), []).append(
                    dict(measure_at(bench, rate, traces, args, os.path.join(out_dir, "timelines"))))
                write_json(os.path.join(out_dir, "results.json"), results)
                print("round %d, %g Mbit/s: %s" % (rnd + 1, rate, json.dumps(results["rates"][str(rate)][-1])),
                      flush=True)
    except (Exception, KeyboardInterrupt) as exc:  # pylint: disable=broad-except
        results["failed"] = "%s: %s" % (type(exc).__name__, exc)
        print("FAILED: %s" % results["failed"], flush=True)
    finally:
        bench.stop_controller()
        bench.stop_fabric()
    results["wall_s"] = now_s() - t0
    write_json(os.path.join(out_dir, "results.json"), results)
    text = markdown(results)
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(text)
    print(text + "results: %s" % out_dir)
    return 1 if results["failed"] else 0


def profile(bench, spec, args, out_dir):
    """{"bench": trace of the bench's placement, "host-order": of the host order}, those the kinds
    need: the pattern program profiled once each at the first rate (bytes per rank pair do not
    depend on the rate)."""
    n = spec["hosts"]
    nbytes = int(args.rates[0] * 1e6 / 8 * args.seconds / 2)
    wanted = {"bench": (jobroute_report.bench_placement(n), steps(spec, nbytes), "mpi-sdn-optimal"),
              "host-order": (list(range(1, n + 1)), steps(spec, nbytes, shift=CONTROL_SHIFT[spec["name"]]),
                             "mpi-sdn-optimal-host-order")}
    traces = {}
    for name, (hosts, argv, kind) in wanted.items():
        if kind not in args.kinds:
            continue
        env = {"SDN_MPI_PROF_DIR": os.path.join(out_dir, "traces"), "SDN_MPI_PROF_JOB": name,
               "SDN_MPI_PROF_SOURCE": "pmpi"}
        rc, out, _wall = pattern_run(bench, hosts, argv, env, jbm.PROF)
        traces[name] = os.path.join(out_dir, "traces", name + ".tar.gz")
        if rc != 0 or not os.path.isfile(traces[name]):
            tail = out.strip().splitlines()[-1:] if out else []
            raise RuntimeError("profiling %s failed (rc %s): %s" % (name, rc, " ".join(tail)))
    for name in os.listdir(os.path.join(out_dir, "traces")):
        if name.startswith("oxton-result"):
            os.unlink(os.path.join(out_dir, "traces", name))
    return traces


def measure_at(bench, rate, traces, args, log_dir=None):
    n = set_rate(bench, rate)
    rec = measure(bench, rate, traces, args, log_dir)
    rec["interfaces_changed"] = n
    return rec


if __name__ == "__main__":
    sys.exit(main())
