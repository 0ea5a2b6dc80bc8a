"""Per-job traffic routes (issue 15): a job's heavy host pairs, routed phase by phase.

A job declares its traffic as one demand per phase (from a profile of an earlier run, or from hints
its ranks give; the RPC ops `traffic` and `phase`, docs/rpc.md): a list of (src ip, dst ip, bytes)
between its hosts, and the pair router of ``primitives.PAIR_ROUTERS`` that routes it (default
``sdn-adaptive``). Phase 0 stands for the whole run: its routes are wanted from the moment it has a
demand. A phase k >= 1 is wanted while a rank is inside it (each rank is in at most one phase).

A wanted phase with a demand is planned once and kept (its plan sees the load of every other job's
installed phases, so two jobs sharing links are planned together); its paths become per-job flows
under the job's cookie and priority (controller/jobroutes.py). A phase planned again (declared
again, e.g. by flow detection as it flags more pairs or by accumulating hints, or after a topology
change) hands its installed paths to the router, and SDN-optimal / SDN-adaptive keep the pairs that
still fit on them (primitives/jobroute_incremental.py: same bound on flows per link, far fewer
running pairs moved). A phase no longer wanted loses its routes. The reverse of every routed pair
(its TCP ACKs) follows the reverse of the pair's path, and a 2-cycle of the demand gets mutually
reverse paths where that loads no link more (``--sdnmpi-traffic-reverse-routes``, on by default;
primitives/reverse.py); a pair's own routed data always wins over a reverse route. A router that
returns ``pairs.FabricRoutes`` (sdn-adaptive on a dense demand) leaves the pairs to the default
routes: nothing is installed, but its modelled paths still count as load.
A plan that does not load the busiest link less than the default routes would (a tie on a demand
denser than a permutation; worse on any demand) is left out the same way, with one log line:
flow detection's guard (primitives/reroute.py), applied to declared demands (docs/jobroute.md,
"Plans that do not beat the default routes").

Dynamic phase detection (controller/jobidle.py) makes a job *dormant*: every route goes, the
phases stay as they are, and the next `enter` of a phase or the next `declare` brings back every
wanted phase.
Flow detection's mismatch check *withdraws* a declaration that loads the job's live traffic
worse than the default routes (`withdraw`): its demands go too, so the job is undeclared (flow
detection routes its elephants) until it declares again.

Faucet style: the functions change the job's state and return the OpenFlow messages that take the
switches there (``jobroutes.sync_jobs``: every job's installed flows to what it needs); the caller
confirms them, as for the collective plans, and on failure puts back what the failed op changed
(`undo`, with controller/pending.py). A job's collective plans (Job.plans) override its traffic
routes where both route the same host pair.
"""
import dataclasses
import ipaddress
import logging

import networkx as nx

from sdnmpi.primitives import PAIR_ROUTERS, errors, pairs, reroute, reverse, seeding

from . import jobroutes

LOG = logging.getLogger(__name__)

DEFAULT_ROUTER = "sdn-adaptive"
MAX_PHASE = 64                     # phases 0 .. MAX_PHASE (MPI_Pcontrol levels)
MAX_PAIRS = 1 << 16                # flows in one phase's demand, after merging
MAX_JOB_PAIRS = 1 << 18            # flows in all of a job's phases together


class TrafficError(ValueError):
    """A demand, phase, rank or router the controller refuses (one line, for the RPC reply)."""


@dataclasses.dataclass
class PhaseRoutes:
    """The routes of one installed phase."""
    router: str
    demand: list             # pairs.Flow between host MACs, merged
    paths: dict              # (src mac, dst mac) -> host path, as the router gave it
    flows: dict              # (dpid, src ip, dst ip) -> out port; empty when left to the fabric
    fabric_policy: str       # None, or the default routing that carries the pairs ("ecmp", "dmodk")
    max_flows: int           # flows on the busiest directed switch link, this phase alone
    nl_d: int                # the demand's node load
    reverse_flows: dict = dataclasses.field(default_factory=dict)   # the same for the reverse pairs (ACKs)
    reverse_paths: dict = dataclasses.field(default_factory=dict)   # their host paths, like ``paths``

    def routed_paths(self):
        """{(src mac, dst mac): host path} of every pair this phase installs routes for: its pairs'
        ``paths`` and their reverse pairs' (a pair's own path wins); {} when left to the fabric."""
        if self.fabric_policy:
            return {}
        out = dict(self.reverse_paths)
        out.update(self.paths)
        return out

    def all_flows(self):
        """This phase's flows with its reverse pairs' (a pair's own route wins)."""
        out = dict(self.reverse_flows)
        out.update(self.flows)
        return out

    def to_json(self):
        return {"router": self.router, "pairs": len(self.demand), "flows": len(self.flows),
                "reverse_flows": len(self.reverse_flows),
                "fabric_policy": self.fabric_policy, "max_flows": self.max_flows, "nl_d": self.nl_d}


