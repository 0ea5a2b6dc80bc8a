"""`make bench`: Open MPI's collectives against sdnmpi's on an emulated fat-tree, in one run.

    .venv/bin/python bench/run.py [--quick] [--spines 2 --leaves 4 --hosts-per-leaf 2
        --host-bw 30 --fabric-bw 15] [--routings single,dmodk,ecmp] [--placements block,random]
        [--reps N] [...]   (--help lists every option)

One Mininet fabric (userspace Open vSwitch, bandwidth-limited links, lldpd on every host) stays up
for the whole run; for every default routing policy the controller is (re)started with
``--sdnmpi-default-routing POLICY`` and the run waits until it has discovered the fabric and
installed its routes. Then one mpirun per configuration (routing x placement x p) runs
bench/coll_bench, which alternates Open MPI's and sdnmpi's implementation call by call and prints
JSON lines that this script collects. While a job runs, this script overrides the job's sdnmpi
host-pair routes with the default routes for Open MPI's calls and removes the overrides for
sdnmpi's (see --no-hide-job-flows and bench/README.md), samples the CPU and the links' load, and
counts the bytes each spine forwards for each implementation.

Outputs: bench/results/<timestamp>/ (results.json, results.md, PNG plots, logs/) and the symlink
bench/results/latest. See bench/README.md for the method and the limit model.
"""
import argparse
import concurrent.futures
import datetime
import importlib.metadata
import json
import logging
import math
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (HERE, ROOT):
    if path not in sys.path:
        sys.path.insert(0, path)

import benchcore  # noqa: E402
import planner_scale  # noqa: E402
import report  # noqa: E402

LOG = logging.getLogger("bench")

# controller/constants.py (not imported: that package pulls in Ryu). tests/unit/test_bench.py
# checks these against it.
COOKIE_JOB = (0x5D4D5049 << 32) | (3 << 24)
COOKIE_KIND_MASK = 0xFFFFFFFF_FF000000
PRIORITY_ROUTE = 1000
PRIORITY_JOB_ROUTE = 2000
PRIORITY_JOB_MULTICAST = 3000
FABRIC_SUBNET = "10.0.0.0/8"
ROUTINGS = ("single", "dmodk", "ecmp")

QUICK = {
    "routings": "single,dmodk,ecmp",
    "placements": "block,random",
    "allreduce_sizes": "4k,64k,1m",
    "bcast_sizes": "64k,1m",
    "bcast_nprocs": "4,all",
    "bcast_routings": "dmodk",
    "bcast_placements": "block",
    "reps": 2,
    "tiny_reps": 10,
    "tiny_block": 10,
    "point_seconds": 0.3,
    "init_reps": 1,
    "iperf_seconds": 5,
    "planner_max_hosts": planner_scale.QUICK_MAX_HOSTS,
}
FULL = {
    "routings": "single,dmodk,ecmp",
    "placements": "block,random",
    "allreduce_sizes": "4k..4m",
    "bcast_sizes": "64k..4m",
    "bcast_nprocs": "pow2",
    "bcast_routings": "single,dmodk,ecmp",
    "bcast_placements": "block",
    "reps": 5,
    "tiny_reps": 100,
    "tiny_block": 20,
    "point_seconds": 0.5,
    "init_reps": 2,
    "iperf_seconds": 8,
    "planner_max_hosts": 4096,
}


# --- small helpers --------------------------------------------------------------------------

def now_s():
    return time.monotonic()


def fmt_duration(seconds):
    seconds = int(round(seconds))
    if seconds >= 3600:
        return "%dh%02dm" % (seconds // 3600, seconds % 3600 // 60)
    if seconds >= 60:
        return "%dm%02ds" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


class Progress:
    """Prints progress lines with elapsed time and an ETA from the planned work."""

    def __init__(self, planned_work):
        self.start = now_s()
        self.planned = max(planned_work, 1e-9)
        self.done = 0.0

    def add(self, work):
        self.done += work

    def eta(self):
        if self.done <= 0:
            return None
        elapsed = now_s() - self.start
        return elapsed * max(self.planned - self.done, 0.0) / self.done

    def say(self, msg):
        eta = self.eta()
        print("[%s%s] %s" % (fmt_duration(now_s() - self.start),
                             ", ETA %s" % fmt_duration(eta) if eta is not None else "", msg), flush=True)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_text(argv, timeout=60):
    """stdout+stderr of a command, '' if it cannot run."""
    try:
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                              universal_newlines=True, timeout=timeout).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""


def parse_nprocs(text, nhosts):
    """'2,4,all' or 'pow2' (2, 4, 8, ... up to the hosts, plus all hosts) -> sorted list."""
    out = set()
    for tok in text.split(","):
        tok = tok.strip()
        if tok == "all":
            out.add(nhosts)
        elif tok == "pow2":
            p = 2
            while p <= nhosts:
                out.add(p)
                p *= 2
        elif tok:
            out.add(int(tok))
    bad = [p for p in out if p < 2 or p > nhosts]
    if bad:
        raise ValueError("process counts %s do not fit 2..%d hosts" % (bad, nhosts))
    return sorted(out)


def mbit(text):
    """A bandwidth option: an int when it is integral (so it prints as 20, not 20.0)."""
    value = float(text)
    if value < 0:
        raise ValueError("bandwidths cannot be negative")
    return int(value) if value.is_integer() else value


def csv_list(text, allowed=None):
    items = [x.strip() for x in text.split(",") if x.strip()]
    if allowed:
        bad = [x for x in items if x not in allowed]
        if bad:
            raise ValueError("unknown values %s (allowed: %s)" % (bad, ", ".join(allowed)))
    return items


# --- software versions and settings ---------------------------------------------------------

def software_versions():
    def dist(name):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None
    ompi = run_text(["ompi_info", "--version"]).strip().splitlines()
    ovs = run_text(["ovs-vsctl", "--version"]).strip().splitlines()
    git = run_text(["git", "-C", ROOT, "rev-parse", "HEAD"]).strip()
    dirty = run_text(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).strip()
    try:
        from mininet.net import VERSION as mn_version
    except ImportError:
        mn_version = None
    return {
        "openmpi": ompi[0] if ompi else None,
        "openvswitch": ovs[0] if ovs else None,
        "ryu": dist("ryu"),
        "mininet": mn_version,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "matplotlib": dist("matplotlib"),
        "networkx": dist("networkx"),
        "sdnmpi_git": (git + (" (with uncommitted changes)" if dirty else "")) if git else None,
        "cpus": os.cpu_count(),
    }


TUNED_RE = re.compile(r'parameter "(?P<name>[^"]+)" \(current value: "(?P<value>[^"]*)"')


