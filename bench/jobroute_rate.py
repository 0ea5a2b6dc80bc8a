"""Where the per-flow goal's limit lies (issue 15: "every flow of a random permutation and of a
shift at >= 90 % of the host-link rate under SDN-optimal", k=4 fat-tree): the same shift and
permutation at several link rates, with MPI and with iperf3 as a control.

    .venv/bin/python bench/jobroute_rate.py [--fabric k4|leafspine] [--rates 2,5,10,20] [--rounds 2]
        [--seconds 3] [--kinds K,...] [--waits spin[,sleep]] [--sleep-us 1000] [--windows 1[,4]] [--links]
        [--shift-only]

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
- ``mpi-dmodk``: the bench's placement and program under D-mod-K, no traffic routes (where it
  collides: the baseline of the bench's ratios);
- ``iperf3-sdn-optimal``: the bench placement's shift pairs, then its permutation's, as iperf3
  TCP streams at once while a job holds sdn-optimal's routes for exactly those pairs (installed over
  the controller's RPC, bench/jobroute_iperf.py): the routes and placement of ``mpi-sdn-optimal``
  without MPI;
- ``iperf3-dmodk``: the same pairs and placement on the controller's D-mod-K routes (no job; the
  permutation collides there);
- ``iperf3-dmodk-host-order``: the same flows as ``mpi-dmodk-host-order`` (host i -> host
  i+shift) as iperf3 TCP streams at once, no MPI;
- ``iperf3-single``: one of them alone (the best one TCP flow gets at that rate).

Per flow: payload bits per second / the rate (the slowest link on an inter-leaf path). MPI: bytes
x reps / the slowest rank's exchange time; iperf3: each receiver's rate (min and median over the
flows). Also the CPU busy share of the whole machine (both cores, /proc/stat) during each
measurement, other sessions included. ``--links``: what the wire saw during each MPI run
(bench/jobroute_links.py; a pause after the shift splits the exchanges): the busiest switch link
in flows, each host's first and last bytes, restart gaps, TCP retransmissions and drops; the
timelines go to timelines/. ``--shift-only``: the MPI runs do the shift alone. ``--waits``: each
MPI kind runs once per wait mode: ``spin`` (the program's MPI_Waitall/MPI_Barrier, in which Open
MPI polls) and ``sleep`` (``traffic_patterns --wait-sleep US``: test and nanosleep, results under
KIND+sleep); the ranks' CPU seconds (least, most) are recorded too.
The fabric carries the bench's emulation choices (bench/emulation.py: ovs-vswitchd's send buffer,
ACKs first on every rate-limited interface; on by default, ``--ovs-sndbuf 0 --ack-class off``
for Mininet's and OVS's defaults), recorded in results.json's ``emulation``.
Outputs bench/results/jobroute-rate-<fabric>-<timestamp>/results.json and results.md.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_cli import parse_mca  # noqa: E402
from bench_common import HERE, csv_list, now_s, software_versions, write_json  # noqa: E402
import bench_jobroute_mininet as jbm  # noqa: E402
from jobroute_iperf import iperf_flows, iperf_with_routes, pattern_pairs  # noqa: E402
import emulation  # noqa: E402
import jobroute_links  # noqa: E402
import jobroute_report  # noqa: E402
from jobroute_rate_md import KINDS, markdown  # noqa: E402
import mpi_transport  # noqa: E402
from ovs_sendbuf import OVS_PIDFILE  # noqa: E402

# The control's shift with ranks in host order: every flow between leaves, and D-mod-K
# contention-free (max 1 flow per switch link; tests/unit/test_jobroute_bench.py checks both).
CONTROL_SHIFT = {"k4": 9, "leafspine": 2}
WAITS = ("spin", "sleep")
CPU_LINE = re.compile(r"^traffic_patterns: ranks=\d+ ok seconds=[\d.]+ cpu_min=(?P<lo>[\d.]+) cpu_max=(?P<hi>[\d.]+)",
                      re.M)
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
    p.add_argument("--waits", default="spin",
                   help="the MPI kinds' wait modes, of spin (MPI_Waitall: Open MPI polls), sleep "
                        "(traffic_patterns --wait-sleep: results under KIND+sleep)")
    p.add_argument("--sleep-us", type=int, default=1000, help="--waits sleep: the nanosleep between tests, us")
    p.add_argument("--windows", default=str(jbm.WINDOW),
                   help="the MPI kinds' traffic_patterns --window values (messages in flight per peer; each "
                        "MPI kind runs once per value, results under KIND+wN for N != 1)")
    p.add_argument("--shift-only", action="store_true",
                   help="the MPI runs do the shift alone (phase 1), so each run's counters are the shift's")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--prefix", default="jt")
    p.add_argument("--mgmt-subnet", default="172.31.0.0/16")
    p.add_argument("--ompi-mca", action="append", default=[], metavar="NAME=VALUE",
                   help="an extra Open MPI MCA parameter for every mpirun (repeatable; recorded), e.g. "
                        "btl_tcp_eager_limit=4194304")
    p.add_argument("--mca-variant", action="append", default=[], metavar="NAME:K=V[,K=V]",
                   help="repeatable: every MPI kind runs once per variant in each round (interleaved), with "
                        "these MCA parameters on top of --ompi-mca, results under KIND+NAME (bench/mpi_transport.py)")
    emulation.add_arguments(p)
    mpi_transport.add_arguments(p)
    args = p.parse_args(argv)
    try:
        args.mca = parse_mca(args.ompi_mca)
        args.variants = mpi_transport.parse_variants(args.mca_variant, base=args.mca)
        args.rates = [float(r) for r in csv_list(args.rates)]
        args.kinds = csv_list(args.kinds, KINDS)
        args.waits = csv_list(args.waits, WAITS)
        args.windows = [int(w) for w in csv_list(args.windows)]
    except ValueError as exc:
        p.error(str(exc))
    if args.rounds < 1 or any(r <= 0 for r in args.rates):
        p.error("--rounds and every rate must be > 0")
    if not 1 <= args.sleep_us <= 1000000:
        p.error("--sleep-us must be 1..1000000")
    if not all(1 <= w <= jbm.MAX_WINDOW for w in args.windows) or len(set(args.windows)) != len(args.windows):
        p.error("--windows: distinct values 1..%d" % jbm.MAX_WINDOW)
    return args


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
    """Every rate-limited fabric interface's HTB classes (Mininet's 5:1, and the emulation's ACK
    classes where it has them) to ``mbit``, the host links' to ``mbit`` x the fabric's host/fabric
    rate ratio; each interface's params["bw"] follows."""
    from mininet.node import Host
    host_factor = bench.spec["host_bw"] / bench.spec["fabric_bw"]
    changed = 0
    for link in bench.fabric.net.links:
        rate = mbit * (host_factor if isinstance(link.intf1.node, Host) or isinstance(link.intf2.node, Host) else 1)
        for intf in (link.intf1, link.intf2):
            if intf.params.get("bw") is None:
                continue
            emulation.run_tc(intf, emulation.rate_commands(intf.name, rate, bench.emulation.has_ack_class(intf)))
            intf.params["bw"] = rate
            changed += 1
    return changed