@dataclasses.dataclass
class JobTraffic:
    """A job's declared traffic, where its ranks are, and the installed phases (``Job.traffic``).
    Values are replaced, never changed in place, so `copy` is a cheap snapshot."""
    demands: dict = dataclasses.field(default_factory=dict)   # phase -> [(src ip, dst ip, bytes)]
    routers: dict = dataclasses.field(default_factory=dict)   # phase -> PAIR_ROUTERS name
    rank_phase: dict = dataclasses.field(default_factory=dict)  # rank -> phase >= 1 it is inside
    routes: dict = dataclasses.field(default_factory=dict)    # installed phase -> PhaseRoutes
    dormant: bool = False                                     # idle: no routes until the next entry

    def copy(self):
        return JobTraffic(demands=dict(self.demands), routers=dict(self.routers),
                          rank_phase=dict(self.rank_phase), routes=dict(self.routes), dormant=self.dormant)

    def inside(self):
        """{phase: {rank, ...}} of the phases k >= 1 with ranks inside."""
        out = {}
        for rank, phase in self.rank_phase.items():
            out.setdefault(phase, set()).add(rank)
        return out

    def wanted(self):
        """The phases whose routes should be installed."""
        if self.dormant:
            return set()
        return {p for p in self.demands if p == 0 or p in self.rank_phase.values()}

    def flows(self, hosts=()):
        """{(dpid, src ip, dst ip): port} of the installed phases. A pair routed by several phases
        takes the whole route of one: the latest phase that a rank on its sender's host is inside
        (``hosts``: rank -> host ip; for a reverse pair, the sender of the data it carries the ACKs
        of), else the latest phase. So a rank that enters the next phase early does not move the
        flows of ranks still in the phase before (measured: the 2:1 fabric's permutation shared an
        uplink when the first rank entered halo2d, whose plan routes one permutation pair another
        way). A pair that a phase routes (as data) keeps only that route, whatever reverse route
        another pair gives it."""
        at = {}                                          # host ip -> phases its ranks are inside
        for rank, phase in self.rank_phase.items():
            if 0 <= rank < len(hosts):
                at.setdefault(hosts[rank], set()).add(phase)
        data = _by_pair(self.routes, "flows", lambda src, dst: at.get(src, ()))
        back = _by_pair(self.routes, "reverse_flows", lambda src, dst: at.get(dst, ()))
        out = {k: port for pair, entries in back.items() if pair not in data for k, port in entries.items()}
        for entries in data.values():
            out.update(entries)
        return out

    def to_json(self):
        return {"phases": {str(p): {"pairs": len(d), "router": self.routers[p]}
                           for p, d in sorted(self.demands.items())},
                "inside": {str(p): sorted(r) for p, r in sorted(self.inside().items())},
                "dormant": self.dormant,
                "active": {str(p): r.to_json() for p, r in sorted(self.routes.items())}}


def _by_pair(routes, kind, sender_phases):
    """{(src ip, dst ip): {(dpid, src, dst): port}}: each pair's entries of ``kind`` ("flows" or
    "reverse_flows") from one installed phase: the latest in ``sender_phases(src, dst)`` that has
    the pair, else the latest that has it."""
    entries = {}                                     # pair -> {phase: {key: port}}
    for phase, r in routes.items():
        for key, port in getattr(r, kind).items():
            entries.setdefault(key[1:], {}).setdefault(phase, {})[key] = port
    out = {}
    for pair, phases in entries.items():
        inside = [p for p in phases if p in sender_phases(*pair)]
        out[pair] = phases[max(inside or phases)]
    return out


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
        refusal = foreign_host(hosts, (src, dst))
        if refusal is not None:
            raise TrafficError(refusal)
        if src == dst:
            raise TrafficError("pair %s -> %s has src == dst" % (src, dst))
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes < 1:
            raise TrafficError("bad byte count %r for %s -> %s (an integer >= 1)" % (nbytes, src, dst))
        out.append((src, dst, nbytes))
    return out


