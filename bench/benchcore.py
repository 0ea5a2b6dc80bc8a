"""Pure parts of the benchmark (no Mininet, no MPI): the reference-limit model, the rank placements,
parsing coll_bench's output lines and aggregating samples into records. Used by the bench_*.py modules and report.py
and tested by tests/unit/test_bench*.py. The model is described in bench/README.md.
"""
import json
import os
import random
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from sdnmpi.primitives import allreduce, fattree, schedule  # noqa: E402

IMPLS = ("openmpi", "sdnmpi")
KEY_FIELDS = ("collective", "routing", "placement", "nprocs", "bytes", "root")
ROUTING_ORDER = {"single": 0, "dmodk": 1, "ecmp": 2}   # the order of routings in tables and plots


# --- fabric and placements ------------------------------------------------------------------

class Fabric:
    """The 2-tier leaf-spine of mininet_topos/fattree.py: host n (1-based) sits on leaf
    (n-1) // hosts_per_leaf + 1. Bandwidths in Mbit/s (10^6 bit/s); None = unlimited."""

    def __init__(self, spines=2, leaves=4, hosts_per_leaf=2, host_bw=30, fabric_bw=15):
        self.spines = spines
        self.leaves = leaves
        self.hosts_per_leaf = hosts_per_leaf
        self.host_bw = host_bw or None
        self.fabric_bw = fabric_bw or None
        self._graph = None

    @property
    def hosts(self):
        return self.leaves * self.hosts_per_leaf

    def leaf_of(self, host):
        """Leaf number (1-based) of host number ``host`` (1-based)."""
        return (host - 1) // self.hosts_per_leaf + 1

    def graph(self):
        """The primitives graph of this fabric (primitives/fattree.leaf_spine, same numbering)."""
        if self._graph is None:
            self._graph = fattree.leaf_spine(self.spines, self.leaves, self.hosts_per_leaf)
        return self._graph

    def to_json(self):
        return {"spines": self.spines, "leaves": self.leaves, "hosts_per_leaf": self.hosts_per_leaf,
                "hosts": self.hosts, "host_bw_mbit": self.host_bw, "fabric_bw_mbit": self.fabric_bw,
                "oversubscription": (self.hosts_per_leaf * self.host_bw / (self.spines * self.fabric_bw)
                                     if self.host_bw and self.fabric_bw else None)}


def placement_hosts(kind, nhosts, nprocs, seed=7):
    """Host numbers (1-based) of ranks 0..nprocs-1.

    ``block``: rank r on host r+1 (consecutive ranks share a leaf). ``random``: the first nprocs
    entries of a permutation of all hosts drawn with ``random.Random(seed)``; the same seed gives
    the same permutation, so every job of a run (and of a re-run) places ranks alike."""
    if nprocs > nhosts:
        raise ValueError("%d ranks do not fit %d hosts (one rank per host)" % (nprocs, nhosts))
    order = list(range(1, nhosts + 1))
    if kind == "random":
        random.Random(seed).shuffle(order)
    elif kind != "block":
        raise ValueError("unknown placement %r" % (kind,))
    return order[:nprocs]


def placed_hosts(placements, nprocs, nhosts, seed):
    """(placement, p, hosts) of every placement and process count p in turn, the ranks placed by
    placement_hosts: the points a job planner loops over."""
    for placement in placements:
        for p in nprocs:
            yield placement, p, placement_hosts(placement, nhosts, p, seed)


def job_head(collective, routing, placement, p, hosts, reps):
    """The fields a planned job of one (collective, routing, placement, p) point starts with."""
    return {"name": "%s-%s-%s-p%d" % (collective, routing, placement, p), "collective": collective,
            "routing": routing, "placement": placement, "nprocs": p, "hosts": hosts, "reps": reps}


