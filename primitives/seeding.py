"""Where a job's pairs run before they are planned: the seed of flow detection's plans (issue 16).

Flow detection flags pairs that are already running, on the fabric's default routes (or on the
job's routes: a pair whose reverse is routed rides that reverse route). A plan made from scratch
gives most of them another path ("moves": at 5 Mbit/s a moved TCP flow loses 1-2 s getting back to
full rate, docs/flows.md). Handed to a router that takes ``previous=`` (SDN-optimal, SDN-adaptive;
primitives/jobroute_incremental.py) as the pairs' previous paths, `running_paths` keeps them where
they run wherever the plan's bound on flows per link allows: the same busiest link as a fresh plan,
fewer running pairs moved (bench/replan_moves.py). `plan` makes that a rule per plan: it also
plans without the seeds and keeps whichever moves fewer running pairs at no higher busiest link
(the incremental colouring keeps seeds greedily, so on a few demands a plan from scratch happens to
match more default paths: 25 of 2640 random first plans measured, SDN-optimal and its byte variant
on 11 fabrics, 20 of them on leaf-spines).

Only deterministic default routings seed (SEEDABLE): under D-mod-K and single-path routing a
pair's path is a function of the topology and the pair, and ``PAIR_ROUTERS`` models it exactly. An
ECMP fabric hashes each flow's headers (ports included) in the switch: the pair model's path
(``pair_routing.ecmp``) is a uniform stand-in, not where the flow runs, so seeding with it would
keep nothing in place and only bias the plan; there the pairs are planned as before, from their
installed paths only.

A declared demand (a profile, hints) is planned before its traffic runs: nothing to keep, so the
controller seeds flow detection's plans only (controller/jobtraffic.py ``running=``), and the
simulator's ``sdnmpi-sim job --detected`` models the same seeded plan (simulator/job.py). Pure.
"""
import inspect

from . import PAIR_ROUTERS, errors, pairs

#: default routings whose per-pair path the pair routers model exactly (not ECMP: the switch's hash)
SEEDABLE = frozenset({"dmodk", "single"})


def takes_previous(router):
    """True if the pair router takes ``previous=`` (keeps earlier paths where its plan allows)."""
    return "previous" in inspect.signature(router).parameters


def running_paths(graph, demand, default_routing, installed=None):
    """{(src, dst): host path} where each pair of ``demand`` (pairs.Flow) runs now: its path in
    ``installed`` ({(src, dst): host path}, the job's routes, reverse routes included) if it has one,
    else its ``default_routing`` path when that routing is in SEEDABLE. Pairs with neither are left
    out (planned as new). The paths are not checked: a router ignores a previous path that its
    plan could not give (jobroute_incremental.py)."""
    installed = installed or {}
    out = {}
    if default_routing in SEEDABLE:
        try:
            out = PAIR_ROUTERS[default_routing](graph, [f for f in demand if (f.src, f.dst) not in installed])
        except errors.REFUSALS:          # a host not in the topology, no path: the router reports it
            out = {}
    for flow in demand:
        path = installed.get((flow.src, flow.dst))
        if path:
            out[flow.src, flow.dst] = list(path)
    return out


def moves(paths, running):
    """Pairs of ``running`` ({(src, dst): path}) that ``paths`` routes on another path."""
    return sum(1 for pair, path in running.items() if pair in paths and list(paths[pair]) != list(path))


def plan(router, graph, demand, default_routing, load=None, previous=None, installed=None):
    """``router``'s plan of ``demand`` (pairs.Flow, running now) on top of ``load``, kept where its
    pairs run: planned with ``previous=`` the `running_paths` (``installed``: the job's routes,
    reverse ones included; default ``previous``) and with ``previous`` alone (the phase's own
    earlier paths, or None), the one with the lower busiest link (flows, ``load`` included), then
    the fewer running pairs moved; ties go to the seeded plan. A router without ``previous=``
    plans as always. The controller's flow detection (controller/jobtraffic.py) and ``sdnmpi-sim
    job --detected`` both plan through here."""
    if not takes_previous(router):
        return router(graph, demand, load=load)
    running = running_paths(graph, demand, default_routing, previous if installed is None else installed)
    seeded = router(graph, demand, load=load, previous=running)
    plain = router(graph, demand, load=load, previous=previous or None)
    if isinstance(seeded, pairs.FabricRoutes) or isinstance(plain, pairs.FabricRoutes) or seeded == plain:
        return seeded

    def score(paths):
        return pairs.link_load(graph, demand, paths, base=load).max_flows(), moves(paths, running)
    return plain if score(plain) < score(seeded) else seeded
