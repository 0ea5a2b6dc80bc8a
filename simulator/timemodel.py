"""Flow-level time model: max-min fair sharing by progressive filling, vectorised with numpy.

Flows are given as a sparse incidence: entry e says flow ``entry_flow[e]`` crosses link
``entry_link[e]`` (every link of its path, host links included). Links have a bandwidth in
bytes/s. All flows start at time 0; whenever a flow finishes, the others' rates are recomputed.
Only the links that some flow crosses take part, so the cost grows with the job, not the fabric.
"""
import logging

import numpy as np

LOG = logging.getLogger(__name__)

_EPS = 1e-9  # a link counts as full when less than this fraction of its bandwidth is left


def _compress(entry_flow, entry_link, bandwidth):
    """(entry_flow, local link ids 0..L-1, bandwidth of those L links) for the links in use."""
    entry_flow = np.asarray(entry_flow, dtype=np.intp)
    used, local = np.unique(np.asarray(entry_link, dtype=np.intp), return_inverse=True)
    return entry_flow, local.reshape(-1), np.asarray(bandwidth, dtype=float)[used]


def _fill(entry_flow, entry_link, n_flows, bandwidth, active):
    """Progressive filling over compressed links; flows not ``active`` get 0, flows crossing no
    link get inf."""
    rate = np.zeros(n_flows)
    crosses = np.zeros(n_flows, dtype=bool)
    crosses[entry_flow] = True
    rate[active & ~crosses] = np.inf
    active = active & crosses
    keep = active[entry_flow]
    flow_of, link_of = entry_flow[keep], entry_link[keep]
    remaining = bandwidth.copy()
    n_links = len(remaining)
    level = 0.0  # the rate every unfrozen flow has reached
    while len(flow_of):
        users = np.bincount(link_of, minlength=n_links)
        used = users > 0
        share = np.full(n_links, np.inf)
        np.divide(remaining, users, out=share, where=used)
        tightest = int(share.argmin())
        delta = share[tightest]
        level += delta
        remaining -= delta * users
        full = used & (remaining <= _EPS * bandwidth)
        full[tightest] = True  # progress even if rounding left a crumb on the tightest link
        frozen = flow_of[full[link_of]]
        rate[frozen] = level
        active[frozen] = False
        keep = active[flow_of]
        flow_of, link_of = flow_of[keep], link_of[keep]
    return rate


def maxmin_rates(entry_flow, entry_link, n_flows, bandwidth, active=None):
    """Max-min fair rates (bytes/s) of ``n_flows`` flows by progressive filling: raise every
    unfrozen flow's rate equally until a link saturates, freeze the flows crossing it, repeat.
    Flows not in ``active`` (a bool mask) get rate 0; a flow that crosses no link gets inf."""
    active = np.ones(n_flows, dtype=bool) if active is None else np.asarray(active, dtype=bool)
    entry_flow, local, bw = _compress(entry_flow, entry_link, bandwidth)
    return _fill(entry_flow, local, n_flows, bw, active)


def completion(nbytes, entry_flow, entry_link, bandwidth):
    """Finish time (s) of every flow of ``nbytes`` bytes, all starting at 0, under max-min
    sharing that is recomputed each time a flow finishes. A ValueError (one line) for bytes or
    bandwidths of the links in use that are not finite, or bandwidths not positive: every round
    then ends at least one flow, so the loop ends."""
    left = np.asarray(nbytes, dtype=float).copy()
    n = len(left)
    done = np.zeros(n)
    if not np.isfinite(left).all():
        raise ValueError("flow sizes must be finite numbers of bytes")
    active = left > 0
    entry_flow, entry_link, bw = _compress(entry_flow, entry_link, bandwidth)
    if not (np.isfinite(bw) & (bw > 0)).all():
        raise ValueError(f"link bandwidths must be positive and finite, got {bw[~(np.isfinite(bw) & (bw > 0))][0]!r}")
    now = 0.0
    while active.any():
        keep = active[entry_flow]  # finished flows' entries leave: each round is smaller
        entry_flow, entry_link = entry_flow[keep], entry_link[keep]
        rate = _fill(entry_flow, entry_link, n, bw, active)
        eta = np.full(n, np.inf)
        np.divide(left, rate, out=eta, where=active)
        step = eta.min()
        now += step
        left[active] -= rate[active] * step
        finished = active & (eta <= step * (1 + 1e-9))
        if not finished.any():  # no flow can end (a NaN rate): stop rather than spin
            raise ValueError(f"flows cannot finish at rates {rate[active][:3].tolist()} B/s")
        done[finished] = now
        left[finished] = 0.0
        active &= ~finished
    return done
