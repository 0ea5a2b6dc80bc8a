"""Every RPC op that installs routes for hosts takes only the job's own hosts (audit 44): a job
may not plan pairs or Bcast trees between other users' hosts at its priority. `traffic` refused
them already; `plan_allreduce` (SDN_MPI_Allreduce, Allgather, Alltoall) and `plan_bcast` refuse
them the same way, and libsdnmpi's real requests (any communicator of the job's ranks, several
ranks per host) still pass."""
import pytest

from rpc_helpers import IPS, call, steps_for
from test_rpc_traffic import installed, make_service, register


def refused(service, job, reply, host):
    assert reply["status"] == "error"
    assert reply["error"] == "host %s is not one of the job's hosts" % host
    assert service.switches.batches == [] and installed(service, job) == {}
    assert not any(service.switches.groups.values())


@pytest.mark.parametrize("planner", ["balanced", "dmodk", "single", "sdn-optimal"])
def test_plan_allreduce_refuses_hosts_that_are_not_the_jobs(planner):
    service = make_service()
    job = register(service, hosts=IPS[:2])
    r = call(service, "plan_allreduce", job=job, comm=0, planner=planner,
             steps=[[[IPS[4], IPS[6], 1], [IPS[6], IPS[4], 1]]])
    refused(service, job, r, IPS[4])
    r = call(service, "plan_allreduce", job=job, comm=0, planner=planner,
             steps=[[[IPS[0], IPS[1], 1]], [[IPS[1], IPS[7], 1]]])
    refused(service, job, r, IPS[7])
    assert service.jobs.jobs[job].plans == {}


def test_plan_bcast_refuses_hosts_that_are_not_the_jobs():
    service = make_service()
    job = register(service, hosts=IPS[:2])
    r = call(service, "plan_bcast", job=job, comm=1, root=IPS[5], members=IPS[3:8])
    refused(service, job, r, IPS[3])
    r = call(service, "plan_bcast", job=job, comm=1, root=IPS[0], members=IPS[:2] + [IPS[6]])
    refused(service, job, r, IPS[6])
    assert service.jobs.jobs[job].trees == {}


def test_a_host_outside_the_topology_is_still_named_so():
    """(the RPC metrics count it as unknown_host: controller/rpcmetrics.py)"""
    service = make_service()
    job = register(service, hosts=IPS[:2])
    r = call(service, "plan_allreduce", job=job, comm=0, steps=[[[IPS[0], "10.9.9.9", 1]]])
    assert r["error"] == "host 10.9.9.9 is not in the topology"


def test_libsdnmpis_requests_on_the_jobs_hosts_still_pass():
    """Two ranks per host (MPI_COMM_WORLD lists a host once per rank), a sub-communicator of some
    of the ranks, its Bcast tree and its traffic."""
    service = make_service()
    world = [ip for ip in IPS[:6] for _rank in range(2)]
    job = register(service, hosts=world)
    assert call(service, "plan_allreduce", job=job, comm=0, steps=steps_for(world))["status"] == "ok"
    sub = world[2:10]
    r = call(service, "plan_allreduce", job=job, comm=3, planner="sdn-optimal", steps=steps_for(sub))
    assert r["status"] == "ok" and r["flows"] > 0
    r = call(service, "plan_bcast", job=job, comm=3, root=sub[0], members=sub, trees=2)
    assert r["status"] == "ok" and r["switches"] > 1
    r = call(service, "traffic", job=job, phase=1, pairs=[[sub[0], sub[-1], 1000]])
    assert r["status"] == "ok"
