"""Flow detection plans a routing decision once (issue 16, controller/flowchoice.py): the plan that
`_choice` scores is the plan `_declare` installs (jobtraffic.install_planned), not planned again.
A decision runs the flow router once, twice with --sdnmpi-flow-seed (seeded and unseeded plans,
primitives.seeding.plan), and installs the same flow-mods, logs the same lines and counts the same
as when it planned the declaration a second time; replayed from counter logs recorded on Mininet,
on a simulated k=4 fat-tree (conftest.FabricSim), as test_flowdetect_seed.py replays them."""
import functools
import logging
import os

import pytest

from sdnmpi import flows
from sdnmpi.controller import flowchoice, flowdetect, jobtraffic
from sdnmpi.controller import jobs as jobs_module
from sdnmpi.flows import counterlog

from test_flowdetect import poll, poll_recorded, register, threshold
from test_flowdetect_hold import PERMUTATION, TWO_PHASES
from test_flowdetect_seed import _flag_all, fabric_for, permutation
from test_flows_hold import RESULTS

ROUTER = "sdn-optimal"        # flowdetect.DEFAULT_ROUTER


def _count_router(monkeypatch, calls):
    """Appends one entry to ``calls`` for every run of the flow router (the planner jobtraffic.plan
    calls, seeded or not); the router keeps its signature (seeding.takes_previous reads it)."""
    router = jobtraffic.PAIR_ROUTERS[ROUTER]

    @functools.wraps(router)
    def counted(*args, **kwargs):
        calls.append(1)
        return router(*args, **kwargs)
    monkeypatch.setattr(jobtraffic, "PAIR_ROUTERS", dict(jobtraffic.PAIR_ROUTERS, **{ROUTER: counted}))


def _per_decision(monkeypatch, calls, records):
    """[(planner runs, jobtraffic log lines, messages confirmed, routed)] of every `_route` call (one
    routing decision) from now on, ``routed``: it declared the plan (logged "routed by"); ``records``:
    the log records caught, ``calls`` `_count_router`'s."""
    out = []
    route = flowdetect.FlowDetection._route                    # pylint: disable=protected-access

    def counted(self, service, job, new):
        calls.clear()
        first = len(records)
        sent = []
        confirm = service.confirm
        service.confirm = lambda msgs: sent.extend(msgs) or confirm(msgs)
        try:
            route(self, service, job, new)
        finally:
            service.confirm = confirm
        lines = [r.getMessage() for r in records[first:] if r.name == jobtraffic.LOG.name]
        routed = any("detected pairs routed by" in r.getMessage() for r in records[first:])
        out.append((len(calls), lines, [str(m) for m in sent], routed))
    monkeypatch.setattr(flowdetect.FlowDetection, "_route", counted)
    return out


def _plan_twice(monkeypatch):
    """The decision as before: `_choice`'s planned state dropped, so `_declare` plans again."""
    choose = flowchoice.choose
    monkeypatch.setattr(flowchoice, "choose", lambda *a, **kw: choose(*a, **kw)[:2] + (None,))


def replay(make_fabric, monkeypatch, caplog, name, seed, twice=False):
    """The recorded counter log ``name`` replayed poll by poll through learned detection (as
    test_flowdetect_seed.replay): (detection, `_per_decision`'s list, flowdetect's log lines,
    every message confirmed)."""
    header, polls = counterlog.parse(counterlog.file_lines(os.path.join(RESULTS, name)))
    sim, jobs, service = fabric_for(make_fabric)
    sent = []
    service.confirm = lambda msgs: sent.extend(str(m) for m in msgs) or sim.run(msgs)
    clf = flows.load_or_fallback(flows.DEFAULT_MODEL, link_rate=header["link_rate_Bps"], interval=header["interval_s"])
    fd = flowdetect.FlowDetection(clf, seed=seed)
    monkeypatch.setattr(jobs_module.secrets, "randbelow", lambda n: 4242 % n)   # the job id: in the cookies
    job = register(sim, jobs, sim.hosts())
    calls = []
    _count_router(monkeypatch, calls)
    if twice:
        _plan_twice(monkeypatch)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="sdnmpi.controller"):
        decisions = _per_decision(monkeypatch, calls, caplog.records)
        poll(sim, jobs, service, fd, {})
        for p in polls:
            poll_recorded(sim, jobs, service, fd, p)
    sim.check_job_routes(job)
    sim.check_tables_consistent()
    lines = [r.getMessage() for r in caplog.records if r.name == flowdetect.LOG.name]
    monkeypatch.undo()
    return fd, decisions, lines, sent