def wait_args(wait, sleep_us, window=1):
    """traffic_patterns' options for a wait mode (WAITS) and a window (messages in flight per peer)."""
    return (["--wait-sleep", sleep_us] if wait == "sleep" else []) + (["--window", window] if window != 1 else [])


def run_key(kind, wait, variant="", window=1):
    """The results' key of an MPI kind run with a wait mode, an MCA variant and a window: KIND, then
    +WAIT unless spin, then +wWINDOW unless 1, then +VARIANT if named."""
    return "+".join([kind] + ([wait] if wait != "spin" else []) + (["w%d" % window] if window != 1 else [])
                    + ([variant] if variant else []))


def rank_cpu(output):
    """(least, most) CPU seconds of a rank, from the program's final line, or (None, None)."""
    m = CPU_LINE.search(output or "")
    return (float(m["lo"]), float(m["hi"])) if m else (None, None)


def pattern_run(bench, placement, steps, env, lib, timeout=300, options=(), mca=None):
    """(rc, output, wall seconds) of the pattern program on ``placement``; ``mca``: the run's MCA
    parameters ([(name, value)]; None: the bench's own, bench.mca)."""
    bench.spec["placement"] = placement
    wdir = tempfile.mkdtemp(prefix="jr-rate-", dir=bench.fabric.tmpdir)
    try:
        rc, out, wall, _stopped = bench.mpirun([jbm.PATTERNS] + list(options) + ["--reps", 2] + steps, env, lib,
                                               timeout, wdir=wdir, mca=mca)
    finally:
        shutil.rmtree(wdir, ignore_errors=True)
    return rc, out, wall


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
            "mpi-dmodk-host-order": (host_order, env),
            "mpi-dmodk": (jobroute_report.bench_placement(n), env)}
    argv = steps(bench.spec, nbytes, shift=shift, pause=args.links, shift_only=args.shift_only)
    for kind, wait, window, (variant, mca) in [(k, w, n, v) for k in args.kinds if k in runs for w in args.waits
                                                for n in args.windows for v in args.variants]:
        hosts, run_env = runs[kind]
        if kind in ("mpi-sdn-optimal", "mpi-dmodk"):
            argv_k = steps(bench.spec, nbytes, pause=args.links, shift_only=args.shift_only)
        else:
            argv_k = argv
        sampler = link_sampler(bench) if args.links else None
        w0 = wire_counters(bench) if args.links else None
        c0 = cpu_times()
        if sampler:
            sampler.start()
        try:
            rc, output, wall = pattern_run(bench, hosts, argv_k, run_env, jbm.PRELOAD,
                                           options=wait_args(wait, args.sleep_us, window),
                                           mca=mpi_transport.merged(bench.mca, mca))
        finally:
            timeline = sampler.stop() if sampler else None
        pats = jbm.parse_patterns(output) if rc == 0 else None
        c1 = cpu_times()
        rec = {"rc": rc, "wall_s": wall, "cpu_busy": busy_share(c0, c1), "ovs_cores": ovs_cores(c0, c1),
               "wait": wait, "window": window, "variant_mca": dict(mca)}
        rec["rank_cpu_min_s"], rec["rank_cpu_max_s"] = rank_cpu(output)
        for name in ("shift", "perm"):
            if pats and name in pats:
                p = pats[name]
                rec[name] = p["bytes"] * p["reps"] * 8 / p["seconds"] / 1e6 / rate
                rec[name + "_s"] = p["seconds"]
        if timeline is not None:
            rec["links"] = link_summary(bench, timeline, nbytes)
            rec["wire"] = wire_delta(w0, wire_counters(bench))
            if log_dir:
                name = "links-%s-%g-%d.json.gz" % (run_key(kind, wait, variant, window), rate, int(now_s()))
                jobroute_links.save(os.path.join(log_dir, name), timeline)
        out[run_key(kind, wait, variant, window)] = rec
    seconds = max(4, int(round(args.seconds * 2)))
    for kind, planner in (("iperf3-sdn-optimal", "sdn-optimal"), ("iperf3-dmodk", None)):
        if kind in args.kinds:
            out[kind] = iperf_bench_pairs(bench, rate, seconds, planner)
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


