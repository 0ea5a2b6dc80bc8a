"""PFSim scenario files (``cg.yml``), unchanged: parsing, the FCFS event loop, and one scenario's run.

The scenarios of a file are the Cartesian product topology x scheduler x host_selector x
process_mapper x router, numbered in that order as PFSim numbers them. PFSim's class names map to
ours (`CLASSES`); our own names (``linear``, ``block``, any router of primitives.PAIR_ROUTERS, ...)
are accepted too. `run(spec)` is a pure function of a `Spec` (picklable, so it runs the same in
this process, a process pool or a Dask worker) and returns a `Result`.
"""
import collections
import heapq
import itertools
import logging
import os
import random

import numpy as np
import yaml

from .. import numeric, traces
from ..primitives import PAIR_ROUTERS, fabric, paths
from . import job, topology

LOG = logging.getLogger(__name__)

CLASSES = {
    "scheduler": {"pfsim.scheduler.FCFSScheduler": "fcfs"},
    "host_selector": {"pfsim.host_selector.LinearHostSelector": "linear",
                      "pfsim.host_selector.RandomHostSelector": "random"},
    "process_mapper": {"pfsim.process_mapper.LinearProcessMapper": "block",
                       "pfsim.process_mapper.CyclicProcessMapper": "cyclic",
                       "pfsim.process_mapper.RandomProcessMapper": "random"},
    "router": {"pfsim.router.DmodKRouter": "dmodk", "pfsim.router.GreedyRouter": "greedy",
               "pfsim.router.GreedyRouter2": "greedy2", "pfsim.router.RandomRouter": "random"},
}
OURS = {"scheduler": ("fcfs",), "host_selector": job.HOST_POLICIES,
        "process_mapper": job.MAPPINGS}
DISTRIBUTIONS = {"pfsim.math.ExponentialDistribution": "exponential", "exponential": "exponential",
                 "constant": "constant", "uniform": "uniform"}
_DIST_PARAMS = {"exponential": ("lambd",), "constant": ("value",), "uniform": ("a", "b")}
TOPOLOGIES = {"pfsim.topology.FileTopology": "file", "pfsim.topology.XGFTTopology": "xgft"}
MAX_SUBMITS = 100_000   # submissions a job entry may expect in a scenario's duration (duration / mean gap)

Spec = collections.namedtuple("Spec", "id duration topology topology_label scheduler host_selector "
                                      "process_mapper router jobs seed link_bw")
JobConf = collections.namedtuple("JobConf", "submit duration trace")


class ScenarioError(ValueError):
    """A scenario file that cannot be run; the message is one line."""


def _need(mapping, key, where):
    if not isinstance(mapping, dict):
        raise ScenarioError(f"{where}: must be a mapping with the key '{key}', got {mapping!r:.40}")
    if key not in mapping:
        raise ScenarioError(f"{where}: missing key '{key}'")
    return mapping[key]


def _number(value, where, positive=True):
    """``value`` as a finite float (positive, or else non-negative); a ScenarioError otherwise."""
    return (numeric.positive if positive else numeric.non_negative)(value, f"{where}:", ScenarioError)


def _mapping(conf, key, where):
    value = conf.get(key) or {}
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}.{key}: must be a mapping of names to values, got {value!r:.40}")
    return value


def _name(kind, value, where):
    if not isinstance(value, str):
        raise ScenarioError(f"{where}: {kind} must be a name, got {value!r:.40}")
    if value in CLASSES[kind]:
        return CLASSES[kind][value]
    known = PAIR_ROUTERS if kind == "router" else OURS[kind]
    if value in known:
        return value
    raise ScenarioError(f"{where}: unknown {kind} {value!r} (known: "
                        f"{', '.join(sorted(set(CLASSES[kind]) | set(known)))})")