def foreign_host(hosts, ips):
    """The refusal of the first of ``ips`` that is not in ``hosts`` (a set of a job's host IPs):
    "host ... is not one of the job's hosts"; None if every one is. Every op that names hosts
    checks them with it (`check_demand`; `plan_allreduce` and `plan_bcast`, controller/rpc.py)."""
    for ip in ips:
        if ip not in hosts:
            return "host %s is not one of the job's hosts" % ip
    return None


def merged(demand):
    """One (src ip, dst ip, bytes) per pair, bytes added up, heaviest first (pairs.merge)."""
    return [tuple(f) for f in pairs.merge(pairs.Flow(*e) for e in demand)]


def node_load(demand):
    """NL_D of a demand of (src ip, dst ip, bytes)."""
    return pairs.node_load([pairs.Flow(*e) for e in demand])


def declare(core, jobs, job, phase, demand, add=False, router=None, install=True, running=False):
    """Sets (``add``: adds to) phase ``phase``'s demand, routed by ``router`` (None: the phase's
    router so far, else DEFAULT_ROUTER); an empty demand without ``add`` removes the phase. Wakes
    a dormant job. A wanted phase is planned again. Checks everything before changing anything
    (TrafficError). Returns the messages (``install`` False: the traffic state only, no messages
    and the jobs' installed flows untouched, for a caller that puts the state back). ``running``:
    the demand's pairs run now (flow detection's flags, --sdnmpi-flow-seed): the plan keeps each
    where it runs (`plan`)."""
    _check_phase(phase)
    if router is not None and router not in PAIR_ROUTERS:
        raise TrafficError("unknown router %r (known: %s)" % (router, ", ".join(sorted(PAIR_ROUTERS))))
    demand = check_demand(job, demand)
    t = job.traffic
    if add:
        demand = t.demands.get(phase, []) + demand
    demand = merged(demand)
    if len(demand) > MAX_PAIRS:
        raise TrafficError("phase %d would have %d pairs, more than %d" % (phase, len(demand), MAX_PAIRS))
    total = len(demand) + sum(len(d) for p, d in t.demands.items() if p != phase)
    if total > MAX_JOB_PAIRS:
        raise TrafficError("job %d would have %d pairs in all phases, more than %d" % (job.id, total, MAX_JOB_PAIRS))
    if demand:
        t.demands[phase] = demand
        t.routers[phase] = router or t.routers.get(phase, DEFAULT_ROUTER)
    else:
        t.demands.pop(phase, None)
        t.routers.pop(phase, None)
    t.dormant = False
    _sync(core, jobs, job, replan={phase}, running={phase} if running else ())
    return jobroutes.sync_jobs(core, jobs) if install else []


def install_planned(core, jobs, job, planned):
    """Makes ``planned`` the job's traffic state and returns the messages: ``declare(...,
    install=True)`` without planning again, for a caller that planned with ``install=False``
    (``planned``: the ``job.traffic`` that call left) and put the state back meanwhile
    (controller/flowchoice.py: flow detection plans a decision once). Nothing may change the
    job's, the other jobs' or the topology's state in between: the plan saw them."""
    job.traffic = planned
    return jobroutes.sync_jobs(core, jobs)


def move(core, jobs, job, rank, phase):
    """Rank ``rank`` enters ``phase`` >= 1 (leaving the phase it was in), or leaves its phase
    (``phase`` 0). Entering wakes a dormant job. Returns the messages."""
    _check_phase(phase)
    _check_rank(job, rank)
    t = job.traffic
    if phase:
        t.rank_phase[rank] = phase
        t.dormant = False
    else:
        t.rank_phase.pop(rank, None)
    _sync(core, jobs, job)
    return jobroutes.sync_jobs(core, jobs)


def entries(t):
    """JobTraffic ``t`` as entries for undoing a failed op (controller/pending.py): {key: value}
    of each phase's demand with its router (("demand", phase)), rank's phase (("rank", rank)),
    installed phase's routes (("routes", phase)) and whether the job is dormant (("dormant",))."""
    out = {("demand", p): (d, t.routers[p]) for p, d in t.demands.items()}
    out.update({("rank", r): p for r, p in t.rank_phase.items()})
    out.update({("routes", p): r for p, r in t.routes.items()})
    out[("dormant",)] = t.dormant
    return out


