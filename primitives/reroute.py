"""Whether routing a job's detected elephants beats the fabric's default routes (issue 16).

Flow detection finds a job's heavy pairs one poll at a time. A pair router (SDN-optimal) plans the
pairs found so far as if they were the job's whole traffic, but the job's other busy pairs are
still on the default routes: a plan that spreads the detected pairs well among themselves can put
them on the links the undetected ones use. Measured on halo3d (4 x 2 x 2 grid, k=4 fat-tree):
D-mod-K alone is already contention-optimal (3 flows on the busiest edge uplink), while
SDN-optimal on a part of the pairs with D-mod-K for the rest puts 4-5 there (+33-67 % time in the
max-min model), until every pair is detected.

`choose` therefore scores each candidate on the job's whole busy demand (the detected pairs on
the candidate's paths, every other busy pair on the default paths) by the flows on the busiest
directed switch link (with ``base``: other jobs' load), and keeps the lowest. Ties: when the busy
demand is no denser than a permutation (node load <= 1), the plan first (detected elephants are
routed like hinted pairs unless that makes the busiest link worse), then the installed routes (no
route changes for nothing); on a denser demand (all-to-all, halos) the installed routes, then the
default, then the plan, as SDN-adaptive leaves dense demands to the fabric: moving flows in the
middle of their transfer for no gain on the busiest link only costs (issue 16's all-to-all under
learned detection, docs/flows.md). Pure.
"""
import logging

from . import PAIR_ROUTERS, errors, pairs

LOG = logging.getLogger(__name__)


def busiest(graph, demand, routes, default, base=None):
    """Flows on the busiest directed switch link when each flow of ``demand`` takes its path in
    ``routes`` ({(src, dst): path}), else its path in ``default``; on top of ``base``."""
    paths = {(f.src, f.dst): routes.get((f.src, f.dst)) or default[f.src, f.dst] for f in demand}
    return pairs.link_load(graph, [pairs.Flow(f.src, f.dst, 1) for f in demand], paths, base).max_flows()


def choose(graph, busy, default, current, planned, base=None):
    """(name, {name: busiest link flows}) of the best candidate: ``planned`` (the router's routes
    of the detected pairs), ``current`` (the job's installed routes; a candidate only if there are
    some) or ``default`` (the fabric's default routes, ``default`` paths), each
    {(src, dst): path} overriding the default for its pairs, scored by `busiest` over ``busy``
    (every busy pair of the job, the detected ones included; every pair needs a ``default``
    path). Ties go to the first in that order if ``busy`` is no denser than a permutation, else
    to current, default, planned."""
    routes = [("planned", planned)] + ([("current", current)] if current else []) + [("default", {})]
    if pairs.node_load(busy) > 1:
        routes = routes[1:] + routes[:1]
    score = {name: busiest(graph, busy, paths, default, base) for name, paths in routes}
    order = [name for name, _ in routes]
    return min(order, key=lambda name: (score[name], order.index(name))), score


def unless_default_as_good(graph, demand, planned, default_routing, base=None):
    """What a declared demand's plan becomes on a fabric whose default routing is
    ``default_routing`` (a registered pair router's name): (routes, score). ``routes`` is
    ``planned`` when it loads the busiest directed switch link less than the default routes
    would (no more on a demand no denser than a permutation), else ``pairs.FabricRoutes`` of the
    default paths (nothing to install). ``score`` is `choose`'s, or None when the default
    routing has no pair model or its model refuses the demand (then the plan stays). The controller installs, and the
    simulator's ``--fabric-default`` models, exactly this."""
    model = PAIR_ROUTERS.get(default_routing)
    if model is None or isinstance(planned, pairs.FabricRoutes):
        return planned, None
    try:
        default = model(graph, demand)
    except errors.REFUSALS:              # the default routes cannot carry a pair: the plan stays
        return planned, None
    choice, score = choose(graph, demand, default, {}, planned, base=base)
    if choice == "planned":
        return planned, score
    return pairs.FabricRoutes(default, default_routing), score