def _dist(conf, where):
    """(kind, params) of a distribution of gaps or durations: every value positive and finite (a
    uniform's low end may be 0), so that a scenario's submissions advance."""
    kind = _need(conf, "distribution", where)
    if not isinstance(kind, str) or kind not in DISTRIBUTIONS:
        raise ScenarioError(f"{where}: unknown distribution {kind!r:.40} (known: {', '.join(sorted(DISTRIBUTIONS))})")
    kind = DISTRIBUTIONS[kind]
    params = _mapping(conf, "params", where)
    values = tuple(_number(_need(params, key, f"{where}.params"), f"{where}.params.{key}", key != "a")
                   for key in _DIST_PARAMS[kind])
    if kind == "uniform" and values[0] > values[1]:
        raise ScenarioError(f"{where}.params: a must not exceed b (got {values[0]:g} > {values[1]:g})")
    return (kind, values)


def _mean(dist):
    kind, p = dist
    return 1 / p[0] if kind == "exponential" else (p[0] + p[1]) / 2 if kind == "uniform" else p[0]


def _draw(rng, dist):
    kind, p = dist
    if kind == "exponential":
        return rng.expovariate(p[0])
    if kind == "uniform":
        return rng.uniform(p[0], p[1])
    return p[0]


def _levels(params, key, where):
    value = _need(params, key, f"{where}.params")
    if not isinstance(value, list) or not value or not all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in value):
        raise ScenarioError(f"{where}.params.{key}: must be a list of positive integers, got {value!r:.40}")
    return "/".join(map(str, value))


def _topology(conf, base, where):
    kind = _need(conf, "kind", where)
    if not isinstance(kind, str):
        raise ScenarioError(f"{where}.kind: must be a name, got {kind!r:.40}")
    params = _mapping(conf, "params", where)
    kind = TOPOLOGIES.get(kind, kind)
    if kind == "file":
        path = _need(params, "path", f"{where}.params")
        if not isinstance(path, str):
            raise ScenarioError(f"{where}.params.path: must be a file name, got {path!r:.40}")
        return ("file", os.path.join(base, path)), path
    if kind == "xgft":
        npe = params.get("npe", 1)
        if not isinstance(npe, int) or isinstance(npe, bool) or npe < 1:
            raise ScenarioError(f"{where}.params.npe: must be a positive integer, got {npe!r:.40}")
        spec = "xgft:m=%s,w=%s,pes=%s" % (_levels(params, "m", where), _levels(params, "w", where), npe)
        return ("spec", spec), spec
    if kind in ("kary", "leafspine"):
        for k, v in params.items():
            if not isinstance(k, str) or not isinstance(v, (str, int, float)) or isinstance(v, bool):
                raise ScenarioError(f"{where}.params: {k!r:.20}: must be a name and a number, got {v!r:.40}")
        spec = kind + ":" + ",".join(f"{k}={v}" for k, v in params.items())
        return ("spec", spec), spec
    raise ScenarioError(f"{where}: unknown topology kind {conf['kind']!r}")


