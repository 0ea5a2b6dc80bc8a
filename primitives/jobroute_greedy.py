"""SDN-greedy pair routers (issue 15): a whole job's heavy flows, one at a time.

The flows of the demand are placed heaviest first (bytes, ties by pair); each takes the shortest
path whose most-loaded link is least loaded so far (then the least total load), counting the load
``load`` that other jobs already put on the fabric and the flows of this demand placed before it.

- ``sdn_greedy``: load = flows per directed switch link (the issue's SDN-greedy).
- ``sdn_greedy_bytes``: load = bytes per capacity; better when flow sizes differ, since bytes, not
  flow counts, set the finish time.

Contract: primitives/pairs.py. Deterministic (``seed`` is ignored).
"""
import logging

from . import pairs
from .leastload import LeastLoadRouter, NoPathError

LOG = logging.getLogger(__name__)


def sdn_greedy(graph, demand, load=None, seed=None):
    return place(graph, pairs.checked(graph, demand), load, by_bytes=False)


def sdn_greedy_bytes(graph, demand, load=None, seed=None):
    return place(graph, pairs.checked(graph, demand), load, by_bytes=True)


def place(graph, flows, load=None, by_bytes=False):
    """Greedy placement of ``flows`` (checked, merged: see pairs.checked) in the order given."""
    total = load.copy() if load is not None else pairs.LinkLoad()
    metric = total.bytes if by_bytes else total.flows
    router = LeastLoadRouter(graph)
    paths, leaf = {}, pairs.leaves_of(graph, flows)
    for flow in flows:
        a, b = leaf[flow.src], leaf[flow.dst]
        try:
            switches = router.best_path(a, b, metric)
        except NoPathError as err:
            raise pairs.DemandError("%s -> %s: %s" % (flow.src, flow.dst, err)) from None
        path = [flow.src, *switches, flow.dst]
        total.add_path(graph, path, flow.bytes)
        paths[flow.src, flow.dst] = path
    return paths
