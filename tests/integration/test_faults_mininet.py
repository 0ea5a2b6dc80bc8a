"""Faults during operation on the 2-tier fabric (issue 12): a switch restarted with
``ovs-vsctl del-br`` and re-added with the same ports, as Mininet builds it; a fabric link that
goes down while an MPI job runs allreduces and bcasts through libsdnmpi. A job's routes are checked
as OVS forwards them (tests/integration/ovs_routes.py: its flows where a hop is installed, the
default routes where --sdnmpi-elide-default-hops, the default, elided it)."""
import os
import signal
import subprocess
import tempfile
import threading
import time

import pytest

from sdnmpi.controller import constants as C
from sdnmpi.mininet_topos import controller_proc

import ofdump
import ovs_routes
from conftest import LIBSDNMPI
from fabric_helpers import (HPL, LEAVES, N, PING_TIMEOUT, SPINES, bridge, leaf_dpid, leaf_spine_fabric, spine_dpid,
                            wait_for, wait_for_routes)

HERE = os.path.dirname(os.path.abspath(__file__))

RECOVERY = 10.0  # seconds from re-adding the bridge until pingall must be clean (issue 12)


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    with leaf_spine_fabric("dmodk", tmp_path_factory.mktemp("faults")) as (ctl, fab):
        yield ctl, fab


@pytest.fixture(scope="module")
def fault_job(tmp_path_factory):
    exe = str(tmp_path_factory.mktemp("progs") / "fault_job")
    subprocess.run(["mpicc", "-O2", "-Wall", "-Wextra", "-Werror", "-I" + os.path.join(LIBSDNMPI, "include"),
                    os.path.join(HERE, "progs", "fault_job.c"), "-o", exe, os.path.join(LIBSDNMPI, "libsdnmpi.a"),
                    "-lmsgpackc", "-lz"], check=True)
    return exe


def _switches(ctl):
    return {s["dpid"] for s in ctl.rest("/sdnmpi/topology")["switches"]}


@pytest.mark.parametrize("dpid", [leaf_dpid(1), spine_dpid(2)], ids=["leaf", "spine"])
def test_restarted_switch_recovers_within_10s(fabric, dpid):
    """The bridge is deleted (its flows, ports and connection go) and re-added: the controller
    rediscovers its links and hosts, reinstalls routes on it, and pingall is clean within 10 s."""
    ctl, fab = fabric
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    name = bridge(fab, dpid)
    fab.delete_bridge(name)
    wait_for(lambda: dpid not in _switches(ctl), 10, "the controller to notice that %s left" % name)
    start = time.monotonic()
    fab.readd_bridge(name)
    controller_proc.wait_for_topology(ctl, switches=SPINES + LEAVES, links=SPINES * LEAVES, hosts=N,
                                      timeout=RECOVERY)
    wait_for_routes(fab, N, timeout=max(0.0, RECOVERY - (time.monotonic() - start)))
    assert fab.net.pingAll(timeout=PING_TIMEOUT) == 0
    elapsed = time.monotonic() - start
    assert elapsed <= RECOVERY, "pingall clean only %.1f s after the switch came back" % elapsed


def _job_outputs(fab, job):
    """{(dpid, output port)} of the job's flows (its cookie) in the switches."""
    out = set()
    for sw in fab.net.switches:
        for f in ofdump.flows(sw.name):
            if f["cookie"] == C.COOKIE_JOB | job and f["actions"].startswith("output:"):
                out.add((sw.dpid, int(f["actions"].split(":")[1])))
    return out


def _job_cookie_flows(fab, job):
    """Every flow with the job's cookie (installed route hops and Bcast tree flows) in the switches."""
    return [f for sw in fab.net.switches for f in ofdump.flows(sw.name) if f["cookie"] == C.COOKIE_JOB | job]


def _forwarding(ctl, fab, job):
    """ovs_routes.check_job's ways, or None while OVS and the controller's record of the job
    still disagree (a re-plan on its way to the switches)."""
    try:
        return ovs_routes.check_job(ctl, fab, job)
    except AssertionError:
        return None


