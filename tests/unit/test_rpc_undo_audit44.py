"""A refused or failed op undoes its own change and nothing else (audit 44): an op that waits for
the switches' barrier replies yields to other connections, whose ops may complete meanwhile; if
the first then fails, their confirmed changes stay. A failed re-plan keeps the plan or tree set
confirmed before, and resynchronising a job's flows after a failure keeps its Bcast trees."""
import copy

from sdnmpi.controller import jobtraffic, rpc
from sdnmpi.controller.rpc_bcast import tree_set
from sdnmpi.primitives import PAIR_ROUTERS

from rpc_helpers import IPS, call, steps_for
from test_rpc_traffic import installed, make_service, register


def fail_next_confirm(service, meanwhile=None):
    """The service's next confirm runs ``meanwhile`` (another connection's op, as if it ran while
    this one waited for the barrier replies), then fails; later confirms go through."""
    real, armed = service.confirm, [True]

    def confirm(msgs):
        if armed and armed.pop():
            if meanwhile is not None:
                meanwhile()
            raise rpc.ConfirmError("barrier timeout (test)")
        real(msgs)
    service.confirm = confirm


def switch_state(service):
    """(flow tables, group tables) of the switches that hold any."""
    return tuple({dpid: copy.deepcopy(table) for dpid, table in tables.items() if table}
                 for tables in (service.switches.tables, service.switches.groups))


def consistent(service, job):
    """The switches hold exactly the job's routes."""
    return installed(service, job.id) == job.installed == job.flows()


def test_failed_phase_keeps_a_concurrent_phase_entry():
    service = make_service()
    job_id = register(service)
    job = service.jobs.jobs[job_id]
    r = call(service, "traffic", job=job_id, phase=1, pairs=[[IPS[0], IPS[-1], 1000], [IPS[1], IPS[-2], 1000]])
    assert r["status"] == "ok"
    assert call(service, "traffic", job=job_id, phase=2, pairs=[[IPS[0], IPS[-3], 1000]])["status"] == "ok"

    def rank_1_enters_phase_2():
        assert call(service, "phase", client="rank1", job=job_id, rank=1, phase=2)["installed"]
    fail_next_confirm(service, rank_1_enters_phase_2)
    r = call(service, "phase", job=job_id, rank=0, phase=1)
    assert r["status"] == "error" and r["error"].startswith("switches did not confirm the routes")
    assert job.traffic.rank_phase == {1: 2}
    assert set(job.traffic.routes) == {2}
    assert consistent(service, job) and job.flows()


def test_failed_traffic_keeps_a_concurrent_declaration():
    service = make_service()
    job_id = register(service)
    job = service.jobs.jobs[job_id]
    assert call(service, "traffic", job=job_id, phase=1, pairs=[[IPS[0], IPS[-1], 1000]])["status"] == "ok"
    assert call(service, "phase", job=job_id, rank=0, phase=1)["installed"]
    phase_1 = job.traffic.demands[1]

    def another_connection_declares_phase_0():
        assert call(service, "traffic", client="other", job=job_id, phase=0,
                    pairs=[[IPS[2], IPS[5], 1000]])["status"] == "ok"
    fail_next_confirm(service, another_connection_declares_phase_0)
    r = call(service, "traffic", job=job_id, phase=1, pairs=[[IPS[1], IPS[-2], 1000]], add=True)
    assert r["status"] == "error"
    assert job.traffic.demands == {0: [(IPS[2], IPS[5], 1000)], 1: phase_1}
    assert set(job.traffic.routes) == {0, 1}
    assert consistent(service, job)


def test_failed_traffic_with_nothing_meanwhile_restores_the_job_exactly():
    service = make_service()
    job_id = register(service)
    job = service.jobs.jobs[job_id]
    assert call(service, "traffic", job=job_id, phase=0, pairs=[[IPS[0], IPS[-1], 1000]])["status"] == "ok"
    before, switches = job.traffic.copy(), switch_state(service)
    fail_next_confirm(service)
    assert call(service, "traffic", job=job_id, phase=0, pairs=[[IPS[1], IPS[-2], 1000]])["status"] == "error"
    assert job.traffic == before and switch_state(service) == switches


