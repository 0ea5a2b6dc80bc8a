"""Traffic-aware job routing measured on Mininet (issue 15): D-mod-K, ECMP, SDN-greedy, SDN-optimal
and SDN-adaptive on the pattern program and on hpcc, each profiled once and rerun with its trace.
(hpcc: profiled on loopback, reruns stopped at its LatencyBandwidth section: bench/jobroute_hpcc.py.)

    .venv/bin/python bench/bench_jobroute_mininet.py [--fabrics k4,leafspine] [--programs patterns[,hpcc]]
        [--reps 3] [--patterns shift,perm,...] [--wait-sleep US] [--window W] [--quick] [--out-dir bench/results]
        (--help lists every option)

Per fabric: one Mininet fabric and one controller (started with an operator token, so that the
default routing can be switched between runs over REST). Per program: one profiled run
(libsdnmpi_prof.so, default routes D-mod-K) gives the trace; then ``--reps`` rounds, each running
every policy once in turn (interleaved, so slow drifts of the shared machine hit every policy
alike). Every run uses the preload library with sdnmpi's own collectives off (SDN_MPI_MIN_BYTES,
SDN_MPI_BCAST_MIN_BYTES), so only the routing differs:

- dmodk, ecmp: the default routing policy, no SDN_MPI_TRAFFIC;
- sdn-greedy, sdn-optimal: SDN_MPI_TRAFFIC=<trace>, SDN_MPI_TRAFFIC_PLANNER=<policy>, default D-mod-K;
- sdn-adaptive: the same with default ECMP (its dense phases are left to the fabric's multipath).

Ranks sit on a random permutation of the hosts (``--seed``, bench/benchcore.placement_hosts), as a
batch scheduler may place them; the shift distance and the permutation seed are the ones where
D-mod-K collides on that placement (the model's loads are recorded and printed). The pattern
program marks one phase per pattern (MPI_Pcontrol), so the trace has one demand per pattern.

Outputs: bench/results/jobroute-<timestamp>/ (results.json, results.md, traces/, logs/). The
simulator's side (jobroute_sim.py) runs on the same traces at the end of each fabric.
"""
import argparse
import datetime
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_common import (FABRIC_SUBNET, HERE, PRIORITY_ROUTE, ROOT, Progress, csv_list, fmt_duration,  # noqa: E402
                          now_s, software_versions, write_json)
from bench_fabric import Bench  # noqa: E402
from bench_flows import ofctl  # noqa: E402
import emulation  # noqa: E402
import jobroute_hpcc  # noqa: E402
import jobroute_report  # noqa: E402
import jobroute_sim  # noqa: E402
import mpi_transport  # noqa: E402

LIB = os.path.join(ROOT, "libsdnmpi")
PRELOAD = os.path.join(LIB, "libsdnmpi-preload.so")
PROF = os.path.join(LIB, "libsdnmpi_prof.so")
PATTERNS = os.path.join(LIB, "tests", "traffic_patterns")
POLICIES = jobroute_sim.POLICIES
DEFAULT_ROUTING = {"dmodk": "dmodk", "ecmp": "ecmp", "sdn-greedy": "dmodk", "sdn-optimal": "dmodk",
                   "sdn-adaptive": "ecmp"}

FABRICS = jobroute_report.FABRIC_MODELS
PATTERN_BYTES = {"shift": 2 << 20, "perm": 2 << 20, "halo2d": 512 << 10, "halo3d": 512 << 10,
                 "alltoall": 128 << 10}
PATTERN_ORDER = ("shift", "perm", "halo2d", "halo3d", "alltoall")
PATTERN_LINE = re.compile(r"^traffic_patterns: pattern=(?P<name>\w+) bytes=(?P<bytes>\d+) reps=(?P<reps>\d+) "
                          r"ranks=(?P<ranks>\d+) seconds=(?P<s>[\d.]+)", re.M)
