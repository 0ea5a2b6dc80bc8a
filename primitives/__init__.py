"""sdnmpi.primitives: pure route planners over a networkx topology graph (no Ryu imports).

Planners are looked up by name in the read-only registries below, so new ones plug in the same way.
"""
import logging
from types import MappingProxyType

from . import allreduce, pair_routing, pairs, routing

LOG = logging.getLogger(__name__)

#: Default per-destination routing policies: name -> policy(graph) -> RouteTable.
DEFAULT_ROUTING = MappingProxyType({
    "dmodk": routing.dmodk,
    "ecmp": routing.ecmp,
    "single": routing.single,
})

#: Allreduce planners: name -> planner(graph, host steps) -> allreduce.Plan.
ALLREDUCE_PLANNERS = MappingProxyType({
    "balanced": allreduce.balanced,
    "dmodk": allreduce.dmodk,
    "single": allreduce.single,
})

#: Host-pair routers (primitives/pairs.py): name -> router(graph, demand, load=None, seed=None)
#: -> {(src, dst): path}. The one registry the controller's job routing and the simulator share.
PAIR_ROUTERS = MappingProxyType({
    "dmodk": pair_routing.dmodk,
    "ecmp": pair_routing.ecmp,
    "greedy": pair_routing.greedy,
    "greedy2": pair_routing.greedy2,
    "random": pair_routing.random,
    "single": pair_routing.single,
})