def load(path, seed=0, link_bw=job.DEFAULT_LINK_BW):
    """(output directory, [Spec]) of the scenario file at ``path``."""
    try:
        with open(path) as f:
            conf = yaml.safe_load(f)
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read ({exc.strerror})") from None
    except (yaml.YAMLError, ValueError) as exc:   # ValueError: not UTF-8, an integer of over 4300 digits
        raise ScenarioError(f"{path}: not valid YAML ({' '.join(str(exc).split())[:120]})") from None
    except RecursionError:
        raise ScenarioError(f"{path}: not a scenario file (nested too deeply)") from None
    name = os.path.basename(path)
    base = os.path.dirname(os.path.abspath(path))
    duration = _number(_need(conf, "duration", name), f"{name}: duration")
    output = _need(conf, "output", name)
    if not isinstance(output, str):
        raise ScenarioError(f"{name}: output must be a folder name, got {output!r:.40}")
    topo_confs = _need(conf, "topology", name)
    if isinstance(topo_confs, str):
        topo_confs = [{"kind": "file", "params": {"path": topo_confs}}]
    if not isinstance(topo_confs, list) or not topo_confs:
        raise ScenarioError(f"{name}: topology must be a non-empty list of {{kind, params}}")
    topos = [_topology(t, base, f"{name}: topology[{i}]") for i, t in enumerate(topo_confs)]
    algorithms = _need(conf, "algorithms", name)
    lists = []
    for kind in ("scheduler", "host_selector", "process_mapper", "router"):
        values = _need(algorithms, kind, f"{name}: algorithms")
        if not isinstance(values, list) or not values:
            raise ScenarioError(f"{name}: algorithms.{kind} must be a non-empty list")
        lists.append([_name(kind, v, f"{name}: algorithms.{kind}") for v in values])
    job_confs = _need(conf, "jobs", name)
    if not isinstance(job_confs, list) or not job_confs:
        raise ScenarioError(f"{name}: jobs must be a non-empty list")
    jobs = []
    for i, jc in enumerate(job_confs):
        where = f"{name}: jobs[{i}]"
        submit = _dist(_need(jc, "submit", where), f"{where}.submit")
        if duration / _mean(submit) > MAX_SUBMITS:
            raise ScenarioError(f"{where}.submit: about {duration / _mean(submit):.3g} submissions in the duration "
                                f"{duration:g}, more than {MAX_SUBMITS}")
        trace = _need(jc, "trace", where)
        if not isinstance(trace, str):
            raise ScenarioError(f"{where}.trace: must be a file or folder name, got {trace!r:.40}")
        jobs.append(JobConf(submit, _dist(_need(jc, "duration", where), f"{where}.duration"),
                            os.path.join(base, trace)))
    specs = [Spec(i, duration, topo[0], topo[1], s, h, m, r, tuple(jobs), seed, link_bw)
             for i, (topo, s, h, m, r) in enumerate(itertools.product(topos, *lists))]
    return os.path.join(base, output), specs


class Result:
    """One scenario's outcome: ``rows`` (jobs), ``series`` ({metric: [(time, value)]}) and a
    ``summary`` dict (the table row)."""

    def __init__(self, spec, summary, series, rows):
        self.spec, self.summary, self.series, self.rows = spec, summary, series, rows

    def __eq__(self, other):
        return (isinstance(other, Result) and self.summary == other.summary
                and self.series == other.series and self.rows == other.rows)


class Loader:
    """Per-run memo of topologies, traces and routed placements (a run is one process's work)."""

    def __init__(self):
        self.graphs, self.traces, self.routed, self.templates = {}, {}, {}, {}

    def template(self, path, rank_pos):
        key = (path, rank_pos)
        if key not in self.templates:
            trace, tm, counts = self.trace(path)
            self.templates[key] = job.Template(tm, counts, rank_pos, trace.file_order)
        return self.templates[key]

    def graph(self, topo):
        if topo not in self.graphs:
            kind, value = topo
            self.graphs[topo] = (topology.from_graphml(value) if kind == "file"
                                 else topology.from_spec(value))
        return self.graphs[topo]

    def trace(self, path):
        if path not in self.traces:
            trace = traces.load(path)
            self.traces[path] = (trace, trace.traffic_matrix(), trace.tx_messages > 0)
        return self.traces[path]


def _series_add(series, now, value):
    if series and series[-1][0] == now:
        series[-1] = (now, value)
    else:
        series.append((now, value))


