"""Flow detection's routing choice (issue 16, docs/flows.md "Routing"): whether a job's detected
pairs get the router's plan, keep the installed routes or go back to the default routes, scored
on the job's busy data pairs by primitives.reroute.choose; and the default-paths model the
declared-routes check (controller/flowdetect.py `_check_declared`) scores with too."""
from sdnmpi.primitives import PAIR_ROUTERS, errors, pairs, reroute

from . import jobtraffic


def overrides(routes):
    """The paths a PhaseRoutes installs ({} for none, or for pairs left to the fabric): its pairs'
    and their reverse pairs' (the ACKs' routes, --sdnmpi-traffic-reverse-routes). A busy reverse
    pair that carries data is scored where its packets go, not on its default path."""
    return routes.routed_paths() if routes is not None else {}


def default_model(core, graph, ip_pairs):
    """(default paths model, {ip: mac}) for the pairs, or (None, None) when they cannot be
    judged: a default routing the pair routers do not model, a host not in the topology."""
    model = PAIR_ROUTERS.get(core.routing)
    mac = {}
    for ip in {ip for pair in ip_pairs for ip in pair}:
        host = core.topology.host_by_ip(ip)
        if host is None or host.mac not in graph:
            return None, None
        mac[ip] = host.mac
    return model, (mac if model is not None else None)


def default_paths(graph, model, mac, ip_pairs):
    """(flows, their default paths) of ``ip_pairs`` (one flow of 1 byte each, in that order) under
    `default_model`'s ``model`` and ``mac``, or (flows, None) if the model refuses them
    (primitives.errors.REFUSALS: a busy pair with no default path, a leaf cut off); anything else
    the model raises is a bug, raised."""
    flows_ = [pairs.Flow(mac[s], mac[d], 1) for s, d in ip_pairs]
    try:
        return flows_, model(graph, flows_)
    except errors.REFUSALS:
        return flows_, None


def choose(service, job, phase, detected, busy, router, running=False):
    """(name, scores, planned) of reroute.choose for ``detected`` {(src ip, dst ip): bytes} declared
    as the job's ``phase`` with ``router`` (``running``: seeded where the pairs run, as the
    declaration will be: jobtraffic.declare), scored over ``busy`` (the job's busy data pairs and
    the detected ones): 'planned', 'current' (the installed routes) or 'default'. ('planned', None,
    ...) when it cannot be judged: a default routing the pair routers do not model, a host not in
    the topology, a busy pair the default model refuses (primitives.errors.REFUSALS: no path; any
    other exception of the model is a bug, raised), a plan that fails (the declaration then reports
    it). ``planned``: the job's
    traffic state the declaration leaves (jobtraffic.JobTraffic, planned once here), for the caller
    to install as it is (jobtraffic.install_planned) instead of planning the same demand again; None
    where nothing was planned (a default routing not modelled, a declaration refused: the caller
    declares, and the declaration reports the error). ``job.traffic`` is left as it was."""
    core = service.core
    graph = core.topology.graph()
    model, mac = default_model(core, graph, busy)
    if model is None:
        return "planned", None, None
    state = _planned_state(core, service.jobs, job, phase, detected, router, running)
    if state is None:
        return "planned", None, None
    flows_, default = default_paths(graph, model, mac, sorted(busy))
    if default is None:
        return "planned", None, state
    name, score = reroute.choose(graph, flows_, default, overrides(job.traffic.routes.get(phase)),
                                 overrides(state.routes.get(phase)),
                                 base=jobtraffic.others_load(graph, service.jobs, job))
    return name, score, state


def _planned_state(core, jobs, job, phase, detected, router, running):
    """The JobTraffic ``jobtraffic.declare(..., install=False)`` of ``detected`` leaves (the plan
    the declaration would install), with ``job.traffic`` put back; None if the declaration is
    refused (TrafficError, raised before anything is planned) or fails otherwise (the caller's
    declaration, through rpc_traffic.install, then reports it: an error, the job as it was)."""
    saved = job.traffic.copy()
    try:
        jobtraffic.declare(core, jobs, job, phase, [(s, d, b) for (s, d), b in sorted(detected.items())],
                           router=router, install=False, running=running)
        return job.traffic
    except Exception:  # pylint: disable=broad-except
        return None
    finally:
        job.traffic = saved