def finish_job(job, job_timeout):
    """Adds what every planned job ends with: its label, timeout (``job_timeout`` s, else from its
    estimated work) and work per byte moved (the ETA's progress as samples come)."""
    job["label"] = "%s/%s p=%d" % (job["routing"], job["placement"], job["nprocs"])
    job["timeout_s"] = job_timeout or (5 * job["work"] + 300)
    if "work_per_byte" not in job:
        sizes = job.get("sizes", [])
        total_bytes = (sum(s * c for s, c in zip(sizes, job.get("calls") or [1] * len(sizes)))
                       * job["reps"] * job["nimpl"] * max(1, len(job.get("roots", [0]))))
        job["work_per_byte"] = (0.8 * job["work"] / total_bytes) if total_bytes else 0.0


def bcast_roots(fab, hosts):
    """Roots to measure: rank 0, and the lowest rank on another leaf than rank 0's (if any)."""
    roots = [0]
    for rank, host in enumerate(hosts):
        if fab.leaf_of(host) != fab.leaf_of(hosts[0]):
            roots.append(rank)
            break
    return roots


# --- the reference limits -------------------------------------------------------------------

def _seconds(nbytes, mbit):
    return nbytes * 8.0 / (mbit * 1e6)


def _step_time(fab, nbytes, host_flows, fabric_flows):
    """Time of one step in which the busiest host link carries ``host_flows`` flows and the
    busiest leaf uplink/downlink ``fabric_flows`` flows of ``nbytes`` each. None if unlimited."""
    parts = []
    if fab.host_bw and host_flows:
        parts.append(_seconds(nbytes * host_flows, fab.host_bw))
    if fab.fabric_bw and fabric_flows:
        parts.append(_seconds(nbytes * fabric_flows, fab.fabric_bw))
    return max(parts) if parts else 0.0


def allreduce_steps(fab, hosts):
    """Per step of the recursive-doubling schedule for ranks on ``hosts``: (kind, distance,
    busiest host link's flows, busiest leaf up/downlink's flows under the best routing).

    kind is "fold"/"unfold" (the extra steps when p is not a power of two) or "exchange"; the fabric
    flows are primitives.allreduce.lower_bound: max over leaves of ceil(inter-leaf flows the leaf
    sends or receives in the step / its uplinks) -- what the per-step balanced plan achieves on a
    2-tier fabric."""
    p = len(hosts)
    graph = fab.graph()
    macs = [fattree.host_mac(h) for h in hosts]
    rank_steps = schedule.recursive_doubling_steps(p)
    host_steps = schedule.host_steps(rank_steps, macs)
    pof2 = 1 << (p.bit_length() - 1)
    rem = p - pof2
    out = []
    for index, (ranks, step) in enumerate(zip(rank_steps, host_steps)):
        if rem and index == 0:
            kind, distance = "fold", None
        elif rem and index == len(rank_steps) - 1:
            kind, distance = "unfold", None
        else:
            kind, distance = "exchange", 1 << (index - (1 if rem else 0))
        sent, received = {}, {}
        for (src, dst), count in step:
            sent[src] = sent.get(src, 0) + count
            received[dst] = received.get(dst, 0) + count
        host_flows = max(list(sent.values()) + list(received.values()), default=0)
        out.append((kind, distance, host_flows, allreduce.lower_bound(graph, step)))
    return out


def ring_flows(fab, hosts):
    """(busiest host link's flows, busiest leaf up/downlink's flows) of the ring r -> r+1 mod p
    with the best routing (primitives.allreduce.lower_bound over all ring pairs at once)."""
    p = len(hosts)
    macs = [fattree.host_mac(h) for h in hosts]
    step = schedule.host_steps([[(r, (r + 1) % p) for r in range(p)]], macs)[0]
    sent, received = {}, {}
    for (src, dst), count in step:
        sent[src] = sent.get(src, 0) + count
        received[dst] = received.get(dst, 0) + count
    host_flows = max(list(sent.values()) + list(received.values()), default=0)
    return host_flows, allreduce.lower_bound(fab.graph(), step)


LIMIT_SCHEDULES = ("rd", "rabenseifner_dh", "rabenseifner_dd", "ring", "hierarchical")


