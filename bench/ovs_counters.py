"""Open vSwitch's own counters per phase of a job (issue 17: what the forwarding thread spends its
time on): the userspace datapath's lookups (`dpif-netdev/pmd-stats-show`: EMC, megaflow hits,
upcalls), `dpctl/show` (hit / missed / lost, datapath flows installed), `upcall/show` (flows, flow
limit, revalidator dump duration), `coverage/show` (xlate_actions, dpif_flow_put, netdev_received,
...), and the forwarding thread's context switches (/proc).

Read at phase boundaries only (PhaseCounters: when the route switch announces a change of its phase
label, e.g. a switch to the other implementation), over one persistent connection to ovs-vswitchd's
unixctl socket (the JSON-RPC that ovs-appctl speaks), so a read costs no process start. The parsers
are pure (text in, dicts out). Caveat: OVS adds each thread's coverage counts to the totals about once a second, so
coverage deltas of phases shorter than a few seconds are smeared into the next phase; the datapath
(pmd) counters are exact at the read."""

import json
import re
import socket
import threading

from bench_common import now_s
from jobroute_links import counter_delta, datapath_stats
from rate_probe_parse import coverage_totals

RUNDIR = "/var/run/openvswitch"
LOOKUPS_RE = re.compile(r"lookups: hit:(\d+) missed:(\d+) lost:(\d+)")
FLOWS_RE = re.compile(r"^\s*flows: (\d+)\s*$", re.M)
UPCALL_FLOWS_RE = re.compile(r"flows\s*: \(current (\d+)\) \(avg (\d+)\) \(max (\d+)\) \(limit (\d+)\)")
DUMP_RE = re.compile(r"dump duration : (\d+)ms")
SWITCHES_RE = re.compile(r"^(voluntary|nonvoluntary)_ctxt_switches:\s*(\d+)", re.M)
# pmd-stats-show's counters kept per phase (datapath_stats' names)
PMD_KEYS = ("packets received", "emc hits", "smc hits", "megaflow hits", "simple match hits",
            "miss with success upcall", "miss with failed upcall", "packet recirculations")


def dpctl_show(text):
    """{"hit", "missed", "lost", "flows"} of `ovs-appctl dpctl/show`, summed over its datapaths
    (None if the text has no lookups line)."""
    lookups = LOOKUPS_RE.findall(text)
    if not lookups:
        return None
    out = {k: sum(int(l[i]) for l in lookups) for i, k in enumerate(("hit", "missed", "lost"))}
    out["flows"] = sum(int(f) for f in FLOWS_RE.findall(text))
    return out


def upcall_show(text):
    """{"flows", "flows_avg", "flows_max", "flow_limit", "dump_ms"} of `ovs-appctl upcall/show`
    (first datapath; None if it has no flows line)."""
    m = UPCALL_FLOWS_RE.search(text)
    if m is None:
        return None
    out = dict(zip(("flows", "flows_avg", "flows_max", "flow_limit"), (int(g) for g in m.groups())))
    dump = DUMP_RE.search(text)
    out["dump_ms"] = int(dump.group(1)) if dump else None
    return out


def context_switches(status_text):
    """{"voluntary": n, "nonvoluntary": n} of a /proc/PID/task/TID/status text."""
    return {kind: int(n) for kind, n in SWITCHES_RE.findall(status_text)}


def schedstat(text):
    """{"run_ns", "wait_ns", "slices"} of a /proc/PID/task/TID/schedstat text (ns on a CPU, ns
    waiting for one, times scheduled in)."""
    run, wait, slices = (int(v) for v in text.split()[:3])
    return {"run_ns": run, "wait_ns": wait, "slices": slices}


def pmd_counters(text):
    """The PMD_KEYS counters of `ovs-appctl dpif-netdev/pmd-stats-show` (summed over threads)."""
    stats = datapath_stats(text)
    return {k: stats[k] for k in PMD_KEYS if k in stats}


