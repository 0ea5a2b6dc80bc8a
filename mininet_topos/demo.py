"""End-to-end demo: controller + leaf-spine fabric + lldpd, pingall and iperf3, then Open MPI's
against sdnmpi's allreduce and bcast.

    python -m sdnmpi.mininet_topos.demo [--spines 2 --leaves 4 --hosts-per-leaf 2
        --host-bw 30 --fabric-bw 15 --routing dmodk --ofp-port 6653 --wsapi-port 8080
        --rpc-port 0 --prefix P --mgmt-subnet NET --lldpd PATH --log-dir DIR
        --coll-size 1m --coll-reps 3 --no-collectives]

Steps (each a function in ``STEPS``): start Open vSwitch if needed, start the controller, build the
fabric, start lldpd in every host, wait until the controller has discovered the whole fabric,
print it, pingall, iperf3 between the first and the last host (different leaves), and the
collectives: one allreduce (all hosts, random placement) and one bcast (all hosts, from rank 0)
of ``--coll-size`` bytes, each run by bench/run.py's job machinery on this fabric (one mpirun
per collective that alternates both implementations call by call, Open MPI on the controller's
default routes), ending with a short table: medians, speedup and fraction of the limit.
Everything is stopped in ``finally``; the exit status is non-zero if any step failed.
"""
import argparse
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import time

from sdnmpi.primitives import DEFAULT_ROUTING

from . import procs
from .controller_proc import format_topology, start_controller, wait_for_topology
from .fattree import LeafSpineTopo
from .mgmt import DEFAULT_SUBNET
from .polling import poll_until
from .net import FabricNet, ensure_ovs

LOG = logging.getLogger(__name__)

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DEFAULT_LLDPD = os.path.join(ROOT, "lldpd", "sdnmpi-lldpd")
BENCH_RUN = os.path.join(ROOT, "bench", "run.py")
IPERF_PORT = 5201
# The collectives step: allreduce with ranks placed at random (seed 7, as in the bench), so that
# the recursive-doubling partners sit on different leaves; bcast from rank 0 with block placement.
ALLREDUCE_PLACEMENT = "random"
BCAST_PLACEMENT = "block"
BCAST_ROOT = 0


def parse_args(argv):
    """Command-line options."""
    parser = argparse.ArgumentParser(prog="python -m sdnmpi.mininet_topos.demo",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--spines", type=int, default=2)
    parser.add_argument("--leaves", type=int, default=4)
    parser.add_argument("--hosts-per-leaf", type=int, default=2)
    parser.add_argument("--host-bw", type=float, default=30, help="Mbit/s (0: unlimited)")
    parser.add_argument("--fabric-bw", type=float, default=15, help="Mbit/s (0: unlimited)")
    parser.add_argument("--routing", default="dmodk", choices=sorted(DEFAULT_ROUTING),
                        help="the controller's default routing policy")
    parser.add_argument("--ofp-port", type=int, default=6653)
    parser.add_argument("--wsapi-port", type=int, default=8080)
    parser.add_argument("--rpc-port", type=int, default=0,
                        help="the controller's RPC port for MPI jobs (0: a free port)")
    parser.add_argument("--prefix", default="",
                        help="switch name prefix (to run next to another fabric)")
    parser.add_argument("--mgmt-subnet", default=DEFAULT_SUBNET, help="management network")
    parser.add_argument("--lldpd", default=DEFAULT_LLDPD, help="sdnmpi-lldpd binary")
    parser.add_argument("--lldp-interval", type=float, default=1.0)
    parser.add_argument("--discovery-timeout", type=float, default=90)
    parser.add_argument("--iperf-seconds", type=int, default=5)
    parser.add_argument("--no-collectives", action="store_true",
                        help="skip the allreduce and bcast comparison")
    parser.add_argument("--coll-size", default="1m",
                        help="bytes per allreduce and bcast call (k/m suffixes, e.g. 256k, 4m)")
    parser.add_argument("--coll-reps", type=int, default=3,
                        help="timed calls per implementation and collective")
    parser.add_argument("--log-dir",
                        help="controller, lldpd and MPI logs (default: a new temp dir)")
    args = parser.parse_args(argv)
    if not args.no_collectives:
        try:
            sizes = load_bench().benchcore.parse_sizes(args.coll_size)
        except ValueError as exc:
            parser.error("--coll-size %s: %s" % (args.coll_size, exc))
        if len(sizes) != 1:
            parser.error("--coll-size takes one size, got %r" % args.coll_size)
        if args.coll_reps < 1:
            parser.error("--coll-reps must be at least 1")
    return args


def load_bench():
    """bench/run.py as a module (bench/ is a folder of scripts, not a package; run.py puts bench/
    on sys.path for its own modules, benchcore and report)."""
    name = "sdnmpi_bench_run"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, BENCH_RUN)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


