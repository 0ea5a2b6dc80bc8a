"""Per-host-pair byte counters of pattern traffic, from the max-min time model (timemodel.py).

A pattern instance is a list of `Send` (source host index, destination host index, bytes, start
s, rate cap bytes/s). Sends run concurrently under max-min fair sharing of the fabric's links
(every link ``link_rate`` bytes/s); a finite cap is an extra private link of that bandwidth, so an
application-limited send (compute between exchanges, small collectives) never takes more. The
rates are recomputed at every start and finish (event-driven, exact). Counters are then read as a
switch would be polled: cumulative bytes per pair at jittered poll times, differenced, with
multiplicative rate noise. See docs/flows.md.
"""
import collections
import logging

import numpy as np

from .. import traces
from ..primitives import fattree, pairs, paths
from . import job, timemodel

LOG = logging.getLogger(__name__)

Send = collections.namedtuple("Send", "src dst bytes start cap")
# (counts pairs x polls, labels per pair, per pair the poll interval in which its elephant traffic
# began or -1, the (source, destination) of each row or None): one labelled pattern instance
Run = collections.namedtuple("Run", "counts labels starts pairs", defaults=(None,))
HEAVY_FRACTION = 0.1    # label: an elephant sends at >= this share of its host link (Hedera's 10 %) ...
HEAVY_INTERVALS = 1.0   # ... without a break for at least this many polling intervals
LEAD_IN = 1.0           # intervals before a pattern's first send: MPI's connection set-up ...
WIRE_UP = (0.0005, 0.005)    # ... link-intervals per pair before its first send (Mininet: median 0.0024)
PHASE_STREAM = 7             # instance(phase=True): the offset's generator is seeded (seed, this)
N_HOSTS = 16                 # the k=4 fat-tree
CG_TRACE = "cg-c-128.tar.gz"


def _bulk_bytes(rng, link_rate):
    """Bytes per pair of one bulk pattern instance: log-uniform over 0.2 .. 20 link-seconds, so
    that some instances are below the elephant label and most above."""
    return link_rate * float(np.exp(rng.uniform(np.log(0.2), np.log(20.0))))


def _jitter(rng, interval):
    return float(rng.uniform(0.0, 0.3 * interval))


def _mapped(rng, link_rate, interval, pairs_, size, cap=np.inf, start=0.0):
    return [Send(s, d, size * float(rng.uniform(0.8, 1.2)), start + _jitter(rng, interval), cap)
            for s, d in pairs_ if s != d]


def _shift_pairs(rng, n):
    k = int(rng.integers(1, n))
    return [(i, (i + k) % n) for i in range(n)]


def _perm_pairs(rng, n):
    while True:
        p = rng.permutation(n)
        if (p != np.arange(n)).all():
            return [(i, int(p[i])) for i in range(n)]


def _torus_pairs(dims):
    n = int(np.prod(dims))
    coords = np.array(np.unravel_index(np.arange(n), dims)).T
    out = set()
    for i, c in enumerate(coords):
        for axis, size in enumerate(dims):
            for step in (-1, 1):
                d = c.copy()
                d[axis] = (d[axis] + step) % size
                j = int(np.ravel_multi_index(d, dims))
                if j != i:
                    out.add((i, j))
    return sorted(out)


def shift(rng, link_rate, interval):
    return _mapped(rng, link_rate, interval, _shift_pairs(rng, N_HOSTS), _bulk_bytes(rng, link_rate))


def permutation(rng, link_rate, interval):
    return _mapped(rng, link_rate, interval, _perm_pairs(rng, N_HOSTS), _bulk_bytes(rng, link_rate))


def halo2d(rng, link_rate, interval):
    cap = link_rate * float(rng.uniform(0.1, 0.4))  # 4 neighbours, compute between exchanges
    return _mapped(rng, link_rate, interval, _torus_pairs((4, 4)), _bulk_bytes(rng, link_rate), cap)


def halo3d(rng, link_rate, interval):
    cap = link_rate * float(rng.uniform(0.1, 0.4))
    return _mapped(rng, link_rate, interval, _torus_pairs((2, 2, 4)), _bulk_bytes(rng, link_rate), cap)


def alltoall(rng, link_rate, interval):
    everyone = [(i, j) for i in range(N_HOSTS) for j in range(N_HOSTS) if i != j]
    return _mapped(rng, link_rate, interval, everyone, _bulk_bytes(rng, link_rate) / 2)


