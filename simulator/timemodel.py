"""Flow-level time model: max-min fair sharing by progressive filling, vectorised with numpy.

Flows are given as a sparse incidence: entry e says flow ``entry_flow[e]`` crosses link
``entry_link[e]`` (every link of its path, host links included). Links have a bandwidth in
bytes/s. All flows start at time 0; whenever a flow finishes, the others' rates are recomputed.
"""
import logging

import numpy as np

LOG = logging.getLogger(__name__)

_EPS = 1e-12


def maxmin_rates(entry_flow, entry_link, n_flows, bandwidth, active=None):
    """Max-min fair rates (bytes/s) of ``n_flows`` flows by progressive filling: raise every
    unfrozen flow's rate equally until a link saturates, freeze the flows crossing it, repeat.
    Flows not in ``active`` (a bool mask) get rate 0; a flow that crosses no link gets inf."""
    active = np.ones(n_flows, dtype=bool) if active is None else active.copy()
    rate = np.zeros(n_flows)
    crosses = np.bincount(entry_flow, minlength=n_flows) > 0
    rate[active & ~crosses] = np.inf
    active &= crosses
    remaining = np.asarray(bandwidth, dtype=float).copy()
    n_links = len(remaining)
    while active.any():
        on = active[entry_flow]
        users = np.bincount(entry_link[on], minlength=n_links)
        used = users > 0
        delta = (remaining[used] / users[used]).min()
        rate[active] += delta
        remaining[used] -= delta * users[used]
        full = used & (remaining <= _EPS * np.asarray(bandwidth)[used].max())
        frozen = np.zeros(n_flows, dtype=bool)
        frozen[entry_flow[on & full[entry_link]]] = True
        active &= ~frozen
    return rate


def completion(nbytes, entry_flow, entry_link, bandwidth):
    """Finish time (s) of every flow of ``nbytes`` bytes, all starting at 0, under max-min
    sharing that is recomputed each time a flow finishes."""
    left = np.asarray(nbytes, dtype=float).copy()
    n = len(left)
    done = np.zeros(n)
    active = left > 0
    now = 0.0
    while active.any():
        rate = maxmin_rates(entry_flow, entry_link, n, bandwidth, active)
        eta = np.full(n, np.inf)
        np.divide(left, rate, out=eta, where=active)
        step = eta.min()
        now += step
        left[active] -= rate[active] * step
        finished = active & (eta <= step * (1 + 1e-9))
        done[finished] = now
        left[finished] = 0.0
        active &= ~finished
    return done
