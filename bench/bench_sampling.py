"""CPU and link sampling while a job runs (CpuMonitor), from /proc and /sys."""

import collections
import os
import statistics
import threading

from bench_common import now_s
from jobroute_links import proc_net_dev
from ovs_counters import PhaseCounters, derived, schedstat


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
    """(ns on a CPU, ns waiting for a CPU) of one thread (/proc/PID/task/TID/schedstat, read by
    ovs_counters.schedstat), or None."""
    try:
        with open("/proc/%d/task/%d/schedstat" % (pid, tid)) as stat:
            times = schedstat(stat.read())
        return times["run_ns"], times["wait_ns"]
    except (OSError, ValueError):
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


# /proc/net/dev's columns (jobroute_links.proc_net_dev) of each direction's bytes and packets
DEV_COLUMNS = {("rx", "bytes"): 0, ("rx", "packets"): 1, ("tx", "bytes"): 8, ("tx", "packets"): 9}


def read_devices():
    """Every interface's counters in this (the root) namespace, one read of /proc/net/dev ({} if it
    cannot be read)."""
    try:
        return proc_net_dev()
    except (OSError, ValueError):
        return {}


def counter(devices, iface, direction, unit="bytes"):
    """``iface``'s ``direction`` ("tx" | "rx") ``unit`` ("bytes" | "packets") counter in ``devices``
    (read_devices), or None if it has none."""
    values = devices.get(iface)
    return None if values is None else values[DEV_COLUMNS[(direction, unit)]]


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
    - with ``links``, also the **switch crossings**: the bytes all switch ports sent ("tx" entries:
      every packet a switch forwards leaves it by one port, so this counts each byte once per
      switch it crossed), i.e. the work of ovs-vswitchd's forwarding thread, and their rate while
      data moved (``crossing_mib_s_weighted``, weighted like the busiest link's load); and the
      packets those ports sent (``crossing_packets_total``, ``crossing_bytes_per_packet``): the
      thread's cost is per packet more than per byte;
    - with ``phase`` (a callable returning a label, e.g. the route switch's current
      implementation), the link figures above and the forwarding thread's run + wait % (read at
      every link sample) per label (``phases``), so each implementation's traffic in a job is
      judged apart (bench_jobcheck.py); and Open vSwitch's own counters per label
      (ovs_counters.PhaseCounters), read when the label's owner announces a change
      (``phase_changed``: the route switch's ``on_phase``);
    - stalls: whenever this sampler itself could not run for ``stall_s`` or more (the whole
      machine froze: this VM's CPUs were not scheduled, as the kernel's RCU-stall and
      workqueue-lockup messages show at such times), the moment and the length.
    """

    def __init__(self, interval=1.0, links=(), own_pid=None, link_interval=0.25, stall_s=2.0, phase=None):
        self.interval = interval
        self.link_interval = link_interval
        self.stall_s = stall_s
        self.links = [l for l in links if l[2]]
        self.phase = phase
        # one record per link interval (LinkSample): the single source of every link figure, the
        # whole job's lists (link_util, ...) and the per-phase sums (phases) alike
        self.link_samples = []
        self.own_pid = own_pid or os.getpid()
        self.busy, self.steal, self.ovs, self.foreign = [], [], [], []
        self.ovs_main_run, self.ovs_main_wait, self.ovs_main_bytes = [], [], []
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
        # Open vSwitch's datapath and coverage counters per phase, read at the phase changes
        self.ovs_counters = PhaseCounters(self._ovs_pid, phase) if phase is not None and self._ovs_pid else None
        try:
            with open("/var/run/openvswitch/ovsdb-server.pid") as pidfile:
                self._excluded.add(int(pidfile.read().strip()))
        except (OSError, ValueError):
            pass

    @property
    def link_util(self):
        """The busiest link's load (% of its rate) per link interval."""
        return [s.util for s in self.link_samples]

    @property
    def link_bytes(self):
        """The bytes all links carried per link interval."""
        return [s.bytes for s in self.link_samples]

    @property
    def crossing_bytes(self):
        """The bytes the switch ports sent per link interval (the switch crossings)."""
        return [s.crossed for s in self.link_samples]

    @property
    def crossing_rate(self):
        """The switch crossings' MiB/s per link interval."""
        return [s.crossed / float(1 << 20) / s.dt for s in self.link_samples]

    @property
    def phases(self):
        """{label: phase_sums' accumulator} of the link intervals sampled with a ``phase`` label."""
        return phase_sums(self.link_samples) if self.phase is not None else {}

    def __enter__(self):
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if self.ovs_counters is not None:
            self.ovs_counters.__enter__()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        if self.ovs_counters is not None:
            self.ovs_counters.__exit__()
        return False

    def phase_changed(self, label):
        """The phase label is ``label`` from now on: Open vSwitch's counters are read now (in the
        caller's thread), their difference going to the phase before."""
        if self.ovs_counters is not None:
            self.ovs_counters.changed(label)

    def _sample(self):
        pid = self._ovs_pid
        return {"t": now_s(), "cpu": _cpu_times(), "ovs": _proc_ticks(pid) if pid else None,
                "main": _schedstat(pid, pid) if pid else None, "procs": process_table(),
                "bytes": self._bytes_total}

    def _link_sample(self):
        """(time, every link entry's byte counter, the forwarding thread's schedstat, every "tx"
        entry's packet counter (None for the others))."""
        pid, devices = self._ovs_pid, read_devices()
        return (now_s(), [counter(devices, iface, d) for iface, d, _cap in self.links],
                _schedstat(pid, pid) if pid else None,
                [counter(devices, iface, d, "packets") if d == "tx" else None for iface, d, _cap in self.links])

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
        best, where, total, crossed, packets = 0.0, None, 0, 0, 0
        for (iface, direction, cap), b0, b1, p0, p1 in zip(self.links, prev[1], cur[1], prev[3], cur[3]):
            if b0 is None or b1 is None:
                continue
            total += max(0, b1 - b0)
            if direction == "tx":
                crossed += max(0, b1 - b0)
                packets += max(0, p1 - p0) if p0 is not None and p1 is not None else 0
            util = 100.0 * (b1 - b0) * 8.0 / (cap * 1e6) / dt
            if util > best:
                best, where = util, "%s %s" % (iface, direction)
        runnable = None
        if prev[2] and cur[2]:
            runnable = 100.0 * ((cur[2][0] - prev[2][0]) + (cur[2][1] - prev[2][1])) / 1e9 / dt
        self.link_samples.append(LinkSample(dt, best, total, crossed, runnable,
                                            str(self.phase()) if self.phase is not None else None, packets))
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
            out["crossing_bytes_total"] = sum(self.crossing_bytes)
            out["crossing_packets_total"] = sum(s.packets for s in self.link_samples)
            out["crossing_bytes_per_packet"] = per_packet(out["crossing_bytes_total"], out["crossing_packets_total"])
            out["crossing_mib_s_weighted"] = weighted_mean(self.crossing_rate, self.link_bytes)
            phases = self.phases
            if phases:
                out["phases"] = {name: phase_summary(acc) for name, acc in phases.items()}
            out["busiest_link_most_often"] = max(self.busiest, key=self.busiest.get) if self.busiest else None
        if self.ovs_counters is not None:
            out["ovs_counters"] = ovs = self.ovs_counters.summary()
            for name, acc in ovs["phases"].items():
                acc["derived"] = derived(acc, out.get("phases", {}).get(name, {}).get("crossing_bytes"))
            if "job" in ovs:
                ovs["job"]["derived"] = derived(ovs["job"], out.get("crossing_bytes_total"))
        return out


class LinkSample(collections.namedtuple("LinkSample", "dt util bytes crossed runnable phase packets")):
    """One link interval: its length (s), the busiest link's load (% of its rate), the bytes all links
    carried, the bytes the switch ports sent (crossings), the forwarding thread's run + wait % (None
    without schedstat), the phase label (None without ``phase``) and the packets the switch ports
    sent."""
    __slots__ = ()


def per_packet(nbytes, packets):
    """Bytes per packet, or None without packets."""
    return nbytes / float(packets) if packets else None


def phase_sums(samples):
    """{label: accumulator} of ``samples`` (LinkSample) by phase, in sample order: seconds, bytes,
    crossing bytes, and the sums that weigh the busiest link's load, the crossings' rate and the
    forwarding thread's busy % by the bytes (phase_summary turns them into the figures)."""
    out = {}
    for s in samples:
        if s.phase is None:
            continue
        acc = out.setdefault(s.phase, {"seconds": 0.0, "bytes": 0, "crossing_bytes": 0, "crossing_packets": 0,
                                       "util_x_bytes": 0.0, "rate_x_bytes": 0.0, "runnable_x_bytes": 0.0,
                                       "runnable_bytes": 0})
        acc["seconds"] += s.dt
        acc["bytes"] += s.bytes
        acc["crossing_bytes"] += s.crossed
        acc["crossing_packets"] += s.packets
        acc["util_x_bytes"] += s.util * s.bytes
        acc["rate_x_bytes"] += s.crossed / float(1 << 20) / s.dt * s.bytes
        if s.runnable is not None:
            acc["runnable_x_bytes"] += s.runnable * s.bytes
            acc["runnable_bytes"] += s.bytes
    return out


def phase_summary(acc):
    """One phase's accumulated link samples -> the figures ``summary`` gives for a whole job."""
    moved = acc["bytes"]
    return {"seconds": round(acc["seconds"], 2), "link_bytes": moved, "crossing_bytes": acc["crossing_bytes"],
            "crossing_packets": acc["crossing_packets"],
            "crossing_bytes_per_packet": per_packet(acc["crossing_bytes"], acc["crossing_packets"]),
            "busiest_link_weighted_pct": acc["util_x_bytes"] / moved if moved else None,
            "crossing_mib_s_weighted": acc["rate_x_bytes"] / moved if moved else None,
            "ovs_main_runnable_weighted_pct": (acc["runnable_x_bytes"] / acc["runnable_bytes"]
                                               if acc["runnable_bytes"] else None)}


def weighted_mean(values, weights):
    """sum(v * w) / sum(w), or None if the weights add up to 0."""
    total = sum(weights)
    if not total:
        return None
    return sum(v * w for v, w in zip(values, weights)) / total