def undo(core, jobs, job, put_back):
    """Puts back what a failed op did to ``job.traffic`` (``put_back``: {key of `entries`: value,
    None for none}, from pending.InFlight.failed), for a caller whose switches did not confirm it
    (state only: the caller resynchronises the job's flows). The routes follow the phases then
    wanted; a phase whose demand goes back and whose routes do not (they were planned on the demand
    that goes) is planned again."""
    t = job.traffic
    for key, value in put_back.items():
        if key[0] == "dormant":
            t.dormant = value
        elif key[0] == "demand":
            _put(t.demands, key[1], value and value[0])
            _put(t.routers, key[1], value and value[1])
        else:
            _put(t.rank_phase if key[0] == "rank" else t.routes, key[1], value)
    stale = {k[1] for k in put_back if k[0] == "demand" and ("routes", k[1]) not in put_back}
    _sync(core, jobs, job, replan=stale)


def _put(table, key, value):
    if value is None:
        table.pop(key, None)
    else:
        table[key] = value


def idle(core, jobs, job):
    """The job stopped communicating (its hosts' port counters went quiet): dormant, every route
    goes. The next `move` into a phase or `declare` brings them back."""
    job.traffic.dormant = True
    job.traffic.routes.clear()
    return jobroutes.sync_jobs(core, jobs)


def withdraw(core, jobs, job):
    """The job's declaration was proven wrong for its live traffic (flow detection's mismatch
    check): every declared phase's demand and routes go, so the job is undeclared, as if it had
    never sent `traffic`, until its next `declare`. Where its ranks are stays (a phase entry alone
    brings nothing back: no phase has a demand). Returns the messages."""
    t = job.traffic
    t.demands, t.routers, t.routes, t.dormant = {}, {}, {}, False
    return jobroutes.sync_jobs(core, jobs)


def replan_job(core, jobs, job):
    """After a topology change: the job's installed phases routed again on the new topology (state
    only: the caller sends the difference of ``job.flows()``). A phase that no longer fits (a
    host is gone) keeps no routes, so its pairs use the default routes."""
    _sync(core, jobs, job, replan=set(job.traffic.routes))


def replan(core, jobs):
    """`replan_job` for every job, in id order (each sees the ones before it); the messages."""
    for _job_id, job in sorted(jobs.jobs.items()):
        replan_job(core, jobs, job)
    return jobroutes.sync_jobs(core, jobs)


# -- internals -----------------------------------------------------------------------------------
def _is_ipv4(text):
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _check_phase(phase):
    if isinstance(phase, bool) or not isinstance(phase, int) or not 0 <= phase <= MAX_PHASE:
        raise TrafficError("bad phase %r (0 .. %d)" % (phase, MAX_PHASE))


def _check_rank(job, rank):
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < len(job.hosts):
        raise TrafficError("bad rank %r for a job of %d ranks" % (rank, len(job.hosts)))


def _sync(core, jobs, job, replan=(), running=()):
    """Installed phases := wanted phases: unwanted ones dropped, wanted ones not installed (or in
    ``replan``) planned (those in ``running`` seeded where their pairs run, `plan`). A phase that
    cannot be routed (a host not in the topology) keeps no routes and is logged."""
    t = job.traffic
    wanted = t.wanted()
    previous = {}
    for phase in [p for p in t.routes if p not in wanted or p in replan]:
        previous[phase] = t.routes.pop(phase)
    for phase in sorted(wanted - set(t.routes)):
        try:
            t.routes[phase] = plan(core, jobs, job, phase, previous=previous.get(phase), running=phase in running)
        except TrafficError as err:
            LOG.warning("job %d phase %d: default routes: %s", job.id, phase, err)


