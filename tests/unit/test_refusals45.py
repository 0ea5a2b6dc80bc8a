"""A planner's refusal and a planner's bug are told apart (stop 45, primitives/errors.py).

Every deliberate refusal of primitives/ (a bad demand, no route, a leaf cut off, not a tree, bad
arguments) is an errors.PlanRefused (still a ValueError), or networkx's NetworkXNoPath; the
controller turns exactly those into its one-line "cannot route" (jobtraffic.plan: the phase is
stored on the default routes) or "cannot be judged" (flowchoice). Anything else, a plain ValueError
included, is a bug: "internal error", logged with its traceback, the job as it was. Before, any
ValueError (pair_routing's bare ones, the colouring's internal check, a router's bug) showed up as
"cannot route"."""
import logging

import networkx as nx
import pytest

from sdnmpi.controller import flowchoice, jobtraffic
from sdnmpi.primitives import (PAIR_ROUTERS, allreduce, bcast, colouring, errors, fabric, fattree, jobroute_incremental,
                               jobroute_optimal, leastload, pairs, paths, reroute, routing, schedule, seeding)

from rpc_helpers import GRAPH, IPS, call
from test_rpc_traffic import make_service, register
from test_rpc_undo_pending45 import consistent

PHASE_0 = [[IPS[0], IPS[-1], 1000], [IPS[1], IPS[-2], 1000]]


def cut_leaf(graph, leaf):
    """A copy of ``graph`` without the uplinks of switch ``leaf`` (its hosts stay on it)."""
    g = graph.copy()
    g.graph.clear()
    g.remove_edges_from([(leaf, n) for n in list(g.neighbors(leaf)) if g.nodes[n]["kind"] == "switch"])
    return g


# -- primitives: every deliberate refusal is a PlanRefused ----------------------------------------
@pytest.mark.parametrize("cls", [pairs.DemandError, routing.NoRouteError, leastload.NoPathError,
                                 jobroute_optimal.NotATree, allreduce.PlanError, bcast.TreeError])
def test_each_refusal_class_is_a_plan_refused_and_still_a_value_error(cls):
    assert issubclass(cls, errors.PlanRefused) and issubclass(cls, ValueError)


@pytest.mark.parametrize("router", sorted(PAIR_ROUTERS))
def test_a_host_not_in_the_topology_is_a_refusal_for_every_router(router):
    with pytest.raises(errors.PlanRefused, match="not in the topology"):
        PAIR_ROUTERS[router](GRAPH, [pairs.Flow("02:00:00:00:99:99", next(iter(_hosts())), 1)])


@pytest.mark.parametrize("router", sorted(PAIR_ROUTERS))
@pytest.mark.parametrize("dense", [False, True])
def test_a_leaf_cut_off_is_a_refusal_for_every_router(router, dense):
    """Before: dmodk and single raised a bare ValueError ("no path from ...")."""
    hosts = _hosts()
    graph = cut_leaf(GRAPH, fattree_leaf(0))
    demand = [pairs.Flow(hosts[0], hosts[-1], 1)] + ([pairs.Flow(hosts[0], hosts[-2], 1)] if dense else [])
    with pytest.raises(errors.REFUSALS):
        PAIR_ROUTERS[router](graph, demand)


def test_a_host_on_two_switches_is_a_refused_topology():
    graph = GRAPH.copy()
    graph.graph.clear()
    graph.add_edge(_hosts()[0], fattree_leaf(2), ports={fattree_leaf(2): 9})
    with pytest.raises(errors.PlanRefused, match="exactly one switch"):
        paths.index(graph)


@pytest.mark.parametrize("call_", [lambda: schedule.recursive_doubling_steps(0),
                                   lambda: schedule.hierarchical_cross_steps([4])])
def test_bad_schedule_arguments_are_refusals(call_):
    with pytest.raises(errors.PlanRefused):
        call_()


def test_the_colourings_internal_check_is_an_assertion_not_a_refusal():
    """Kept colours that are not proper are the caller's bug (jobroute_incremental builds them
    proper), not input to refuse: AssertionError (before: a ValueError, "cannot route")."""
    with pytest.raises(AssertionError, match="not proper") as err:
        colouring.extend_colouring([("u", "x"), ("u", "y")], 2, [0, 0], [0, 1])
    assert not isinstance(err.value, ValueError)


