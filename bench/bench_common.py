"""The bench's shared ground: paths, the controller's constants, the QUICK/FULL presets, small
helpers (time, progress, option parsing), software versions and Open MPI's coll/tuned settings,
and building coll_bench."""

import importlib.metadata
import json
import logging
import os
import platform
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for path in (HERE, ROOT):
    if path not in sys.path:
        sys.path.insert(0, path)

import planner_scale  # noqa: E402


LOG = logging.getLogger("bench")


# controller/constants.py (not imported: that package pulls in Ryu). tests/unit/test_bench_harness.py
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
    "tiny_idle_ms": 150,
    "point_seconds": 0.3,
    "settle_calls": 1,
    "init_reps": 1,
    "startup_reps": 3,
    "startup_calls": 48,
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
    "tiny_idle_ms": 150,
    "point_seconds": 0.5,
    "settle_calls": 1,
    "init_reps": 2,
    "startup_reps": 7,
    "startup_calls": 200,
    "iperf_seconds": 8,
    "planner_max_hosts": 4096,
}


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
    """A port for one of the controller's servers (sdnmpi.mininet_topos.controller_proc.free_port)."""
    from sdnmpi.mininet_topos import controller_proc
    return controller_proc.free_port()


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


def pct_text(value):
    return "-" if value is None else "%.0f%%" % value


def write_json(path, data):
    tmp = path + ".tmp"
    with open(tmp, "w") as out:
        json.dump(data, out, indent=1)
    os.replace(tmp, path)
