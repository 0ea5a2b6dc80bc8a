"""Per-job traffic routes (issue 15): a job's heavy host pairs, routed phase by phase.

A job declares its traffic as one demand per phase (from a profile of an earlier run, or from hints
its ranks give): a list of (src ip, dst ip, bytes) between its hosts. Phase 0 stands for the whole
run when the traffic has no phases. When the first rank enters phase k, phase k's demand is routed
by a pair router of ``primitives.PAIR_ROUTERS`` (default ``sdn-optimal``), which sees the load of
every other job's active phases (two jobs sharing links are planned together), and its paths become
per-job flows under the job's cookie and priority (controller/jobroutes.py); when the last rank
leaves the phase, they go. A router that returns ``pairs.FabricRoutes`` (sdn-adaptive on a dense
demand) leaves the pairs to the default routes: nothing is installed, but its modelled paths still
count as load for the other jobs.

Faucet style: the functions change the job's state and return the OpenFlow messages that take the
switches there (``jobroutes.sync_messages`` between the job's flows before and after); the caller
confirms them, as for the collective plans. A job's collective plans (Job.plans) override its
traffic routes where both route the same host pair.
"""
import dataclasses
import ipaddress
import logging

from sdnmpi.primitives import PAIR_ROUTERS, pairs

from . import jobroutes

LOG = logging.getLogger(__name__)

DEFAULT_ROUTER = "sdn-optimal"
MAX_PHASE = 1 << 16                # phases 0 .. MAX_PHASE - 1 (MPI_Pcontrol levels)
MAX_PHASES = 256                   # phases with a demand, per job
MAX_PAIRS = 1 << 16                # flows in one phase's demand


class TrafficError(ValueError):
    """A demand, phase, rank or router the controller refuses (one line, for the RPC reply)."""


@dataclasses.dataclass
class PhaseRoutes:
    """The routes of one active phase."""
    router: str
    demand: list             # pairs.Flow between host MACs, merged
    paths: dict              # (src mac, dst mac) -> host path, as the router gave it
    flows: dict              # (dpid, src ip, dst ip) -> out port; empty when left to the fabric
    fabric_policy: str       # None, or the default routing that carries the pairs ("ecmp")
    max_flows: int           # flows on the busiest directed switch link, this phase alone
    nl_d: int                # the demand's node load

    def to_json(self):
        return {"router": self.router, "pairs": len(self.demand), "flows": len(self.flows),
                "fabric_policy": self.fabric_policy, "max_flows": self.max_flows, "nl_d": self.nl_d}


@dataclasses.dataclass
class JobTraffic:
    """A job's declared traffic and the phases its ranks are in (``Job.traffic``)."""
    router: str = DEFAULT_ROUTER
    demands: dict = dataclasses.field(default_factory=dict)   # phase -> [(src ip, dst ip, bytes)]
    inside: dict = dataclasses.field(default_factory=dict)    # phase -> {rank, ...} (non-empty)
    routes: dict = dataclasses.field(default_factory=dict)    # active phase with a demand -> PhaseRoutes

    def flows(self):
        """{(dpid, src ip, dst ip): port} of the active phases; a later phase wins a clash."""
        out = {}
        for phase in sorted(self.routes):
            out.update(self.routes[phase].flows)
        return out

    def to_json(self):
        return {"router": self.router, "phases": sorted(self.demands),
                "inside": {str(p): sorted(r) for p, r in sorted(self.inside.items())},
                "active": {str(p): r.to_json() for p, r in sorted(self.routes.items())}}


def set_router(job, name):
    if name not in PAIR_ROUTERS:
        raise TrafficError("unknown router %r (known: %s)" % (name, ", ".join(sorted(PAIR_ROUTERS))))
    job.traffic.router = name


def check_demand(job, demand):
    """The demand as a list of (src ip, dst ip, bytes), checked against the job's hosts."""
    if not isinstance(demand, (list, tuple)):
        raise TrafficError("a demand is a list of [src ip, dst ip, bytes]")
    if len(demand) > MAX_PAIRS:
        raise TrafficError("demand of %d pairs, more than %d" % (len(demand), MAX_PAIRS))
    hosts = set(job.hosts)
    out = []
    for entry in demand:
        if not isinstance(entry, (list, tuple)) or len(entry) != 3:
            raise TrafficError("bad demand entry %r: not [src ip, dst ip, bytes]" % (entry,))
        src, dst, nbytes = entry
        for ip in (src, dst):
            if not isinstance(ip, str) or not _is_ipv4(ip):
                raise TrafficError("bad IPv4 address %r in the demand" % (ip,))
            if ip not in hosts:
                raise TrafficError("host %s is not one of the job's hosts" % ip)
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 0:
            raise TrafficError("bad byte count %r for %s -> %s" % (nbytes, src, dst))
        out.append((src, dst, nbytes))
    return out


def declare(core, jobs, job, phase, demand):
    """Sets phase ``phase``'s demand (an empty demand removes it). If ranks are inside that phase,
    its routes are planned again. Returns the messages."""
    _check_phase(phase)
    demand = check_demand(job, demand)
    if demand and phase not in job.traffic.demands and len(job.traffic.demands) >= MAX_PHASES:
        raise TrafficError("job %d already has %d phases with traffic" % (job.id, MAX_PHASES))
    before = job.flows()
    if demand:
        job.traffic.demands[phase] = demand
    else:
        job.traffic.demands.pop(phase, None)
    _replace(core, jobs, job, phase)
    return jobroutes.sync_messages(core.datapaths, job, before, job.flows())