@pytest.mark.parametrize("seed", [True, False])
@pytest.mark.parametrize("name", [PERMUTATION, TWO_PHASES])
def test_a_decision_runs_the_planner_once_or_twice_seeded(make_fabric, monkeypatch, caplog, name, seed):
    """Every routing decision of the recorded runs: at most 2 runs of the router seeded (seeded and
    unseeded plans), 1 unseeded; before, the choice planned and the declaration planned again (4
    and 2). The decisions that route (flow-mods confirmed) all planned."""
    fd, decisions, _lines, _sent = replay(make_fabric, monkeypatch, caplog, name, seed)
    runs = [n for n, _lines, _msgs, _routed in decisions]
    assert fd.counters["routed"] > 10 and sum(routed for *_, routed in decisions) > 5
    assert max(runs) == (2 if seed else 1), runs
    assert all(n == (2 if seed else 1) for n, _lines, _msgs, routed in decisions if routed), runs


@pytest.mark.parametrize("name", [PERMUTATION, TWO_PHASES])
def test_planning_once_installs_logs_and_counts_what_planning_twice_did(make_fabric, monkeypatch, caplog, name):
    """The same recorded run replayed with the decision planned once and planned twice (the choice's
    plan dropped, the declaration planning again, as before): the same messages to the switches,
    decision by decision and in all, the same flow detection log lines and counters, and the same
    jobtraffic lines but each plan's once: a routed decision logged its plan twice before."""
    once, by_once, lines_once, sent_once = replay(make_fabric, monkeypatch, caplog, name, True)
    twice, by_twice, lines_twice, sent_twice = replay(make_fabric, monkeypatch, caplog, name, True, twice=True)
    assert sent_once == sent_twice and len(sent_once) > 20
    assert lines_once == lines_twice and dict(once.counters) == dict(twice.counters)
    assert once.detected == twice.detected and once.owned == twice.owned
    assert len(by_once) == len(by_twice)
    for (n1, log1, msgs1, routed1), (n2, log2, msgs2, routed2) in zip(by_once, by_twice):
        assert msgs1 == msgs2 and routed1 == routed2
        assert (n2, log2) == ((2 * n1, log1 * 2) if routed1 else (n1, log1))


def test_a_refused_declaration_is_reported_as_before(make_fabric, monkeypatch, caplog):
    """A demand jobtraffic refuses (here: more pairs than MAX_PAIRS) is not planned by the choice;
    the declaration reports it: one route failure, one warning, nothing installed, no plan."""
    sim, jobs, service = fabric_for(make_fabric)
    fd = flowdetect.FlowDetection(threshold(), router=ROUTER)
    job = register(sim, jobs, sim.hosts())
    calls = []
    _count_router(monkeypatch, calls)
    monkeypatch.setattr(jobtraffic, "MAX_PAIRS", 2)
    perm = permutation(sim, 4)
    with caplog.at_level(logging.WARNING, logger="sdnmpi.controller.flowdetect"):
        _flag_all(sim, jobs, service, fd, [(sim.host_ip[a], sim.host_ip[b]) for a, b in perm])
    assert fd.counters["route_failures"] == 1 and "routed" not in fd.counters
    assert [r.getMessage() for r in caplog.records] == [
        "flow detection: job %d: detected pairs not routed: demand of %d pairs, more than 2" % (job.id, len(perm))]
    assert not calls and not job.traffic.routes and not job.flows()


def test_the_choice_leaves_the_job_as_it_was_and_returns_the_plan(make_fabric):
    """flowchoice.choose plans the declaration on the job's state and puts it back; its third value
    is that state, which jobtraffic.install_planned installs: the routes the declaration installs."""
    sim, jobs, service = fabric_for(make_fabric)
    job = register(sim, jobs, sim.hosts())
    perm = permutation(sim, 4)
    detected = {(sim.host_ip[a], sim.host_ip[b]): 1000 for a, b in perm}
    name, score, planned = flowchoice.choose(service, job, 0, detected, set(detected), ROUTER, running=True)
    assert job.traffic == jobtraffic.JobTraffic() and not job.flows()
    assert name == "planned" and score["planned"] < score["default"] and planned.routes[0].paths
    sim.run(jobtraffic.install_planned(sim.core, jobs, job, planned))
    assert job.traffic is planned and job.flows()
    sim.check_job_routes(job)
    sim2, jobs2, _service2 = fabric_for(make_fabric)
    job2 = register(sim2, jobs2, sim2.hosts())
    sim2.run(jobtraffic.declare(sim2.core, jobs2, job2, 0, [(s, d, b) for (s, d), b in sorted(detected.items())],
                                router=ROUTER, running=True))
    assert job2.traffic.routes[0].paths == planned.routes[0].paths and job2.flows() == job.flows()
