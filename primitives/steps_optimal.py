"""Per-step SDN-optimal planning of a collective's steps (issue 17: SDN_MPI_Alltoall).

Each step of a pairwise exchange is a permutation of the ranks. ``sdn_optimal`` routes every step
on its own with the SDN-optimal pair router (jobroute_optimal.sdn_optimal, level-by-level edge
colouring): on a full-bisection fat-tree a permutation is then routed without any contention, so
no step's flows share a link. Like the allreduce planners, a host pair keeps one path (switch routes
match host pairs): a pair already routed in an earlier step is not routed again, and counts as
load for the step's other pairs.

Ties between uplinks go to the one the earlier steps used least. The links of a step that needs
fewer than all of a leaf's uplinks (on 4 leaves x 2 hosts the shifts by 1 and by p - 1: one flow
out of each leaf) are otherwise the first uplinks every time: such steps all took spine 1, which
then carried 7 of each leaf's 12 outgoing blocks against spine 2's 5 (bench run 20261128-213404,
bytes per spine 58 % / 42 %), and steps in flight together (SDN_MPI_ALLTOALL_WINDOW) share links.
The earlier steps count with a weight below one flow in all, so they only break
ties: a step's own flows per link stay what the step alone needs.

Same contract as primitives/allreduce.py's planners: ``sdn_optimal(graph, steps)`` with steps as
from ``schedule.host_steps`` -> ``allreduce.Plan`` (paths switch path per host pair, max_load and
lower_bound per step). Raises allreduce.PlanError for hosts not in the topology.
"""
from . import allreduce, fabric, pairs
from .jobroute_optimal import sdn_optimal as _route_pairs


def sdn_optimal(graph, steps):
    paths, history = {}, pairs.LinkLoad()
    weight = 1.0 / (1 + sum(count for step in steps for _pair, count in step))
    for step in steps:
        todo = [(src, dst, count) for (src, dst), count in step if (src, dst) not in paths]
        if not todo:
            continue
        load = history.copy()
        for (src, dst), count in step:
            if (src, dst) in paths:
                load.add_path(graph, _host_path(graph, src, dst, paths[src, dst]), 1, flows=count)
        try:
            routed = _route_pairs(graph, [pairs.Flow(s, d, c) for s, d, c in todo], load=load)
        except pairs.DemandError as err:
            raise allreduce.PlanError(str(err)) from None
        for src, dst, count in todo:
            paths[src, dst] = tuple(n for n in routed[src, dst] if graph.nodes[n].get("kind") == fabric.SWITCH)
            # the earlier steps' history: each flow counts as `weight`, so that on any link the sum
            # stays below one flow and only breaks ties
            history.add_path(graph, _host_path(graph, src, dst, paths[src, dst]), 0, flows=weight * count)
    return allreduce.Plan(paths=paths,
                          max_load=tuple(max(allreduce.step_loads(graph, s, paths).values(), default=0) for s in steps),
                          lower_bound=tuple(allreduce.lower_bound(graph, s) for s in steps))


def _host_path(graph, src, dst, switches):
    return (src,) + tuple(switches) + (dst,)