def test_the_default_model_guard_lets_a_bug_through_and_keeps_the_plan_on_a_refusal(monkeypatch):
    """reroute.unless_default_as_good: a default model that refuses leaves the plan as it is;
    one with a bug raises (before: any ValueError left the plan)."""
    hosts = _hosts()
    demand = [pairs.Flow(hosts[0], hosts[-1], 1)]
    planned = PAIR_ROUTERS["sdn-optimal"](GRAPH, demand)
    for raised, refused in ((pairs.DemandError("refused"), True), (nx.NetworkXNoPath("no path"), True),
                            (ValueError("a model's bug"), False)):
        monkeypatch.setattr(reroute, "PAIR_ROUTERS", {"dmodk": _raising(raised)})
        if refused:
            assert reroute.unless_default_as_good(GRAPH, demand, planned, "dmodk") == (planned, None)
        else:
            with pytest.raises(ValueError, match="a model's bug"):
                reroute.unless_default_as_good(GRAPH, demand, planned, "dmodk")


def test_seeding_lets_a_default_models_bug_through(monkeypatch):
    hosts = _hosts()
    demand = [pairs.Flow(hosts[0], hosts[-1], 1)]
    monkeypatch.setattr(seeding, "PAIR_ROUTERS", {"dmodk": _raising(pairs.DemandError("refused"))})
    assert seeding.running_paths(GRAPH, demand, "dmodk") == {}
    monkeypatch.setattr(seeding, "PAIR_ROUTERS", {"dmodk": _raising(ValueError("a model's bug"))})
    with pytest.raises(ValueError, match="a model's bug"):
        seeding.running_paths(GRAPH, demand, "dmodk")


# -- the controller: a refusal is one line, a bug an internal error -------------------------------
@pytest.mark.parametrize("bug", [ValueError("a router's bug"), TypeError("a router's bug")])
def test_a_plain_value_error_from_a_router_is_an_internal_error(monkeypatch, caplog, bug):
    """Before: a plain ValueError became "sdn-adaptive cannot route phase 0", the phase stored."""
    service, job_id, job = _new_job()
    monkeypatch.setattr(jobtraffic, "PAIR_ROUTERS", dict(PAIR_ROUTERS, **{"sdn-adaptive": _raising(bug)}))
    with caplog.at_level(logging.ERROR):
        r = call(service, "traffic", job=job_id, phase=0, pairs=PHASE_0)
    assert r["status"] == "error" and r["error"] == "internal error (%s), nothing changed" % type(bug).__name__
    assert job.traffic.demands == {} and consistent(service, job)
    assert any(rec.exc_info and rec.exc_info[1] is bug for rec in caplog.records)


@pytest.mark.parametrize("refusal", [errors.PlanRefused("too many pairs"), pairs.DemandError("no path"),
                                     routing.NoRouteError("no route"), leastload.NoPathError("no path"),
                                     jobroute_optimal.NotATree("not a tree"), nx.NetworkXNoPath("no path")])
def test_every_refusal_is_still_a_stored_phase_with_one_line(monkeypatch, caplog, refusal):
    service, job_id, job = _new_job()
    monkeypatch.setattr(jobtraffic, "PAIR_ROUTERS", dict(PAIR_ROUTERS, **{"sdn-adaptive": _raising(refusal)}))
    with caplog.at_level(logging.WARNING):
        r = call(service, "traffic", job=job_id, phase=0, pairs=PHASE_0)
    assert r["status"] == "ok" and r["stored"]
    assert job.traffic.demands[0] and job.traffic.routes == {} and consistent(service, job)
    lines = [rec for rec in caplog.records if "cannot route phase 0" in rec.getMessage()]
    assert len(lines) == 1 and lines[0].exc_info is None and str(refusal) in lines[0].getMessage()


