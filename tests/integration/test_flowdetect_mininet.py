"""Flow detection without hints on the Mininet fabric (issue 16, docs/flows.md), once with the
threshold and once with the learned classifier.

The 8-host leaf-spine (host links 40 Mbit/s, fabric links 20 Mbit/s). A job on h1-h4 (two leaves)
registers and declares nothing. An iperf3 elephant h1 -> h3 and a 200 kbit/s mouse h2 -> h4 run
at once. The controller's counting entries (table 0 of the senders' edge switches, the job's
counting cookie) count both pairs; the elephant is detected within a few polls and gets routes
along sdn-optimal's path (job flows with the job's cookie where a hop is installed, the default
routes where it is elided: tests/integration/ovs_routes.py), which carry its packets; the mouse
stays on the default routes. When the traffic stops, dynamic phase detection removes the elephant's
routes.
"""
import re

import pytest

from sdnmpi.controller import constants as C
from sdnmpi.controller import flowdetect
from sdnmpi.mininet_topos import controller_proc

import ofdump
from conftest import running_fabric
from fabric_helpers import LEAVES, N, SPINES, ip, make_topo, wait_for, wait_for_routes
from ovs_routes import carried, check_job, job_doc, switches, topology
from test_jobtraffic_mininet import Client, job_flows, planned

HOST_MBIT = 40           # make_topo's host links
INTERVAL = 1.0           # s between counter polls
QUIET_S = 3.0            # idle release after this many quiet seconds
ELEPHANT = (ip(1), ip(3))
MOUSE = (ip(2), ip(4))


# variant -> (--sdnmpi-flow-detection, poll interval s, further options): "threshold" and "learned" judge
# windows of 1 s polls; "learned-slide" runs the controller's defaults (no interval or span given:
# 0.5 s polls sliding 1 s windows, --sdnmpi-flow-span, flows/sliding.py)
VARIANTS = {"threshold": ("threshold", INTERVAL, ("--sdnmpi-flow-span", "0")),
            "learned": ("learned", INTERVAL, ("--sdnmpi-flow-span", "0")),
            "learned-slide": ("learned", None, ())}


def poll_interval(variant):
    """The variant's poll interval, s (the controller's default where the variant sets none)."""
    interval = VARIANTS[variant][1]
    return flowdetect.DEFAULT_INTERVAL if interval is None else interval


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def fabric(request, tmp_path_factory):
    mode, interval, extra = VARIANTS[request.param]
    args = ("--sdnmpi-rpc-allow", "127.0.0.1", "--sdnmpi-flow-detection", mode) + \
        (("--sdnmpi-flow-interval", str(interval)) if interval is not None else ()) + \
        ("--sdnmpi-link-capacity", str(HOST_MBIT * 1e6),
            "--sdnmpi-idle-threshold", "1000000", "--sdnmpi-idle-time", str(QUIET_S),
            "--sdnmpi-stats-interval", "0.5") + extra
    folder = tmp_path_factory.mktemp("flowdetect-" + request.param)
    with running_fabric(make_topo(), "dmodk", folder, extra_args=args) as (ctl, fab):
        controller_proc.wait_for_topology(ctl, switches=SPINES + LEAVES, links=SPINES * LEAVES, hosts=N, timeout=90)
        wait_for_routes(fab, N)
        yield request.param, ctl, fab


def counting(fab, job):
    """{(src ip, dst ip): bytes} of the job's counting entries (table 0), from OVS."""
    out = {}
    for sw in fab.net.switches:
        for f in ofdump.flows(sw.name):
            if f["cookie"] == C.COOKIE_COUNT | job:
                out[(f["match"]["nw_src"], f["match"]["nw_dst"])] = f["bytes"]
    return out


