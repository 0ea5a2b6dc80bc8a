"""sdnmpi.primitives: pure route planners over a networkx topology graph (no Ryu imports).

Planners are looked up by name in the read-only registries below, so new ones plug in the same way.
"""
import logging
from types import MappingProxyType

from . import allreduce, pair_routing, pairs, routing
from . import jobroute, jobroute_greedy, jobroute_optimal
from . import steps_optimal

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
    "sdn-optimal": steps_optimal.sdn_optimal,   # each step routed alone (SDN_MPI_Alltoall's steps)
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
    "sdn-greedy": jobroute_greedy.sdn_greedy,
    "sdn-greedy-bytes": jobroute_greedy.sdn_greedy_bytes,
    "sdn-optimal": jobroute_optimal.sdn_optimal,
    "sdn-optimal-bytes": jobroute_optimal.sdn_optimal_bytes,
    "sdn-adaptive": jobroute.sdn_adaptive,
})