def hierarchical_limit(fab, hosts, nbytes):
    """The pipelined hierarchical schedule (libsdnmpi allreduce_hier.c) when every leaf holds the
    same number k >= 2 of the ranks and the number of leaves L is a power of two, else None: each
    host link carries 2 (p-1)/p nbytes each way (rings inside the leaf, halving across the leaves),
    each leaf's uplinks 2 (L-1)/L nbytes (k chunks of nbytes/k), all at once (pipelined)."""
    counts = {}
    for h in hosts:
        counts[fab.leaf_of(h)] = counts.get(fab.leaf_of(h), 0) + 1
    k, nleaves, p = min(counts.values()), len(counts), len(hosts)
    if len(set(counts.values())) != 1 or k < 2 or nleaves < 2 or nleaves & (nleaves - 1):
        return None
    host = _seconds(2.0 * (p - 1) / p * nbytes, fab.host_bw) if fab.host_bw else 0.0
    fabric = _seconds(2.0 * (nleaves - 1) / nleaves * nbytes, fab.spines * fab.fabric_bw) if fab.fabric_bw else 0.0
    return max(host, fabric)


def allreduce_limits(fab, hosts, nbytes):
    """{schedule: seconds}: bandwidth lower bounds of the schedules the two implementations use.

    - ``rd``, recursive doubling (both): every step moves the whole vector (nbytes) between
      partners, at distances 1, 2, 4, ...
    - ``rabenseifner_dh``: reduce-scatter by recursive halving with distance
      halving (distance pof2/2 first, sending nbytes/2, ... distance 1 last, sending nbytes/pof2),
      then the allgather in reverse: 2 nbytes d/pof2 at distance d. sdnmpi orders the distances
      by the step loads the controller reports (libsdnmpi/README.md), which gives one of the two
      orders or a mix; the row's limit is the best schedule either way.
    - ``rabenseifner_dd`` (Open MPI 4.1's redscat_allgather order): recursive halving with distance
      *doubling* (distance 1 first, sending nbytes/2): 2 nbytes/(2d) = nbytes/d at distance d.
      Both send 2 nbytes (pof2-1)/pof2 per rank; they differ in which distance carries the big
      halves, which matters when the near partners share a leaf.
    - ``ring`` (Open MPI's ring and segmented ring): every rank sends 2 nbytes (p-1)/p to its
      successor over the whole (pipelined) run, so the busiest link carries that times its number
      of ring flows.

    For p not a power of two, the fold and unfold steps move the whole vector. Each step takes at
    least max(busiest host link's bytes / host_bw, busiest leaf link's bytes / fabric_bw), with the
    flows placed as well as possible (allreduce_steps); steps depend on each other, so their times
    add up. Latency and header overhead are ignored. None if no link is limited."""
    if not fab.host_bw and not fab.fabric_bw:
        return {name: None for name in LIMIT_SCHEDULES}
    p = len(hosts)
    if p < 2:
        return {name: 0.0 for name in LIMIT_SCHEDULES}
    pof2 = 1 << (p.bit_length() - 1)
    out = dict.fromkeys(LIMIT_SCHEDULES, 0.0)
    for kind, distance, host_flows, fabric_flows in allreduce_steps(fab, hosts):
        whole = _step_time(fab, nbytes, host_flows, fabric_flows)
        out["rd"] += whole
        if kind == "exchange":
            out["rabenseifner_dh"] += _step_time(fab, 2.0 * nbytes * distance / pof2, host_flows, fabric_flows)
            out["rabenseifner_dd"] += _step_time(fab, 1.0 * nbytes / distance, host_flows, fabric_flows)
        else:
            out["rabenseifner_dh"] += whole
            out["rabenseifner_dd"] += whole
    host_flows, fabric_flows = ring_flows(fab, hosts)
    out["ring"] = _step_time(fab, 2.0 * nbytes * (p - 1) / p, host_flows, fabric_flows)
    out["hierarchical"] = hierarchical_limit(fab, hosts, nbytes)
    return out


def allreduce_limit(fab, hosts, nbytes):
    """The row's limit: the best of the schedules (see allreduce_limits)."""
    limits = allreduce_limits(fab, hosts, nbytes)
    values = [v for v in limits.values() if v is not None]
    return min(values) if values else None