def test_an_elephant_is_detected_and_routed_a_mouse_is_not(fabric):
    variant, ctl, fab = fabric
    mode, interval = VARIANTS[variant][0], poll_interval(variant)
    assert ("flow detection: learned model" in ctl.log_text()) == (mode == "learned")
    conn = Client(ctl)
    h1, h2, h3, h4 = (fab.net.get("h%d" % n) for n in (1, 2, 3, 4))
    procs = []
    try:
        hosts = [ip(n) for n in (1, 2, 3, 4)]
        r = conn.call("register", hosts=hosts)
        assert r["status"] == "ok", r
        job = r["job"]
        # 4 hosts on two leaves: each host counts its 2 pairs to the other leaf
        wait_for(lambda: len(counting(fab, job)) == 8, 10, "the job's counting entries")
        for server, port in ((h3, 5301), (h4, 5302)):
            server.cmd("iperf3 -s -1 -D -p %d" % port)
            wait_for(lambda s=server, p=port: s.cmd("ss -Hltn 'sport = :%d'" % p).strip(), 10, "iperf3 to listen")
        procs.append(h2.popen(["iperf3", "-c", MOUSE[1], "-p", "5302", "-b", "200k", "-t", "12"]))
        procs.append(h1.popen(["iperf3", "-c", ELEPHANT[1], "-p", "5301", "-t", "10"]))

        # "routed" counts only after the install is confirmed by every switch's barrier: the OVS
        # dump seen before that may hold the flows of some switches and not yet of the others
        wait_for(lambda: ctl.rest("/sdnmpi/flowdetect")["counters"].get("routed", 0) >= 1, 15,
                 "the elephant's job flows, confirmed")
        topo = topology(ctl)
        paths, _load, ways = planned(topo, [[ELEPHANT[0], ELEPHANT[1], 1]])
        assert switches(check_job(ctl, fab, job, topo)) == ways and ways[ELEPHANT] == paths[ELEPHANT]
        before = carried(fab, topo, *ELEPHANT)
        line = re.search(r"flow detection \(%s\): job %d: elephant %s -> %s after (\d+) polls"
                         % (mode, job, re.escape(ELEPHANT[0]), re.escape(ELEPHANT[1])), ctl.log_text())
        # polls from its first bytes, both counted: within 4 s
        assert line and int(line.group(1)) * interval <= 4, ctl.log_tail()
        state = ctl.rest("/sdnmpi/flowdetect")
        assert state["classifier"] == mode and state["counting_entries"] == 8, state
        # the windows the classifier judged: 1 s, sliding over 0.5 s polls in the default variant
        assert (state["interval_s"], state["window_s"]) == (interval, 1.0), state
        assert [(d["job"], d["src"], d["dst"]) for d in state["recent"]] == [(job,) + ELEPHANT], state
        # from now on the elephant's packets count on every flow of its path, hop by hop (the job's
        # flow where installed, the default route where elided); OVS pushes counters up with a delay
        assert [d for d, _n in before] == paths[ELEPHANT]
        wait_for(lambda: all(n - n0 > 100 for (_d, n), (_d0, n0) in zip(carried(fab, topo, *ELEPHANT), before)),
                 10, "the elephant's packets on its path")
        assert [p.wait(timeout=60) for p in procs] == [0, 0]
        seen = counting(fab, job)
        assert seen[ELEPHANT] > 10 * seen[MOUSE] > 0, seen
        # the mouse was counted all along and never routed
        # (and the elephant's reverse, its ACKs' route: --sdnmpi-traffic-reverse-routes)
        assert {(r["src"], r["dst"]) for r in job_doc(ctl, job)["routes"]} == {ELEPHANT, ELEPHANT[::-1]}
        assert {k[1:] for k in job_flows(fab, job)} <= {ELEPHANT, ELEPHANT[::-1]}
        assert "elephant %s -> %s" % MOUSE not in ctl.log_text()
        # quiet: dynamic phase detection releases the detected routes
        wait_for(lambda: job_doc(ctl, job)["routes"] == [] and job_flows(fab, job) == {}, 30,
                 "the idle job's detected routes to go")
        assert conn.call("release", job=job, token=r["token"])["status"] == "ok"
        wait_for(lambda: counting(fab, job) == {}, 10, "the released job's counting entries to go")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        conn.close()
