"""bench/bench_flowdetect.py's fabric: a controller with one detection set-up (``--sdnmpi-flow-detection``
and the set-up's further options) and its 16-host k=4 fat-tree (FatTreeTopo, userspace OVS, D-mod-K
default routes), with the run's emulation settings (--queue-packets, --cc, and bench/emulation.py's
--ovs-sndbuf and --ack-class, on by default as in the other benches), and one mpirun of the
pattern program on it (`Fabric.run`: its time, the pairs the controller flagged, its counter log
slice, and at a stall the diagnostics of flowdetect_runs).
"""
import gzip
import os
import re
import subprocess
import sys

import benchcore
import emulation
import flowdetect_runs
import host_cc

from sdnmpi.flows import counterlog
from sdnmpi.mininet_topos import controller_proc, procs
from sdnmpi.mininet_topos.fattree import FatTreeTopo
from sdnmpi.mininet_topos.net import FabricNet

ROOT = benchcore.ROOT
LIB = os.path.join(ROOT, "libsdnmpi")
PROGRAM = os.path.join(LIB, "tests", "traffic_patterns")
PRELOAD = os.path.join(LIB, "libsdnmpi-preload.so")
LLDPD = os.path.join(ROOT, "lldpd", "sdnmpi-lldpd")
K = 4
SWITCHES, LINKS, HOSTS = 5 * K * K // 4, K ** 3 // 2, K ** 3 // 4
# set-up -> (--sdnmpi-flow-detection, further controller options)
SETUP_ARGS = {"learned-noseed": ("learned", ("--nosdnmpi-flow-seed",)),
              # sliding windows: 0.5 s polls, 1 s windows (these options follow --interval's and win)
              "learned-slide": ("learned", ("--sdnmpi-flow-interval", "0.5", "--sdnmpi-flow-span", "1")),
              "threshold-slide": ("threshold", ("--sdnmpi-flow-interval", "0.5", "--sdnmpi-flow-span", "1"))}
EXCHANGE_RE = re.compile(r"^traffic_patterns: pattern=\S+ bytes=\d+ reps=\d+ ranks=\d+ seconds=([0-9.eE+-]+)", re.M)
ELEPHANT_RE = re.compile(r"flow detection \((\w+)\): job (\d+): elephant (\S+) -> (\S+) after (\d+) polls")
PREFIXES = ("fd", "fe", "ff", "fc")                # --interleave: one fabric per set-up at once
MGMT_SUBNETS = ("172.30.0.0/16", "172.27.0.0/16", "172.26.0.0/16", "172.25.0.0/16")


def detection_args(args, detection):
    """The controller's flow-detection options of a set-up: windows of --interval (``--sdnmpi-flow-span
    0``, so the modes keep their meaning whatever the controller's default span), then the set-up's
    own options, which follow and win (the slide set-ups' 0.5 s polls and 1 s windows)."""
    kind, options = setup_args(detection)
    return kind, ("--sdnmpi-flow-detection", kind, "--sdnmpi-flow-interval", str(args.interval),
                  "--sdnmpi-flow-span", "0", "--sdnmpi-link-capacity", str(args.host_bw * 1e6)) + options


def setup_args(setup):
    """(--sdnmpi-flow-detection value, further controller options) of a detection set-up."""
    return SETUP_ARGS.get(setup, (setup, ()))


