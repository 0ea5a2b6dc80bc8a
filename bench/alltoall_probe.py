"""Where an alltoall's time goes on the bench fabric: a diagnostic, not part of `make bench`.

    flock /tmp/sdnmpi-mininet.lock .venv/bin/python bench/alltoall_probe.py \
        [--bytes 1m,4m] [--reps 3] [--cc bbr|cubic|reno] [--out DIR] [--sdn-env SDN_MPI_X=V]
        [--variant SDN_MPI_X=V,SDN_MPI_Y=W ...]

Brings up the bench's default fabric (2 spines, 4 leaves x 2 hosts, 30/15 Mbit/s, dmodk routing,
the random placement of seed 7) and runs bench/alltoall_probe.c under mpirun (its header says what
it times). Meanwhile it samples, every 0.2 s, every switch port's queue (tc: backlog, drops) and
every host's TCP counters (/proc/PID/net/{snmp,netstat}: segments sent and retransmitted, RTOs).
Writes DIR/probe.json (the probe's lines and the samples) and prints one summary line per phase:
time, TCP segments retransmitted and timeouts, packets dropped at switch ports, and the largest
queue seen. --cc sets the hosts' TCP congestion control (per network namespace) before the run.
--variant (repeatable): one more mpirun job on the same fabric per variant, with these libsdnmpi
settings on top of --sdn-env and only the MPI_Alltoall / SDN_MPI_Alltoall calls (alternating);
its lines are labelled with the variant.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchcore  # noqa: E402
from bench_cli import parse_args  # noqa: E402
from bench_common import FABRIC_SUBNET, HERE, ROOT  # noqa: E402
from bench_fabric import Bench  # noqa: E402

TCP_FIELDS = {("Tcp", "OutSegs"), ("Tcp", "RetransSegs"), ("TcpExt", "TCPTimeouts"),
              ("TcpExt", "TCPLossProbes"), ("TcpExt", "TCPSackRecovery"), ("TcpExt", "TCPFastRetrans")}


def read_tcp(pid):
    out = {}
    for name in ("snmp", "netstat"):
        with open("/proc/%d/net/%s" % (pid, name)) as f:
            lines = f.read().splitlines()
        for head, vals in zip(lines[0::2], lines[1::2]):
            keys, values = head.split(), vals.split()
            proto = keys[0].rstrip(":")
            for k, v in zip(keys[1:], values[1:]):
                if (proto, k) in TCP_FIELDS:
                    out["%s.%s" % (proto, k)] = int(v)
    return out


def read_queues(prefix):
    text = subprocess.run(["tc", "-s", "-j", "qdisc", "show"], stdout=subprocess.PIPE, check=True,
                          universal_newlines=True).stdout
    out = {}
    for q in json.loads(text):
        dev = q.get("dev", "")
        if not dev.startswith(prefix) or q.get("kind") == "htb" and q.get("root") is not True:
            continue
        key = "%s/%s" % (dev, q.get("kind"))
        out[key] = {"drops": q.get("drops", 0), "backlog": q.get("backlog", 0),
                    "qlen": q.get("qlen", 0), "bytes": q.get("bytes", 0)}
    return out


class Sampler(threading.Thread):
    def __init__(self, hosts, prefix, period=0.2):
        super().__init__(daemon=True)
        self.hosts, self.prefix, self.period = hosts, prefix, period
        self.samples, self.stop_ev = [], threading.Event()

    def run(self):
        while not self.stop_ev.is_set():
            t = time.time()
            tcp = {h.name: read_tcp(h.pid) for h in self.hosts}
            ss = subprocess.run(["nsenter", "-t", str(self.hosts[0].pid), "-n", "ss", "-tin", "state",
                                 "established", "dst", "10.0.0.0/8"], stdout=subprocess.PIPE,
                                universal_newlines=True, check=False).stdout
            self.samples.append({"t": t, "tcp": tcp, "q": read_queues(self.prefix), "ss": ss})
            self.stop_ev.wait(self.period)


def between(samples, t0, t1):
    """(first sample at or before t0, last at or after t1)."""
    before = [s for s in samples if s["t"] <= t0] or samples[:1]
    after = [s for s in samples if s["t"] >= t1] or samples[-1:]
    inside = [s for s in samples if t0 <= s["t"] <= t1]
    return before[-1], after[0], inside


def summarize(lines, samples):
    rows = []
    for ln in lines:
        t0, t1 = ln["t0"], ln["t0"] + ln["t_s"]
        a, b, inside = between(samples, t0, t1)
        tcp = {k: sum(b["tcp"][h].get(k, 0) - a["tcp"][h].get(k, 0) for h in b["tcp"])
               for k in ("Tcp.OutSegs", "Tcp.RetransSegs", "TcpExt.TCPTimeouts")}
        drops = sum(b["q"][d]["drops"] - a["q"].get(d, {}).get("drops", 0) for d in b["q"])
        peak = max((max(s["q"][d]["qlen"] for d in s["q"]) for s in inside), default=0)
        peak_dev = ""
        for s in inside:
            for d, v in s["q"].items():
                if v["qlen"] == peak and peak:
                    peak_dev = d
        rows.append(dict(ln, tcp=tcp, drops=drops, peak_qlen=peak, peak_dev=peak_dev))
    return rows


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bytes", default="1m,4m")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--schedule", choices=("xor", "shift"), default="shift")
    ap.add_argument("--cc", choices=("bbr", "cubic", "reno"))
    ap.add_argument("--out", default="/tmp/alltoall-probe")
    ap.add_argument("--sdn-env", action="append", default=[])
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--ompi-mca", action="append", default=[])
    return ap


def main():
    a = build_parser().parse_args()
    sizes = benchcore.parse_sizes(a.bytes)
    args = parse_args(["--collectives", "alltoall", "--prefix", "ap", "--mgmt-subnet", "172.29.0.0/16"]
                      + sum((["--ompi-mca", m] for m in a.ompi_mca), []))
    os.makedirs(a.out, exist_ok=True)
    prog = os.path.join(HERE, "build", "alltoall_probe")
    os.makedirs(os.path.dirname(prog), exist_ok=True)
    subprocess.run(["mpicc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_GNU_SOURCE",
                    "-I" + os.path.join(ROOT, "libsdnmpi", "include"), "-o", prog,
                    os.path.join(HERE, "alltoall_probe.c"), os.path.join(ROOT, "libsdnmpi", "libsdnmpi.a"),
                    "-lmsgpackc", "-lz", "-pthread"], check=True)
    bench = Bench(args)
    bench.out_dir = bench.log_dir = a.out
    fab = benchcore.Fabric(args.spines, args.leaves, args.hosts_per_leaf, args.host_bw, args.fabric_bw)
    placed = benchcore.placement_hosts("random", fab.hosts, fab.hosts, args.seed)
    order = sorted(range(len(placed)), key=lambda r: (fab.leaf_of(placed[r]), r))
    lines, sampler = [], None
    try:
        bench.start_fabric()
        bench.start_controller("dmodk")
        bench.wait_ready(120)
        from sdnmpi.mininet_topos import procs
        from sdnmpi.mininet_topos.net import MpiJob
        hosts = [bench.fabric.host(h) for h in bench.host_names(placed)]
        if a.cc:
            for h in hosts:
                subprocess.run(procs.in_host(h, ["sysctl", "-qw", "net.ipv4.tcp_congestion_control=" + a.cc]),
                               check=True)
        env = {"SDN_MPI_CONTROLLER": "%s:%d" % (bench.fabric.mgmt.root_ip, bench.ports["rpc"]),
               "SDN_MPI_FABRIC_SUBNET": FABRIC_SUBNET, "SDN_MPI_MIN_BYTES": "1"}
        env.update(dict(e.split("=", 1) for e in a.sdn_env))
        mpi = MpiJob(bench.fabric, hosts)
        sampler = Sampler(hosts, "ap")
        sampler.start()
        jobs = [("", {}, [])] if not a.variant else []
        jobs += [(v, dict(e.split("=", 1) for e in v.split(",")), ["--calls-only", 1]) for v in a.variant]
        for label, extra, flags in jobs:
            argv = mpi.mpirun_argv([prog, "--order", ",".join(map(str, order)),
                                    "--bytes", ",".join(map(str, sizes)), "--reps", a.reps,
                                    "--schedule", a.schedule] + flags, env=dict(env, **extra), mca=args.mca)
            proc = subprocess.run(procs.in_host(hosts[0], argv), stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, env=mpi.environment(dict(env, **extra)),
                                  universal_newlines=True, timeout=540, check=False)
            for line in proc.stdout.splitlines():
                if line.startswith('{"probe"'):
                    lines.append(dict(json.loads(line), variant=label))
                else:
                    print(line)
            print("mpirun rc %d (%s), ranks on hosts %s, leaf order %s" % (
                proc.returncode, label or "default", placed, order))
        time.sleep(0.5)
        sampler.stop_ev.set()
        sampler.join()
    finally:
        if sampler is not None:
            sampler.stop_ev.set()
        bench.stop_controller()
        bench.stop_fabric()
    rows = summarize(lines, sampler.samples) if sampler else []
    with open(os.path.join(a.out, "probe.json"), "w") as f:
        json.dump({"order": order, "hosts": placed, "rows": rows, "samples": sampler.samples if sampler else [],
                   "emulation": bench.emulation.record if bench.emulation else None}, f)
    for r in rows:
        extra = ("step %d" % r["step"]) if "step" in r else ""
        if "t_steps" in r:
            extra = "steps " + " ".join("%.0f" % (1000 * t) for t in r["t_steps"])
        print("%-9s %-40s %8d rep %d %8.1f ms  out %6d retrans %5d rto %3d drops %5d peakq %4d %-14s %s" % (
            r["probe"], r.get("variant", ""), r["bytes"], r["rep"], 1000 * r["t_s"], r["tcp"]["Tcp.OutSegs"],
            r["tcp"]["Tcp.RetransSegs"], r["tcp"]["TcpExt.TCPTimeouts"], r["drops"], r["peak_qlen"],
            r["peak_dev"], extra))

    print("# medians (ms): variant, size, MPI_Alltoall, SDN_MPI_Alltoall, ratio")
    keys = sorted({(r.get("variant", ""), r["bytes"]) for r in rows if r["probe"] in ("openmpi", "sdnmpi")})
    for variant, size in keys:
        med = {}
        for impl in ("openmpi", "sdnmpi"):
            ts = sorted(r["t_s"] for r in rows if r["probe"] == impl and r.get("variant", "") == variant
                        and r["bytes"] == size)
            med[impl] = ts[len(ts) // 2] if len(ts) % 2 else sum(ts[len(ts) // 2 - 1:len(ts) // 2 + 1]) / 2
        print("%-40s %8d %8.1f %8.1f %5.2fx" % (variant or "default", size, 1000 * med["openmpi"],
                                               1000 * med["sdnmpi"], med["openmpi"] / med["sdnmpi"]))


if __name__ == "__main__":
    main()