def bcast_limits(fab, hosts, root, nbytes):
    """{"any": s, "tree": s} for a bcast of nbytes from rank ``root`` to ranks on ``hosts``.

    any: every receiver takes nbytes in over its host link, the root sends at least nbytes out of
    its own; if a receiver sits on another leaf than the root, that leaf takes nbytes in over its
    S downlinks and the root's leaf sends nbytes out over its S uplinks: nbytes / (S fabric_bw) at
    best (data split over all spines, e.g. a pipelined unicast scatter). tree: a single multicast
    tree through one spine (sdnmpi's Bcast): each tree link carries the data once, so the slowest
    link on it bounds the time: nbytes / fabric_bw if it leaves the root's leaf."""
    if not fab.host_bw and not fab.fabric_bw:
        return {"any": None, "tree": None}
    root_host = hosts[root]
    receivers = [h for r, h in enumerate(hosts) if r != root and h != root_host]
    if not receivers:
        return {"any": 0.0, "tree": 0.0}
    remote = any(fab.leaf_of(h) != fab.leaf_of(root_host) for h in receivers)
    host_part = _seconds(nbytes, fab.host_bw) if fab.host_bw else 0.0
    any_part = _seconds(nbytes, fab.spines * fab.fabric_bw) if remote and fab.fabric_bw else 0.0
    tree_part = _seconds(nbytes, fab.fabric_bw) if remote and fab.fabric_bw else 0.0
    return {"any": max(host_part, any_part), "tree": max(host_part, tree_part)}


def bcast_limit(fab, hosts, root, nbytes):
    return bcast_limits(fab, hosts, root, nbytes)["any"]


# --- coll_bench output ----------------------------------------------------------------------

def parse_line(line):
    """The JSON object of a coll_bench line ('{"bench": ...}'), or None for any other line.

    Tolerates a prefix (other ranks' output on the same line) before the object."""
    start = line.find('{"bench":')
    if start < 0:
        return None
    try:
        obj = json.loads(line[start:].strip())
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def summarize(samples):
    """(median, min, max) of a non-empty list of seconds."""
    return statistics.median(samples), min(samples), max(samples)


def make_record(collective, impl, routing, placement, nprocs, nbytes, root, samples, limit_s, **extra):
    """One record of results.json."""
    med, lo, hi = summarize(samples) if samples else (None, None, None)
    rec = {"collective": collective, "impl": impl, "routing": routing, "placement": placement,
           "nprocs": nprocs, "bytes": nbytes, "root": root, "samples_s": list(samples),
           "median_s": med, "min_s": lo, "max_s": hi, "limit_s": limit_s}
    rec.update(extra)
    return rec


def aggregate_samples(events, routing, placement, nprocs, limit_fn):
    """Records from a job's "sample" events: one per (collective, impl, bytes, root), samples in
    order. ``limit_fn(collective, nbytes, root)`` gives each row's limit. The timed "settle" calls
    (coll_bench --settle: right after a route switch, before the sample) become records of their
    own, impl "first:IMPL" (the first call after the switch; "settleN:IMPL" for the N-th after it),
    which pair_records and the tables leave out (report_settle.py compares them with the samples)."""
    groups = {}
    for ev in events:
        if ev.get("bench") == "settle" and ev.get("t_s") is not None:   # a call right after a route switch
            impl = ("first:" if not ev.get("call") else "settle%d:" % ev["call"]) + ev["impl"]
        elif ev.get("bench") == "sample":
            impl = ev["impl"]
        else:
            continue
        root = ev.get("root")
        root = None if root is None or root < 0 else root
        key = (ev["collective"], impl, ev["bytes"], root)
        groups.setdefault(key, []).append(ev["t_s"])
    records = []
    for (coll, impl, nbytes, root), samples in sorted(groups.items(), key=lambda kv: (
            kv[0][0], kv[0][2], -1 if kv[0][3] is None else kv[0][3], kv[0][1])):
        records.append(make_record(coll, impl, routing, placement, nprocs, nbytes, root, samples,
                                   limit_fn(coll, nbytes, root)))
    return records


def row_key(rec):
    return tuple(rec.get(k) for k in KEY_FIELDS)