def _planned_ports(job):
    """{(dpid, port)} of the job's planned routes and bcast trees, from the controller."""
    ports = {(r["dpid"], r["port"]) for r in job["routes"]}
    for tree in job["trees"]:
        ports |= {(d, p) for d, plist in tree["switches"].items() for p in plist}
    return ports


def _start_job(ctl, fab, fault_job, after, hold, **knobs):
    """fault_job on every host in a thread; the result dict gets mpirun's rc and output."""
    env = {"SDN_MPI_CONTROLLER": "%s:%d" % (fab.mgmt.root_ip, ctl.rpc_port), "SDN_MPI_FABRIC_SUBNET": "10.0.0.0/8"}
    env.update(knobs)
    result = {}

    def run():
        result["rc"], result["out"] = fab.mpirun(["h%d" % n for n in range(1, N + 1)], [fault_job, 65536, after, hold],
                                                 env=env, timeout=300)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def test_link_down_during_a_job(fabric, fault_job):
    """A leaf-spine link the job's routes use goes down while the job repeats SDN_MPI_Allreduce and
    SDN_MPI_Bcast: every call completes with the right result, the controller re-plans the job
    around the dead link (its flows in OVS avoid it), and a fresh communicator's plan avoids it."""
    ctl, fab = fabric
    hold = tempfile.mkdtemp(prefix="sdnmpi-fault-")
    thread, result = _start_job(ctl, fab, fault_job, 5, hold)
    leaf = spine = None
    try:
        wait_for(lambda: os.path.exists(os.path.join(hold, "running")) or not thread.is_alive(), 240, "the job")
        assert thread.is_alive(), result.get("out")
        job = wait_for(lambda: next((j for j in ctl.rest("/sdnmpi/jobs") if j["routes"] and j["trees"]), None), 30,
                       "the job's plan and bcast trees")
        uplink = next((r["dpid"], r["port"]) for r in job["routes"] if r["dpid"].startswith("00000000000002")
                      and r["port"] > HPL)
        assert "%s:%d" % uplink in ovs_routes.ends(ovs_routes.check_job(ctl, fab, job["job"]))  # OVS forwards it so
        leaf, spine = bridge(fab, uplink[0]), bridge(fab, spine_dpid(uplink[1] - HPL))
        link = fab.net.linksBetween(fab.net[leaf], fab.net[spine])[0]
        dead = {(intf.node.dpid, intf.node.ports[intf]) for intf in (link.intf1, link.intf2)}
        dead_ends = {"%s:%d" % end for end in dead}
        fab.net.configLinkStatus(leaf, spine, "down")
        controller_proc.wait_for_links(ctl, SPINES * LEAVES - 1)
        def off_the_dead_link():
            ways = _forwarding(ctl, fab, job["job"])
            return ways is not None and not ovs_routes.ends(ways) & dead_ends and not _job_outputs(fab, job["job"]) & dead
        wait_for(off_the_dead_link, 15, "the job's routes off the dead link")
        open(os.path.join(hold, "fault"), "w").close()
        wait_for(lambda: os.path.exists(os.path.join(hold, "ready")) or not thread.is_alive(), 240, "phase 2")
        assert thread.is_alive(), result.get("out")
        job = ctl.rest("/sdnmpi/jobs")[0]
        assert len(job["comms"]) == 2, job["comms"]  # the duplicate got a plan of its own
        assert _planned_ports(job) and not _planned_ports(job) & dead
        ways = ovs_routes.check_job(ctl, fab, job["job"])
        assert ways and not ovs_routes.ends(ways) & dead_ends and not _job_outputs(fab, job["job"]) & dead
    finally:
        open(os.path.join(hold, "go"), "w").close()
        thread.join(300)
        if leaf is not None:
            fab.net.configLinkStatus(leaf, spine, "up")
    assert result["rc"] == 0 and "fault_job OK" in result["out"], result["out"][-3000:]
    controller_proc.wait_for_links(ctl, SPINES * LEAVES)