def plan(core, jobs, job, phase, previous=None, running=False):
    """PhaseRoutes of ``job``'s ``phase`` on the current topology, with the load of every other
    job's installed phases; raises TrafficError for a demand the planning refuses (the primitives'
    refusals, primitives.errors.REFUSALS: a bad demand, a pair with no path, ...) and lets anything
    else through, a plain ValueError included (a bug: the caller logs it, the op an internal error).
    ``previous``: the PhaseRoutes the phase had until now, if any: a router that takes
    ``previous=`` (SDN-optimal and SDN-adaptive) keeps its pairs' paths where an optimal plan allows
    (primitives/jobroute_incremental.py), so re-declaring a phase with more pairs (flow detection,
    accumulating hints) moves few of the running ones.
    ``running``: the demand's pairs run now (flow detection's): a pair without a path in
    ``previous`` is seeded with the path it takes now, its reverse route or its default path under
    a deterministic default routing (primitives.seeding.plan), so the first plan of detected pairs
    moves few of them too. A declared demand (profile, hints) runs after its plan:
    not seeded."""
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
    router = job.traffic.routers[phase]
    load = others_load(graph, jobs, job)
    keep = _previous_paths(PAIR_ROUTERS[router], previous)
    try:
        if running:
            paths = seeding.plan(PAIR_ROUTERS[router], graph, demand, core.routing, load=load,
                                 installed=previous.routed_paths() if previous is not None else {}, **keep)
        else:
            paths = PAIR_ROUTERS[router](graph, demand, load=load, **keep)
        paths = _unless_default_as_good(core, graph, job, phase, router, demand, paths, load)
        policy = paths.policy if isinstance(paths, pairs.FabricRoutes) else None
        back = {}
        if not policy and core.settings.traffic_reverse_routes:
            paths = reverse.symmetric(graph, demand, paths, load=load)
            back = reverse.reverse_paths(graph, paths)
    except errors.PlanRefused as err:  # pairs.DemandError, routing.NoRouteError, NotATree, ... (primitives/errors.py)
        raise TrafficError("%s cannot route phase %d: %s" % (router, phase, err)) from None
    except nx.NetworkXNoPath as err:  # a pair with no path (a leaf cut off the fabric)
        why = _no_path(graph, demand, ip_of) or err
        raise TrafficError("%s cannot route phase %d: %s" % (router, phase, why)) from None
    switch_paths = {} if policy else {pair: path[1:-1] for pair, path in paths.items()}
    routes = PhaseRoutes(router=router, demand=demand, paths=dict(paths), fabric_policy=policy,
                         flows=jobroutes.plan_flows(graph, switch_paths, ip_of),
                         max_flows=pairs.link_load(graph, demand, paths).max_flows(),
                         nl_d=pairs.node_load(demand),
                         reverse_flows=jobroutes.plan_flows(graph, {p: path[1:-1] for p, path in back.items()}, ip_of),
                         reverse_paths=back)
    LOG.info("job %d phase %d: %s routes %d pairs (%d flows, %d for the reverse pairs%s), max %d flows per link, "
             "NL_D %d", job.id, phase, router, len(demand), len(routes.flows), len(routes.reverse_flows),
             ", left to %s" % policy if policy else "", routes.max_flows, routes.nl_d)
    return routes


def _no_path(graph, demand, ip_of):
    """"no path from SRC IP to DST IP" for the first pair of ``demand`` the graph cannot carry, or
    None (networkx's own message then says what failed)."""
    for flow in demand:
        if not nx.has_path(graph, flow.src, flow.dst):
            return "no path from %s to %s" % (ip_of[flow.src], ip_of[flow.dst])
    return None


def _previous_paths(router, previous):
    """{"previous": the installed paths of ``previous``} for a router that takes them, else {}."""
    if previous is None or previous.fabric_policy or not previous.paths:
        return {}
    if not seeding.takes_previous(router):
        return {}
    return {"previous": previous.paths}


def _unless_default_as_good(core, graph, job, phase, router, demand, paths, base):
    """``paths``, or ``pairs.FabricRoutes`` of the default routes when the plan does not beat
    them (primitives.reroute.unless_default_as_good, flow detection's guard on the declared
    demand, other jobs' load included): a tie on a demand denser than a permutation stays on the
    default routes (a whole-run profile of a dense demand, hpcc's, says which pairs talk but not
    which talk at once); on a permutation the plan must be no worse."""
    routes, score = reroute.unless_default_as_good(graph, demand, paths, core.routing, base)
    if routes is not paths:
        LOG.info("job %d phase %d: %s's plan left out: busiest link %d flows, %d on the default %s routes "
                 "(node load %d); the pairs stay on the default routes", job.id, phase, router,
                 score["planned"], score["default"], core.routing, pairs.node_load(demand))
    return routes


def others_load(graph, jobs, job):
    """LinkLoad of every other job's installed phases (paths on links that are gone are skipped)."""
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