def pair_records(records, collective):
    """[(openmpi record, sdnmpi record or None)] of one collective, in a stable order."""
    by_key = {}
    for rec in records:
        if rec.get("collective") != collective or rec.get("impl") not in IMPLS:
            continue
        by_key.setdefault(row_key(rec), {})[rec["impl"]] = rec
    def order(key):
        return tuple((0, "") if v is None else ((1, v) if isinstance(v, str) else (1, "%020.6f" % v)) for v in key)
    return [(pair.get("openmpi"), pair.get("sdnmpi")) for key, pair in sorted(by_key.items(), key=lambda kv: order(kv[0]))
            if pair.get("openmpi") is not None or pair.get("sdnmpi") is not None]


def speedup(ompi, sdn):
    """Open MPI median / sdnmpi median (> 1: sdnmpi faster), or None."""
    if not ompi or not sdn or not ompi.get("median_s") or not sdn.get("median_s"):
        return None
    return ompi["median_s"] / sdn["median_s"]


INTERVAL_MIN_SAMPLES = 5
TINY_BYTES = 8   # coll_bench's --tiny-bytes default: the size of its blocks of tiny allreduce calls


def _blocks(rec):
    """``rec``'s samples as consecutive blocks of its "sample_block" (1 when absent): the calls of
    one block ran back to back between two route switches (coll_bench's tiny calls), so their noise
    is shared and only whole blocks are independent draws."""
    samples = (rec or {}).get("samples_s") or []
    size = max(1, int((rec or {}).get("sample_block") or 1))
    return [samples[i:i + size] for i in range(0, len(samples), size)]


def speedup_interval(ompi, sdn, level=0.95, draws=2000, seed=1):
    """A bootstrap percentile interval (lo, hi) of the speedup: both sides' samples are resampled
    with replacement, independently, ``draws`` times, and each draw's ratio of medians is taken.
    Samples taken in blocks (a record's "sample_block") are resampled as whole blocks.
    Deterministic (seeded). None if either side has fewer than INTERVAL_MIN_SAMPLES blocks.

    It says how far the noise alone moves the speedup: a row whose whole interval lies below a
    threshold is below it beyond the noise; one whose interval straddles it is not resolved."""
    a, b = _blocks(ompi), _blocks(sdn)
    if len(a) < INTERVAL_MIN_SAMPLES or len(b) < INTERVAL_MIN_SAMPLES or min(x for blk in b for x in blk) <= 0:
        return None
    rng = random.Random(seed)

    def draw(blocks):
        return statistics.median([x for blk in rng.choices(blocks, k=len(blocks)) for x in blk])
    ratios = sorted(draw(a) / draw(b) for _ in range(draws))
    tail = (1.0 - level) / 2.0
    return ratios[int(tail * draws)], ratios[min(draws - 1, int((1.0 - tail) * draws))]


def fraction_of_limit(rec):
    """limit / median (1.0 = at the physical limit), or None."""
    if not rec or not rec.get("limit_s") or not rec.get("median_s"):
        return None
    return rec["limit_s"] / rec["median_s"]


def parse_sizes(text):
    """'4k,8k,1m' or '4k..4m' (powers of two between) -> list of byte counts."""
    def one(tok):
        tok = tok.strip().lower()
        mult = 1
        if tok.endswith("k"):
            mult, tok = 1 << 10, tok[:-1]
        elif tok.endswith("m"):
            mult, tok = 1 << 20, tok[:-1]
        value = int(tok) * mult
        if value <= 0:
            raise ValueError("sizes must be positive")
        return value
    sizes = []
    for part in text.split(","):
        if ".." in part:
            lo, hi = (one(x) for x in part.split(".."))
            value = lo
            while value <= hi:
                sizes.append(value)
                value *= 2
        elif part.strip():
            sizes.append(one(part))
    return sizes


def fmt_bytes(n):
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%d MiB" % (n >> 20)
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return "%d KiB" % (n >> 10)
    return "%d B" % n


def fmt_seconds(s):
    if s is None:
        return "-"
    if s >= 1:
        return "%.2f s" % s
    if s >= 1e-3:
        return "%.1f ms" % (s * 1e3)
    return "%.0f us" % (s * 1e6)