def two_phases(rng, link_rate, interval):
    """A shift, a pause of 2-6 intervals, a permutation."""
    size = _bulk_bytes(rng, link_rate)
    first = _mapped(rng, link_rate, interval, _shift_pairs(rng, N_HOSTS), size)
    second_start = 1.2 * size / link_rate + float(rng.uniform(2, 6)) * interval
    return first + _mapped(rng, link_rate, interval, _perm_pairs(rng, N_HOSTS),
                           _bulk_bytes(rng, link_rate), start=second_start)


def _mice_pairs(rng):
    """Recursive-doubling partners (allreduce, barrier) of a random 4..16-host job."""
    n = int(rng.choice([4, 8, 16]))
    hosts = rng.choice(N_HOSTS, size=n, replace=False)
    return [(int(hosts[i]), int(hosts[i ^ (1 << k)])) for k in range(n.bit_length() - 1)
            for i in range(n)]


def allreduce_mice(rng, link_rate, interval):
    """Small allreduces for 2-30 s: 0.2-2 % of the link per pair, app-limited."""
    rate = link_rate * float(rng.uniform(0.002, 0.02))
    length = float(rng.uniform(2, 30)) * interval
    return _mapped(rng, link_rate, interval, _mice_pairs(rng), rate * length, cap=rate)


def barrier_mice(rng, link_rate, interval):
    """Barriers and tiny control messages: kilobytes per second."""
    rate = float(rng.uniform(1e3, 1e5))
    length = float(rng.uniform(2, 30)) * interval
    return _mapped(rng, link_rate, interval, _mice_pairs(rng), rate * length, cap=rate)


def cg(rng, link_rate, interval, trace_dir):
    """NAS CG class C (tests/data/pfsim, 128 ranks, 8 per host, block) folded to host pairs; all
    pairs send through the run at the pace that keeps the busiest host at 30-90 % of its link."""
    trace = traces.load(f"{trace_dir}/{CG_TRACE}")
    tm = trace.traffic_matrix().astype(float)
    host = np.arange(trace.n_procs) * N_HOSTS // trace.n_procs
    pair_bytes = np.zeros((N_HOSTS, N_HOSTS))
    np.add.at(pair_bytes, (host[:, None].repeat(trace.n_procs, 1), host[None, :].repeat(trace.n_procs, 0)), tm)
    np.fill_diagonal(pair_bytes, 0)
    scale = float(rng.uniform(0.02, 0.5))  # a shorter or smaller run than the traced one
    pair_bytes *= scale
    duration = pair_bytes.sum(axis=1).max() / (link_rate * float(rng.uniform(0.3, 0.9)))
    return [Send(int(s), int(d), float(pair_bytes[s, d]), _jitter(rng, interval),
                 float(pair_bytes[s, d]) / duration)
            for s, d in zip(*np.nonzero(pair_bytes))]


PATTERNS = {"shift": shift, "permutation": permutation, "halo2d": halo2d, "halo3d": halo3d,
            "alltoall": alltoall, "two-phases": two_phases, "allreduce-mice": allreduce_mice,
            "barrier-mice": barrier_mice, "cg": cg, "halo2d-contended": halo2d, "alltoall-contended": alltoall}
# Fabric variants (name -> the pattern whose sends they run; held out together with it): the sends
# on the k=4 fat-tree with every switch-to-switch link at a fraction `CONTENDED` of the host link,
# drawn per instance (oversubscribed: 2:1 like the Mininet bench's 40/20 Mbit/s, and down to what
# that emulated fabric delivers, ~1/7), and counted as the controller counts (`cross_edge`: no
# pair on one edge switch). A halo pair there crawls under the 10 % line, throttled by the
# uplinks it shares, at about a third of its hosts' counted bytes (3 of its 4 neighbours are
# counted), and rises past the line when competing flows end; an all-to-all pair crawls at a few
# % at 1/14 of them. Without the variants no simulated elephant rises from a crawl: every link
# carries the host link's rate, so a host's flows share only its own link, evenly, and end
# together; and the simulator counted every pair, so a halo pair held 1/4 of its hosts' bytes.
VARIANT_OF = {"halo2d-contended": "halo2d", "alltoall-contended": "alltoall"}
CONTENDED = (0.15, 0.5)
# the order that seeds the patterns' instances (train_flows.dataset): a new pattern goes last, so
# that adding one does not change the others' data
SEED_ORDER = ("allreduce-mice", "alltoall", "barrier-mice", "cg", "halo2d", "halo3d", "permutation",
              "shift", "two-phases", "halo2d-contended", "alltoall-contended")


