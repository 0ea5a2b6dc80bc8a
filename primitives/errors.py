"""The planners' one refusal class: what a caller may turn into a one-line answer.

A planner of this package *refuses* its input with `PlanRefused` or a subclass (pairs.DemandError:
a host not in the graph, hosts with no path; routing.NoRouteError; leastload.NoPathError;
jobroute_optimal.NotATree; allreduce.PlanError; bcast.TreeError), or with networkx's
``NetworkXNoPath`` (primitives/paths.py: two leaves with no path, a leaf cut off the fabric).
`REFUSALS` is that pair of classes. Anything else a planner raises is a bug: an internal check
that fails raises AssertionError (not `assert`, which ``python -O`` drops), and a caller lets it
through to be logged with its traceback, not shown as "cannot route" (controller/jobtraffic.py
`plan`, controller/flowchoice.py). `PlanRefused` is a ValueError, so callers that catch ValueError
(the simulator, the benches) keep working.
"""
import networkx as nx


class PlanRefused(ValueError):
    """A demand, a host set or a topology that a planner deliberately refuses (one line)."""


#: what a planner raises for input it refuses; anything else it raises is a bug
REFUSALS = (PlanRefused, nx.NetworkXNoPath)
