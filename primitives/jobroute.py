"""SDN-adaptive pair router (issue 15).

``sdn_adaptive``: when the demand is no denser than a permutation (NL_D <= 1, pairs.node_load),
SDN-optimal (jobroute_optimal.py) routes it contention-free. A denser demand cannot be routed
without sharing links anyway, and the fabric's multipath spreads it with no controller state: the
router returns ``pairs.FabricRoutes(paths, "ecmp")``, the paths the project's one ECMP model
(``pair_routing.ecmp``) hashes the pairs onto, which the simulator uses and the controller leaves
to the default ECMP groups. ``previous``: as for SDN-optimal (used in the sparse case only).
"""
import logging

from . import pair_routing, pairs
from .jobroute_optimal import sdn_optimal

LOG = logging.getLogger(__name__)


def sdn_adaptive(graph, demand, load=None, seed=None, previous=None):
    flows = pairs.checked(graph, demand)
    if pairs.node_load(flows) <= 1:
        return sdn_optimal(graph, flows, load, previous=previous)
    return pairs.FabricRoutes(pair_routing.ecmp(graph, flows), "ecmp")