def simulate(graph, sends, link_rate, fabric_rate=None):
    """(pair list, event times, cumulative bytes per pair at those times: pairs x events). Host
    links carry ``link_rate`` bytes/s, switch-to-switch links ``fabric_rate`` (default: the same)."""
    idx = paths.index(graph)
    hosts = idx.hosts
    pair_list = sorted({(s.src, s.dst) for s in sends})
    pos = {p: i for i, p in enumerate(pair_list)}
    demand = [pairs.Flow(hosts[s], hosts[d], 1) for s, d in pair_list]
    routed = job.route(graph, demand, {(f.src, f.dst): 1 for f in demand}, "dmodk")
    n_links = int(routed.entry_link.max()) + 1 if len(routed.entry_link) else 0
    pair_links = [routed.entry_link[routed.entry_flow == i] for i in range(len(pair_list))]
    fabric_rate = link_rate if fabric_rate is None else fabric_rate
    ef, el = [], []
    bw = [fabric_rate if idx.switch_link[i] else link_rate for i in range(n_links)]
    for f, s in enumerate(sends):
        links = list(pair_links[pos[(s.src, s.dst)]])
        if np.isfinite(s.cap):
            links.append(len(bw))
            bw.append(s.cap)
        ef += [f] * len(links)
        el += links
    ef, el, bw = np.array(ef), np.array(el), np.array(bw, dtype=float)
    pair_of = np.array([pos[(s.src, s.dst)] for s in sends])
    start = np.array([s.start for s in sends])
    left = np.array([s.bytes for s in sends], dtype=float)
    now, times, cum = 0.0, [0.0], [np.zeros(len(pair_list))]
    total = np.zeros(len(pair_list))
    while True:
        active = (start <= now) & (left > 0)
        pending = start[(start > now) & (left > 0)]
        next_start = pending.min() - now if len(pending) else np.inf
        rate = timemodel.maxmin_rates(ef, el, len(sends), bw, active) if active.any() else np.zeros(len(sends))
        eta = np.full(len(sends), np.inf)
        np.divide(left, rate, out=eta, where=active & (rate > 0))
        step = min(next_start, eta.min())
        if not np.isfinite(step):
            break
        moved = np.where(active, np.minimum(rate * step, left), 0.0)
        left -= moved
        left[active & (eta <= step * (1 + 1e-9))] = 0.0
        total += np.bincount(pair_of, weights=moved, minlength=len(pair_list))
        now += step
        times.append(now)
        cum.append(total.copy())
    return pair_list, np.array(times), np.array(cum).T


def counters(times, cum, interval, rng, poll_jitter=0.02, rate_noise=0.1, tail=3):
    """pairs x polls of bytes per interval: cumulative bytes read at poll k (k*interval plus
    normal jitter of ``poll_jitter`` intervals), differenced; each nonzero count is multiplied by
    a normal factor around 1 (sd ``rate_noise``, clipped at 0) for TCP's rate wobble."""
    polls = int(np.ceil(times[-1] / interval)) + tail
    at = (np.arange(1, polls + 1) + rng.normal(0, poll_jitter, polls)) * interval
    at = np.maximum.accumulate(at)
    read = np.array([np.interp(at, times, row) for row in cum]).reshape(len(cum), polls)
    counts = np.diff(read, axis=1, prepend=0.0)
    noise = np.clip(rng.normal(1.0, rate_noise, counts.shape), 0.0, None)
    return np.where(counts > 0, counts * noise, 0.0)


def heavy_starts(times, cum, link_rate, interval, fraction=HEAVY_FRACTION, length=HEAVY_INTERVALS):
    """Per pair (a row of ``cum``, cumulative bytes at ``times``): the time at which its first run
    of at least ``length`` polling intervals at >= ``fraction`` x ``link_rate`` (without a break)
    began, or NaN for a pair that never sends that much for that long. Rates are constant between
    two event times (the time model is event-driven), so the runs are exact."""
    dt = np.diff(times)
    keep = dt > 0
    dt, t0 = dt[keep], np.asarray(times)[:-1][keep]
    heavy = np.diff(cum, axis=1)[:, keep] >= fraction * link_rate * dt * (1 - 1e-9)
    out = np.full(len(cum), np.nan)
    for i, row in enumerate(heavy):
        run, began = 0.0, None
        for k in range(len(row)):
            if not row[k]:
                run = 0.0
                continue
            began = t0[k] if run == 0.0 else began
            run += dt[k]
            if run >= length * interval * (1 - 1e-9):
                out[i] = began
                break
    return out