class Unixctl:
    """One connection to a daemon's unixctl socket; ``call(method)`` returns the reply's text (what
    ovs-appctl would print) or raises OSError / RuntimeError."""

    def __init__(self, path, timeout=2.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self._id = 0
        self._buf = ""
        self._decoder = json.JSONDecoder()

    def call(self, method, *params):
        self._id += 1
        self.sock.sendall(json.dumps({"method": method, "params": list(params), "id": self._id}).encode())
        while True:
            text = self._buf.lstrip()
            if text:
                try:
                    msg, end = self._decoder.raw_decode(text)
                except ValueError:
                    msg = None
                if msg is not None:
                    self._buf = text[end:]
                    if msg.get("id") != self._id:
                        continue
                    if msg.get("error") is not None:
                        raise RuntimeError("%s: %s" % (method, msg["error"]))
                    return msg.get("result") or ""
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("unixctl connection closed")
            self._buf += chunk.decode("utf-8", "replace")

    def close(self):
        self.sock.close()


def snapshot(call, pid):
    """One read of every counter: {"t", "pmd", "dp", "upcall", "coverage", "switches", "thread"} (a part
    is None where its read failed; "thread": the forwarding thread's schedstat). ``call(method)``
    returns a unixctl command's text."""
    out = {"t": now_s()}
    for key, method, parse in (("pmd", "dpif-netdev/pmd-stats-show", pmd_counters),
                               ("dp", "dpctl/show", dpctl_show), ("upcall", "upcall/show", upcall_show),
                               ("coverage", "coverage/show", coverage_totals)):
        try:
            out[key] = parse(call(method))
        except (OSError, RuntimeError, ValueError):
            out[key] = None
    try:
        with open("/proc/%d/task/%d/status" % (pid, pid)) as status:
            out["switches"] = context_switches(status.read())
        with open("/proc/%d/task/%d/schedstat" % (pid, pid)) as stat:
            out["thread"] = schedstat(stat.read())
    except (OSError, ValueError, IndexError):
        out.setdefault("switches", None)
        out["thread"] = None
    return out


def add_delta(acc, before, after):
    """Adds ``after`` - ``before`` (two snapshots) to the phase accumulator ``acc``."""
    acc["seconds"] = acc.get("seconds", 0.0) + after["t"] - before["t"]
    acc["reads"] = acc.get("reads", 0) + 1
    for key in ("pmd", "dp", "coverage", "switches", "thread"):
        if before.get(key) is None or after.get(key) is None:
            continue
        delta = counter_delta(before[key], after[key])
        if not delta:
            continue
        if key == "dp":   # flows is a level, not a counter: keep the highest seen at a boundary
            acc["dp_flows_max"] = max(acc.get("dp_flows_max", 0), before["dp"]["flows"], after["dp"]["flows"])
            delta.pop("flows", None)
        bucket = acc.setdefault(key, {})
        for name, value in delta.items():
            if value:
                bucket[name] = bucket.get(name, 0) + value
    up = after.get("upcall")
    if up:
        acc["flow_limit_min"] = min(acc.get("flow_limit_min", up["flow_limit"]), up["flow_limit"])
        if up["dump_ms"] is not None:
            acc["dump_ms_max"] = max(acc.get("dump_ms_max", 0), up["dump_ms"])


def derived(acc, crossing_bytes=None):
    """The per-phase ratios: upcalls per 1000 datapath packets, EMC share of the hits, and with
    ``crossing_bytes`` (the phase's switch crossings) upcalls and datapath packets per MiB; packets
    per receive batch (coverage netdev_received counts batches) and per forwarding-thread wakeup, and
    the main loop's poll registrations (poll_create_node: one per port and timer a loop pass waits
    on) per packet."""
    pmd, cov, sw = acc.get("pmd", {}), acc.get("coverage", {}), acc.get("switches", {})
    packets = pmd.get("packets received", 0)
    misses = pmd.get("miss with success upcall", 0) + pmd.get("miss with failed upcall", 0)
    hits = pmd.get("emc hits", 0) + pmd.get("smc hits", 0) + pmd.get("megaflow hits", 0)
    out = {"upcalls": misses, "datapath_packets": packets,
           "upcalls_per_1000_packets": 1000.0 * misses / packets if packets else None,
           "emc_share_of_hits": pmd.get("emc hits", 0) / float(hits) if hits else None,
           "packets_per_rx_batch": packets / float(cov["netdev_received"]) if cov.get("netdev_received") else None,
           "packets_per_wakeup": packets / float(sw["voluntary"]) if sw.get("voluntary") else None,
           "poll_nodes_per_packet": cov.get("poll_create_node", 0) / float(packets) if packets else None}
    thread = acc.get("thread")
    if thread and packets:   # the forwarding thread's run and run + wait time per datapath packet
        out["thread_run_us_per_packet"] = thread.get("run_ns", 0) / 1e3 / packets
        out["thread_busy_us_per_packet"] = (thread.get("run_ns", 0) + thread.get("wait_ns", 0)) / 1e3 / packets
    if crossing_bytes:
        mib = crossing_bytes / float(1 << 20)
        out["upcalls_per_mib"] = misses / mib
        out["datapath_packets_per_mib"] = packets / mib
    return out


class PhaseCounters:
    """Reads the counters (``snapshot``) at start (the phase then: ``phase()``), at every phase change
    announced to ``changed`` (by the route switch, where its phase label changes: RouteSwitch's
    ``on_phase``, through CpuMonitor.phase_changed) and at stop, and adds each difference to the
    phase that was on before the change. No thread of its own: a change is read in the caller's.
    ``summary()``: {label: accumulator} (add_delta) plus the job's whole delta under "job"."""

    def __init__(self, pid, phase, rundir=RUNDIR):
        self.pid = pid
        self.phase = phase
        self.path = "%s/ovs-vswitchd.%d.ctl" % (rundir, pid)
        self.acc = {}
        self.first = self.last = None
        self.error = None
        self.read_s = 0.0
        self.label = None          # the phase on since the last read (None: not started, or stopped)
        self._prev = None          # that read
        self._conn = None
        self._lock = threading.Lock()   # the announcer's thread and the job's (start, stop) share the connection

    def _call(self, method):
        if self._conn is None:
            try:
                self._conn = Unixctl(self.path)
            except OSError as exc:
                self.error = "%s: %s" % (self.path, exc)
                raise
        try:
            return self._conn.call(method)
        except OSError:   # an error reply (RuntimeError) leaves the connection usable
            self._conn.close()
            self._conn = None
            raise

    def _read(self):
        t0 = now_s()
        snap = snapshot(self._call, self.pid)
        self.read_s += now_s() - t0
        return snap

    def __enter__(self):
        with self._lock:
            self.label = str(self.phase())
            self.first = self._prev = self._read()
        return self

    def changed(self, label):
        """The phase is ``label`` from now on: the counters are read now, and their difference since
        the last read goes to the phase before. The same label again, or a call before start or
        after stop, reads nothing."""
        label = str(label)
        with self._lock:
            if self.label is None or label == self.label:
                return
            cur = self._read()
            add_delta(self.acc.setdefault(self.label, {}), self._prev, cur)
            self.label, self._prev = label, cur

    def __exit__(self, *exc):
        with self._lock:
            if self.label is not None:
                self.last = self._read()
                add_delta(self.acc.setdefault(self.label, {}), self._prev, self.last)
                self.label = self._prev = None
            if self._conn is not None:
                self._conn.close()
                self._conn = None
        return False

    def summary(self):
        out = {"phases": self.acc, "read_s": round(self.read_s, 3), "error": self.error}
        if self.first and self.last:
            job = {}
            add_delta(job, self.first, self.last)
            out["job"] = job
        return out