def test_a_broken_colouring_is_an_internal_error_and_the_phase_keeps_its_routes(monkeypatch):
    """The colouring's internal check, reached for real: a re-declared phase is coloured keeping
    its previous uplinks (jobroute_incremental.colour_level); with that colouring broken (every
    kept flow of an uplink on one colour) extend_colouring's check fails. Before: "sdn-optimal
    cannot route phase 0", the phase stored on the default routes; now an internal error, the job
    as it was (its routes in place)."""
    graph = fattree.leaf_spine(2, 2, 4)               # 4 hosts a leaf, 2 uplinks: ceil(4 / 2) = 2 a colour
    ips = [graph.nodes[m]["ip"] for m in _hosts(graph)]
    service = make_service(graph)
    job_id = register(service, hosts=ips)
    job = service.jobs.jobs[job_id]
    demand = [[ips[i], ips[4 + i], 1000] for i in range(4)]        # leaf 1 -> leaf 2, a permutation
    assert call(service, "traffic", job=job_id, phase=0, planner="sdn-optimal", pairs=demand)["status"] == "ok"
    before = job.traffic.routes[0]
    assert before.flows and not before.fabric_policy
    monkeypatch.setattr(jobroute_incremental, "bipartite_edge_colouring", lambda edges: [0] * len(edges))
    r = call(service, "traffic", job=job_id, phase=0, planner="sdn-optimal", pairs=demand)
    assert r["status"] == "error" and r["error"] == "internal error (AssertionError), nothing changed"
    assert job.traffic.routes[0] is before and consistent(service, job)


def test_a_host_that_left_the_topology_is_refused_before_planning(caplog):
    """A host of the demand that left the topology is refused by jobtraffic.plan's own check, with
    one line, before any router runs: so a router never sees it, and a networkx NodeNotFound from a
    router stays a bug (test_rpc_undo_pending45). Flow detection's choice cannot judge it."""
    service, job_id, job = _new_job()
    gone = service.core.topology.host_by_ip(IPS[-1])
    service.core.topology.remove_host(gone.mac, "test")
    with caplog.at_level(logging.WARNING):
        r = call(service, "traffic", job=job_id, phase=0, pairs=PHASE_0)
    assert r["status"] == "ok" and r["stored"] and job.traffic.routes == {}
    assert any("host %s is not in the topology" % IPS[-1] in rec.getMessage() and rec.exc_info is None
               for rec in caplog.records)
    detected = {(IPS[0], IPS[-1]): 10 ** 6}
    assert flowchoice.choose(service, job, 1, detected, set(detected), "sdn-adaptive") == ("planned", None, None)


@pytest.mark.parametrize("refusal", [pairs.DemandError("refused"), nx.NetworkXNoPath("no path")])
def test_flow_choice_cannot_judge_a_refused_default_model(monkeypatch, refusal):
    service, _job_id, job = _new_job()
    monkeypatch.setattr(flowchoice, "PAIR_ROUTERS", dict(PAIR_ROUTERS, **{service.core.routing: _raising(refusal)}))
    detected = {(IPS[0], IPS[-1]): 10 ** 6}
    name, score, state = flowchoice.choose(service, job, 0, detected, set(detected), "sdn-adaptive")
    assert (name, score) == ("planned", None) and state is not None and job.traffic.demands == {}


@pytest.mark.parametrize("bug", [ValueError("a model's bug"), nx.NetworkXError("a model's bug")])
def test_flow_choice_lets_a_default_models_bug_through(monkeypatch, bug):
    """Before: any ValueError or networkx error of the default model was "cannot be judged"."""
    service, _job_id, job = _new_job()
    monkeypatch.setattr(flowchoice, "PAIR_ROUTERS", dict(PAIR_ROUTERS, **{service.core.routing: _raising(bug)}))
    detected = {(IPS[0], IPS[-1]): 10 ** 6}
    with pytest.raises(type(bug), match="a model's bug"):
        flowchoice.choose(service, job, 0, detected, set(detected), "sdn-adaptive")
    assert job.traffic.demands == {}


# -- helpers ---------------------------------------------------------------------------------------
def _new_job():
    service = make_service()
    job_id = register(service)
    return service, job_id, service.jobs.jobs[job_id]


def _hosts(graph=GRAPH):
    """The host MACs in IP order (IPS's order on GRAPH)."""
    return fabric.hosts(graph)


def fattree_leaf(i, graph=GRAPH):
    """The switch of the i-th host (in IP order)."""
    return fabric.attachment(graph, _hosts(graph)[i])[0]


def _raising(exc):
    def router(*_args, **_kwargs):
        raise exc
    return router