def coll_tuned_settings(mca=()):
    """The relevant lines of `ompi_info --param coll tuned --level 9` and their values, with the
    jobs' extra MCA parameters (``mca``: [(name, value)]) applied as OMPI_MCA_* variables, so the
    values are the ones the jobs run with."""
    env = dict(os.environ)
    env.update({"OMPI_MCA_%s" % name: value for name, value in mca})
    try:
        text = subprocess.run(["ompi_info", "--param", "coll", "tuned", "--level", "9"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                              universal_newlines=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        text = ""
    lines, values = [], {}
    relevant = re.compile(r"coll_tuned_(priority|use_dynamic_rules|dynamic_rules_filename|"
                          r"allreduce_|bcast_|barrier_algorithm\b|reduce_algorithm\b)")
    for line in text.splitlines():
        m = TUNED_RE.search(line)
        if m and relevant.match(m.group("name")):
            values[m.group("name")] = m.group("value")
            lines.append(line.strip())
    return {"values": values, "lines": lines, "mca": dict(mca), "note": coll_tuned_note(values, mca)}


def coll_tuned_note(values, mca=()):
    """One sentence: how Open MPI chooses its Allreduce and Bcast algorithms in these jobs."""
    extra = (" (with --ompi-mca %s)" % ", ".join("%s=%s" % kv for kv in mca)) if mca else ""
    dynamic = values.get("coll_tuned_use_dynamic_rules")
    if dynamic is None:
        return "coll/tuned settings unknown (ompi_info gave nothing)%s" % extra
    if dynamic.lower() not in ("true", "1"):
        return ("coll_tuned_use_dynamic_rules=%s: Open MPI picks its algorithms with its fixed decision "
                "rules (by message size and process count)%s" % (dynamic, extra))
    forced = ["%s %s" % (coll, values.get("coll_tuned_%s_algorithm" % coll, "?")) for coll in ("allreduce", "bcast")]
    rules = values.get("coll_tuned_dynamic_rules_filename")
    return ("coll_tuned_use_dynamic_rules=%s: algorithms forced: %s (\"ignore\" = fixed rules)%s%s"
            % (dynamic, ", ".join(forced), ("; rules file %s" % rules) if rules else "", extra))


def build_programs(log):
    """make -C libsdnmpi, lldpd and bench; returns (coll_bench path, have_sdn_bcast)."""
    for folder in ("lldpd", "libsdnmpi"):
        proc = subprocess.run(["make", "-C", os.path.join(ROOT, folder)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, check=False)
        log.write(proc.stdout)
        if proc.returncode != 0:
            if folder == "libsdnmpi" and os.path.exists(os.path.join(ROOT, "libsdnmpi", "libsdnmpi.a")):
                print("WARNING: make -C libsdnmpi failed; using the existing libsdnmpi.a:\n%s"
                      % proc.stdout[-1500:], flush=True)
            else:
                raise RuntimeError("make -C %s failed:\n%s" % (folder, proc.stdout[-3000:]))
    proc = subprocess.run(["make", "-C", HERE], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False)
    log.write(proc.stdout)
    if proc.returncode != 0:
        raise RuntimeError("make -C bench failed:\n%s" % proc.stdout[-3000:])
    with open(os.path.join(HERE, "build", "have_sdn_bcast")) as flag:
        have = flag.read().strip() == "1"
    return os.path.join(HERE, "build", "coll_bench"), have


# --- CPU and link sampling ------------------------------------------------------------------

def _cpu_times():
    """(total, idle + iowait, steal) ticks of all CPUs (/proc/stat; guest time is already in user)."""
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    steal = fields[7] if len(fields) > 7 else 0
    return sum(fields[:8]), idle, steal


def _proc_ticks(pid):
    try:
        with open("/proc/%d/stat" % pid) as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, ValueError, IndexError):
        return None


def ovs_vswitchd_pid():
    try:
        with open("/var/run/openvswitch/ovs-vswitchd.pid") as pidfile:
            return int(pidfile.read().strip())
    except (OSError, ValueError):
        return None


def _schedstat(pid, tid):
    """(ns on a CPU, ns waiting for a CPU) of one thread (/proc/PID/task/TID/schedstat), or None."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as stat:
            fields = stat.read().split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def process_table():
    """{pid: (ppid, utime+stime ticks)} of every process; kernel threads (children of kthreadd,
    pid 2) are left out."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            ppid = int(fields[1])
            if int(entry) == 2 or ppid == 2:
                continue
            table[int(entry)] = (ppid, int(fields[11]) + int(fields[12]))
        except (OSError, ValueError, IndexError):
            continue
    return table


def descendants(table, root):
    """``root`` and every process below it in ``table`` (pid -> (ppid, ...))."""
    children = {}
    for pid, (ppid, _ticks) in table.items():
        children.setdefault(ppid, []).append(pid)
    out, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out.add(pid)
        todo.extend(children.get(pid, ()))
    return out


def foreign_ticks(prev, cur, ours, excluded):
    """CPU ticks that processes outside the bench used between two process tables: processes in
    both tables count their growth, new ones all of their time. Processes that started and ended
    between the samples are missed, so this is a lower bound."""
    total = 0
    for pid, (_ppid, ticks) in cur.items():
        if pid in ours or pid in excluded:
            continue
        before = prev.get(pid)
        total += max(0, ticks - before[1]) if before is not None else ticks
    return total


def _read_counter(iface, direction):
    try:
        with open("/sys/class/net/%s/statistics/%s_bytes" % (iface, direction)) as counter:
            return int(counter.read())
    except (OSError, ValueError):
        return None


def _stats(values):
    if not values:
        return None
    ordered = sorted(values)
    return {"median": statistics.median(ordered), "p90": ordered[int(0.9 * (len(ordered) - 1))],
            "max": ordered[-1], "samples": len(ordered)}


class CpuMonitor:
    """Samples once per ``interval`` while a job runs:

    - the machine's CPU busy % (all CPUs) and steal % (time the hypervisor gave the VM's CPUs to
      someone else);
    - ovs-vswitchd's CPU use (all threads, % of one core) and, for its main thread (which forwards
      every packet of the userspace datapath's non-PMD ports, i.e. all of this fabric's), the % of
      the time it ran and the % it waited for a CPU (schedstat): run + wait near 100 % means the
      switch never went idle, i.e. the CPU, not the links, limited forwarding;
    - the CPU used by processes outside the bench (anything that is neither this process's
      descendants, nor Open vSwitch, nor a kernel thread: other tests, builds), % of one CPU;
    - with ``links`` (``[(iface, "tx"|"rx", capacity Mbit/s)]``, one entry per direction of every
      fabric link, counted at the switch ports), every ``link_interval``: the busiest link's load
      in % of its rate, and the bytes all links carried. ``busiest_link_weighted_pct`` weighs each
      interval's busiest-link load by those bytes, so idle moments (route switches, barriers,
      small messages) hardly count: it says how close to their rate the links ran while the
      collectives moved data. ``ovs_main_runnable_weighted_pct`` weighs the forwarding thread's
      run + wait % the same way: how busy the switch was while data moved;
    - stalls: whenever this sampler itself could not run for ``stall_s`` or more (the whole
      machine froze: this VM's CPUs were not scheduled, as the kernel's RCU-stall and
      workqueue-lockup messages show at such times), the moment and the length.
    """

    def __init__(self, interval=1.0, links=(), own_pid=None, link_interval=0.25, stall_s=2.0):
        self.interval = interval
        self.link_interval = link_interval
        self.stall_s = stall_s
        self.links = [l for l in links if l[2]]
        self.own_pid = own_pid or os.getpid()
        self.busy, self.steal, self.ovs, self.foreign = [], [], [], []
        self.ovs_main_run, self.ovs_main_wait, self.ovs_main_bytes = [], [], []
        self.link_util, self.link_bytes = [], []
        self.busiest = {}
        self.stalls = []
        self._bytes_total = 0
        self._t0 = None
        self._stop = threading.Event()
        self._thread = None
        self._hz = os.sysconf("SC_CLK_TCK")
        self._ovs_pid = ovs_vswitchd_pid()
        self._excluded = set()
        if self._ovs_pid:
            self._excluded.add(self._ovs_pid)
        try:
            with open("/var/run/openvswitch/ovsdb-server.pid") as pidfile:
                self._excluded.add(int(pidfile.read().strip()))
        except (OSError, ValueError):
            pass

    def __enter__(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        return False

    def _sample(self):
        pid = self._ovs_pid
        return {"t": now_s(), "cpu": _cpu_times(), "ovs": _proc_ticks(pid) if pid else None,
                "main": _schedstat(pid, pid) if pid else None, "procs": process_table(),
                "bytes": self._bytes_total}

    def _link_sample(self):
        return now_s(), [_read_counter(iface, d) for iface, d, _cap in self.links]

    def _run(self):
        prev = self._sample()
        self._t0 = last = prev["t"]
        lprev = self._link_sample() if self.links else None
        step = min(self.interval, self.link_interval) if self.links else self.interval
        while not self._stop.wait(step):
            t = now_s()
            if t - last - step >= self.stall_s:
                self.stalls.append({"at_s": round(last - self._t0, 1), "length_s": round(t - last - step, 1)})
            last = t
            if self.links:
                lcur = self._link_sample()
                self._account_links(lprev, lcur)
                lprev = lcur
            if now_s() - prev["t"] >= self.interval - 1e-3:
                cur = self._sample()
                self._account(prev, cur)
                prev = cur

    def _account_links(self, prev, cur):
        dt = cur[0] - prev[0]
        if dt <= 0:
            return
        best, where, total = 0.0, None, 0
        for (iface, direction, cap), b0, b1 in zip(self.links, prev[1], cur[1]):
            if b0 is None or b1 is None:
                continue
            total += max(0, b1 - b0)
            util = 100.0 * (b1 - b0) * 8.0 / (cap * 1e6) / dt
            if util > best:
                best, where = util, "%s %s" % (iface, direction)
        self.link_util.append(best)
        self.link_bytes.append(total)
        self._bytes_total += total
        if where and total:
            self.busiest[where] = self.busiest.get(where, 0) + total

    def _account(self, prev, cur):
        dt = cur["t"] - prev["t"]
        if dt <= 0:
            return
        (total0, idle0, steal0), (total1, idle1, steal1) = prev["cpu"], cur["cpu"]
        if total1 > total0:
            self.busy.append(100.0 * (1.0 - (idle1 - idle0) / (total1 - total0)))
            self.steal.append(100.0 * (steal1 - steal0) / (total1 - total0))
        if prev["ovs"] is not None and cur["ovs"] is not None:
            self.ovs.append(100.0 * (cur["ovs"] - prev["ovs"]) / self._hz / dt)
        if prev["main"] and cur["main"]:
            self.ovs_main_run.append(100.0 * (cur["main"][0] - prev["main"][0]) / 1e9 / dt)
            self.ovs_main_wait.append(100.0 * (cur["main"][1] - prev["main"][1]) / 1e9 / dt)
            self.ovs_main_bytes.append(cur["bytes"] - prev["bytes"])
        ours = descendants(cur["procs"], self.own_pid) | descendants(prev["procs"], self.own_pid)
        self.foreign.append(100.0 * foreign_ticks(prev["procs"], cur["procs"], ours, self._excluded)
                            / self._hz / dt)

    def summary(self):
        runnable = [r + w for r, w in zip(self.ovs_main_run, self.ovs_main_wait)]
        out = {"machine_busy_pct": _stats(self.busy), "steal_pct": _stats(self.steal),
               "ovs_vswitchd_pct_of_one_core": _stats(self.ovs),
               "ovs_main_run_pct": _stats(self.ovs_main_run), "ovs_main_wait_pct": _stats(self.ovs_main_wait),
               "ovs_main_runnable_pct": _stats(runnable),
               "foreign_cpu_pct_of_one_cpu": _stats(self.foreign), "cpus": os.cpu_count(),
               "stalls": self.stalls}
        if self.links:
            out["link_interval_s"] = self.link_interval
            out["busiest_link_pct"] = _stats(self.link_util)
            out["busiest_link_weighted_pct"] = weighted_mean(self.link_util, self.link_bytes)
            out["ovs_main_runnable_weighted_pct"] = weighted_mean(runnable, self.ovs_main_bytes)
            out["ovs_main_run_weighted_pct"] = weighted_mean(self.ovs_main_run, self.ovs_main_bytes)
            out["ovs_main_wait_weighted_pct"] = weighted_mean(self.ovs_main_wait, self.ovs_main_bytes)
            out["link_bytes_total"] = sum(self.link_bytes)
            out["busiest_link_most_often"] = max(self.busiest, key=self.busiest.get) if self.busiest else None
        return out


def weighted_mean(values, weights):
    """sum(v * w) / sum(w), or None if the weights add up to 0."""
    total = sum(weights)
    if not total:
        return None
    return sum(v * w for v, w in zip(values, weights)) / total


# --- switching a job's flows on and off -----------------------------------------------------

def ofctl(*args, stdin=None):
    return subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", *args], input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False)


def interface_tx_bytes(name):
    try:
        with open("/sys/class/net/%s/statistics/tx_bytes" % name) as counter:
            return int(counter.read())
    except (OSError, ValueError):
        return 0


# Override flows (RouteSwitch): a cookie the controller never uses, a priority above every job
# host-pair route (PRIORITY_JOB_ROUTE + job id mod 1000 <= 2999). They match unicast host pairs
# only, so they never overlap the bcast trees (multicast destinations, priority 3000).
BENCH_COOKIE = 0x62656E6368000001     # "bench"
PRIORITY_OVERRIDE = 3500
FLOW_RE = re.compile(r"cookie=(?P<cookie>0x[0-9a-fA-F]+).*?priority=(?P<prio>\d+),?(?P<match>\S*)\s+actions=(?P<actions>\S+)")


def parse_flow(line):
    """(cookie, priority, {match field: value}, match text, actions) of a dump-flows line, or None."""
    m = FLOW_RE.search(line)
    if not m:
        return None
    fields = {}
    for part in m.group("match").split(","):
        if part:
            key, _sep, value = part.partition("=")
            fields[key] = value
    return int(m.group("cookie"), 16), int(m.group("prio")), fields, m.group("match"), m.group("actions")


def override_flows(lines):
    """Override flows for one switch's ``ovs-ofctl --no-stats dump-flows`` lines: one per job
    host-pair route (cookie kind COOKIE_JOB, priority 2000-2999), same match, priority
    PRIORITY_OVERRIDE, cookie BENCH_COOKIE, and the actions of the switch's default route to
    the same destination (priority PRIORITY_ROUTE, ``nw_dst`` match). Returns (flows, the job
    routes that had no default route to copy)."""
    defaults, pairs = {}, []
    for line in lines:
        flow = parse_flow(line)
        if flow is None:
            continue
        cookie, prio, fields, match, actions = flow
        if prio == PRIORITY_ROUTE and "nw_dst" in fields and "nw_src" not in fields:
            defaults[fields["nw_dst"]] = actions
        elif (cookie & COOKIE_KIND_MASK) == COOKIE_JOB and PRIORITY_JOB_ROUTE <= prio < PRIORITY_JOB_MULTICAST:
            pairs.append((fields, match))
    out, missing = [], []
    for fields, match in pairs:
        actions = defaults.get(fields.get("nw_dst"))
        if actions is None:
            missing.append(match)
            continue
        out.append("cookie=0x%x,priority=%d,%s,actions=%s" % (BENCH_COOKIE, PRIORITY_OVERRIDE, match, actions))
    return out, missing


def wait_datapath_revalidated():
    """Wait until ovs-vswitchd has revalidated its cached datapath flows after a flow-table change.

    The userspace datapath keeps forwarding with its cached (mega)flows until a revalidator pass
    re-translates them against the changed OpenFlow tables, so for a moment after ``del-flows`` /
    ``add-flows`` (which return once the tables are changed) packets can still take the old paths.
    ``ovs-appctl revalidator/wait`` returns when the revalidators finish a pass that had not ended
    when it was asked, i.e. one that sees the change (the change itself starts one at once, and
    one runs at least every 500 ms: max-revalidator). Returns (seconds waited, error or None);
    on an error (e.g. "can't wait on multiple udpifs" when the kernel datapath is in use too) it
    sleeps 0.5 s, one revalidation period, instead."""
    t0 = now_s()
    proc = subprocess.run(["ovs-appctl", "-t", "ovs-vswitchd", "--timeout=10", "revalidator/wait"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False)
    if proc.returncode != 0:
        time.sleep(0.5)
        return now_s() - t0, (proc.stdout.strip() or "rc %d" % proc.returncode)
    return now_s() - t0, None


class RouteSwitch:
    """Answers coll_bench's --toggle requests (see coll_bench.c).

    "openmpi": on every switch that holds the job's host-pair routes (the allreduce plan), an
    override flow per route is added above them (``override_flows``) that forwards the pair as the
    switch's default route for the destination does, so Open MPI's packets follow the
    controller's default routing, as in a job without sdnmpi. "sdnmpi": the override flows are
    deleted (by their cookie). The controller's own flows are never modified, so a plan or tree
    the controller changes meanwhile stays intact; bcast trees are not overridden (they match
    only the job's multicast group, which Open MPI's TCP traffic never uses). After a change it
    waits for Open vSwitch to revalidate its datapath flows (``wait_datapath_revalidated``).
    With ``hide=False`` nothing is overridden (Open MPI then also uses the routes sdnmpi's plan
    installed). "end" (sent once, before SDN_MPI_Finalize): the overrides are gone (as for
    "sdnmpi") and ``on_end`` runs, which reads the job's plans and trees from the controller
    while they still exist.

    Between two requests it attributes the bytes every spine port sent to the implementation that
    was running, so the output shows how each implementation's traffic spread over the spines.
    """

    def __init__(self, directory, bridges, spine_ports, hide=True, on_end=None, wait=wait_datapath_revalidated):
        self.dir = directory
        self.bridges = list(bridges)
        self.spine_ports = dict(spine_ports)   # spine name -> [interface names]
        self.hide = hide
        self.on_end = on_end
        self.wait = wait
        self.state = "start"
        self.saved = {}
        self.hidden = False
        self.toggles = 0
        self.toggle_s = 0.0
        self.revalidate_s = 0.0
        self.hidden_flows = []
        self.errors = []
        self.ended = False
        self.spine_bytes = {}
        self._last_counts = self._spine_counts()
        self._seq = None
        self._stop = threading.Event()
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(8, len(self.bridges))))
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._account("end")
        if self.hidden:
            self._restore()   # the job died with its flows off: put them back for its release
        self._pool.shutdown()
        return False

    def _spine_counts(self):
        return {spine: sum(interface_tx_bytes(i) for i in ifaces) for spine, ifaces in self.spine_ports.items()}

    def _account(self, _new_state):
        counts = self._spine_counts()
        bucket = self.spine_bytes.setdefault(self.state, {})
        for spine, value in counts.items():
            bucket[spine] = bucket.get(spine, 0) + max(0, value - self._last_counts.get(spine, 0))
        self._last_counts = counts

    def _run(self):
        req = os.path.join(self.dir, "req")
        while not self._stop.is_set():
            try:
                with open(req) as f:
                    text = f.read().split()
            except OSError:
                text = []
            if len(text) == 2 and text[0] != self._seq:
                seq, what = text
                t0 = now_s()
                try:
                    self.handle(what)
                except Exception as exc:  # pylint: disable=broad-except
                    LOG.exception("route switch failed")
                    self.errors.append(str(exc))
                self.toggle_s += now_s() - t0
                tmp = os.path.join(self.dir, "ack.tmp")
                with open(tmp, "w") as f:
                    f.write(seq + "\n")
                os.rename(tmp, os.path.join(self.dir, "ack"))
                self._seq = seq
            else:
                self._stop.wait(0.003)

    def handle(self, what):
        if what == "end":
            self.ended = True
            if self.hidden and self._restore():
                self._wait()
            self._account("end")
            self.state = "end"
            if self.on_end is not None:
                try:
                    self.on_end()
                except Exception as exc:  # pylint: disable=broad-except
                    self.errors.append("reading the job's plans: %s" % exc)
            return
        self._account(what)
        self.toggles += 1
        if self.hide:
            # Wait for the datapath only if a flow table changed.
            if what == "openmpi" and not self.hidden:
                if self._hide():
                    self._wait()
            elif what == "sdnmpi" and self.hidden:
                if self._restore():
                    self._wait()
        self.state = what

    def _wait(self):
        seconds, error = self.wait()
        self.revalidate_s += seconds
        if error and len(self.errors) < 5:
            self.errors.append("revalidator/wait: %s (slept instead)" % error)

    def _hide(self):
        """Adds the override flows on every switch that holds job pair routes; returns how many."""
        def one(bridge):
            dump = ofctl("--no-stats", "dump-flows", bridge)
            if dump.returncode != 0:
                raise RuntimeError("dump-flows %s: %s" % (bridge, dump.stdout.strip()))
            overrides, missing = override_flows(dump.stdout.splitlines())
            if overrides:
                add = ofctl("add-flows", bridge, "-", stdin="\n".join(overrides) + "\n")
                if add.returncode != 0:
                    raise RuntimeError("add-flows %s: %s" % (bridge, add.stdout.strip()))
            return bridge, overrides, missing
        done = list(self._pool.map(one, self.bridges))
        self.saved = {bridge: lines for bridge, lines, _missing in done if lines}
        missing = [m for _b, _l, ms in done for m in ms]
        if missing and len(self.errors) < 5:
            self.errors.append("no default route to override %d job flows, e.g. %s" % (len(missing), missing[0]))
        self.hidden = True
        self.hidden_flows.append(sum(len(l) for l in self.saved.values()))
        return self.hidden_flows[-1]

    def _restore(self):
        """Deletes the override flows (the job's own flows were never touched); returns how many."""
        def one(bridge):
            rm = ofctl("del-flows", bridge, "cookie=0x%x/-1" % BENCH_COOKIE)
            if rm.returncode != 0:
                raise RuntimeError("del-flows %s: %s" % (bridge, rm.stdout.strip()))
        self.hidden = False
        list(self._pool.map(one, list(self.saved)))
        count = sum(len(l) for l in self.saved.values())
        self.saved = {}
        return count

    def summary(self):
        spread = {}
        for impl, per_spine in self.spine_bytes.items():
            total = sum(per_spine.values())
            spread[impl] = {"bytes": per_spine,
                            "share": {s: (v / total if total else None) for s, v in per_spine.items()}}
        return {"hide_job_flows": self.hide, "toggles": self.toggles,
                "toggle_s_total": self.toggle_s, "revalidate_wait_s_total": self.revalidate_s,
                "job_flows_hidden": (max(self.hidden_flows) if self.hidden_flows else 0),
                "ended": self.ended, "errors": self.errors[:5], "spine_tx_bytes": spread}


# --- the fabric -----------------------------------------------------------------------------

class Bench:
    def __init__(self, args):
        self.args = args
        self.fab_model = benchcore.Fabric(args.spines, args.leaves, args.hosts_per_leaf,
                                          args.host_bw, args.fabric_bw)
        self.ctl = None
        self.fabric = None
        self.topo = None
        self.ports = {"ofp": args.ofp_port or free_port(), "wsapi": args.wsapi_port or free_port(),
                      "rpc": args.rpc_port or free_port()}
        self.results = None
        self.out_dir = None
        self.log_dir = None
        self._mn_log = None
        self.have_sdn_bcast = None
        self.coll_bench = None

    def attach(self, ctl, fabric, out_dir):
        """Run jobs on a controller and a started fabric that their owner (``make demo``) started
        and stops, instead of start_controller/start_fabric; job logs go to ``out_dir``."""
        self.ctl, self.fabric, self.topo = ctl, fabric, fabric.topo
        self.out_dir = self.log_dir = out_dir

    # controller
    def start_controller(self, routing):
        from sdnmpi.mininet_topos import controller_proc
        log_path = os.path.join(self.log_dir, "controller-%s.log" % routing)
        extra = ("--sdnmpi-rpc-host", "0.0.0.0", "--sdnmpi-rpc-port", str(self.ports["rpc"]))
        self.ctl = controller_proc.start_controller(self.ports["ofp"], self.ports["wsapi"], routing=routing,
                                                    extra_args=extra, log_path=log_path)
        self.ctl.wait_rest_ready(timeout=60)

    def stop_controller(self):
        if self.ctl is not None:
            self.ctl.stop()
            self.ctl = None

    def start_fabric(self):
        from sdnmpi.mininet_topos.fattree import LeafSpineTopo
        from sdnmpi.mininet_topos.net import FabricNet
        self._mininet_log_to_file()
        a = self.args
        self.topo = LeafSpineTopo(spines=a.spines, leaves=a.leaves, hosts_per_leaf=a.hosts_per_leaf,
                                  host_bw=a.host_bw or None, fabric_bw=a.fabric_bw or None, prefix=a.prefix)
        self.fabric = FabricNet(self.topo, controller_port=self.ports["ofp"], mgmt_prefix=a.mgmt_subnet)
        self.fabric.start()
        self.fabric.start_lldpd(os.path.join(ROOT, "lldpd", "sdnmpi-lldpd"), interval=1.0, log_dir=self.log_dir)

    def stop_fabric(self):
        if self.fabric is not None:
            self.fabric.stop()
            self.fabric = None
        self._mininet_log_restore()

    def _mininet_log_to_file(self):
        """Mininet's log (info level: what it builds and stops, and its tc warnings, e.g. one
        'sch_htb: quantum of class 50001 is big' per rate-limited interface, which is harmless:
        the kernel caps the quantum) goes to logs/mininet.log instead of the console; restored by
        stop_fabric. Mininet writes its own newlines, as on its console."""
        from mininet.log import lg
        if self._mn_log is not None:
            return
        handler = logging.FileHandler(os.path.join(self.log_dir, "mininet.log"))
        handler.terminator = ""
        handler.setFormatter(logging.Formatter("%(message)s"))
        self._mn_log = (handler, list(lg.handlers), lg.level, lg.propagate)
        for old in list(lg.handlers):
            lg.removeHandler(old)
        lg.addHandler(handler)
        lg.setLevel(logging.INFO)
        lg.propagate = False

    def _mininet_log_restore(self):
        from mininet.log import lg
        if self._mn_log is None:
            return
        handler, handlers, level, propagate = self._mn_log
        self._mn_log = None
        lg.removeHandler(handler)
        handler.close()
        for old in handlers:
            lg.addHandler(old)
        lg.setLevel(level)
        lg.propagate = propagate

    def link_directions(self):
        """[(switch interface, "tx"|"rx", Mbit/s)]: every direction of every rate-limited link,
        counted at a switch port (switch-switch links: tx at both ends; host links: tx and rx of
        the switch's port)."""
        topo = self.topo
        out = []
        for _a, _b, info in topo.links(sort=True, withInfo=True):
            n1, n2, p1, p2 = info["node1"], info["node2"], info["port1"], info["port2"]
            bw = info.get("bw")
            if not bw:
                continue
            if topo.isSwitch(n1) and topo.isSwitch(n2):
                out += [("%s-eth%d" % (n1, p1), "tx", bw), ("%s-eth%d" % (n2, p2), "tx", bw)]
            else:
                sw, port = (n1, p1) if topo.isSwitch(n1) else (n2, p2)
                out += [("%s-eth%d" % (sw, port), "tx", bw), ("%s-eth%d" % (sw, port), "rx", bw)]
        return out

    def wait_ready(self, timeout):
        """Every switch, link and host discovered and every switch holding a route to every host."""
        from sdnmpi.mininet_topos import controller_proc
        topo = self.topo
        controller_proc.wait_for_topology(self.ctl, len(topo.switch_names), topo.expected_switch_links,
                                          len(topo.host_names), timeout=timeout)
        deadline = now_s() + timeout
        want = len(topo.host_names)
        while True:
            counts = {}
            for br in topo.switch_names:
                out = ofctl("dump-flows", br).stdout
                counts[br] = sum(1 for line in out.splitlines() if "priority=%d," % PRIORITY_ROUTE in line)
            if all(c == want for c in counts.values()):
                return
            if now_s() > deadline:
                raise TimeoutError("routes not installed after %.0f s: %s" % (timeout, counts))
            time.sleep(0.5)

    def wait_no_jobs(self, timeout=30):
        deadline = now_s() + timeout
        while now_s() < deadline:
            try:
                if self.ctl.rest("/sdnmpi/jobs") == []:
                    return True
            except (OSError, ValueError):
                pass
            time.sleep(0.3)
        return False

    def spine_ports(self):
        """spine bridge name -> its interfaces (towards the leaves)."""
        out = {}
        for spine in self.topo.spine_names:
            out[spine] = ["%s-eth%d" % (spine, leaf) for leaf in range(1, self.topo.leaves + 1)]
        return out

    def host_names(self, host_numbers):
        return ["h%d" % n for n in host_numbers]

    def rpc_stats(self):
        """The controller's RPC counters, plus its route recomputations (``route_recomputes``,
        which grow when the topology changes: a link or switch lost and found again)."""
        try:
            stats = self.ctl.rest("/sdnmpi/stats")
        except (OSError, ValueError):
            return {}
        out = dict(stats.get("rpc") or {})
        out["route_recomputes"] = stats.get("route_recomputes", 0)
        return out


# --- one mpirun -----------------------------------------------------------------------------

PLAN_RE = re.compile(r"plan comm=\d+ ranks=(?P<ranks>\d+) hosts=\d+ steps=(?P<steps>\d+) pairs=(?P<pairs>\d+): ok "
                     r"flows=(?P<flows>\d+) max_load=\[(?P<max_load>[^\]]*)\] in (?P<rtt>[\d.]+)s "
                     r"\(controller total (?P<total>[\d.]+)s plan (?P<plan>[\d.]+)s install (?P<install>[\d.]+)s\)")


def run_mpi_job(bench, job, progress):
    """Runs one coll_bench job; returns (events, meta)."""
    from sdnmpi.mininet_topos import procs
    from sdnmpi.mininet_topos.net import MpiJob
    args = bench.args
    fab = bench.fabric
    hosts = [fab.host(h) for h in bench.host_names(job["hosts"])]
    toggle_dir = tempfile.mkdtemp(prefix="toggle-", dir=fab.tmpdir)
    prog = [bench.coll_bench, "--collective", job["collective"], "--reps", job["reps"]]
    if job.get("sizes"):
        prog += ["--sizes", ",".join(str(s) for s in job["sizes"])]
    if job.get("calls"):
        prog += ["--calls", ",".join(str(c) for c in job["calls"])]
    if job.get("roots"):
        prog += ["--roots", ",".join(str(r) for r in job["roots"])]
    prog += ["--tiny-reps", job.get("tiny_reps", 0), "--tiny-block", job.get("tiny_block", 10),
             "--toggle", toggle_dir]
    if job.get("lib_verbose"):
        prog.append("--lib-verbose")
    env = {"SDN_MPI_CONTROLLER": "%s:%d" % (fab.mgmt.root_ip, bench.ports["rpc"]),
           "SDN_MPI_FABRIC_SUBNET": FABRIC_SUBNET}
    env.update(sdn_env(args))
    mpi = MpiJob(fab, hosts, slots=1)
    argv = mpi.mpirun_argv(prog, np=len(hosts), env=env, mca=args.mca)
    log_path = os.path.join(bench.log_dir, "%s.log" % job["name"])
    events, plan_lines, meta = [], [], {"name": job["name"], "argv": [str(a) for a in argv]}
    plan_info = {}

    def capture_plan():
        # Called at coll_bench's "end" request, before SDN_MPI_Finalize releases the job.
        plan_info.update(summarize_jobs(bench.ctl.rest("/sdnmpi/jobs"), bench.topo))

    stats_before = bench.rpc_stats()
    switch = RouteSwitch(toggle_dir, bench.topo.switch_names, bench.spine_ports(),
                         hide=not args.no_hide_job_flows, on_end=capture_plan)
    timeout = job["timeout_s"]
    t0 = now_s()
    pending = {}
    with CpuMonitor(links=bench.link_directions()) as cpu, switch, open(log_path, "w") as log:
        log.write(" ".join(str(a) for a in argv) + "\n")
        proc = subprocess.Popen(procs.in_host(hosts[0], argv), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=mpi.environment(env), start_new_session=True,
                                universal_newlines=True, bufsize=1)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            procs.terminate([proc], timeout=2.0)
        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            for line in proc.stdout:
                log.write(line)
                ev = benchcore.parse_line(line)
                if ev is None:
                    if "sdnmpi[0]: plan" in line:
                        plan_lines.append(line.strip())
                    continue
                events.append(ev)
                _show(ev, job, pending, progress)
            proc.wait()
        finally:
            timer.cancel()
            procs.kill_by_environ(mpi.dir)
            shutil.rmtree(mpi.dir, ignore_errors=True)
    meta.update({"rc": proc.returncode, "timed_out": timed_out.is_set(), "wall_s": now_s() - t0,
                 "cpu": cpu.summary(), "routes": switch.summary(), "plan": plan_info,
                 "log": os.path.relpath(log_path, bench.out_dir)})
    stats_after = bench.rpc_stats()
    meta["controller_rpc"] = {k: stats_after.get(k, 0) - stats_before.get(k, 0)
                              for k in ("jobs_registered", "allreduce_plans", "bcast_trees", "errors")}
    # Routes are recomputed only when the topology changes: during a job that means the controller
    # lost LLDP links or switches (a CPU-starved machine) and the job's times are not trustworthy.
    meta["route_recomputes"] = stats_after.get("route_recomputes", 0) - stats_before.get("route_recomputes", 0)
    meta["fabric_disrupted"] = meta["route_recomputes"] > 0 or not stats_after
    meta["disrupted"] = disruption_reasons(meta)
    for line in plan_lines:
        m = PLAN_RE.search(line)
        if m:
            meta["lib_plan"] = {"rtt_s": float(m.group("rtt")), "controller_total_s": float(m.group("total")),
                                "controller_plan_s": float(m.group("plan")),
                                "controller_install_s": float(m.group("install")),
                                "flows": int(m.group("flows")), "max_load": m.group("max_load")}
    if not bench.wait_no_jobs():
        meta["warning"] = "the controller still lists the job 30 s after it ended"
    if meta["rc"] == 0 and not switch.ended:
        meta["warning"] = "coll_bench never sent its end request: no plan recorded"
    return events, meta


def disruption_reasons(meta):
    """Why a job's times cannot be trusted: [] if nothing happened."""
    reasons = []
    stalls = (meta.get("cpu") or {}).get("stalls") or []
    if stalls:
        reasons.append("the machine stalled %d time(s), longest %.1f s (at %.0f s into the job)" % (
            len(stalls), max(s["length_s"] for s in stalls),
            max(stalls, key=lambda s: s["length_s"])["at_s"]))
    if meta.get("route_recomputes"):
        reasons.append("the controller recomputed its routes %d time(s) (links, switches or hosts lost and found)"
                       % meta["route_recomputes"])
    elif meta.get("fabric_disrupted"):
        reasons.append("the controller did not answer after the job")
    return reasons


def summarize_jobs(jobs, topo=None):
    """The plans and trees of the jobs listed by /sdnmpi/jobs (normally just this one)."""
    names = {}
    if topo is not None:
        names = {dpid: name for name, dpid in getattr(topo, "dpids", {}).items()}
    out = {"jobs": len(jobs), "routes": 0, "trees": []}
    for j in jobs:
        for comm, plan in sorted((j.get("comms") or {}).items()):
            out["comm %s" % comm] = {k: plan.get(k) for k in ("planner", "max_load", "lower_bound", "flows")}
        out["routes"] += len(j.get("routes") or [])
        for tree in j.get("trees") or []:
            out["trees"].append({"comm": tree.get("comm"), "root": tree.get("root"),
                                 "members": len(tree.get("members") or []),
                                 "top": names.get(tree.get("top"), tree.get("top")),
                                 "switches": len(tree.get("switches") or {})})
    return out


def _show(ev, job, pending, progress):
    kind = ev.get("bench")
    if kind == "sample" and ev.get("bytes", 0) >= job.get("show_min_bytes", 1024):
        key = (ev["collective"], ev["bytes"], ev.get("root"), ev["rep"])
        pending.setdefault(key, {})[ev["impl"]] = ev["t_s"]
        impls = pending[key]
        if len(impls) == job["nimpl"]:
            del pending[key]
            work = job["work_per_byte"] * ev["bytes"] * job["nimpl"]
            progress.add(work)
            job["done_work"] = job.get("done_work", 0.0) + work
            root = "" if ev.get("root", -1) < 0 else " root %d" % ev["root"]
            calls = 1
            if ev["collective"] == "allreduce" and job.get("calls") and ev["bytes"] in job.get("sizes", []):
                calls = job["calls"][job["sizes"].index(ev["bytes"])]
            progress.say("  %s %s: %s%s sample %d/%d: %s" % (
                job["label"], ev["collective"], benchcore.fmt_bytes(ev["bytes"]), root, ev["rep"] + 1,
                job["reps"] * calls, "  ".join("%s %s" % (i, benchcore.fmt_seconds(impls[i]))
                                        for i in benchcore.IMPLS if i in impls)))
    elif kind == "init":
        progress.say("  %s %s: %s" % (job["label"], ev.get("metric"), benchcore.fmt_seconds(ev.get("t_s"))))
    elif kind == "check" and not ev.get("ok"):
        progress.say("  %s CHECK FAILED: %s" % (job["label"], json.dumps(ev)))


# --- planning the run -----------------------------------------------------------------------

def estimate_call_s(fab, hosts, collective, nbytes, root=0, impl="openmpi"):
    """A rough duration of one call (for timeouts and the ETA), fitted to QUICK runs on this
    emulation (quiet machine): an allreduce took 1.2-2.2x the recursive-doubling limit (1.8 used);
    Open MPI's bcast ~1.2 log2(p) times the single-tree limit, sdnmpi's ~1.2-1.5 times it."""
    if collective == "allreduce":
        limit = benchcore.allreduce_limits(fab, hosts, nbytes)["rd"] or 0.0
        return 1.8 * limit + 0.01
    limit = benchcore.bcast_limits(fab, hosts, root, nbytes)["tree"] or 0.0
    factor = 1.3 if impl == "sdnmpi" else 1.2 * max(1.0, (len(hosts) - 1).bit_length())
    return factor * limit + 0.01


# Seconds one switch of the routes between the implementations takes in an allreduce job
# (ovs-ofctl on every switch, then waiting for Open vSwitch's revalidation, about 0.45 s):
# measured on this 2-core machine (17 switches took 10-12 s).
TOGGLE_S = 0.7


def calls_per_point(est_call_s, point_seconds, max_calls):
    """Back-to-back calls per implementation at one allreduce point: enough for about
    ``point_seconds`` of samples (each call estimated at ``est_call_s``), between 1 and
    ``max_calls``. Short calls are noisy (a few ms of jitter in userspace OVS), so they get more
    samples; long ones keep one call per route switch."""
    if point_seconds <= 0 or est_call_s <= 0:
        return 1
    return max(1, min(max_calls, int(math.ceil(point_seconds / est_call_s))))


def plan_jobs(args, fab, have_sdn_bcast):
    """The list of jobs (dicts) in run order, grouped by routing."""
    n = fab.hosts
    jobs = []
    routings = csv_list(args.routings, ROUTINGS)
    bcast_routings = csv_list(args.bcast_routings, ROUTINGS) if "bcast" in args.collectives else []
    placements = csv_list(args.placements, ("block", "random"))
    bcast_placements = csv_list(args.bcast_placements, ("block", "random"))
    ar_sizes = benchcore.parse_sizes(args.allreduce_sizes)
    bc_sizes = benchcore.parse_sizes(args.bcast_sizes)
    ar_nprocs = parse_nprocs(args.allreduce_nprocs, n)
    bc_nprocs = parse_nprocs(args.bcast_nprocs, n)
    for routing in [r for r in ROUTINGS if r in routings or r in bcast_routings]:
        if "init" in args.collectives and routing in routings:
            for rep in range(args.init_reps):
                for placement in placements[:1]:
                    hosts = benchcore.placement_hosts(placement, n, n, args.seed)
                    jobs.append({"name": "init-%s-%s-p%d-%d" % (routing, placement, n, rep + 1),
                                 "collective": "init", "routing": routing, "placement": placement,
                                 "nprocs": n, "hosts": hosts, "reps": 1, "tiny_reps": 3,
                                 "lib_verbose": True, "nimpl": 1, "work": 2.0, "work_per_byte": 0.0})
        if "allreduce" in args.collectives and routing in routings:
            for placement in placements:
                for p in ar_nprocs:
                    hosts = benchcore.placement_hosts(placement, n, p, args.seed)
                    est = [estimate_call_s(fab, hosts, "allreduce", s) for s in ar_sizes]
                    calls = [calls_per_point(e, args.point_seconds, args.max_calls) for e in est]
                    # timed, check, and the warm-up up to 256 KiB
                    work = sum(e * (args.reps * 2 * c + 2 + (2 if s <= 262144 else 0))
                               for s, e, c in zip(ar_sizes, est, calls))
                    work += args.tiny_reps * 2 * 0.02 + 4
                    blocks = -(-args.tiny_reps // max(1, args.tiny_block))
                    toggles = blocks + 3 + len(ar_sizes) * (args.reps + 1)
                    work += toggles * TOGGLE_S
                    jobs.append({"name": "allreduce-%s-%s-p%d" % (routing, placement, p),
                                 "collective": "allreduce", "routing": routing, "placement": placement,
                                 "nprocs": p, "hosts": hosts, "reps": args.reps, "sizes": ar_sizes,
                                 "calls": calls, "tiny_reps": args.tiny_reps, "tiny_block": args.tiny_block,
                                 "nimpl": 2, "work": work})
        if "bcast" in args.collectives and routing in bcast_routings:
            nimpl = 2 if have_sdn_bcast else 1
            for placement in bcast_placements:
                for p in bc_nprocs:
                    hosts = benchcore.placement_hosts(placement, n, p, args.seed)
                    roots = bcast_roots(args.bcast_roots, fab, hosts)
                    impls = benchcore.IMPLS[:nimpl]
                    # timed, the warm-up up to 256 KiB, and the first call per root (first size)
                    work = sum(estimate_call_s(fab, hosts, "bcast", s, r, impl)
                               * (args.reps + (1 if s <= 262144 else 0) + (1 if s == bc_sizes[0] else 0))
                               for s in bc_sizes for r in roots for impl in impls)
                    if nimpl == 2:   # route switches change nothing in a bcast job (no host-pair routes)
                        work += (2 * len(roots) + 2 + args.reps * len(roots) * len(bc_sizes)) * 0.05
                    jobs.append({"name": "bcast-%s-%s-p%d" % (routing, placement, p),
                                 "collective": "bcast", "routing": routing, "placement": placement,
                                 "nprocs": p, "hosts": hosts, "reps": args.reps, "sizes": bc_sizes,
                                 "roots": roots, "nimpl": nimpl, "work": work + 4})
    for job in jobs:
        job["label"] = "%s/%s p=%d" % (job["routing"], job["placement"], job["nprocs"])
        job["timeout_s"] = args.job_timeout or (5 * job["work"] + 300)
        if "work_per_byte" not in job:
            sizes = job.get("sizes", [])
            total_bytes = (sum(s * c for s, c in zip(sizes, job.get("calls") or [1] * len(sizes)))
                           * job["reps"] * job["nimpl"] * max(1, len(job.get("roots", [0]))))
            job["work_per_byte"] = (0.8 * job["work"] / total_bytes) if total_bytes else 0.0
    return jobs


def bcast_roots(text, fab, hosts):
    """--bcast-roots: 'auto' (rank 0 and the first rank on another leaf, benchcore.bcast_roots) or
    a list of ranks, each below the job's process count."""
    if text.strip() == "auto":
        return benchcore.bcast_roots(fab, hosts)
    roots = [int(r) for r in csv_list(text)]
    bad = [r for r in roots if not 0 <= r < len(hosts)]
    if bad or not roots:
        raise ValueError("bcast roots %s do not fit %d processes" % (bad or text, len(hosts)))
    return roots


# --- the run --------------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="a subset that finishes in about 5 minutes (fewer sizes, reps, bcast configs)")
    g = parser.add_argument_group("fabric")
    g.add_argument("--spines", type=int, default=2)
    g.add_argument("--leaves", type=int, default=4)
    g.add_argument("--hosts-per-leaf", type=int, default=2)
    # 30/15 rather than the 40/20 of `make demo`: on this 2-core machine with userspace OVS, 40/20
    # fails the bottleneck check's parallel part even when the machine is quiet (bench/README.md).
    g.add_argument("--host-bw", type=mbit, default=30, help="host links, Mbit/s (0: unlimited)")
    g.add_argument("--fabric-bw", type=mbit, default=15, help="leaf-spine links, Mbit/s (0: unlimited)")
    g = parser.add_argument_group("what to measure (defaults: full run; --quick changes them)")
    g.add_argument("--collectives", default="init,allreduce,bcast")
    g.add_argument("--routings", help="default routing policies for allreduce (%s)" % FULL["routings"])
    g.add_argument("--placements", help="rank placements for allreduce (%s)" % FULL["placements"])
    g.add_argument("--allreduce-sizes", help="bytes: list or LO..HI powers of two (%s)" % FULL["allreduce_sizes"])
    g.add_argument("--allreduce-nprocs", default="all", help="process counts: list, 'all', 'pow2'")
    g.add_argument("--bcast-sizes", help="(%s)" % FULL["bcast_sizes"])
    g.add_argument("--bcast-nprocs", help="(%s: 2, 4, 8, ... up to the hosts)" % FULL["bcast_nprocs"])
    g.add_argument("--bcast-routings", help="(%s)" % FULL["bcast_routings"])
    g.add_argument("--bcast-placements", help="(%s)" % FULL["bcast_placements"])
    g.add_argument("--bcast-roots", default="auto",
                   help="bcast roots: 'auto' (rank 0 and the first rank on another leaf) or ranks, e.g. 0")
    g.add_argument("--reps", type=int, help="timed calls per implementation and point (%d)" % FULL["reps"])
    g.add_argument("--tiny-reps", type=int, help="8-byte allreduce calls per implementation (%d)" % FULL["tiny_reps"])
    g.add_argument("--tiny-block", type=int, help="8-byte calls per block between switches (%d)" % FULL["tiny_block"])
    g.add_argument("--point-seconds", type=float,
                   help="allreduce: per repetition and point, each implementation makes back-to-back calls "
                        "for about this long (estimated; 0: one call) (%g)" % FULL["point_seconds"])
    g.add_argument("--max-calls", type=int, default=8, help="at most this many back-to-back calls (8)")
    g.add_argument("--init-reps", type=int, help="extra init-only jobs per routing (%d)" % FULL["init_reps"])
    g.add_argument("--seed", type=int, default=7, help="seed of the random placement")
    g.add_argument("--no-hide-job-flows", action="store_true",
                   help="do not override sdnmpi's job routes during Open MPI's calls (Open MPI then "
                        "also rides on them)")
    g.add_argument("--planner-max-hosts", type=int, help="planner scale: largest fabric (%d; 0: skip)"
                   % FULL["planner_max_hosts"])
    g.add_argument("--iperf-seconds", type=int)
    g.add_argument("--retry-disrupted", type=int, default=1,
                   help="re-run a job this many times if the machine stalled or the fabric's topology changed "
                        "during it (all attempts are kept and reported)")
    g = parser.add_argument_group("plumbing")
    g.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    g.add_argument("--prefix", default="bn", help="switch name prefix (unique among running fabrics)")
    g.add_argument("--mgmt-subnet", default="172.31.0.0/16", help="management network (unique)")
    g.add_argument("--ofp-port", type=int, default=0, help="0: a free port")
    g.add_argument("--wsapi-port", type=int, default=0, help="0: a free port")
    g.add_argument("--rpc-port", type=int, default=0, help="0: a free port")
    g.add_argument("--ompi-mca", action="append", default=[], metavar="NAME=VALUE",
                   help="extra Open MPI MCA parameter for every mpirun (repeatable; recorded, and "
                        "ompi_info's coll tuned settings are read with it), e.g. --ompi-mca "
                        "coll_tuned_use_dynamic_rules=1 --ompi-mca coll_tuned_allreduce_algorithm=4. "
                        "Not allowed: %s (the harness sets them)" % ", ".join(sorted(MCA_RESERVED)))
    g.add_argument("--sdn-timeout-ms", type=int, default=30000, help="SDN_MPI_TIMEOUT_MS for the jobs")
    g.add_argument("--sdn-bcast-rate", default="auto", metavar="MBIT|auto|lib",
                   help="SDN_MPI_BCAST_RATE_MBPS for the jobs (the multicast root's sending rate): "
                        "auto = 90%% of the slowest link (18 on the default fabric, the library's "
                        "default), lib = leave it to the library"),
    g.add_argument("--job-timeout", type=float, default=0, help="seconds per mpirun (0: from the estimate)")
    g.add_argument("--discovery-timeout", type=float, default=120)
    g.add_argument("--dry-run", action="store_true", help="print the planned jobs and the estimate, then exit")
    args = parser.parse_args(argv)
    defaults = QUICK if args.quick else FULL
    for key, value in defaults.items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    args.collectives = csv_list(args.collectives, ("init", "allreduce", "bcast"))
    try:
        args.mca = parse_mca(args.ompi_mca)
        args.bcast_rate_mbps = bcast_rate(args.sdn_bcast_rate, args.host_bw, args.fabric_bw)
    except ValueError as exc:
        parser.error(str(exc))
    return args


# Open MPI MCA parameters run.py sets itself (net.MpiJob): overriding them would take the traffic off
# the emulated fabric, break the launch or let polling ranks starve Open vSwitch (and Open MPI
# merges repeated --mca values of one name into a list, so they cannot simply be given twice).
MCA_RESERVED = ("btl", "btl_tcp_if_include", "btl_tcp_if_exclude", "oob_tcp_if_include",
                "oob_tcp_if_exclude", "plm_rsh_agent", "mpi_yield_when_idle")


def parse_mca(items):
    """['NAME=VALUE', ...] -> [(name, value)]; ValueError for a malformed or reserved entry."""
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if name.startswith("OMPI_MCA_"):
            name = name[len("OMPI_MCA_"):]
        if not sep or not name or not re.match(r"^[A-Za-z0-9_]+$", name):
            raise ValueError("--ompi-mca wants NAME=VALUE, got %r" % item)
        if name in MCA_RESERVED:
            raise ValueError("--ompi-mca %s: the harness sets this one itself" % name)
        out.append((name, value.strip()))
    return out


def bcast_rate(text, host_bw, fabric_bw):
    """SDN_MPI_BCAST_RATE_MBPS from --sdn-bcast-rate: a number, None for 'lib', or for 'auto' 90 %
    of the slowest rate-limited link (rounded down; None if no link is limited)."""
    text = str(text).strip().lower()
    if text == "lib":
        return None
    if text == "auto":
        limited = [bw for bw in (host_bw, fabric_bw) if bw]
        return max(1, int(0.9 * min(limited))) if limited else None
    value = int(float(text))
    if value < 1:
        raise ValueError("--sdn-bcast-rate must be at least 1 (Mbit/s)")
    return value


def sdn_env(args):
    """The SDN_MPI_* settings every job gets besides the controller address (recorded)."""
    env = {"SDN_MPI_TIMEOUT_MS": str(args.sdn_timeout_ms)}
    if args.bcast_rate_mbps is not None:
        env["SDN_MPI_BCAST_RATE_MBPS"] = str(args.bcast_rate_mbps)
    return env


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s: %(message)s")
    fab = benchcore.Fabric(args.spines, args.leaves, args.hosts_per_leaf, args.host_bw, args.fabric_bw)
    if fab.hosts < 2:
        print("need at least 2 hosts", file=sys.stderr)
        return 2
    have_sdn_bcast_guess = _have_sdn_bcast_symbol()
    jobs = plan_jobs(args, fab, have_sdn_bcast_guess)
    estimate = sum(j["work"] for j in jobs) + 15 * len(set(j["routing"] for j in jobs)) + 20
    if args.dry_run:
        for job in jobs:
            print("%-36s hosts %s sizes %s roots %s ~%s" % (job["name"], job["hosts"], job.get("sizes", "-"),
                                                          job.get("roots", "-"), fmt_duration(job["work"])))
        print("%d jobs, estimated %s (plus planner scale)" % (len(jobs), fmt_duration(estimate)))
        return 0
    if os.geteuid() != 0:
        print("bench/run.py needs root (Mininet, Open vSwitch)", file=sys.stderr)
        return 2

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_dir = os.path.join(args.out_dir, stamp)
    log_dir = os.path.join(out_dir, "logs")
    os.makedirs(log_dir, exist_ok=True)
    bench = Bench(args)
    bench.out_dir, bench.log_dir = out_dir, log_dir
    print("sdnmpi bench%s: results in %s" % (" (QUICK)" if args.quick else "", out_dir), flush=True)
    with open(os.path.join(log_dir, "build.log"), "w") as build_log:
        bench.coll_bench, have_sdn_bcast = build_programs(build_log)
    bench.have_sdn_bcast = have_sdn_bcast
    if have_sdn_bcast != have_sdn_bcast_guess:
        jobs = plan_jobs(args, fab, have_sdn_bcast)
    notes = []
    if not have_sdn_bcast and "bcast" in args.collectives:
        notes.append("libsdnmpi has no SDN_MPI_Bcast (nm libsdnmpi.a): bcast rows are Open MPI only.")
        print("NOTE: " + notes[-1], flush=True)
    started = datetime.datetime.now().isoformat(timespec="seconds")
    results = {
        "schema": 1, "started": started, "quick": args.quick, "command": [sys.executable] + sys.argv,
        "fabric": fab.to_json(),
        "software": software_versions(),
        "coll_tuned": coll_tuned_settings(args.mca),
        "mpirun": {"mca": {"btl": "tcp,self", "btl_tcp_if_include": FABRIC_SUBNET,
                           "oob_tcp_if_include": args.mgmt_subnet, "mpi_yield_when_idle": "1",
                           **dict(args.mca)},
                   "extra_mca": dict(args.mca),
                   "ranks_per_host": 1, "sdn_env": sdn_env(args)},
        "method": {"reps": args.reps, "tiny_reps": args.tiny_reps, "tiny_block": args.tiny_block,
                   "point_seconds": args.point_seconds, "max_calls": args.max_calls, "seed": args.seed,
                   "hide_job_flows": not args.no_hide_job_flows, "have_sdn_bcast": have_sdn_bcast,
                   "route_switch": ("for Open MPI's calls, override flows (priority %d, cookie 0x%x) forward the job's "
                                    "host pairs as the default routes do; removed for sdnmpi's; after each change "
                                    "ovs-appctl revalidator/wait" % (PRIORITY_OVERRIDE, BENCH_COOKIE)),
                   "retry_disrupted": args.retry_disrupted, "sdn_bcast_rate": args.sdn_bcast_rate,
                   "allreduce_sizes": benchcore.parse_sizes(args.allreduce_sizes),
                   "bcast_sizes": benchcore.parse_sizes(args.bcast_sizes),
                   "placements": {p: benchcore.placement_hosts(p, fab.hosts, fab.hosts, args.seed)
                                  for p in ("block", "random")},
                   "collectives": args.collectives},
        "cpu_check": {"iperf": []},
        "jobs": [], "records": [], "planner_scale": [], "notes": notes,
    }
    bench.results = results
    results_path = os.path.join(out_dir, "results.json")
    progress = Progress(sum(j["work"] for j in jobs))
    print("%d mpirun jobs planned, estimated %s" % (len(jobs), fmt_duration(estimate)), flush=True)
    run_t0 = now_s()
    interrupted = False
    old_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        _run_all(bench, jobs, progress, results, results_path)
    except KeyboardInterrupt as exc:
        interrupted = True
        by = str(exc) or "SIGINT"   # _raise_interrupt names the signal; Ctrl-C raises it bare
        notes.append("interrupted (%s): the results are partial" % by)
        print("interrupted by %s, cleaning up" % by, flush=True)
        traceback.print_exc(limit=4)
    except Exception as exc:  # pylint: disable=broad-except
        LOG.exception("bench failed")
        notes.append("failed: %s" % exc)
        print("FAILED: %s" % exc, flush=True)
        if bench.ctl is not None:
            print("controller log tail:\n%s" % bench.ctl.log_tail(), flush=True)
    finally:
        bench.stop_controller()
        bench.stop_fabric()
        signal.signal(signal.SIGTERM, old_term)
    if not interrupted and args.planner_max_hosts:
        progress.say("planner scale (no Mininet), fabrics up to %d hosts" % args.planner_max_hosts)
        try:
            results["planner_scale"] = planner_scale.run(max_hosts=args.planner_max_hosts, seed=args.seed,
                                                         progress=progress.say)
        except Exception as exc:  # pylint: disable=broad-except
            LOG.exception("planner scale failed")
            notes.append("planner scale failed: %s" % exc)
    results["finished"] = datetime.datetime.now().isoformat(timespec="seconds")
    results["wall_s"] = now_s() - run_t0
    _finish_cpu_check(results)
    _write_json(results_path, results)
    report.write_report(results, out_dir)
    latest = os.path.join(args.out_dir, "latest")
    try:
        if os.path.islink(latest) or os.path.exists(latest):
            os.unlink(latest)
        os.symlink(stamp, latest)
    except OSError as exc:
        print("cannot update %s: %s" % (latest, exc))
    with open(os.path.join(out_dir, "results.md")) as md:
        print(md.read())
    print("results: %s (wall %s)" % (out_dir, fmt_duration(results["wall_s"])), flush=True)
    ok = not interrupted and not any(n.startswith("failed") for n in notes) and \
        all(j.get("rc") == 0 for j in results["jobs"])
    return 0 if ok else 1


def _pct_text(value):
    return "-" if value is None else "%.0f%%" % value


def _raise_interrupt(signum, _frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _have_sdn_bcast_symbol():
    out = run_text(["nm", os.path.join(ROOT, "libsdnmpi", "libsdnmpi.a")])
    return bool(re.search(r" T SDN_MPI_Bcast$", out, re.M))


def _write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as out:
        json.dump(data, out, indent=1)
    os.replace(tmp, path)


def _run_all(bench, jobs, progress, results, results_path):
    args = bench.args
    from sdnmpi.mininet_topos.net import ensure_ovs
    from sdnmpi.mininet_topos.demo import iperf3
    ensure_ovs()
    fab = bench.fab_model
    routing_order = []
    for job in jobs:
        if job["routing"] not in routing_order:
            routing_order.append(job["routing"])
    for index, routing in enumerate(routing_order):
        t0 = now_s()
        bench.stop_controller()
        bench.start_controller(routing)
        if bench.fabric is None:
            progress.say("starting the fabric: %d spines, %d leaves, %d hosts/leaf, host links %s Mbit/s, "
                         "fabric links %s Mbit/s" % (fab.spines, fab.leaves, fab.hosts_per_leaf,
                                                     fab.host_bw or "unlimited", fab.fabric_bw or "unlimited"))
            bench.start_fabric()
        bench.wait_ready(args.discovery_timeout)
        progress.say("controller up with routing %s; fabric discovered and routed in %.1f s"
                     % (routing, now_s() - t0))
        if args.iperf_seconds and (index == 0 or not args.quick):
            hosts = bench.fabric.hosts
            client, server = hosts[0], hosts[-1]
            with CpuMonitor(links=bench.link_directions()) as cpu:
                try:
                    mbps = iperf3(server, client, bench.fabric.host_ips()[server.name], seconds=args.iperf_seconds)
                except Exception as exc:  # pylint: disable=broad-except
                    mbps = None
                    results["notes"].append("iperf3 failed under %s: %s" % (routing, exc))
            usage = cpu.summary()

            def median_of(field):
                return (usage.get(field) or {}).get("median")
            entry = {"routing": routing, "client": client.name, "server": server.name,
                     "seconds": args.iperf_seconds, "mbit_s": mbps,
                     "fraction_of_fabric_bw": (mbps / fab.fabric_bw if mbps and fab.fabric_bw else None),
                     "foreign_cpu_pct": median_of("foreign_cpu_pct_of_one_cpu"),
                     "ovs_main_runnable_pct": median_of("ovs_main_runnable_pct"),
                     "busiest_link_weighted_pct": usage.get("busiest_link_weighted_pct"), "cpu": usage}
            results["cpu_check"]["iperf"].append(entry)
            progress.say("iperf3 %s -> %s (different leaves) under %s: %s Mbit/s (fabric links %s Mbit/s); "
                         "busiest link at %s of its rate, ovs-vswitchd forwarding thread busy %s, other processes "
                         "%s of a CPU" % (client.name, server.name, routing, "%.1f" % mbps if mbps else "-",
                                          fab.fabric_bw, _pct_text(entry["busiest_link_weighted_pct"]),
                                          _pct_text(entry["ovs_main_runnable_pct"]), _pct_text(entry["foreign_cpu_pct"])))
            if index == 0 and fab.host_bw and fab.fabric_bw:
                with CpuMonitor(links=bench.link_directions()) as cpu:
                    try:
                        par = parallel_iperf(bench, args.iperf_seconds)
                    except Exception as exc:  # pylint: disable=broad-except
                        par = {"error": str(exc)}
                par["cpu"] = cpu.summary()
                par["routing"] = routing
                results["cpu_check"]["parallel"] = par
                progress.say("iperf3, %d UDP flows at once (%s): %s of the %s Mbit/s offered received; busiest link at %s "
                             "of its rate, ovs-vswitchd forwarding thread busy %s, other processes %s of a CPU" % (
                                 len(par.get("flows", [])), routing,
                                 ("%.1f Mbit/s" % par["mbit_s"]) if par.get("mbit_s") else par.get("error", "-"),
                                 "%.0f" % par.get("offered_mbit_s", 0),
                                 _pct_text(par["cpu"].get("busiest_link_weighted_pct")),
                                 _pct_text((par["cpu"].get("ovs_main_runnable_pct") or {}).get("median")),
                                 _pct_text((par["cpu"].get("foreign_cpu_pct_of_one_cpu") or {}).get("median"))))
        for job in [j for j in jobs if j["routing"] == routing]:
            run_job_with_retries(bench, job, progress, results, results_path)
        bench.stop_controller()


def run_job_with_retries(bench, job, progress, results, results_path):
    """Runs a job; re-runs it (up to --retry-disrupted times) if it was disrupted.

    The rule is mechanical and ignores the times: a job is disrupted when the machine stalled
    (CpuMonitor: the sampler could not run for 2 s or more) or the controller recomputed its
    routes (it lost and found links, switches or hosts). A disrupted attempt's records stay in
    results.json with ``superseded: true`` and are listed in results.md apart from the tables;
    the last attempt is used even if it was disrupted too (then its rows are marked)."""
    args = bench.args
    attempts = 1 + max(0, args.retry_disrupted)
    for attempt in range(1, attempts + 1):
        bench.wait_ready(args.discovery_timeout)   # quick when all is well; after a disruption it waits
        progress.say("job %s%s: %s, ranks on hosts %s%s" % (
            job["name"], "" if attempt == 1 else " (attempt %d)" % attempt, job["label"], job["hosts"],
            (", roots %s" % job["roots"]) if job.get("roots") else ""))
        if attempt > 1:
            job = dict(job, work_per_byte=0.0)    # the progress/ETA counted the work once
        job["done_work"] = 0.0
        events, meta = run_mpi_job(bench, job, progress)
        if attempt == 1:
            progress.add(max(0.0, job["work"] - job.get("done_work", 0.0)))
        meta.update({k: job[k] for k in ("collective", "routing", "placement", "nprocs", "hosts")})
        meta["roots"] = job.get("roots")
        meta["attempt"] = attempt
        meta_events = [e for e in events if e.get("bench") in ("meta", "check")]
        meta["program"] = meta_events
        records = job_records(bench, job, events, meta)
        for rec in records:
            rec["attempt"] = attempt
            if meta["disrupted"]:
                rec["disrupted"] = True
        retry = bool(meta["disrupted"]) and attempt < attempts and meta["rc"] == 0
        if retry:
            meta["superseded"] = True
            for rec in records:
                rec["superseded"] = True
        results["jobs"].append(meta)
        results["records"].extend(records)
        _write_json(results_path, results)
        for ev in meta_events:
            if ev.get("bench") == "meta" and bool(ev.get("have_sdn_bcast")) != bool(bench.have_sdn_bcast):
                results["notes"].append("job %s: coll_bench says have_sdn_bcast=%s, the build detected %s"
                                        % (job["name"], ev.get("have_sdn_bcast"), bench.have_sdn_bcast))
        status = "ok" if meta["rc"] == 0 else ("TIMED OUT" if meta["timed_out"] else "rc=%s" % meta["rc"])
        cpu = meta["cpu"]
        progress.say("job %s done in %s (%s); busiest link at %s of its rate and ovs-vswitchd's forwarding thread "
                     "%s busy while data moved, other processes %s of a CPU; route switches %d (%.1f s, of which "
                     "%.1f s waiting for OVS revalidation), job routes overridden for Open MPI: %s"
                     % (job["name"], fmt_duration(meta["wall_s"]), status,
                        _pct_text(cpu.get("busiest_link_weighted_pct")),
                        _pct_text(cpu.get("ovs_main_runnable_weighted_pct")),
                        _pct_text((cpu.get("foreign_cpu_pct_of_one_cpu") or {}).get("median")),
                        meta["routes"]["toggles"], meta["routes"]["toggle_s_total"],
                        meta["routes"]["revalidate_wait_s_total"], meta["routes"]["job_flows_hidden"]))
        if meta["routes"]["errors"]:
            progress.say("job %s: route switch errors: %s" % (job["name"], "; ".join(meta["routes"]["errors"])))
        if meta["rc"] != 0:
            print(open(os.path.join(bench.out_dir, meta["log"])).read()[-3000:], flush=True)
        if meta["disrupted"]:
            progress.say("job %s DISRUPTED: %s%s" % (job["name"], "; ".join(meta["disrupted"]),
                                                     ": running it again" if retry else ""))
        if not retry:
            return


PARALLEL_LOAD = 0.9   # the parallel check offers this fraction of every flow's fair share


def parallel_pairs(fab):
    """The flows of the parallel check: [(client host, server host, fair share Mbit/s)].

    On every leaf L at once: its first host sends to the first host of leaf L+1 (across the spines;
    each leaf sends one such flow up and takes one down, so no fabric link carries two, whatever
    the routing), and its second host sends to its first host (within the leaf). The first host's
    link then carries two flows in: the max-min fair shares are min(fabric, host/2) for the flow
    across the spines and the rest of the host link for the one within the leaf (20 and 20 Mbit/s
    on the default fabric: 8 flows, 160 Mbit/s in all, through 2-3 switches each)."""
    hpl, leaves = fab.hosts_per_leaf, fab.leaves
    inf = float("inf")
    host_bw, fabric_bw = fab.host_bw or inf, fab.fabric_bw or inf
    first = [(leaf - 1) * hpl + 1 for leaf in range(1, leaves + 1)]
    pairs = []
    for index, src in enumerate(first):
        cross = leaves > 1
        intra = hpl > 1
        if cross and intra:
            cross_rate = min(fabric_bw, host_bw / 2.0)
            intra_rate = host_bw - cross_rate
        else:
            cross_rate, intra_rate = min(fabric_bw, host_bw), host_bw
        if cross:
            pairs.append((src, first[(index + 1) % leaves], cross_rate))
        if intra:
            pairs.append((src + 1, src, intra_rate))
    return [p for p in pairs if p[2] != inf]


def udp_received_mbit(iperf_json):
    """Mbit/s the server received in an ``iperf3 -u -J`` client's output (sent x (1 - loss))."""
    end = json.loads(iperf_json)["end"]
    total = end.get("sum_received") or end["sum"]
    if "lost_percent" in end["sum"] and "sum_received" not in end:
        return end["sum"]["bits_per_second"] * (1 - end["sum"]["lost_percent"] / 100.0) / 1e6
    return total["bits_per_second"] / 1e6


def parallel_iperf(bench, seconds, port0=5301):
    """The parallel check: the flows of ``parallel_pairs`` at the same time, as UDP at
    PARALLEL_LOAD x their fair share (so no link is over-subscribed: 144 of 160 Mbit/s on the
    default fabric). If the emulation keeps up, the servers receive all of it; what they do not
    receive was lost in a switch or a veth's queue because a CPU did not keep up. UDP, not TCP:
    TCP flows that share a link split it unevenly and hide the question asked here. Returns a dict
    for results.json: per flow the Mbit/s offered and received, and the totals."""
    from sdnmpi.mininet_topos import procs
    from sdnmpi.mininet_topos.demo import _wait_listening
    fab, net = bench.fab_model, bench.fabric
    ips = net.host_ips()
    pairs = parallel_pairs(fab)
    servers, clients, flows = [], [], []
    try:
        for k, (src, dst, _rate) in enumerate(pairs):
            server = net.host("h%d" % dst)
            servers.append(procs.popen_in_host(server, ["iperf3", "-s", "-1", "-p", port0 + k]))
            _wait_listening(server, port0 + k)
        for k, (src, dst, rate) in enumerate(pairs):
            argv = procs.in_host(net.host("h%d" % src), [
                "iperf3", "-c", ips["h%d" % dst], "-p", port0 + k, "-u", "-b", "%.3fM" % (PARALLEL_LOAD * rate),
                "-l", "1400", "-t", seconds, "-J"])
            clients.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, universal_newlines=True,
                                            start_new_session=True))
        for (src, dst, rate), client in zip(pairs, clients):
            out, _ = client.communicate(timeout=seconds + 30)
            error = None
            try:
                got = udp_received_mbit(out)
            except (ValueError, KeyError, TypeError):
                got = None
                try:
                    error = json.loads(out).get("error")
                except ValueError:
                    error = out.strip()[-300:]
            flows.append({"client": "h%d" % src, "server": "h%d" % dst, "mbit_s": got,
                          "offered_mbit_s": PARALLEL_LOAD * rate, "fair_share_mbit_s": rate,
                          "across_spines": fab.leaf_of(src) != fab.leaf_of(dst)})
            if error:
                flows[-1]["error"] = error
    finally:
        procs.terminate(clients + servers, timeout=2)
    got = [f["mbit_s"] for f in flows]
    offered = sum(f["offered_mbit_s"] for f in flows)
    total = sum(got) if got and all(g is not None for g in got) else None
    return {"protocol": "udp", "seconds": seconds, "load": PARALLEL_LOAD, "flows": flows, "mbit_s": total,
            "offered_mbit_s": offered, "fraction_received": (total / offered) if total is not None and offered else None}


def job_records(bench, job, events, meta):
    """results.json records of one job: samples aggregated, plus the init metrics."""
    fab = bench.fab_model
    hosts = job["hosts"]

    def limit(collective, nbytes, root):
        if collective == "allreduce":
            return benchcore.allreduce_limit(fab, hosts, nbytes)
        return benchcore.bcast_limit(fab, hosts, root or 0, nbytes)

    records = benchcore.aggregate_samples(events, job["routing"], job["placement"], job["nprocs"], limit)
    for rec in records:
        if rec["collective"] == "allreduce":
            rec["limits_s"] = benchcore.allreduce_limits(fab, hosts, rec["bytes"])
        else:
            rec["limits_s"] = benchcore.bcast_limits(fab, hosts, rec["root"] or 0, rec["bytes"])
        rec["job"] = job["name"]
    init = {}
    for ev in events:
        if ev.get("bench") == "init":
            key = (ev["metric"], ev.get("bytes", 0), ev.get("root"))
            init.setdefault(key, []).append(ev["t_s"])
    lib_plan = meta.get("lib_plan")
    if lib_plan:
        for metric, field in (("plan_rtt", "rtt_s"), ("controller_total", "controller_total_s"),
                              ("controller_plan", "controller_plan_s"),
                              ("controller_install", "controller_install_s")):
            init[(metric, 0, None)] = [lib_plan[field]]
    for (metric, nbytes, root), samples in sorted(init.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2] or 0)):
        records.append(benchcore.make_record("init", "sdnmpi", job["routing"], job["placement"], job["nprocs"],
                                             nbytes, root, samples, None, metric=metric, job=job["name"]))
    return records


