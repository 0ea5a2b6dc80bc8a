"""Ops of one job that wait for their barrier replies together, then succeed or fail in any order
(stop 45): the job ends as the successful ops made it, each applied in the order it was, and the
switches hold exactly that. Before, two failed ops in a row could leave the first one's change
(README "Known issues"): the later op's undo put back its `before`, which held the first's change.

The ops really interleave here (greenlets, as eventlet's connections do): each op runs until it
waits for the switches, the test starts the next one, then answers their barriers in any order."""
import itertools

import greenlet
import networkx as nx
import pytest

from sdnmpi.controller import constants as C, jobtraffic, rpc
from sdnmpi.controller.rpc_bcast import tree_set
from sdnmpi.primitives import PAIR_ROUTERS, pairs

from rpc_helpers import IPS, call, steps_for
from test_rpc_traffic import installed, make_service, register
from test_rpc_undo_audit44 import switch_state

PHASE_0 = [[IPS[0], IPS[-1], 1000], [IPS[1], IPS[-2], 1000]]
DEMANDS = [[[IPS[2], IPS[-3], 1000], [IPS[3], IPS[-4], 1000]],
           [[IPS[0], IPS[-2], 1000], [IPS[1], IPS[-1], 1000]],
           [[IPS[0], IPS[-3], 1000], [IPS[2], IPS[-1], 1000]]]


class Barriers:
    """The service's switches, whose barrier replies the test gives: an op begun with `begin` runs
    until its first confirm, whose messages the switches apply, and waits there for the barrier
    replies (other ops run meanwhile); `answer(op, ok)` lets it go on (not ok: ConfirmError, as
    if the replies never came) to its end and returns its reply. Every other
    confirm (a failed op's resync, an op not begun here) goes through at once."""

    def __init__(self, service):
        self.service, self.real, self.parked, self.begun = service, service.confirm, set(), 0
        service.confirm = self.confirm

    def confirm(self, msgs):
        self.real(msgs)        # sent at once, in order; the barrier replies come later, if at all
        me = greenlet.getcurrent()
        if me in self.parked:
            self.parked.discard(me)
            if not me.parent.switch():
                raise rpc.ConfirmError("barrier timeout (test)")

    def begin(self, op, **fields):
        self.begun += 1
        g = greenlet.greenlet(lambda: call(self.service, op, client="client%d" % self.begun, **fields))
        self.parked.add(g)
        g.switch()
        assert not g.dead and g not in self.parked, "the op sent nothing to wait for"
        return g

    def answer(self, g, ok):
        r = g.switch(ok)
        assert g.dead
        assert r["status"] == ("ok" if ok else "error"), r
        return r


def new_job():
    service = make_service()
    job_id = register(service)
    return service, job_id, service.jobs.jobs[job_id]


def declare_phases(service, job_id, n):
    """Phases 1 .. n declared with DEMANDS[0 .. n-1] (no rank inside: stored)."""
    for phase, demand in enumerate(DEMANDS[:n], 1):
        assert call(service, "traffic", job=job_id, phase=phase, pairs=demand)["status"] == "ok"


def merged(demand):
    return sorted((s, d, b) for s, d, b in demand)


def consistent(service, job):
    """The switches hold exactly the job's flows, its routes are planned on its demands as they
    are now, and every tree of the job is on the switches (its group and its flows)."""
    t, topo = job.traffic, service.core.topology
    pair_flows = {k: port for k, port in installed(service, job.id).items() if not isinstance(port, tuple)}
    assert pair_flows == job.installed == job.flows()
    assert set(t.routes) <= t.wanted()
    for phase, routes in t.routes.items():
        mac = {ip: topo.host_by_ip(ip).mac for s, d, _b in t.demands[phase] for ip in (s, d)}
        assert sorted((f.src, f.dst, f.bytes) for f in routes.demand) == \
            sorted((mac[s], mac[d], b) for s, d, b in t.demands[phase])
    groups = {dpid: set(g) for dpid, g in service.switches.groups.items()}
    for tree in job.trees.values():
        for dpid in tree.out_ports:
            assert tree.group_id in groups.get(dpid, ())
    held = {t.group_id for t in job.trees.values()}
    assert all(gid in held for g in groups.values() for gid in g)
    flows = {k: v for table in service.switches.tables.values() for k, v in table.items()}
    assert all(v[0] == C.COOKIE_JOB | job.id for v in flows.values())
    return True