class Demo:
    """State shared by the demo steps; ``close()`` stops everything that was started."""

    def __init__(self, args):
        self.args = args
        self.log_dir = args.log_dir or tempfile.mkdtemp(prefix="sdnmpi-demo-")
        os.makedirs(self.log_dir, exist_ok=True)
        self.rpc_port = args.rpc_port or load_bench().free_port()
        self.ctl = None
        self.fabric = None
        self.topo = None
        self.results = {}

    def close(self):
        """Stop the fabric (lldpd, Mininet, mgmt) and the controller."""
        if self.fabric is not None:
            self.fabric.stop()
        if self.ctl is not None:
            self.ctl.stop()
        print("logs in %s" % self.log_dir)


def _bw(value):
    """Bandwidth option: 0 or negative means unlimited (None)."""
    return value if value and value > 0 else None


def step_controller(demo):
    """Start Open vSwitch and the controller; wait for its REST API."""
    ensure_ovs()
    args = demo.args
    demo.ctl = start_controller(args.ofp_port, args.wsapi_port, routing=args.routing,
                                extra_args=("--sdnmpi-rpc-port", str(demo.rpc_port)),
                                log_path=os.path.join(demo.log_dir, "controller.log"))
    demo.ctl.wait_rest_ready(timeout=30)
    print("controller up (pid %d, routing %s, RPC port %d)" % (demo.ctl.pid, args.routing,
                                                               demo.rpc_port))


def step_fabric(demo):
    """Build and start the leaf-spine fabric."""
    args = demo.args
    demo.topo = LeafSpineTopo(spines=args.spines, leaves=args.leaves,
                              hosts_per_leaf=args.hosts_per_leaf,
                              host_bw=_bw(args.host_bw), fabric_bw=_bw(args.fabric_bw),
                              prefix=args.prefix)
    demo.fabric = FabricNet(demo.topo, controller_port=args.ofp_port, mgmt_prefix=args.mgmt_subnet)
    demo.fabric.start()
    print("fabric up: %d switches, %d hosts" % (len(demo.topo.switch_names),
                                                 len(demo.topo.host_names)))


def step_lldpd(demo):
    """Start lldpd in every host."""
    demo.fabric.start_lldpd(demo.args.lldpd, interval=demo.args.lldp_interval,
                            log_dir=demo.log_dir)


def step_discovery(demo):
    """Wait until the controller sees every switch, link and host; print the topology."""
    topo = demo.topo
    start = time.monotonic()
    found = wait_for_topology(demo.ctl, len(topo.switch_names), topo.expected_switch_links,
                              len(topo.host_names), timeout=demo.args.discovery_timeout)
    print("topology discovered in %.1f s" % (time.monotonic() - start))
    print(format_topology(found))


def step_pingall(demo):
    """pingall; fails unless 0 % loss."""
    loss = demo.fabric.net.pingAll(timeout=2)
    demo.results["ping_loss"] = loss
    print("pingall: %.1f %% loss" % loss)
    if loss > 0:
        raise RuntimeError("pingall lost %.1f %% of the pings" % loss)


def iperf3(server, client, server_ip, seconds=5, timeout=None):
    """TCP iperf3 from ``client`` to ``server`` (Mininet hosts); returns Mbit/s received."""
    srv = procs.popen_in_host(server, ["iperf3", "-s", "-1", "-p", IPERF_PORT])
    try:
        _wait_listening(server, IPERF_PORT)
        argv = procs.in_host(client, ["iperf3", "-c", server_ip, "-p", IPERF_PORT,
                                      "-t", seconds, "-J"])
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                             universal_newlines=True, timeout=timeout or seconds + 30).stdout
        result = json.loads(out)
        if "error" in result:
            raise RuntimeError("iperf3: %s" % result["error"])
        return result["end"]["sum_received"]["bits_per_second"] / 1e6
    finally:
        procs.terminate([srv], timeout=2)