def iperf_bench_pairs(bench, rate, seconds, planner):
    """The bench placement's shift pairs, then its permutation's, as iperf3 streams with
    ``planner``'s routes for exactly those pairs (None: the controller's default routes, no job):
    per exchange the min and median share."""
    n, spec = bench.spec["hosts"], bench.spec
    placement = jobroute_report.bench_placement(n)
    rec = {"flows_mbit": {}, "plan": {}}
    c0 = cpu_times()
    for name, pairs in (("shift", pattern_pairs(placement, shift=spec["shift"])),
                        ("perm", pattern_pairs(placement, perm=jobroute_report.pattern_perm(spec["perm"], n)))):
        streams, plan = iperf_with_routes(bench, pairs, seconds, planner, bench.ports["rpc"])
        if plan is not None:
            rec["plan"][name] = plan
        got = [st.get("mbit") for st in streams]
        rec.setdefault("retransmits", {})[name] = [st.get("retransmits") for st in streams]
        ok = [g for g in got if g is not None]
        rec["flows_mbit"][name] = got
        rec[name] = min(ok) / rate if ok else None
        rec[name + "_median"] = statistics.median(ok) / rate if ok else None
        rec[name + "_pairs"] = pairs
    c1 = cpu_times()
    rec.update(cpu_busy=busy_share(c0, c1), ovs_cores=ovs_cores(c0, c1))
    return rec


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


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if os.geteuid() != 0:
        print("bench/jobroute_rate.py needs root (Mininet, Open vSwitch)", file=sys.stderr)
        return 2
    if not jbm.build_programs():
        return 2
    from sdnmpi.mininet_topos.net import ensure_ovs
    ensure_ovs()
    out_dir = os.path.join(args.out_dir, "jobroute-rate-%s-%s" % (args.fabric,
                                                                  datetime.datetime.now().strftime("%Y%m%d-%H%M%S")))
    os.makedirs(os.path.join(out_dir, "traces"))
    bargs = argparse.Namespace(prefix=args.prefix, mgmt_subnet=args.mgmt_subnet, k4_bw=args.rates[0], seed=7,
                               mca=args.mca, mpi_transport=args.mpi_transport, **emulation.choices(args))
    spec = jbm.fabric_spec(args.fabric, bargs)
    if args.fabric != "k4":   # start at the first rate, the fabric's host/fabric ratio kept
        spec["host_bw"], spec["fabric_bw"] = args.rates[0] * spec["host_bw"] / spec["fabric_bw"], args.rates[0]
    results = {"command": [sys.executable] + sys.argv, "software": software_versions(), "rounds": args.rounds,
               "fabric": args.fabric, "seconds": args.seconds, "shift": spec["shift"], "perm": spec["perm"],
               "placement": spec["placement"], "rates": {}, "failed": None, "extra_mca": dict(args.mca),
               "mpi_transport": mpi_transport.record(args),
               "mca_variants": {name: dict(mca) for name, mca in args.variants if name}}
    os.makedirs(os.path.join(out_dir, "logs"))
    if args.links:
        os.makedirs(os.path.join(out_dir, "timelines"))
    t0 = now_s()

    def rounds(bench):
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
    on_bench(spec, bargs, os.path.join(out_dir, "logs"), results, rounds)
    results["wall_s"] = now_s() - t0
    return finish(out_dir, results, markdown(results), "results.md")