# -- two ops, both fail, in either order ---------------------------------------------------------
ORDERS = {"b_fails_first": (1, 0), "a_fails_first": (0, 1)}


@pytest.mark.parametrize("order", ORDERS)
def test_two_failed_traffic_ops_leave_the_confirmed_demand(order):
    service, job_id, job = new_job()
    assert call(service, "traffic", job=job_id, phase=0, pairs=PHASE_0)["status"] == "ok"
    confirmed, switches = job.traffic.copy(), installed(service, job_id)
    b = Barriers(service)
    ops = [b.begin("traffic", job=job_id, phase=0, pairs=DEMANDS[i]) for i in range(2)]
    for i in ORDERS[order]:
        b.answer(ops[i], False)
    assert job.traffic == confirmed
    assert installed(service, job_id) == switches and consistent(service, job)


@pytest.mark.parametrize("order", ORDERS)
def test_two_failed_phase_ops_leave_the_rank_where_it_was(order):
    service, job_id, job = new_job()
    declare_phases(service, job_id, 2)
    confirmed, switches = job.traffic.copy(), installed(service, job_id)
    b = Barriers(service)
    ops = [b.begin("phase", job=job_id, rank=0, phase=phase) for phase in (1, 2)]
    for i in ORDERS[order]:
        b.answer(ops[i], False)
    assert job.traffic.rank_phase == {} and job.traffic.routes == {}
    assert job.traffic == confirmed
    assert installed(service, job_id) == switches and consistent(service, job)


@pytest.mark.parametrize("order", ORDERS)
def test_two_failed_re_plans_leave_the_confirmed_plan(order):
    service, job_id, job = new_job()
    steps = steps_for(IPS)
    assert call(service, "plan_allreduce", job=job_id, comm=0, steps=steps)["status"] == "ok"
    confirmed, switches = job.plans[0], installed(service, job_id)
    b = Barriers(service)
    ops = [b.begin("plan_allreduce", job=job_id, comm=0, planner=planner, steps=steps)
           for planner in ("single", "dmodk")]
    for i in ORDERS[order]:
        b.answer(ops[i], False)
    assert job.plans[0] is confirmed
    assert installed(service, job_id) == switches and consistent(service, job)
    assert call(service, "plan_allreduce", job=job_id, comm=0, steps=steps)["cached"]


@pytest.mark.parametrize("order", ORDERS)
def test_two_failed_bcast_re_plans_leave_the_confirmed_trees(order):
    service, job_id, job = new_job()
    assert call(service, "plan_bcast", job=job_id, comm=1, root=IPS[0], members=IPS)["status"] == "ok"
    confirmed, switches = tree_set(job, 1, IPS[0]), switch_state(service)
    b = Barriers(service)
    ops = [b.begin("plan_bcast", job=job_id, comm=1, root=IPS[0], members=members, trees=2)
           for members in (IPS, IPS[:6])]
    for i in ORDERS[order]:
        b.answer(ops[i], False)
    assert tree_set(job, 1, IPS[0]) == confirmed and set(job.trees) == {(1, IPS[0])}
    assert switch_state(service) == switches and consistent(service, job)


@pytest.mark.parametrize("order", ORDERS)
def test_a_new_plan_of_two_failed_ops_goes(order):
    """The same with no plan before: the communicator ends with none (both failed ops stored one)."""
    service, job_id, job = new_job()
    steps = steps_for(IPS)
    b = Barriers(service)
    ops = [b.begin("plan_allreduce", job=job_id, comm=0, planner=planner, steps=steps)
           for planner in ("single", "dmodk")]
    for i in ORDERS[order]:
        b.answer(ops[i], False)
    assert job.plans == {} and installed(service, job_id) == {} and consistent(service, job)


# -- the same request while the first is in flight -------------------------------------------------
@pytest.mark.parametrize("first_ok", [False, True])
def test_a_plan_asked_again_while_in_flight_is_not_answered_as_cached(first_ok):
    """A second, identical plan_allreduce while the first waits for the switches is an op of its
    own (before, it answered cached at once: told ok for a plan that went if the first failed)."""
    service, job_id, job = new_job()
    steps = steps_for(IPS)
    b = Barriers(service)
    first = b.begin("plan_allreduce", job=job_id, comm=0, steps=steps)
    second = b.begin("plan_allreduce", job=job_id, comm=0, steps=steps)   # parks: not cached
    b.answer(first, first_ok)
    assert not b.answer(second, True)["cached"]
    assert 0 in job.plans and consistent(service, job) and job.flows()
    assert call(service, "plan_allreduce", job=job_id, comm=0, steps=steps)["cached"]   # confirmed now