def wired_up(rng, sends, link_rate, interval):
    """``sends`` LEAD_IN intervals later, each pair preceded by a few kB (WIRE_UP link-intervals)
    sent 0.1-1 interval before its first send: MPI's connection set-up and the barrier before an
    exchange, which the counters on Mininet show ahead of every bulk send."""
    first = {}
    for s in sends:
        first[s.src, s.dst] = min(first.get((s.src, s.dst), np.inf), s.start)
    late = [s._replace(start=s.start + LEAD_IN * interval) for s in sends]
    return [Send(src, dst, float(rng.uniform(*WIRE_UP)) * link_rate * interval,
                 t + (LEAD_IN - float(rng.uniform(0.1, 1.0))) * interval, np.inf)
            for (src, dst), t in sorted(first.items())] + late


def cross_edge(graph, pair_list):
    """Bool per pair of host indices: its hosts hang off different edge switches (the pairs the
    controller counts; a pair on one edge switch has one path and no counting entry)."""
    idx = paths.index(graph)
    return np.array([idx.leaf[idx.hosts[s]] != idx.leaf[idx.hosts[d]] for s, d in pair_list], dtype=bool)


def pattern_sends(pattern, rng, link_rate, interval, trace_dir):
    """The sends of one instance of ``pattern`` drawn from ``rng``: the pattern's, then small
    allreduces (every job also has small collectives), all `wired_up`: the wire-ups first (one a
    pair, by pair), then the pattern's and the allreduces' in that order."""
    gen = PATTERNS[pattern]
    sends = gen(rng, link_rate, interval, trace_dir) if pattern == "cg" else gen(rng, link_rate, interval)
    sends += allreduce_mice(rng, link_rate, interval)
    return wired_up(rng, sends, link_rate, interval)


# `simulated`: a `Run`, the sends it ran (`pattern_sends`, the phase's offset included) and the time
# model's event times and cumulative bytes per pair (every pair, before a variant keeps the counted ones)
Simulated = collections.namedtuple("Simulated", "run sends times cum")


def instance(pattern, seed, link_rate, interval, trace_dir, graph=None, heavy_intervals=HEAVY_INTERVALS,
             phase=False):
    """The `Run` of `simulated`."""
    return simulated(pattern, seed, link_rate, interval, trace_dir, graph, heavy_intervals, phase).run


def simulated(pattern, seed, link_rate, interval, trace_dir, graph=None, heavy_intervals=HEAVY_INTERVALS,
              phase=False):
    """A `Simulated` instance of ``pattern``: its `Run` (counters, labels (elephant: `heavy_starts`
    found a run of ``heavy_intervals`` polling intervals) and the poll interval in which each
    elephant's run began (column k: bytes between poll k and poll k + 1)), its sends and its time
    model's events and cumulative bytes (so that a tool need not simulate it again). A variant of
    `VARIANT_OF` runs on a contended fabric and keeps the counted pairs only. ``phase``: every send
    is also delayed by one offset, uniform over an interval and drawn from its own generator (the
    instance's other draws stay as they are), so that the polls fall at any point of the pattern's
    sends (without it a bulk send starts 0-0.3 of an interval after a poll: `LEAD_IN`, `_jitter`)."""
    rng = np.random.default_rng(seed)
    graph = graph if graph is not None else fattree.kary(4)
    sends = pattern_sends(pattern, rng, link_rate, interval, trace_dir)
    if phase:
        offset = float(np.random.default_rng([seed, PHASE_STREAM]).uniform(0.0, interval))
        sends = [s._replace(start=s.start + offset) for s in sends]
    contended = pattern in VARIANT_OF
    fabric_rate = link_rate * float(rng.uniform(*CONTENDED)) if contended else link_rate
    pair_list, times, cum = simulate(graph, sends, link_rate, fabric_rate)
    began = heavy_starts(times, cum, link_rate, interval, length=heavy_intervals)
    labels = ~np.isnan(began)
    starts = np.where(labels, np.floor(np.nan_to_num(began) / interval), -1).astype(int)
    counts = counters(times, cum, interval, rng)
    if contended:
        keep = cross_edge(graph, pair_list)
        counts, labels, starts = counts[keep], labels[keep], starts[keep]
        pair_list = [p for p, k in zip(pair_list, keep) if k]
    return Simulated(Run(counts, labels, starts, pair_list), sends, times, cum)