def test_controller_killed_and_restarted_during_a_job(fabric, fault_job, tmp_path):
    """SIGKILL to the controller while the job repeats SDN_MPI_Allreduce and SDN_MPI_Bcast, then a
    new one on the same ports: it wipes the switches' tables on connect (the old job's cookies
    included), rediscovers the fabric and reinstalls default routes. The library registers the job
    again with the new controller (libsdnmpi/src/reconnect.h): the job's later calls get fresh
    routes and Bcast trees under the new job's cookie, the duplicate communicator too, and every
    result is right. Runs last: it replaces the controller."""
    ctl, fab = fabric
    hold = tempfile.mkdtemp(prefix="sdnmpi-restart-")
    thread, result = _start_job(ctl, fab, fault_job, 50, hold, SDN_MPI_VERBOSE="1")
    new = old_id = new_id = None
    try:
        wait_for(lambda: os.path.exists(os.path.join(hold, "running")) or not thread.is_alive(), 240, "the job")
        assert thread.is_alive(), result.get("out")
        job = wait_for(lambda: next((j for j in ctl.rest("/sdnmpi/jobs") if j["routes"] and j["trees"]), None), 30,
                       "the job's plan and bcast trees")
        old_id = job["job"]
        assert ovs_routes.check_job(ctl, fab, old_id) and _job_cookie_flows(fab, old_id)
        os.killpg(ctl.pid, signal.SIGKILL)
        ctl.stop()
        new = controller_proc.start_controller(ctl.ofp_port, ctl.wsapi_port, routing="dmodk", log_path=str(
            tmp_path / "ryu2.log"), extra_args=("--sdnmpi-rpc-host", "0.0.0.0", "--sdnmpi-rpc-port", str(ctl.rpc_port)))
        new.wait_rest_ready(timeout=30)
        controller_proc.wait_for_topology(new, switches=SPINES + LEAVES, links=SPINES * LEAVES, hosts=N, timeout=30)
        wait_for_routes(fab, N)
        assert not _job_cookie_flows(fab, old_id)  # the old job's flows (routes and trees) are gone
        # The job, still repeating its calls, registers again (the back-off is at most 8 s).
        job = wait_for(lambda: next(iter(new.rest("/sdnmpi/jobs")), None) or not thread.is_alive(), 60,
                       "the job's new registration")
        assert thread.is_alive(), result.get("out")
        new_id = job["job"]
        assert new_id != old_id and sorted(job["hosts"]) == sorted(fab.host_ips().values())
        open(os.path.join(hold, "fault"), "w").close()
        wait_for(lambda: os.path.exists(os.path.join(hold, "ready")) or not thread.is_alive(), 240, "phase 2")
        assert thread.is_alive(), result.get("out")
        (job,) = new.rest("/sdnmpi/jobs")
        # fresh routes and trees from the new controller, for MPI_COMM_WORLD and the duplicate
        assert job["job"] == new_id and len(job["comms"]) == 2 and job["routes"] and job["trees"], job
        # the new job's cookie in the switches (its trees, its installed hops), and OVS forwards its
        # planned pairs as planned
        ways = ovs_routes.check_job(new, fab, new_id)
        assert _job_cookie_flows(fab, new_id) and ways and ovs_routes.ends(ways) <= {"%s:%d" % e for e in _planned_ports(job)}
    finally:
        open(os.path.join(hold, "fault"), "w").close()
        open(os.path.join(hold, "go"), "w").close()
        thread.join(300)
        if new is not None:
            new.stop()
    out = result["out"]
    assert result["rc"] == 0 and "fault_job OK" in out, out[-3000:]
    assert "reconnect: job %d is now job %d (registration 1)" % (old_id, new_id) in out, out[-3000:]
    assert "finalize: job %d released" % new_id in out, out[-3000:]
