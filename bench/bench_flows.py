"""Switching a job's sdnmpi flows on and off between Open MPI's and sdnmpi's calls (RouteSwitch):
override flows that copy the default routes, the --toggle protocol, datapath revalidation."""

import concurrent.futures
import os
import re
import subprocess
import threading
import time

from bench_common import (COOKIE_JOB, COOKIE_KIND_MASK, LOG, PRIORITY_JOB_MULTICAST, PRIORITY_JOB_ROUTE,
                       PRIORITY_ROUTE, now_s)


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
    ``state`` is the bench's phase label; ``on_phase`` (label) is called at each change of it, in the
    thread that changes it, before the request is acknowledged (the sampler reads Open vSwitch's
    counters then: CpuMonitor.phase_changed).
    """

    def __init__(self, directory, bridges, spine_ports, hide=True, on_end=None, wait=wait_datapath_revalidated,
                 on_phase=None):
        self.dir = directory
        self.bridges = list(bridges)
        self.spine_ports = dict(spine_ports)   # spine name -> [interface names]
        self.hide = hide
        self.on_end = on_end
        self.wait = wait
        self.on_phase = on_phase
        self._state = "start"
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

    @property
    def state(self):
        """The implementation whose routes are on: "start" before the first request, "end" after
        the last; a change is announced to ``on_phase``."""
        return self._state

    @state.setter
    def state(self, label):
        if label == self._state:
            return
        self._state = label
        if self.on_phase is not None:
            try:
                self.on_phase(label)
            except Exception:       # a sampler's failure must not stop the route switch or the job's record
                LOG.exception("route switch: the phase change to %r was not recorded", label)

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