@pytest.mark.parametrize("first_ok", [False, True])
def test_bcast_trees_asked_again_while_in_flight_are_not_answered_as_cached(first_ok):
    service, job_id, job = new_job()
    b = Barriers(service)
    first = b.begin("plan_bcast", job=job_id, comm=1, root=IPS[0], members=IPS)
    second = b.begin("plan_bcast", job=job_id, comm=1, root=IPS[0], members=IPS)
    b.answer(first, first_ok)
    assert not b.answer(second, True)["cached"]
    assert tree_set(job, 1, IPS[0]) and consistent(service, job)
    assert call(service, "plan_bcast", job=job_id, comm=1, root=IPS[0], members=IPS)["cached"]


# -- one fails, the other succeeds ---------------------------------------------------------------
@pytest.mark.parametrize("succeeds", [0, 1])
def test_one_fails_the_other_succeeds_and_stays(succeeds):
    """Rank 0 enters phase 1 (A), then phase 2 (B); A fails and B succeeds, or the other way round
    (A's reply then says "installed": false, rank 0 being in phase 2 meanwhile)."""
    service, job_id, job = new_job()
    declare_phases(service, job_id, 2)
    b = Barriers(service)
    ops = [b.begin("phase", job=job_id, rank=0, phase=phase) for phase in (1, 2)]
    for i in (0, 1):
        b.answer(ops[i], i == succeeds)
    assert job.traffic.rank_phase == {0: succeeds + 1} and set(job.traffic.routes) == {succeeds + 1}
    assert consistent(service, job) and job.flows()


@pytest.mark.parametrize("b_succeeds", [True, False])
def test_routes_planned_on_a_failed_declaration_go_with_it(b_succeeds):
    """A dormant job with phases 0 and 1 declared: A declares phase 1 again (which wakes the job:
    phase 0's routes come back), B makes rank 0 enter phase 1 (its routes are planned on A's
    demand). A fails: phase 1's demand is the confirmed one again and its routes are planned on it;
    the job stays awake if B succeeds (B's entry woke it too), dormant as before if B fails too."""
    service, job_id, job = new_job()
    assert call(service, "traffic", job=job_id, phase=0, pairs=PHASE_0)["status"] == "ok"
    assert call(service, "traffic", job=job_id, phase=1, pairs=DEMANDS[0])["status"] == "ok"
    service.confirm(jobtraffic.idle(service.core, service.jobs, job))
    confirmed, switches = job.traffic.copy(), installed(service, job_id)
    assert confirmed.dormant and not switches
    b = Barriers(service)
    a = b.begin("traffic", job=job_id, phase=1, pairs=DEMANDS[1])
    rank_0 = b.begin("phase", job=job_id, rank=0, phase=1)
    b.answer(a, False)
    b.answer(rank_0, b_succeeds)
    assert job.traffic.demands == confirmed.demands
    if b_succeeds:
        assert not job.traffic.dormant and job.traffic.rank_phase == {0: 1}
        assert set(job.traffic.routes) == {0, 1}
    else:
        assert job.traffic == confirmed and installed(service, job_id) == switches
    assert consistent(service, job)


# -- three ops, every order of answers and every outcome ------------------------------------------
def expected(start, outcomes):
    """The value of the last successful op in the order the ops were applied, else ``start``."""
    done = [i for i in range(3) if outcomes[i]]
    return start if not done else done[-1]


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
@pytest.mark.parametrize("outcomes", list(itertools.product((False, True), repeat=3)))
@pytest.mark.parametrize("op", ["traffic", "phase"])
def test_three_ops_end_as_the_successful_ones_made_the_job(op, outcomes, order):
    service, job_id, job = new_job()
    if op == "traffic":
        assert call(service, "traffic", job=job_id, phase=0, pairs=PHASE_0)["status"] == "ok"
        fields = [dict(phase=0, pairs=d) for d in DEMANDS]
    else:
        declare_phases(service, job_id, 3)
        fields = [dict(rank=0, phase=phase) for phase in (1, 2, 3)]
    b = Barriers(service)
    ops = [b.begin(op, job=job_id, **f) for f in fields]
    for i in order:
        b.answer(ops[i], outcomes[i])
    last = expected(None, outcomes)
    if op == "traffic":
        assert merged(job.traffic.demands[0]) == merged(PHASE_0 if last is None else DEMANDS[last])
        assert set(job.traffic.routes) <= {0}
    else:
        assert job.traffic.rank_phase == ({} if last is None else {0: last + 1})
        assert set(job.traffic.routes) == ({last + 1} if last is not None else set())
    assert consistent(service, job)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
