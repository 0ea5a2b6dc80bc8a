"""SDN-adaptive pair router (issue 15) and the default routes' paths as pair-routing baselines.

``sdn_adaptive``: when the demand is no denser than a permutation (NL_D <= 1, pairs.node_load),
SDN-optimal (jobroute_optimal.py) routes it contention-free. A denser demand cannot be routed
without sharing links anyway, and the fabric's multipath spreads it with no controller state: the
router returns ``pairs.FabricRoutes(paths, "ecmp")``, the paths ECMP would hash the pairs onto (see
``fabric_paths``), which the simulator uses and the controller leaves to the default ECMP groups.

``fabric_paths(graph, demand, policy)``: {(src, dst): path} that the default per-destination
routing ``policy`` (a function of primitives/routing.py: dmodk, ecmp, single) gives the pairs.
Where ECMP offers several ports, a pair takes the one its hash picks: a stable hash of (src, dst,
switch, seed) stands in for the switch's, which OpenFlow does not specify (BLAKE2b: CRC-32 is
visibly biased on such similar keys).
"""
import hashlib
import logging

from . import pairs, routing
from .jobroute_optimal import sdn_optimal

LOG = logging.getLogger(__name__)

def sdn_adaptive(graph, demand, load=None, seed=None):
    flows = pairs.checked(graph, demand)
    if pairs.node_load(flows) <= 1:
        return sdn_optimal(graph, flows, load)
    return pairs.FabricRoutes(fabric_paths(graph, flows, routing.ecmp, seed), "ecmp")


def fabric_paths(graph, demand, policy, seed=None):
    """The default routes' paths of ``demand``'s pairs under ``policy`` (see the module docstring)."""
    flows = pairs.checked(graph, demand)

    def pick(switch, ports, src, dst):
        key = "%s %s %s %s" % (src, dst, switch, seed)
        digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
        return ports[int.from_bytes(digest, "big") % len(ports)]

    try:
        return routing.paths_from_table(graph, policy(graph), [(f.src, f.dst) for f in flows], pick)
    except routing.NoRouteError as err:
        raise pairs.DemandError(str(err)) from None