def test_refused_traffic_changes_nothing_on_any_failure(monkeypatch):
    """Whatever planning raises (here a router's bug): a one-line error, the demand and the
    routes as they were (before: "internal error" with the new demand stored)."""
    service = make_service()
    job_id = register(service)
    job = service.jobs.jobs[job_id]
    assert call(service, "traffic", job=job_id, phase=0, pairs=[[IPS[0], IPS[-1], 1000]])["status"] == "ok"
    demands, routes, switches = dict(job.traffic.demands), dict(job.traffic.routes), switch_state(service)

    def broken(*_args, **_kwargs):
        raise RuntimeError("a router's bug")
    monkeypatch.setattr(jobtraffic, "PAIR_ROUTERS", dict(PAIR_ROUTERS, **{"sdn-adaptive": broken}))
    r = call(service, "traffic", job=job_id, phase=0, pairs=[[IPS[1], IPS[-2], 1000]])
    assert r["status"] == "error" and "\n" not in r["error"]
    assert job.traffic.demands == demands and job.traffic.routes == routes
    assert switch_state(service) == switches


def test_failed_re_plan_keeps_the_old_plan():
    service = make_service()
    job_id = register(service)
    job = service.jobs.jobs[job_id]
    steps = steps_for(IPS)
    assert call(service, "plan_allreduce", job=job_id, comm=0, steps=steps)["status"] == "ok"
    old, switches = job.plans[0], switch_state(service)
    fail_next_confirm(service)
    r = call(service, "plan_allreduce", job=job_id, comm=0, planner="single", steps=steps)
    assert r["status"] == "error"
    assert job.plans[0] is old and switch_state(service) == switches
    assert call(service, "plan_allreduce", job=job_id, comm=0, steps=steps)["cached"]


def test_failed_bcast_re_plan_keeps_the_old_trees():
    service = make_service()
    job_id = register(service)
    job = service.jobs.jobs[job_id]
    assert call(service, "plan_bcast", job=job_id, comm=1, root=IPS[0], members=IPS)["status"] == "ok"
    old, switches = tree_set(job, 1, IPS[0]), switch_state(service)
    fail_next_confirm(service)
    r = call(service, "plan_bcast", job=job_id, comm=1, root=IPS[0], members=IPS, trees=2)
    assert r["status"] == "error"
    assert tree_set(job, 1, IPS[0]) == old and switch_state(service) == switches
    r = call(service, "plan_bcast", job=job_id, comm=1, root=IPS[0], members=IPS, trees=2)
    assert r["status"] == "ok" and len(r["trees"]) == 2


def test_a_failed_traffic_op_keeps_the_jobs_bcast_tree():
    """Resynchronising the job's flows after the failure deletes every flow of its cookie and its
    groups: its trees are put back."""
    service = make_service()
    job_id = register(service)
    assert call(service, "plan_bcast", job=job_id, comm=1, root=IPS[0], members=IPS)["status"] == "ok"
    switches = switch_state(service)
    assert switches[1]
    fail_next_confirm(service)
    assert call(service, "traffic", job=job_id, phase=0, pairs=[[IPS[0], IPS[-1], 1000]])["status"] == "error"
    assert switch_state(service) == switches


def test_an_undo_that_fails_still_resynchronises_the_job(monkeypatch):
    """If undoing a failed change raises (a router bug while re-planning), the job's routes go and
    its flows are resynchronised all the same: the switches never keep half an undo."""
    service = make_service()
    job_id = register(service)
    job = service.jobs.jobs[job_id]
    assert call(service, "traffic", job=job_id, phase=0, pairs=[[IPS[0], IPS[-1], 1000]])["status"] == "ok"

    def broken_undo(*_args):
        raise RuntimeError("router bug (test)")
    monkeypatch.setattr(jobtraffic, "undo", broken_undo)
    fail_next_confirm(service)
    r = call(service, "traffic", job=job_id, phase=0, pairs=[[IPS[1], IPS[-2], 1000]])
    assert r["status"] == "error" and r["error"].startswith("switches did not confirm the routes")
    assert job.traffic.routes == {} and consistent(service, job)