def enter(core, jobs, job, phase, rank):
    """Rank ``rank`` enters ``phase``: the first one in installs the phase's routes."""
    _check_phase(phase)
    _check_rank(job, rank)
    inside = job.traffic.inside.setdefault(phase, set())
    first = not inside
    inside.add(rank)
    if not first:
        return []
    before = job.flows()
    _replace(core, jobs, job, phase)
    return jobroutes.sync_messages(core.datapaths, job, before, job.flows())


def leave(core, job, phase, rank):
    """Rank ``rank`` leaves ``phase``: when every rank has left, the phase's routes go."""
    _check_phase(phase)
    _check_rank(job, rank)
    inside = job.traffic.inside.get(phase, set())
    inside.discard(rank)
    if inside:
        return []
    job.traffic.inside.pop(phase, None)
    before = job.flows()
    job.traffic.routes.pop(phase, None)
    return jobroutes.sync_messages(core.datapaths, job, before, job.flows())


def idle(core, job):
    """The job stopped communicating (e.g. its hosts' port counters went quiet): every phase is
    left and its routes go. The next ``enter`` brings them back."""
    before = job.flows()
    job.traffic.inside.clear()
    job.traffic.routes.clear()
    return jobroutes.sync_messages(core.datapaths, job, before, job.flows())


def replan(core, jobs):
    """After a topology change: every job's active phases routed again on the new topology, jobs in
    id order (each sees the ones before it). A phase that no longer fits (a host is gone) keeps no
    routes, so its pairs use the default routes. Returns the messages of every job."""
    msgs = []
    for _job_id, job in sorted(jobs.jobs.items()):
        before = job.flows()
        for phase in sorted(job.traffic.inside):
            _replace(core, jobs, job, phase)
        msgs += jobroutes.sync_messages(core.datapaths, job, before, job.flows())
    return msgs


# -- internals -----------------------------------------------------------------------------------
def _is_ipv4(text):
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _check_phase(phase):
    if isinstance(phase, bool) or not isinstance(phase, int) or not 0 <= phase < MAX_PHASE:
        raise TrafficError("bad phase %r (0 .. %d)" % (phase, MAX_PHASE - 1))


def _check_rank(job, rank):
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < len(job.hosts):
        raise TrafficError("bad rank %r for a job of %d ranks" % (rank, len(job.hosts)))


def _replace(core, jobs, job, phase):
    """Plans ``phase`` if a rank is inside it and it has a demand, else drops its routes. A phase
    that cannot be routed (a host not in the topology) keeps no routes and is logged."""
    job.traffic.routes.pop(phase, None)
    if not job.traffic.inside.get(phase) or phase not in job.traffic.demands:
        return
    try:
        job.traffic.routes[phase] = plan(core, jobs, job, phase)
    except TrafficError as err:
        LOG.warning("job %d phase %d: default routes: %s", job.id, phase, err)


def plan(core, jobs, job, phase):
    """PhaseRoutes of ``job``'s ``phase`` on the current topology, with the load of every other
    job's active phases; raises TrafficError."""
    graph = core.topology.graph()
    mac_of, ip_of = {}, {}
    for src, dst, _nbytes in job.traffic.demands[phase]:
        for ip in (src, dst):
            if ip not in mac_of:
                host = core.topology.host_by_ip(ip)
                if host is None or host.mac not in graph:
                    raise TrafficError("host %s is not in the topology" % ip)
                mac_of[ip], ip_of[host.mac] = host.mac, ip
    demand = pairs.merge(pairs.Flow(mac_of[s], mac_of[d], b) for s, d, b in job.traffic.demands[phase])
    router = job.traffic.router
    try:
        paths = PAIR_ROUTERS[router](graph, demand, load=_others_load(graph, jobs, job))
    except pairs.DemandError as err:
        raise TrafficError(str(err)) from None
    policy = paths.policy if isinstance(paths, pairs.FabricRoutes) else None
    switch_paths = {} if policy else {pair: path[1:-1] for pair, path in paths.items()}
    routes = PhaseRoutes(router=router, demand=demand, paths=dict(paths), fabric_policy=policy,
                         flows=jobroutes.plan_flows(graph, switch_paths, ip_of),
                         max_flows=pairs.link_load(graph, demand, paths).max_flows(),
                         nl_d=pairs.node_load(demand))
    LOG.info("job %d phase %d: %s routes %d pairs (%d flows%s), max %d flows per link, NL_D %d",
             job.id, phase, router, len(demand), len(routes.flows),
             ", left to %s" % policy if policy else "", routes.max_flows, routes.nl_d)
    return routes


def _others_load(graph, jobs, job):
    """LinkLoad of every other job's active phases (paths on links that are gone are skipped)."""
    load = pairs.LinkLoad()
    for other in jobs.jobs.values():
        if other is job:
            continue
        for routes in other.traffic.routes.values():
            for flow in routes.demand:
                path = routes.paths.get((flow.src, flow.dst), ())
                if all(graph.has_edge(u, v) for u, v in zip(path, path[1:])):
                    load.add_path(graph, path, flow.bytes)
    return load
