"""SDN_MPI_Allreduce on the Mininet fabric: an 8-rank job on 8 hosts (random placement) gets a
step-balanced plan, the switches hold exactly its installed flows and forward every planned hop
(elided ones by their default routes) as planned, the traffic crosses both spines,
an unmodified binary under LD_PRELOAD behaves the same, and releasing the job removes its flows."""
import os
import random
import re
import subprocess
import tempfile
import threading

import pytest

from sdnmpi.controller import constants as C

import ofdump
import ovs_routes
from conftest import LIBSDNMPI
from fabric_helpers import N, SPINES, bridge, leaf_spine_fabric, spine_dpid, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
BYTES = 1 << 20


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    out = tmp_path_factory.mktemp("progs")
    built = {}
    for name, libs in (("allreduce_job", [os.path.join(LIBSDNMPI, "libsdnmpi.a"), "-lmsgpackc", "-lz"]), ("plain_allreduce_job", [])):
        exe = str(out / name)
        subprocess.run(["mpicc", "-O2", "-Wall", "-Werror", "-I" + os.path.join(LIBSDNMPI, "include"),
                        os.path.join(HERE, "progs", name + ".c"), "-o", exe, *libs], check=True)
        built[name] = exe
    return built


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    with leaf_spine_fabric("dmodk", tmp_path_factory.mktemp("allreduce")) as (ctl, fab):
        yield ctl, fab


def job_env(ctl, fab):
    return {"SDN_MPI_CONTROLLER": "%s:%d" % (fab.mgmt.root_ip, ctl.rpc_port),
            "SDN_MPI_FABRIC_SUBNET": "10.0.0.0/8", "SDN_MPI_VERBOSE": "1"}


def spine_tx(fab):
    return {s: sum(ofdump.port_tx_bytes(bridge(fab, spine_dpid(s))).values()) for s in range(1, SPINES + 1)}


def test_allreduce_job_gets_balanced_routes_that_carry_its_traffic_and_vanish_on_release(fabric, programs):
    ctl, fab = fabric
    hosts = ["h%d" % n for n in range(1, N + 1)]
    random.Random(7).shuffle(hosts)  # random rank placement
    hold = tempfile.mkdtemp(prefix="sdnmpi-hold-")
    result = {}
    before = spine_tx(fab)

    def run():
        result["rc"], result["out"] = fab.mpirun(hosts, [programs["allreduce_job"], BYTES, 3, hold],
                                                 env=job_env(ctl, fab), timeout=300)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        wait_for(lambda: os.path.exists(os.path.join(hold, "ready")) or not thread.is_alive(), 240, "the job")
        assert thread.is_alive(), result.get("out")
        jobs = ctl.rest("/sdnmpi/jobs")
        assert len(jobs) == 1, jobs
        job = jobs[0]
        plan = job["comms"]["0"]
        assert plan["planner"] == "balanced" and plan["max_load"] == plan["lower_bound"]
        # The switches hold exactly the installed routes, with the job's cookie, and every planned
        # pair's packets take its planned hops: job flows where installed, default routes where
        # elided (--sdnmpi-elide-default-hops, the default).
        ways = ovs_routes.check_job(ctl, fab, job["job"])
        assert job["routes"] and ovs_routes.ends(ways) == {"%s:%d" % (r["dpid"], r["port"]) for r in job["routes"]}
        # The allreduce traffic crossed both spines, about evenly.
        after = spine_tx(fab)
        moved = {s: after[s] - before[s] for s in after}
        assert all(m > 0.25 * sum(moved.values()) for m in moved.values()), moved
    finally:
        open(os.path.join(hold, "go"), "w").close()
        thread.join(300)
    assert result["rc"] == 0 and "allreduce_job OK" in result["out"], result["out"][-3000:]
    # Rabenseifner halves in the order of the controller's step loads (one rank per host, so
    # every pair crosses hosts): the least loaded step first, ties smallest distance first.
    order = sorted((1 << k for k in range(len(plan["max_load"]))), key=lambda d: (plan["max_load"][d.bit_length() - 1], d))
    assert re.search(r"sdnmpi\[0\]: plan comm=0 ranks=%d .*max_load=\[%s\] halving=\[%s\]" % (
        N, ",".join(map(str, plan["max_load"])), ",".join(map(str, order))), result["out"]), result["out"][-3000:]
    wait_for(lambda: ctl.rest("/sdnmpi/jobs") == [], 10, "the job's release")
    for sw in fab.net.switches:
        assert not [f for f in ofdump.flows(sw.name) if f["cookie"] & C.COOKIE_KIND_MASK == C.COOKIE_JOB]


def test_unmodified_binary_with_ld_preload(fabric, programs):
    ctl, fab = fabric
    registered = ctl.rest("/sdnmpi/stats")["rpc"]["jobs_registered"]
    env = dict(job_env(ctl, fab), LD_PRELOAD=os.path.join(LIBSDNMPI, "libsdnmpi-preload.so"))
    rc, out = fab.mpirun(["h%d" % n for n in range(1, N + 1)], [programs["plain_allreduce_job"], 200000],
                         env=env, timeout=300)
    assert rc == 0 and "plain_allreduce_job OK" in out, out[-3000:]
    stats = ctl.rest("/sdnmpi/stats")["rpc"]
    assert stats["jobs_registered"] == registered + 1 and stats["allreduce_plans"] >= 1
    assert ctl.rest("/sdnmpi/jobs") == []


def test_job_without_controller_falls_back_and_is_still_right(fabric, programs):
    _ctl, fab = fabric
    hold = tempfile.mkdtemp(prefix="sdnmpi-hold-")
    open(os.path.join(hold, "go"), "w").close()
    env = {"SDN_MPI_CONTROLLER": "%s:1" % fab.mgmt.root_ip, "SDN_MPI_FABRIC_SUBNET": "10.0.0.0/8"}
    rc, out = fab.mpirun(["h%d" % n for n in range(1, N + 1)], [programs["allreduce_job"], 65536, 2, hold],
                         env=env, timeout=300)
    assert rc == 0 and "allreduce_job OK" in out, out[-3000:]