PATTERNS_OK = re.compile(r"^traffic_patterns: ranks=\d+ ok seconds=(?P<s>[\d.]+)", re.M)
# traffic_patterns --wait-sleep's default here (us; 0 = spin in MPI_Waitall/MPI_Barrier)
WAIT_SLEEP_US = 0
# traffic_patterns --window's default here (messages in flight per peer and repetition) and its limit
# (traffic_patterns.c's MAX_WINDOW; tests/unit/test_c_twins.py checks they agree)
WINDOW = 1
MAX_WINDOW = 1024
# sdnmpi's collectives stay out of every run (the measure is about routing, not algorithms).
NO_COLLECTIVES = {"SDN_MPI_MIN_BYTES": "1024g", "SDN_MPI_BCAST_MIN_BYTES": "unlimited"}


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/bench_jobroute_mininet.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--fabrics", default="k4,leafspine", help="k4, leafspine")
    p.add_argument("--programs", default="patterns",
                   help="patterns, hpcc (hpcc: profiled on loopback, reruns stopped at its LatencyBandwidth "
                        "section, which alone sends 0.8 GB per rank: bench/jobroute_hpcc.py)")
    p.add_argument("--policies", default=",".join(POLICIES))
    p.add_argument("--reps", type=int, default=3, help="rounds (each runs every policy once)")
    p.add_argument("--pattern-reps", type=int, default=2, help="traffic_patterns --reps")
    p.add_argument("--patterns", default=",".join(PATTERN_ORDER),
                   help="the pattern program's exchanges (each keeps its phase number: shift 1 ... alltoall 5)")
    p.add_argument("--wait-sleep", type=int, default=WAIT_SLEEP_US,
                   help="traffic_patterns --wait-sleep: waits test and nanosleep this many us instead of spinning "
                        "in MPI_Waitall/MPI_Barrier (16 polling ranks on 2 cores starve the emulated hosts' TCP "
                        "and the switches; ranks on a cluster have cores of their own); 0: spin")
    p.add_argument("--window", type=int, default=WINDOW,
                   help="traffic_patterns --window: each repetition's bytes to a peer as this many messages, all "
                        "in flight at once (the same for every policy)")
    p.add_argument("--k4-bw", type=float, default=FABRICS["k4"]["host_bw"], help="k4: every link, Mbit/s")
    p.add_argument("--k4-scale", type=float, default=0.5,
                   help="k4: the pattern sizes times this (the k4 fabric's links are slower: its 20 userspace "
                        "switches on 2 cores must stay below their CPU limit)")
    p.add_argument("--hpcc-n", type=int, default=1000,
                   help="hpcc: HPL's N (also sizes RandomAccess's table and FFT's vector)")
    p.add_argument("--hpcc-ptrans-n", type=int, default=2000,
                   help="hpcc: an additional PTRANS matrix size (its own is N/2), the bandwidth-bound part")
    p.add_argument("--seed", type=int, default=7, help="the random rank placement's seed")
    p.add_argument("--quick", action="store_true", help="1 round, patterns only, smaller messages")
    p.add_argument("--job-timeout", type=float, default=300.0)
    p.add_argument("--discovery-timeout", type=float, default=180.0)
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--prefix", default="jr", help="switch name prefix (unique among running fabrics)")
    p.add_argument("--mgmt-subnet", default="172.30.0.0/16")
    p.add_argument("--reverse-routes", choices=("on", "off"), default="on",
                   help="the controller's --sdnmpi-traffic-reverse-routes (each routed pair's reverse, its TCP "
                        "ACKs, on the pair's path reversed; recorded); off: the reverse pairs take the default routes")
    emulation.add_arguments(p)
    mpi_transport.add_arguments(p)
    args = p.parse_args(argv)
    try:
        args.fabrics = csv_list(args.fabrics, tuple(FABRICS))
        args.programs = csv_list(args.programs, ("patterns", "hpcc"))
        args.policies = csv_list(args.policies, POLICIES)
        args.patterns = csv_list(args.patterns, PATTERN_ORDER)
    except ValueError as exc:
        p.error(str(exc))
    if args.reps < 1 or args.pattern_reps < 1:
        p.error("--reps and --pattern-reps must be >= 1")
    if not 0 <= args.wait_sleep <= 1000000:
        p.error("--wait-sleep must be 0..1000000 (us)")
    if not 1 <= args.window <= MAX_WINDOW:
        p.error("--window must be 1..%d" % MAX_WINDOW)
    if args.quick:
        args.reps, args.programs = 1, ["patterns"]
    return args