# Thresholds of the bottleneck check (bench/README.md, "Bottleneck check"). TCP moves at most
# ~95 % of a link's rate as payload (1448 of 1514 bytes per full frame); 85 % leaves room for
# TCP's own dynamics, not for a CPU that cannot keep up. The parallel check offers UDP below
# every link's rate, so nearly all of it must arrive.
CHECK_IPERF_MIN = 0.85          # one TCP flow across the spines: >= 85 % of the fabric rate
CHECK_PARALLEL_MIN = 0.95       # the parallel UDP check: >= 95 % of what was offered arrives
CHECK_FOREIGN_MAX = 25.0        # other processes used < 25 % of one CPU: the machine was quiet


def _finish_cpu_check(results):
    """The verdict: is link bandwidth, not CPU, the bottleneck? Fills results["cpu_check"].

    Criteria (each a line of the verdict; thresholds above):
    1. iperf3, one TCP flow between two hosts on different leaves on the otherwise idle fabric,
       reaches the fabric link rate: the emulation can fill a link.
    2. iperf3 with a flow from every leaf across the spines and one within every leaf at the
       same time (``parallel_pairs``: every first host's link nearly full, every fabric link
       carrying one flow; 8 flows through 2-3 switches each, about what a collective's busiest
       step asks of the emulation), as UDP at 90 % of each flow's fair share (144 Mbit/s on the
       default fabric): >= 95 % of it arrives. No link is over-subscribed, so whatever does not
       arrive was dropped because ovs-vswitchd (one thread forwards every packet of the
       userspace datapath) or the CPUs did not keep up.
    3. No job whose records are in the tables was disrupted (machine stall, topology change).
    All three: "link-bound". Reported besides, over the MPI jobs (not the init jobs, not
    superseded attempts): the busiest link's load and ovs-vswitchd's forwarding thread's
    busy % (run + waiting for a CPU), both weighted by the traffic, i.e. while data moved;
    the CPU used by processes outside the bench (other tests, builds: above 25 % of one CPU the
    machine counts as shared); steal time; the machine-wide busy % (near 100 % in every job: MPI
    ranks poll). The busy % of ovs-vswitchd's thread is not a criterion: it is high even at low
    rates (it wakes up for every few packets, and pays for the kernel's work of the veths and
    the rate limiters) and grows far slower than the traffic (measured here: 68 % for one
    9.5 Mbit/s flow, 99 % for one 260 Mbit/s flow on unlimited links)."""
    fab = results["fabric"]
    check = results["cpu_check"]
    jobs = [j for j in results["jobs"] if j.get("collective") != "init" and not j.get("superseded")]

    def per_job(field, stat="median"):
        values = []
        for j in jobs:
            value = (j.get("cpu") or {}).get(field)
            if isinstance(value, dict):
                value = value.get(stat)
            if value is not None:
                values.append(value)
        return values

    def med(values):
        return statistics.median(values) if values else None
    busy, steal = per_job("machine_busy_pct"), per_job("steal_pct")
    ovs = per_job("ovs_vswitchd_pct_of_one_core")
    run_, wait = per_job("ovs_main_run_weighted_pct"), per_job("ovs_main_wait_weighted_pct")
    runnable = per_job("ovs_main_runnable_weighted_pct")
    linkw = per_job("busiest_link_weighted_pct")
    foreign = per_job("foreign_cpu_pct_of_one_cpu")
    disrupted = [j for j in results["jobs"] if j.get("disrupted") and not j.get("superseded")]
    retried = [j for j in results["jobs"] if j.get("superseded")]
    iperf = [e for e in check.get("iperf", []) if e.get("mbit_s")]
    par = check.get("parallel") or {}
    check.update({
        "jobs_machine_busy_pct_median": med(busy), "jobs_steal_pct_median": med(steal),
        "jobs_ovs_vswitchd_pct_median": med(ovs), "jobs_ovs_vswitchd_pct_max": max(ovs) if ovs else None,
        "jobs_ovs_main_run_weighted_pct_median": med(run_), "jobs_ovs_main_wait_weighted_pct_median": med(wait),
        "jobs_ovs_main_runnable_weighted_pct_median": med(runnable),
        "jobs_busiest_link_weighted_pct_median": med(linkw),
        "jobs_foreign_cpu_pct_median": med(foreign), "jobs_foreign_cpu_pct_max": max(foreign) if foreign else None,
        "jobs_disrupted": [j["name"] for j in disrupted], "jobs_rerun": [j["name"] for j in retried],
        "thresholds": {"iperf_fraction_min": CHECK_IPERF_MIN, "parallel_fraction_min": CHECK_PARALLEL_MIN,
                       "foreign_cpu_pct_max": CHECK_FOREIGN_MAX},
    })

    def foreign_during(entry):
        value = ((entry.get("cpu") or {}).get("foreign_cpu_pct_of_one_cpu") or {}).get("median")
        if value is None:
            value = entry.get("foreign_cpu_pct")
        return "" if value is None else "; other processes used %.0f%% of a CPU meanwhile" % value
    criteria = []
    if iperf and fab.get("fabric_bw_mbit"):
        frac = statistics.median(e["fraction_of_fabric_bw"] for e in iperf)
        criteria.append(("iperf", frac >= CHECK_IPERF_MIN,
                         "(1) one TCP flow across the spines (iperf3 %s->%s, %d s): %.1f Mbit/s = %.0f%% of the %g "
                         "Mbit/s fabric links (needs >= %.0f%%)%s" % (
                             iperf[0]["client"], iperf[0]["server"], iperf[0]["seconds"],
                             statistics.median(e["mbit_s"] for e in iperf), 100 * frac, fab["fabric_bw_mbit"],
                             100 * CHECK_IPERF_MIN, foreign_during(iperf[0]))))
    else:
        criteria.append(("iperf", None, "(1) no single-flow iperf3 result"))
    if par.get("fraction_received") is not None:
        flows = par["flows"]
        across = [f["mbit_s"] for f in flows if f["across_spines"]]
        within = [f["mbit_s"] for f in flows if not f["across_spines"]]
        criteria.append(("parallel", par["fraction_received"] >= CHECK_PARALLEL_MIN,
                         "(2) %d UDP flows at once (%d across the spines, %d within leaves, %d s), each at %.0f%% of its "
                         "fair share of the links: %.1f of the %.1f Mbit/s offered arrived = %.0f%% (needs >= %.0f%%; "
                         "per flow %s Mbit/s across, %s within)%s" % (
                             len(flows), len(across), len(within), par["seconds"], 100 * par["load"], par["mbit_s"],
                             par["offered_mbit_s"], 100 * par["fraction_received"], 100 * CHECK_PARALLEL_MIN,
                             "/".join("%.1f" % v for v in across) or "-", "/".join("%.1f" % v for v in within) or "-",
                             foreign_during(par))))
    else:
        criteria.append(("parallel", None, "(2) no parallel iperf3 result%s" % (
            (": %s" % par["error"]) if par.get("error") else "")))
    criteria.append(("stable", not disrupted,
                     "(3) %s" % ("no job was disrupted" if not disrupted else
                                 "%d job(s) disrupted even after re-running: %s" % (
                                     len(disrupted), "; ".join("%s: %s" % (j["name"], ", ".join(j["disrupted"]))
                                                               for j in disrupted)))
                     + ("" if not retried else " (%d attempt(s) re-run after a disruption)" % len(retried))))
    check["criteria"] = {name: ok for name, ok, _text in criteria}
    ok = all(c[1] is True for c in criteria)
    check["link_bound"] = ok
    shared = med(foreign) is not None and med(foreign) >= CHECK_FOREIGN_MAX
    check["machine_shared"] = shared
    lines = [text for _name, _ok, text in criteria]
    if linkw:
        lines.append("while the MPI jobs moved data, the busiest link ran at %.0f%% of its rate (traffic-weighted, "
                     "median over %d jobs; range %.0f-%.0f%%; gaps between an algorithm's steps keep this below "
                     "100%%)" % (med(linkw), len(linkw), min(linkw), max(linkw)))
    if runnable:
        lines.append("ovs-vswitchd's forwarding thread ran %.0f%% and waited for a CPU %.0f%% of that time "
                     "(traffic-weighted medians; busiest job %.0f%%)" % (med(run_), med(wait), max(runnable)))
    if foreign:
        lines.append("other processes on the machine (not the bench, not Open vSwitch) used %.0f%% of one CPU "
                     "during the jobs (median; highest job %.0f%%; %d CPUs in all)%s" % (
                         med(foreign), max(foreign), os.cpu_count(),
                         (", steal time %.0f%%" % med(steal)) if steal else ""))
    if busy:
        lines.append("machine CPU busy %.0f%% (MPI ranks poll while they wait, so this is always high "
                     "during a job)" % med(busy))
    failed = [name for name, good, _text in criteria if good is False]
    missing = [name for name, good, _text in criteria if good is None]
    if ok:
        conclusion = ("VERDICT: link-bound. The emulated links, not the CPU, limit the transfers%s." %
                      (" (although other processes used the CPU too)" if shared else ""))
    else:
        reasons = {"iperf": "one TCP flow does not fill a link",
                   "parallel": "the links do not reach their rates all at once",
                   "stable": "jobs were disrupted"}
        why = [reasons.get(n, n) for n in failed] + ["no data for criterion %s" % n for n in missing]
        conclusion = ("VERDICT: NOT shown to be link-bound (%s). The times include CPU effects of the emulation; "
                      "compare the implementations with care." % "; ".join(why))
        if shared:
            conclusion += (" Other processes used %.0f%% of a CPU: re-run on a quiet machine before concluding "
                           "that the link rates are too high." % med(foreign))
        elif ("iperf" in failed or "parallel" in failed) and foreign:
            conclusion += (" The machine was otherwise quiet, so the emulation itself is CPU-bound at these rates: "
                           "lower --host-bw/--fabric-bw (bench/README.md).")
    check["verdict"] = "; ".join(lines) + ". " + conclusion
    check["note"] = ("CPU figures are sampled once a second and link counters every 0.25 s during each job; "
                     "'other processes' misses processes that start and end between two samples (a lower bound).")


if __name__ == "__main__":
    sys.exit(main())