@pytest.mark.parametrize("outcomes", list(itertools.product((False, True), repeat=3)))
def test_three_re_plans_end_as_the_successful_ones_made_the_plan(outcomes, order):
    service, job_id, job = new_job()
    steps = steps_for(IPS)
    assert call(service, "plan_allreduce", job=job_id, comm=0, steps=steps)["status"] == "ok"
    b = Barriers(service)
    planners = ("single", "dmodk", "sdn-optimal")
    ops = [b.begin("plan_allreduce", job=job_id, comm=0, planner=p, steps=steps) for p in planners]
    for i in order:
        b.answer(ops[i], outcomes[i])
    last = expected(None, outcomes)
    assert job.plans[0].planner == ("balanced" if last is None else planners[last])
    assert consistent(service, job)


@pytest.mark.parametrize("order", list(itertools.permutations(range(3))))
@pytest.mark.parametrize("outcomes", list(itertools.product((False, True), repeat=3)))
def test_three_bcast_re_plans_end_as_the_successful_ones_made_the_trees(outcomes, order):
    service, job_id, job = new_job()
    assert call(service, "plan_bcast", job=job_id, comm=1, root=IPS[0], members=IPS)["status"] == "ok"
    confirmed = tree_set(job, 1, IPS[0])
    b = Barriers(service)
    members = (IPS[:7], IPS[:6], IPS[:4])
    ops = [b.begin("plan_bcast", job=job_id, comm=1, root=IPS[0], members=m, trees=2) for m in members]
    for i in order:
        b.answer(ops[i], outcomes[i])
    last = expected(None, outcomes)
    if last is None:
        assert tree_set(job, 1, IPS[0]) == confirmed
    else:
        assert [t.members for t in tree_set(job, 1, IPS[0])] == [members[last]] * 2
    assert consistent(service, job)


# -- jobtraffic.plan's refusals: a bad demand or a partitioned fabric, not a bug -----------------
@pytest.mark.parametrize("bug", [KeyError("a router's bug"), nx.NetworkXError("a router's bug"),
                                 nx.NodeNotFound("a router's bug")])
def test_a_planning_bug_is_an_internal_error_not_a_phase_on_the_default_routes(monkeypatch, bug):
    """Only a bad demand or a pair with no path (primitives.errors.REFUSALS) makes a
    phase "cannot route" (stored, on the default routes, the op ok); a router's KeyError or another
    networkx error is the controller's own: "internal error", the job as it was (before: the bug
    hidden as a stored phase)."""
    service, job_id, job = new_job()

    def broken(*_args, **_kwargs):
        raise bug
    monkeypatch.setattr(jobtraffic, "PAIR_ROUTERS", dict(PAIR_ROUTERS, **{"sdn-adaptive": broken}))
    r = call(service, "traffic", job=job_id, phase=0, pairs=PHASE_0)
    assert r["status"] == "error" and r["error"].startswith("internal error (%s)" % type(bug).__name__)
    assert job.traffic.demands == {} and consistent(service, job)


@pytest.mark.parametrize("refusal", [pairs.DemandError("host x is not in the topology"),
                                     nx.NetworkXNoPath("no path")])
def test_a_bad_demand_or_no_path_is_a_stored_phase(monkeypatch, refusal):
    service, job_id, job = new_job()

    def refusing(*_args, **_kwargs):
        raise refusal
    monkeypatch.setattr(jobtraffic, "PAIR_ROUTERS", dict(PAIR_ROUTERS, **{"sdn-adaptive": refusing}))
    r = call(service, "traffic", job=job_id, phase=0, pairs=PHASE_0)
    assert r["status"] == "ok" and r["stored"]
    assert job.traffic.demands[0] and job.traffic.routes == {} and consistent(service, job)
