"""A leaf cut off the fabric (every uplink down) while jobs have traffic routes, plans and trees
(audit 44): planning a pair that has no path is a one-line refusal of that phase (its pairs keep
the default routes, its demand stays), never an exception that stops re-planning the other jobs,
fails an RPC op with "internal error" or reaches flow detection. On the RPC service with
switches that apply the job flows (rpc_helpers)."""
import logging

import pytest

from sdnmpi.controller import flowchoice, jobtraffic
from sdnmpi.primitives import PAIR_ROUTERS

from rpc_helpers import GRAPH, IPS, call
from test_rpc_traffic import installed, make_service, register

LEAF = 0x201            # IPS[0] and IPS[1]


def cut(service, dpid):
    """Every link of switch ``dpid`` down."""
    topo = service.core.topology
    for d, p in list(topo.links):
        if d == dpid:
            topo.port_down(d, p)


def heal(service, dpid):
    """The links of switch ``dpid`` back up, as LLDP finds them again."""
    topo = service.core.topology
    for n in GRAPH.neighbors(dpid):
        ports = GRAPH.edges[dpid, n]["ports"]
        if len(ports) == 2:
            topo.port_up(dpid, ports[dpid], "00:00:00:00:00:00")
            topo.port_up(n, ports[n], "00:00:00:00:00:00")
            topo.saw_probe((dpid, ports[dpid]), (n, ports[n]), 0.0)
            topo.saw_probe((n, ports[n]), (dpid, ports[dpid]), 0.0)


def two_jobs(service):
    """Job a (traffic from the cut leaf's host, sdn-adaptive) and job b (an Allreduce plan between
    hosts elsewhere), a's id the lower: replan plans a first."""
    a = register(service, owner="a", hosts=IPS)
    b = register(service, owner="b", hosts=IPS[4:])
    while b < a:
        assert call(service, "release", client="b", job=b)["status"] == "ok"
        b = register(service, owner="b", hosts=IPS[4:])
    r = call(service, "traffic", client="a", job=a, phase=0, pairs=[[IPS[0], IPS[7], 1000], [IPS[2], IPS[7], 500]])
    assert r["status"] == "ok" and not r["stored"]
    r = call(service, "plan_allreduce", client="b", job=b, comm=0, planner="single",
             steps=[[[IPS[4], IPS[7], 1], [IPS[7], IPS[4], 1]]])
    assert r["status"] == "ok" and r["flows"] > 0
    return service.jobs.jobs[a], service.jobs.jobs[b]


def spine_of(job):
    return next(key[0] for key in job.plans[0].flows if key[0] >> 8 == 1)


def test_replan_survives_a_partitioned_leaf(caplog):
    service = make_service()
    a, b = two_jobs(service)
    spine = spine_of(b)
    cut(service, LEAF)
    cut(service, spine)
    with caplog.at_level(logging.WARNING, logger="sdnmpi.controller.jobtraffic"):
        service.replan()
    assert spine not in {key[0] for key in b.plans[0].flows}          # job b moved off the dead spine
    assert spine not in {key[0] for key in installed(service, b.id)}
    assert installed(service, b.id) == b.installed
    assert a.traffic.demands[0] and a.traffic.routes == {}             # kept, on the default routes
    assert ("job %d phase 0: default routes: sdn-adaptive cannot route phase 0: no path from %s to %s"
            % (a.id, IPS[0], IPS[7])) in caplog.messages


def test_replan_survives_any_failure_of_one_job(monkeypatch, caplog):
    """A job whose re-planning raises anything (here a router's bug) is logged with its id and
    left on the default routes (its demand kept); the jobs after it are re-planned."""
    service = make_service()
    a, b = two_jobs(service)
    spine = spine_of(b)

    def broken(*_args, **_kwargs):
        raise RuntimeError("a router's bug")
    monkeypatch.setattr(jobtraffic, "PAIR_ROUTERS", dict(PAIR_ROUTERS, **{"sdn-adaptive": broken}))
    cut(service, spine)
    with caplog.at_level(logging.ERROR, logger="sdnmpi.controller.rpc"):
        service.replan()
    assert any(r.message.startswith("job %d: " % a.id) and r.exc_info for r in caplog.records)
    assert spine not in {key[0] for key in installed(service, b.id)}
    assert a.traffic.demands[0] and a.traffic.routes == {}
    assert installed(service, a.id) == a.installed == {}


def test_traffic_on_a_partitioned_leaf_is_stored_not_an_internal_error():
    """Every pair router: the op answers ok with the phase stored (its pairs on the default
    routes, as for a host that left the topology); once the leaf is back a re-plan installs it."""
    for router in sorted(PAIR_ROUTERS):
        service = make_service()
        job = register(service)
        cut(service, LEAF)
        r = call(service, "traffic", job=job, phase=0, planner=router,
                 pairs=[[IPS[0], IPS[-1], 1000], [IPS[2], IPS[-1], 500]])
        assert r["status"] == "ok", (router, r["error"])
        assert r["stored"] and r["max_load"] == -1 and r["flows"] == 0, router
        assert service.jobs.jobs[job].traffic.demands[0], router
        heal(service, LEAF)
        service.replan()
        assert 0 in service.jobs.jobs[job].traffic.routes, router


@pytest.mark.parametrize("routing", ["dmodk", "ecmp"])
def test_flow_choice_on_a_partitioned_leaf(routing):
    """Flow detection's routing choice on pairs from a cut-off leaf, under a default routing whose
    model raises networkx's no-path (ecmp) or a ValueError (dmodk): no exception, 'planned'
    unjudged (the declaration then stores the demand)."""
    service = make_service()
    service.core.routing = routing
    job = service.jobs.jobs[register(service)]
    cut(service, LEAF)
    detected = {(IPS[0], IPS[-1]): 10 ** 6, (IPS[2], IPS[-1]): 10 ** 6}
    name, score, state = flowchoice.choose(service, job, 0, detected, set(detected), "sdn-adaptive")
    assert (name, score) == ("planned", None)
    assert state is None or state.routes == {}
    assert job.traffic.demands == {}
    assert installed(service, job.id) == {}
