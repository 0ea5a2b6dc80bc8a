"""Dynamic phase detection on the Mininet fabric (issue 15): a job whose hosts go quiet loses its
traffic routes (the controller's stats poll, --sdnmpi-idle-threshold/--sdnmpi-idle-time), keeps
them while its hosts send, and gets them back at its next phase entry. The 8-host leaf-spine; RPC
from the root namespace as in test_jobtraffic_mininet.py. The routes are the job's planned hops
(GET /sdnmpi/jobs), forwarded by OVS as planned: its flows where installed, the default routes
where elided (tests/integration/ovs_routes.py)."""
import time

import pytest

from sdnmpi.mininet_topos import controller_proc

from conftest import running_fabric
from fabric_helpers import LEAVES, N, SPINES, ip, make_topo, wait_for, wait_for_routes
from ovs_routes import check_job, job_doc
from test_jobtraffic_mininet import Client, job_flows

QUIET_S = 3.0


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    args = ("--sdnmpi-rpc-allow", "127.0.0.1", "--sdnmpi-idle-threshold", "1000000",
            "--sdnmpi-idle-time", str(QUIET_S), "--sdnmpi-stats-interval", "0.5")
    with running_fabric(make_topo(), "dmodk", tmp_path_factory.mktemp("jobidle"), extra_args=args) as (ctl, fab):
        controller_proc.wait_for_topology(ctl, switches=SPINES + LEAVES, links=SPINES * LEAVES, hosts=N, timeout=90)
        wait_for_routes(fab, N)
        yield ctl, fab


def dormant(ctl, job):
    return {j["job"]: j for j in ctl.rest("/sdnmpi/jobs")}[job]["traffic"]["dormant"]


def routed_pairs(ctl, fab, job):
    """The host pairs the job routes, checked against OVS (ovs_routes.check_job)."""
    return set(check_job(ctl, fab, job))


def gone(ctl, fab, job):
    return job_doc(ctl, job)["routes"] == [] and job_flows(fab, job) == {}


def test_quiet_hosts_lose_the_routes_busy_ones_keep_them_and_a_phase_entry_restores_them(fabric):
    ctl, fab = fabric
    conn = Client(ctl)
    h1, h3 = fab.net.get("h1"), fab.net.get("h3")
    iperf = None
    try:
        hosts = [ip(n) for n in (1, 2, 3, 4)]            # two leaves
        r = conn.call("register", hosts=hosts)
        job, token = r["job"], r["token"]
        whole = [[hosts[0], hosts[2], 1 << 20], [hosts[1], hosts[3], 1 << 20]]
        phase1 = [[hosts[2], hosts[0], 1 << 20], [hosts[3], hosts[1], 1 << 20]]
        r = conn.call("traffic", job=job, token=token, phase=0, pairs=whole)
        assert r["status"] == "ok" and r["flows"] == len(job_flows(fab, job)), r
        # phase 0's pairs and their reverses (the ACKs' routes), which are phase 1's pairs
        assert routed_pairs(ctl, fab, job) == {tuple(p[:2]) for p in whole + phase1}
        assert conn.call("traffic", job=job, token=token, phase=1, pairs=phase1)["stored"]
        # Nobody sends: after the quiet time the routes go.
        wait_for(lambda: gone(ctl, fab, job), 30, "the idle job's routes to go")
        assert dormant(ctl, job)
        # h1 sends to h3 (about 40 Mbit/s) while a rank enters phase 1: phase 0 and 1 come back
        # and stay while the traffic lasts. They are checked while it still flows, twice the quiet
        # time later (after it ends the job may rightly go dormant a quiet time later).
        h3.cmd("iperf3 -s -1 -D -p 5202")
        wait_for(lambda: "5202" in h3.cmd("ss -ltn"), 10, "iperf3 to listen")
        iperf = h1.popen(["iperf3", "-c", hosts[2], "-p", "5202", "-t", str(int(5 * QUIET_S))])
        r = conn.call("phase", job=job, token=token, rank=1, phase=1)
        assert r["status"] == "ok" and r["installed"], r
        installed = set(job_flows(fab, job))
        assert len(installed) == r["flows"] and {(s, d) for _dp, s, d in installed} <= {tuple(p[:2]) for p in whole + phase1}
        assert routed_pairs(ctl, fab, job) == {tuple(p[:2]) for p in whole + phase1}
        time.sleep(2 * QUIET_S)      # the quiet time under test (twice over), not a wait for a condition
        assert iperf.poll() is None, "the traffic ended before the busy job was checked"
        assert not dormant(ctl, job) and set(job_flows(fab, job)) == installed
        assert routed_pairs(ctl, fab, job) == {tuple(p[:2]) for p in whole + phase1}
        assert iperf.wait(timeout=60) == 0
        # Quiet again: gone; the next phase entry brings them back.
        wait_for(lambda: gone(ctl, fab, job), 30, "the idle job's routes to go")
        r = conn.call("phase", job=job, token=token, rank=0, phase=1)
        assert r["installed"] and set(job_flows(fab, job)) == installed
        assert routed_pairs(ctl, fab, job) == {tuple(p[:2]) for p in whole + phase1}
        assert ctl.rest("/sdnmpi/stats")["rpc"]["idle_releases"] == 2
    finally:
        if iperf is not None and iperf.poll() is None:
            iperf.kill()
            iperf.wait()
        conn.close()