def run(spec, loader=None):
    """Runs one scenario: FCFS, one job started per event as PFSim's scheduler does, until
    ``spec.duration``. Returns a `Result`."""
    loader = loader or Loader()
    graph = loader.graph(spec.topology)
    arrivals = random.Random(f"{spec.seed}/arrivals")
    placing = random.Random(f"{spec.seed}/placement/{spec.id}")
    events, seq = [], itertools.count()
    for jc in spec.jobs:
        now = 0.0
        while True:
            now += _draw(arrivals, jc.submit)
            if now >= spec.duration:
                break
            events.append((now, next(seq), "submit", (jc.trace, _draw(arrivals, jc.duration), now)))
    heapq.heapify(events)
    free = set(fabric.hosts(graph))
    pes = {h: int(graph.nodes[h].get("pes", 1)) for h in free}
    idx = paths.index(graph)
    bytes_now = np.zeros(len(idx.links))
    flows_now = np.zeros(len(idx.links))
    queue, running, rows = collections.deque(), {}, []
    series = {"max_congestion": [], "stddev_congestion": [], "max_flows": []}
    switch = idx.switch_link

    def start(now, entry):
        trace_path, duration, submitted = entry
        trace, tm, counts = loader.trace(trace_path)
        placement = job.place(graph, trace.n_procs, spec.host_selector, spec.process_mapper,
                              free, placing)
        seed = placing.randrange(2 ** 32)  # drawn for every job, so that caching changes nothing
        key = (spec.topology, spec.router, trace_path, tuple(placement.rank_host))
        cacheable = spec.router in job.SEEDLESS and not bytes_now.any()
        routed = loader.routed.get(key) if cacheable else None
        if routed is None:
            template = loader.template(trace_path, placement.rank_pos)
            demand, flows = template.demand(placement.hosts)
            routed = job.route(graph, demand, flows, spec.router, seed=seed, base=bytes_now)
            if cacheable:
                loader.routed[key] = routed
        for h in placement.hosts:
            free.discard(h)
        bytes_now[:] += routed.link_bytes
        flows_now[:] += routed.link_flows
        jid = len(rows)
        running[jid] = (placement, routed)
        rows.append({"job": jid, "trace": os.path.basename(trace_path), "ranks": trace.n_procs,
                     "submitted": submitted, "started": now,
                     "finished": None, "hosts": len(placement.hosts),
                     "max_link_bytes": job.maxima(graph, routed.link_bytes, routed.link_flows)[0]})
        heapq.heappush(events, (now + duration, next(seq), "finish", jid))

    def fits(entry):
        return sum(pes[h] for h in free) >= loader.trace(entry[0])[0].n_procs

    def collect(now):
        sw_bytes = bytes_now[switch]
        _series_add(series["max_congestion"], now, float(sw_bytes.max()) if len(sw_bytes) else 0.0)
        sd = float(np.std(sw_bytes, ddof=1)) if len(sw_bytes) > 1 else 0.0
        _series_add(series["stddev_congestion"], now, sd)
        _series_add(series["max_flows"], now, int(flows_now[switch].max()) if len(sw_bytes) else 0)

    while events and events[0][0] < spec.duration:
        now, _, kind, what = heapq.heappop(events)
        if kind == "submit":
            if queue or not fits(what):
                queue.append(what)
            else:
                start(now, what)
        else:
            placement, routed = running.pop(what)
            free.update(placement.hosts)
            bytes_now[:] -= routed.link_bytes
            flows_now[:] -= routed.link_flows
            bytes_now[np.abs(bytes_now) < 1e-6] = 0.0
            rows[what]["finished"] = now
            if queue and fits(queue[0]):
                start(now, queue.popleft())
        collect(now)
    return Result(spec, _summary(spec, rows, series), series, rows)


def _summary(spec, rows, series):
    peaks = [v for _, v in series["max_congestion"]]
    return {"id": spec.id, "topology": spec.topology_label, "scheduler": spec.scheduler,
            "host_selector": spec.host_selector, "process_mapper": spec.process_mapper,
            "router": spec.router, "jobs_started": len(rows),
            "jobs_finished": sum(1 for r in rows if r["finished"] is not None),
            "max_congestion": max(peaks, default=0.0),
            "mean_job_max_link_bytes": (sum(r["max_link_bytes"] for r in rows) / len(rows)
                                        if rows else 0.0),
            "mean_wait_s": (sum(r["started"] - r["submitted"] for r in rows) / len(rows)
                            if rows else 0.0)}