def finish(out_dir, results, text, md_name):
    """results.json and ``text`` (as ``md_name``) written to ``out_dir``, the text printed: the exit code."""
    write_json(os.path.join(out_dir, "results.json"), results)
    with open(os.path.join(out_dir, md_name), "w") as f:
        f.write(text)
    print(text + "results: %s" % out_dir)
    return 1 if results["failed"] else 0


def on_bench(spec, bargs, log_dir, results, body):
    """body(bench) on the ready fabric of ``spec`` (jbm.RouteBench; logs in ``log_dir``), its D-mod-K
    controller open to RPC from 127.0.0.1 (the iperf3 kinds install routes from the root namespace).
    An error or SIGTERM (`timeout`) ends it: in results["failed"], the fabric stopped, results kept."""
    bench = jbm.RouteBench(spec, bargs, log_dir)
    old_term = signal.signal(signal.SIGTERM, jbm._interrupted)
    try:
        bench.start_controller("dmodk", extra=("--sdnmpi-rpc-allow", "127.0.0.1"))
        bench.start_fabric()
        results["emulation"] = bench.emulation.record
        bench.wait_ready(180)
        body(bench)
    except (Exception, KeyboardInterrupt) as exc:  # pylint: disable=broad-except
        results["failed"] = "%s: %s" % (type(exc).__name__, exc)
        print("FAILED: %s" % results["failed"], flush=True)
    finally:
        bench.stop_controller()
        bench.stop_fabric()
        signal.signal(signal.SIGTERM, old_term)


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