class Fabric:
    """A controller with one detection set-up and its k=4 fat-tree."""

    def __init__(self, args, detection, log_dir, prefix=PREFIXES[0], mgmt_subnet=MGMT_SUBNETS[0]):
        self.rpc_port = controller_proc.free_port()
        kind, options = detection_args(args, detection)
        extra = ("--sdnmpi-rpc-host", "0.0.0.0", "--sdnmpi-rpc-port", str(self.rpc_port)) + options
        self.counter_log = None
        if detection != "none":
            self.counter_log = os.path.join(log_dir, "counters-%s.jsonl" % detection)
            extra += ("--sdnmpi-flow-log", self.counter_log)
        if kind == "learned" and args.model:
            extra += ("--sdnmpi-flow-model", args.model)
        self.log_dir, self.log_path = log_dir, os.path.join(log_dir, "ryu-%s.log" % detection)
        self.ctl = controller_proc.start_controller(controller_proc.free_port(), controller_proc.free_port(),
                                                    routing="dmodk", extra_args=extra, log_path=self.log_path)
        self.fab = self.emulation = self.allowed_cc = None
        self.last_exchanges = []      # seconds of each exchange of the last run
        self.last_stall = []          # the last run's stall diagnostics (it ran past --timeout and ended)
        try:
            self.ctl.wait_rest_ready(timeout=30)
            self.fab = FabricNet(FatTreeTopo(k=K, host_bw=args.host_bw, fabric_bw=args.fabric_bw, prefix=prefix),
                                 controller_port=self.ctl.ofp_port, mgmt_prefix=mgmt_subnet)
            self.fab.start()
            limited = emulation.rate_limited(self.fab.net.links, lambda n: n in self.fab.net.hosts)
            if args.queue_packets:
                for intf, _rate, _host in limited:
                    emulation.run_tc(intf, emulation.queue_commands(intf.name, args.queue_packets))
            self.emulation = emulation.Emulation.from_args(args)
            self.emulation.apply(limited)
            if args.cc:
                self.allowed_cc = host_cc.AllowedCongestion(args.cc).allow()
                for n in range(1, HOSTS + 1):
                    subprocess.run(procs.in_host(self.fab.host("h%d" % n), [
                        "sysctl", "-qw", "net.ipv4.tcp_congestion_control=" + args.cc]), check=True)
            self.fab.start_lldpd(LLDPD, interval=1.0)
            controller_proc.wait_for_topology(self.ctl, switches=SWITCHES, links=LINKS, hosts=HOSTS, timeout=180)
        except BaseException:
            self.close()
            raise

    def counter_lines(self):
        """The counter log's lines so far (header first), [] without one."""
        if self.counter_log is None or not os.path.exists(self.counter_log):
            return []
        with open(self.counter_log, encoding="utf-8") as f:
            return f.readlines()

    def stall_diagnostics(self, stem, hosts):
        """`flowdetect_runs.capture_stall` of this fabric: ``hosts``' sockets, every switch, the
        controller log's last lines; the files written."""
        cmds = flowdetect_runs.stall_commands(lambda h, argv: procs.in_host(self.fab.host(h), argv), hosts,
                                              self.fab.bridge_names())
        return flowdetect_runs.capture_stall(stem, cmds, self.ctl.log_text())

    def run(self, args, steps, hints, counters_to=None, tags=None):
        """(seconds the program reports, [(src, dst, delay polls)] detected during the run); the
        run's counter log lines go to ``counters_to`` (header first, with ``tags``), and each
        exchange's seconds to ``last_exchanges``. Past --timeout the stall's diagnostics are taken
        (logs/PATTERN-MODE-REP-stall-*), mpirun is killed DIAG_GRACE_S later; a run without a result
        raises flowdetect_runs.RunFailed (its output in logs/PATTERN-MODE-REP-output.txt)."""
        offset = len(self.ctl.log_text())
        first = len(self.counter_lines())
        env = {"SDN_MPI_CONTROLLER": "%s:%d" % (self.fab.mgmt.root_ip, self.rpc_port),
               "SDN_MPI_FABRIC_SUBNET": "10.0.0.0/8", "LD_PRELOAD": PRELOAD}
        argv = [PROGRAM, "--reps", str(args.reps)] + (["--hints"] if hints else []) + steps
        hosts = ["h%d" % n for n in range(1, HOSTS + 1)]
        stem = os.path.join(self.log_dir, "%(pattern)s-%(mode)s-%(rep)s" % tags if tags else "run")
        watch = flowdetect_runs.StallWatch(args.timeout, lambda: self.stall_diagnostics(stem + "-stall", hosts))
        sockets = flowdetect_runs.SocketSampler(stem + "-sockets.txt", [
            (h, procs.in_host(self.fab.host(h), ["ss", "-tni", "state", "established"])) for h in hosts],
            args.sockets_every)
        with watch, sockets:
            preconnect = {"mca": (("mpi_preconnect_mpi", "1"),)} if args.preconnect else {}
            rc, out = self.fab.mpirun(hosts, argv, env=env, timeout=args.timeout + flowdetect_runs.DIAG_GRACE_S,
                                      **preconnect)
        self.last_stall = watch.files
        m = re.search(r"^traffic_patterns: ranks=\d+ ok seconds=([0-9.eE+-]+)", out or "", re.M)
        if rc != 0 or not m:
            reason = ("stalled: still running %g s in, killed %g s later" % (args.timeout, flowdetect_runs.DIAG_GRACE_S)
                      if rc is None else "mpirun exit status %s" % rc if rc != 0 else "no result line in its output")
            if watch.error:
                reason += " (stall diagnostics failed: %s)" % watch.error
            files = watch.files + [flowdetect_runs.save_output(stem + "-output.txt", out)]
            raise flowdetect_runs.RunFailed(reason, (out or "")[-flowdetect_runs.TAIL_CHARS:], files)
        found = [(s, d, int(n)) for _mode, _job, s, d, n in ELEPHANT_RE.findall(self.ctl.log_text()[offset:])]
        lines = self.counter_lines()
        if counters_to and lines:
            try:
                lines = counterlog.cut(lines, first, tags or {})
            except counterlog.CounterLogError as exc:     # kept whole, untagged: nothing lost
                print("bench_flowdetect: %s: %s; the whole log kept untagged" % (self.counter_log, exc),
                      file=sys.stderr)
            with gzip.open(counters_to, "wt", encoding="utf-8") as f:
                f.writelines(lines)
        self.last_exchanges = [float(x) for x in EXCHANGE_RE.findall(out)]
        return float(m.group(1)), found

    def close(self):
        if self.emulation is not None:
            self.emulation.restore(tc=False)      # ovs-vswitchd's buffer back; the ACK classes go with the fabric
        if self.fab is not None:
            self.fab.stop()
        if self.allowed_cc is not None:
            self.allowed_cc.restore()
        self.ctl.stop()