def fabric_spec(name, args):
    spec = dict(FABRICS[name], name=name)
    if name == "k4":
        spec["host_bw"] = spec["fabric_bw"] = args.k4_bw
    spec["sim"] = spec["sim"] % (spec["host_bw"], spec["fabric_bw"])
    spec["placement"] = jobroute_report.bench_placement(spec["hosts"], args.seed)
    return spec


def controller_options(args):
    """The controller options that the bench's own options set (``--reverse-routes``)."""
    return () if getattr(args, "reverse_routes", "on") == "on" else ("--nosdnmpi-traffic-reverse-routes",)


class RouteBench(Bench):
    """bench_fabric.Bench on either fabric, with a controller whose default routing can be switched."""

    def __init__(self, spec, args, work_dir):
        ns = argparse.Namespace(spines=spec.get("spines", 2), leaves=spec.get("leaves", 4),
                                hosts_per_leaf=spec.get("hosts_per_leaf", 2), host_bw=spec["host_bw"],
                                fabric_bw=spec["fabric_bw"], ofp_port=0, wsapi_port=0, rpc_port=0,
                                prefix=args.prefix, mgmt_subnet=args.mgmt_subnet, **emulation.choices(args))
        Bench.__init__(self, ns)
        self.spec = spec
        self.mca = mpi_transport.transport_mca(args)   # [(name, value)]: --mca of every mpirun
        self.controller_extra = controller_options(args)
        # the operator token the controller creates (kept out of the results, removed at the end)
        self.token_dir = tempfile.mkdtemp(prefix="jobroute-token-")
        self.token_file = os.path.join(self.token_dir, "operator-token")
        self.log_dir = self.out_dir = work_dir

    def start_controller(self, routing, extra=()):
        """The controller with D-mod-K or ECMP default routes; ``extra``: more of its options."""
        from sdnmpi.mininet_topos import controller_proc
        extra = ("--sdnmpi-rpc-host", "0.0.0.0", "--sdnmpi-rpc-port", str(self.ports["rpc"]),
                 "--sdnmpi-operator-token-file", self.token_file,
                 # dynamic phase detection off: the runs measure the routes, not when they go
                 "--sdnmpi-idle-threshold", "0") + self.controller_extra + tuple(extra)
        self.ctl = controller_proc.start_controller(self.ports["ofp"], self.ports["wsapi"], routing=routing,
                                                    extra_args=extra,
                                                    log_path=os.path.join(self.log_dir, "controller.log"))
        self.ctl.wait_rest_ready(timeout=60)
        self.routing = routing

    def stop_controller(self):
        Bench.stop_controller(self)
        shutil.rmtree(self.token_dir, ignore_errors=True)

    def start_fabric(self):
        if self.spec["kind"] != "kary":
            return Bench.start_fabric(self)
        from sdnmpi.mininet_topos.fattree import FatTreeTopo
        return Bench.start_fabric(self, FatTreeTopo(k=self.spec["k"], host_bw=self.spec["host_bw"],
                                                    fabric_bw=self.spec["fabric_bw"], prefix=self.args.prefix))

    def set_routing(self, routing, timeout):
        """The controller's default routing becomes ``routing`` and every switch holds its routes
        (ECMP: SELECT groups on the edge/leaf switches; D-mod-K: none)."""
        if routing == self.routing:
            return
        before = self.rpc_stats().get("route_recomputes", 0)
        with open(self.token_file) as src:
            token = src.read().strip()
        req = urllib.request.Request(self.ctl.url("/sdnmpi/routing"), method="PUT",
                                     data=('{"routing": "%s"}' % routing).encode(),
                                     headers={"Authorization": "Bearer " + token,
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()
        deadline = now_s() + timeout
        while self.rpc_stats().get("route_recomputes", 0) <= before:
            if now_s() > deadline:
                raise TimeoutError("the controller did not recompute its routes for %s" % routing)
            time.sleep(0.3)
        self.wait_ready(timeout)
        want_groups = routing == "ecmp"
        while True:
            groups = [br for br in self.topo.switch_names
                      if "group:" in "".join(line for line in ofctl("dump-flows", br).stdout.splitlines()
                                             if "priority=%d," % PRIORITY_ROUTE in line)]
            if bool(groups) == want_groups:
                break
            if now_s() > deadline:
                raise TimeoutError("routes of %s not in place (switches with groups: %s)" % (routing, groups))
            time.sleep(0.3)
        self.routing = routing

    def mpirun(self, prog, env, lib, timeout, wdir=None, stop_file=None, mca=None):
        """(rc, output, wall seconds, stop seconds) of one job on the placement; ``lib`` is
        LD_PRELOADed into the ranks only (-x), not into mpirun. With ``stop_file``, the job is
        killed once that file holds jobroute_hpcc.STOP_MARKER; stop seconds = from the start to
        then (None if never). ``mca``: this job's MCA parameters (None: the bench's, self.mca)."""
        from sdnmpi.mininet_topos import procs
        from sdnmpi.mininet_topos.net import MpiJob
        hosts = [self.fabric.host("h%d" % n) for n in self.spec["placement"]]
        extra = ["-x", "LD_PRELOAD=%s" % lib]
        if wdir:
            extra += ["--wdir", wdir]
        job = MpiJob(self.fabric, hosts, 1)
        argv = job.mpirun_argv(prog, np=len(hosts), env=env, mca=self.mca if mca is None else mca,
                               extra_args=extra)
        watch = jobroute_hpcc.StopAt(stop_file, lambda: procs.kill_by_environ(job.dir)) if stop_file else None
        t0 = now_s()
        if watch:
            watch.start()
        try:
            rc, out = job.run(argv, env=env, timeout=timeout)
        finally:
            if watch:
                watch.finish()
        wall = now_s() - t0
        stopped = watch.seen - t0 if watch and watch.seen is not None else None
        if watch and not self.wait_no_jobs(timeout=30):   # a killed job goes when its RPC connections close
            raise TimeoutError("the controller still holds a job 30 s after a stopped run")
        return rc, out, wall, stopped


def _interrupted(signum, _frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def pattern_argv(spec, args):
    """The pattern program's command line: ``args.patterns`` in PATTERN_ORDER, pattern i in phase
    i + 1 of PATTERN_ORDER (so a subset keeps the phases of the whole), then phase 0."""
    scale = (0.25 if args.quick else 1.0) * (args.k4_scale if spec["name"] == "k4" else 1.0)
    b = {k: int(v * scale) for k, v in PATTERN_BYTES.items()}
    extra = {"shift": [spec["shift"]], "perm": [spec["perm"]]}
    argv = [PATTERNS] + (["--wait-sleep", args.wait_sleep] if args.wait_sleep else []) + ["--reps", args.pattern_reps]
    argv += ["--window", args.window] if args.window != 1 else []
    for phase, name in enumerate(PATTERN_ORDER, 1):
        if name in args.patterns:
            argv += ["phase", phase, name] + extra.get(name, []) + [b[name]]
    return argv + ["phase", 0]


def parse_patterns(output):
    """{pattern: {"bytes", "reps", "seconds"}} and the total, or None if the run did not finish ok."""
    ok = PATTERNS_OK.search(output)
    if not ok:
        return None
    out = {m["name"]: {"bytes": int(m["bytes"]), "reps": int(m["reps"]), "seconds": float(m["s"])}
           for m in PATTERN_LINE.finditer(output)}
    out["total"] = {"seconds": float(ok["s"])}
    return out


def run_program(bench, program, policy, trace, args, log):
    """One run; returns a record (None values if it failed)."""
    env = {"SDN_MPI_CONTROLLER": "%s:%d" % (bench.fabric.mgmt.root_ip, bench.ports["rpc"]),
           "SDN_MPI_FABRIC_SUBNET": FABRIC_SUBNET, "SDN_MPI_VERBOSE": "1", **NO_COLLECTIVES}
    if policy.startswith("sdn-"):
        env.update({"SDN_MPI_TRAFFIC": trace, "SDN_MPI_TRAFFIC_PLANNER": policy})
    return _run(bench, program, PRELOAD, env, args, log)


def _run(bench, program, lib, env, args, log):
    wdir = tempfile.mkdtemp(prefix="jr-", dir=bench.fabric.tmpdir)
    try:
        if program == "patterns":
            prog, stop_file = pattern_argv(bench.spec, args), None
        else:
            jobroute_hpcc.write_input(wdir, bench.spec["grid"], args.hpcc_n, (args.hpcc_ptrans_n,))
            prog, stop_file = [jobroute_hpcc.HPCC], os.path.join(wdir, "hpccoutf.txt")
        rc, out, wall, stopped = bench.mpirun(prog, env, lib, args.job_timeout, wdir=wdir, stop_file=stop_file)
        log.write("$ %s\n%s\n[rc %s, %.1f s]\n" % (" ".join(map(str, prog)), out, rc, wall))
        rec = {"rc": rc, "wall_s": wall}
        if program == "patterns":
            rec["patterns"] = parse_patterns(out) if rc == 0 else None
        else:
            rec.update(hpcc_record(stop_file, stopped, rc, log))
        log.flush()
        rec["traffic_lines"] = [ln for ln in out.splitlines() if "traffic phase=" in ln or "SDN_MPI_TRAFFIC" in ln][:12]
        return rec
    finally:
        shutil.rmtree(wdir, ignore_errors=True)


def hpcc_record(outf, stopped, rc, log):
    """A stopped hpcc run's fields: rc 0 when it reached LatencyBandwidth with every check passed
    (mpirun's own code, from the kill, in mpirun_rc); hpcc = the sections' seconds and
    to_latbw_s (mpirun's start to LatencyBandwidth)."""
    try:
        with open(outf) as f:
            text = f.read()
    except OSError:
        text = ""
    log.write("--- hpccoutf.txt ---\n%s\n" % text)
    sections = jobroute_hpcc.parse_sections(text)
    ok = stopped is not None and sections.pop("checks_passed")
    return {"rc": 0 if ok else (rc if rc else 1), "mpirun_rc": rc,
            "hpcc": dict(sections, to_latbw_s=stopped) if ok else None}


def profile(bench, program, trace_dir, args, log):
    name = "%s-%s" % (bench.spec["name"], program)
    if program == "hpcc":
        path, rec = jobroute_hpcc.profile_local(trace_dir, name, bench.spec["hosts"], bench.spec["grid"], args.hpcc_n,
                                                (args.hpcc_ptrans_n,), PROF, timeout=args.job_timeout)
        log.write("--- profiled on loopback: hpccoutf.txt ---\n%s\n" % rec.pop("hpccoutf"))
        return path, rec
    env = {"SDN_MPI_PROF_DIR": trace_dir, "SDN_MPI_PROF_JOB": name, "SDN_MPI_PROF_SOURCE": "pmpi"}
    rec = _run(bench, program, PROF, env, args, log)
    path = os.path.join(trace_dir, name + ".tar.gz")
    if rec["rc"] != 0 or not os.path.isfile(path):
        raise RuntimeError("profiling %s failed (rc %s): see %s" % (program, rec["rc"], log.name))
    for f in os.listdir(trace_dir):
        if f.startswith("oxton-result"):
            os.unlink(os.path.join(trace_dir, f))
    return path, rec


def run_fabric(name, args, results, out_dir, progress):
    spec = fabric_spec(name, args)
    work = os.path.join(out_dir, "logs", name)
    trace_dir = os.path.join(out_dir, "traces")
    os.makedirs(work, exist_ok=True)
    os.makedirs(trace_dir, exist_ok=True)
    fab_res = results["fabrics"].setdefault(name, {"spec": spec, "model": jobroute_report.model_loads(spec),
                                                    "programs": {}})
    progress.say("%s: D-mod-K's model loads on this placement: %s" % (name, fab_res["model"]))
    bench = RouteBench(spec, args, work)
    try:
        bench.start_controller("dmodk")
        progress.say("%s: starting the fabric (%d hosts, host links %g, fabric links %g Mbit/s)"
                     % (name, spec["hosts"], spec["host_bw"], spec["fabric_bw"]))
        bench.start_fabric()
        fab_res["emulation"] = bench.emulation.record
        bench.wait_ready(args.discovery_timeout)
        progress.say("%s: fabric discovered and routed" % name)
        for program in args.programs:
            with open(os.path.join(work, "%s.log" % program), "w") as log:
                bench.set_routing("dmodk", args.discovery_timeout)
                trace, prof = profile(bench, program, trace_dir, args, log)
                prog_res = fab_res["programs"].setdefault(program, {"runs": []})
                prog_res.update({"trace": os.path.relpath(trace, out_dir), "profiled_run": prof})
                progress.say("%s/%s: profiled in %.0f s -> %s" % (name, program, prof["wall_s"], trace))
                for rep in range(args.reps):
                    order = args.policies[rep % len(args.policies):] + args.policies[:rep % len(args.policies)]
                    for policy in order:
                        bench.set_routing(DEFAULT_ROUTING[policy], args.discovery_timeout)
                        rec = run_program(bench, program, policy, trace, args, log)
                        rec.update({"policy": policy, "round": rep})
                        prog_res["runs"].append(rec)
                        write_json(os.path.join(out_dir, "results.json"), results)
                        progress.add(1)
                        progress.say("%s/%s round %d %s: rc %s, %.1f s%s" % (
                            name, program, rep + 1, policy, rec["rc"], rec["wall_s"],
                            jobroute_report.run_summary(rec)))
                prog_res["sim"] = jobroute_report.simulate_program(spec, program, trace, args.policies)
    finally:
        bench.stop_controller()
        bench.stop_fabric()


def build_programs():
    """Builds the preload library, the profiler and the pattern program (make setup builds the
    first two only); False, with make's output on stderr, if that fails."""
    made = subprocess.run(["make", "-C", LIB, "all", os.path.relpath(PATTERNS, LIB)], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    if made.returncode != 0:
        print("make -C libsdnmpi failed:\n%s" % made.stdout[-2000:], file=sys.stderr)
    return made.returncode == 0


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if os.geteuid() != 0:
        print("bench_jobroute_mininet.py needs root (Mininet, Open vSwitch)", file=sys.stderr)
        return 2
    if not build_programs():
        return 2
    for path in (PRELOAD, PROF, PATTERNS) + ((jobroute_hpcc.HPCC,) if "hpcc" in args.programs else ()):
        if not os.path.exists(path):
            print("missing %s (make setup; apt-get install hpcc)" % path, file=sys.stderr)
            return 2
    from sdnmpi.mininet_topos.net import ensure_ovs
    ensure_ovs()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.join(args.out_dir, "jobroute-" + stamp)
    os.makedirs(out_dir)
    results = {"schema": 1, "started": datetime.datetime.now().isoformat(timespec="seconds"),
               "command": [sys.executable] + sys.argv, "software": software_versions(),
               "method": {"reps": args.reps, "pattern_reps": args.pattern_reps, "seed": args.seed,
                          "policies": args.policies, "default_routing": DEFAULT_ROUTING,
                          "pattern_bytes": PATTERN_BYTES, "k4_scale": args.k4_scale, "quick": args.quick,
                          "hpcc_n": args.hpcc_n, "hpcc_ptrans_n": args.hpcc_ptrans_n,
                          "patterns": args.patterns, "wait_sleep_us": args.wait_sleep, "window": args.window,
                          "env": NO_COLLECTIVES, "mpi_transport": mpi_transport.record(args),
                          "reverse_routes": args.reverse_routes},
               "fabrics": {}}
    progress = Progress(len(args.fabrics) * len(args.programs) * args.reps * len(args.policies))
    print("job-routing bench: results in %s" % out_dir, flush=True)
    t0 = now_s()
    failed = None
    old_term = signal.signal(signal.SIGTERM, _interrupted)   # `timeout`: stop the fabric, keep the results
    try:
        for name in args.fabrics:
            run_fabric(name, args, results, out_dir, progress)
    except (Exception, KeyboardInterrupt) as exc:  # pylint: disable=broad-except
        failed = "%s: %s" % (type(exc).__name__, exc)
        print("FAILED: %s" % failed, flush=True)
    finally:
        signal.signal(signal.SIGTERM, old_term)
    results["failed"] = failed
    results["wall_s"] = now_s() - t0
    write_json(os.path.join(out_dir, "results.json"), results)
    text = jobroute_report.markdown(results)
    with open(os.path.join(out_dir, "results.md"), "w") as f:
        f.write(text)
    print(text)
    print("results: %s (wall %s)" % (out_dir, fmt_duration(results["wall_s"])), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