def _wait_listening(host, port, timeout=10.0):
    """Wait until something listens on TCP ``port`` inside ``host``."""
    poll_until(lambda: subprocess.run(procs.in_host(host, ["ss", "-Hltn", "sport = :%d" % port]),
                                      stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout.strip(),
               timeout, "a listener on port %d in %s" % (port, host.name), interval=0.1)


def step_iperf(demo):
    """iperf3 between the first and the last host (on different leaves)."""
    hosts = demo.fabric.hosts
    server, client = hosts[-1], hosts[0]
    mbps = iperf3(server, client, demo.fabric.host_ips()[server.name],
                  seconds=demo.args.iperf_seconds)
    demo.results["iperf_mbps"] = mbps
    print("iperf3 %s -> %s: %.1f Mbit/s" % (client.name, server.name, mbps))


def bench_argv(args, rpc_port):
    """bench/run.py's options for the demo's two jobs on the demo's fabric: allreduce and bcast of
    one size over all hosts under the demo's routing, no 8-byte calls, no iperf3 checks, no
    planner scale."""
    return ["--spines", str(args.spines), "--leaves", str(args.leaves),
            "--hosts-per-leaf", str(args.hosts_per_leaf),
            "--host-bw", str(max(args.host_bw, 0)), "--fabric-bw", str(max(args.fabric_bw, 0)),
            "--collectives", "allreduce,bcast", "--routings", args.routing,
            "--bcast-routings", args.routing, "--placements", ALLREDUCE_PLACEMENT,
            "--bcast-placements", BCAST_PLACEMENT, "--bcast-roots", str(BCAST_ROOT),
            "--allreduce-sizes", args.coll_size, "--bcast-sizes", args.coll_size,
            "--allreduce-nprocs", "all", "--bcast-nprocs", "all", "--reps", str(args.coll_reps),
            "--tiny-reps", "0", "--iperf-seconds", "0", "--planner-max-hosts", "0",
            "--ofp-port", str(args.ofp_port), "--wsapi-port", str(args.wsapi_port),
            "--rpc-port", str(rpc_port), "--discovery-timeout", str(args.discovery_timeout)]


def job_failures(results):
    """Why the collectives step failed, from bench results ({"jobs": [...]}): [] if every job's
    last attempt exited 0 and every result check passed."""
    failures = []
    for job in results["jobs"]:
        if job.get("superseded"):
            continue
        if job.get("rc") != 0:
            failures.append("%s %s" % (job["name"], "timed out" if job.get("timed_out")
                                       else "exited with %s" % job.get("rc")))
        for ev in job.get("program") or ():
            if ev.get("bench") == "check" and not ev.get("ok"):
                failures.append("%s: %s result check failed" % (job["name"], ev.get("collective")))
    if not results["jobs"]:
        failures.append("no job ran")
    return failures


def step_collectives(demo):
    """Open MPI's against sdnmpi's allreduce and bcast on this fabric; prints the table."""
    run = load_bench()
    bench = run.Bench(run.parse_args(bench_argv(demo.args, demo.rpc_port)))
    bench.attach(demo.ctl, demo.fabric, demo.log_dir)
    with open(os.path.join(demo.log_dir, "build.log"), "w") as build_log:
        bench.coll_bench, bench.have_sdn_bcast = run.build_programs(build_log)
    jobs = run.plan_jobs(bench.args, bench.fab_model, bench.have_sdn_bcast)
    estimate = sum(job["work"] for job in jobs)
    size = run.benchcore.fmt_bytes(jobs[0]["sizes"][0])
    print("collectives: allreduce and bcast of %s on %d hosts, %d timed calls per implementation, "
          "Open MPI and sdnmpi alternating call by call (about %s)"
          % (size, bench.fab_model.hosts, bench.args.reps, run.fmt_duration(estimate)), flush=True)
    results = {"jobs": [], "records": [], "notes": []}
    results_path = os.path.join(demo.log_dir, "collectives.json")
    progress = run.Progress(estimate)
    for job in jobs:
        run.run_job_with_retries(bench, job, progress, results, results_path)
    demo.results["collectives"] = results["records"]
    print("\nOpen MPI vs sdnmpi, %s, median of %d calls (time of the slowest rank):"
          % (size, bench.args.reps))
    print_collectives(run.report.text_table(results["records"]), bench.have_sdn_bcast)
    failures = job_failures(results)
    if failures:
        raise RuntimeError("; ".join(failures))


def print_collectives(lines, have_sdn_bcast):
    """The table and what its columns mean."""
    print("\n".join(lines or ["(no timed calls)"]))
    print("speedup = Open MPI / sdnmpi (> 1: sdnmpi faster); limit = the best modelled schedule's\n"
          "time for the call on this fabric and placement (bench/README.md, \"The reference limit\");\n"
          "X/limit = limit / X's median (100 % = at the limit)")
    if not have_sdn_bcast:
        print("this libsdnmpi has no SDN_MPI_Bcast: the bcast row is Open MPI only")
    if any(" !" in line for line in lines or ()):
        print("! = the machine stalled or the fabric changed during that job: its times are suspect")
    print("(a short demo run; `make bench` measures more sizes, placements and policies)\n")


STEPS = (step_controller, step_fabric, step_lldpd, step_discovery, step_pingall, step_iperf,
         step_collectives)


def selected_steps(args, steps=STEPS):
    """The steps this run performs (--no-collectives leaves the collectives out)."""
    return tuple(step for step in steps if not (args.no_collectives and step is step_collectives))


def run_steps(demo, steps=STEPS):
    """Run the steps in order, stopping at the first failure; True if all succeeded."""
    for step in steps:
        LOG.info("step %s", step.__name__)
        try:
            step(demo)
        except Exception as exc:  # pylint: disable=broad-except
            LOG.exception("step %s failed", step.__name__)
            print("FAILED: %s: %s" % (step.__name__, exc))
            if demo.ctl is not None:
                print("controller log tail:\n%s" % demo.ctl.log_tail())
            return False
    return True


def main(argv=None):
    """Entry point; returns the exit status."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("mininet").propagate = False  # Mininet prints through its own handler
    demo = Demo(args)
    try:
        ok = run_steps(demo, selected_steps(args))
    finally:
        demo.close()
    print("demo %s" % ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
