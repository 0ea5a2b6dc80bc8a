"""A declared profile that does not match the live traffic loses its routes, on the Mininet fabric
(issues 15 and 16; controller/flowdetect.py `_check_declared`, docs/flows.md "A declaration that
does not match the live traffic").

The 8-host leaf-spine (host links 40 Mbit/s, fabric links 20 Mbit/s), D-mod-K default routes,
threshold flow detection polling every INTERVAL s, dynamic phase detection off (so a job's routes
go only by the mismatch check). A registered job declares PROFILE (the RPC op `traffic`, phase 0,
sdn-optimal): a permutation where D-mod-K collides, so its plan is installed; the OVS flow dumps
show its per-job flows on the planner's paths (tests/integration/ovs_routes.py).

- Mismatch: the job then sends MOVED (a profile pair the plan moves off its D-mod-K spine) and
  OTHER (not in the profile) with iperf3. On the profile's routes both reach one leaf through the
  same spine; on D-mod-K's they do not. After MISMATCH_POLLS polls the controller withdraws the
  profile: the job is undeclared, so detection routes both elephants with the planner
  (sdn-optimal, under the job's cookie): the OVS dumps show the job's flows for exactly those
  two pairs (and their ACKs), on ways that put one flow on a link, carrying their packets.
- Control: another job declares the same profile and sends MOVED and MATCHING, both profile pairs.
  Its routes stay for twice MISMATCH_POLLS polls after both are flagged, and carry their packets.
  The elephants' TCP ACK streams ride the profile's reverse routes; where they reach the 1 % busy
  share and are scored as flows on their default paths (the code before 3492b92), these routes look
  worse than D-mod-K's. The check now leaves ACK streams out (flowdetect._data_pairs: a pair's
  payload, its bytes less flowdetect.ACK_FRAME per packet) and scores reverse pairs that carry
  data on the reverse routes.

Every wait is on the controller's state (GET /sdnmpi/flowdetect: its poll counter, its detections,
its releases), never on a sleep.
"""
import collections
import contextlib

import pytest

from sdnmpi.controller import constants as C
from sdnmpi.controller.flowdetect import MISMATCH_S
from sdnmpi.flows.polls import polls_for
from sdnmpi.mininet_topos import controller_proc
from sdnmpi.primitives import PAIR_ROUTERS, pairs

from conftest import running_fabric
from fabric_helpers import LEAVES, N, SPINES, ip, make_topo, wait_for, wait_for_routes
from ovs_routes import carried, check_job, job_doc, switches, tables, topology, walk
from test_jobtraffic_mininet import IPS, Client, job_flows, planned

HOST_MBIT = 40           # make_topo's host links
INTERVAL = 1.0           # s between counter polls
MISMATCH_POLLS = polls_for(MISMATCH_S, INTERVAL)   # polls in a row before the release
PROFILE = [(1, 6), (2, 4), (3, 5), (4, 2), (5, 3), (6, 7), (7, 8), (8, 1)]   # D-mod-K: 2 flows on a link
MOVED, OTHER, MATCHING = (6, 7), (3, 8), (8, 1)
WAIT_S = 30              # ceiling of every wait (the release takes MISMATCH_POLLS polls of INTERVAL)


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    args = ("--sdnmpi-rpc-allow", "127.0.0.1", "--sdnmpi-flow-detection", "threshold",
            "--sdnmpi-flow-interval", str(INTERVAL), "--sdnmpi-link-capacity", str(HOST_MBIT * 1e6),
            "--sdnmpi-idle-threshold", "0")
    with running_fabric(make_topo(), "dmodk", tmp_path_factory.mktemp("release"), extra_args=args) as (ctl, fab):
        controller_proc.wait_for_topology(ctl, switches=SPINES + LEAVES, links=SPINES * LEAVES, hosts=N, timeout=90)
        wait_for_routes(fab, N)
        yield ctl, fab


def pair(hosts):
    return ip(hosts[0]), ip(hosts[1])


def default_ways(topo, ip_pairs):
    """{(src ip, dst ip): [dpid, ...]} of the controller's default (D-mod-K) routes."""
    graph, mac = topo.graph(), {h.ip: h.mac for h in topo.hosts.values()}
    paths = PAIR_ROUTERS["dmodk"](graph, [pairs.Flow(mac[s], mac[d], 1) for s, d in ip_pairs])
    return {(s, d): paths[mac[s], mac[d]][1:-1] for s, d in ip_pairs}


def busiest(ways, ip_pairs):
    """Flows on the busiest directed switch link when each pair takes its way in ``ways``."""
    links = collections.Counter(link for p in ip_pairs for link in zip(ways[p], ways[p][1:]))
    return max(links.values())


def scores(topo, job_ways, live):
    """[(busiest link on the job's routes, on the default routes)] over the live pairs, and over
    the live pairs with their reverse pairs (their ACKs, busy too when they reach 1 % of the link)."""
    out = []
    for busy in (list(live), list(live) + [p[::-1] for p in live]):
        default = default_ways(topo, busy)
        out.append((busiest({**default, **job_ways}, busy), busiest(default, busy)))
    return out


@contextlib.contextmanager
def elephants(fab, live, port=5401):
    """iperf3 from each pair's source to its destination (one server each), running until the end
    of the block (they would last 60 s)."""
    procs = []
    try:
        for n, (src, dst) in enumerate(live):
            server, p = fab.net.get("h%d" % dst), port + n
            server.cmd("iperf3 -s -1 -D -p %d" % p)
            wait_for(lambda s=server, q=p: s.cmd("ss -Hltn 'sport = :%d'" % q).strip(), 10, "iperf3 to listen")
            procs.append(fab.net.get("h%d" % src).popen(["iperf3", "-c", ip(dst), "-p", str(p), "-t", "60"]))
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def declare_profile(ctl, fab, conn):
    """Registers a job on every host and declares PROFILE; (job, token, its ways as OVS forwards
    them), checked against sdn-optimal's plan."""
    r = conn.call("register", hosts=IPS)
    assert r["status"] == "ok", r
    job, token = r["job"], r["token"]
    demand = [[ip(a), ip(b), 1 << 20] for a, b in PROFILE]
    r = conn.call("traffic", job=job, token=token, phase=0, pairs=demand, planner="sdn-optimal")
    assert r["status"] == "ok" and not r["stored"] and r["max_load"] == 1 and r["flows"] > 0, r
    topo = topology(ctl)
    paths, _load, ways = planned(topo, demand)
    installed = switches(check_job(ctl, fab, job, topo))
    assert installed == ways and job_flows(fab, job)
    default = default_ways(topo, list(paths))
    assert busiest(default, list(paths)) == 2 and busiest(paths, list(paths)) == 1
    return job, token, topo, installed


@pytest.fixture
def declared(fabric):
    """(ctl, fab, RPC client, job, token, topology, ways) of a job that declared PROFILE."""
    ctl, fab = fabric
    conn = Client(ctl)
    try:
        yield (ctl, fab, conn) + declare_profile(ctl, fab, conn)
    finally:
        conn.close()


def detection(ctl):
    return ctl.rest("/sdnmpi/flowdetect")


def flagged(ctl, job, live):
    """The poll count once every live pair of ``job`` has been flagged as an elephant."""
    state = detection(ctl)
    seen = {(d["src"], d["dst"]) for d in state["recent"] if d["job"] == job}
    return state["counters"]["polls"] if set(live) <= seen else None


def routed(ctl, job, live):
    """The job's entry of GET /sdnmpi/jobs once detection's phase 0 routes every live pair."""
    doc = job_doc(ctl, job)
    active = doc["traffic"]["active"].get("0") if doc else None
    done = detection(ctl)["jobs"].get(str(job)) == len(live) and active and active["pairs"] == len(live)
    return doc if done and active["flows"] else None


def test_a_profile_that_does_not_match_the_live_traffic_is_released(declared):
    ctl, fab, conn, job, token, topo, installed = declared
    live = [pair(MOVED), pair(OTHER)]
    assert live[0] in installed and live[1] not in installed
    # on the profile's routes the two reach one leaf through one spine; on D-mod-K's they do not
    assert scores(topo, installed, live) == [(2, 1), (2, 1)]
    quiet = detection(ctl)["counters"]["polls"]      # a poll up to this one can have seen no elephant
    with elephants(fab, [MOVED, OTHER]) as procs:
        entry = wait_for(lambda: [e for e in detection(ctl)["released"] if e["job"] == job], WAIT_S,
                         "the mismatched profile's routes to be released")[0]
        # MISMATCH_POLLS polls in a row, the first of them poll `quiet` (its replies may come
        # after the elephants started) at the earliest
        assert entry["poll"] >= quiet + MISMATCH_POLLS - 1, (quiet, entry)
        assert entry["busy_pairs"] >= 2 and entry["declared_flows"] > entry["default_flows"], entry
        # the job is undeclared: detection routes both elephants with the planner (those flagged
        # before the release at the release, the others when flagged), under the job's cookie
        doc = wait_for(lambda: routed(ctl, job, live), WAIT_S, "both elephants routed by detection")
        assert not doc["traffic"]["dormant"] and doc["traffic"]["phases"] == {"0": {"pairs": 2, "router": "sdn-optimal"}}
        ways = switches(check_job(ctl, fab, job, topo))       # OVS holds what the controller installed
        assert set(ways) <= set(live) | {p[::-1] for p in live} and set(live) <= set(ways)
        assert scores(topo, ways, live)[0] == (1, 1)      # one flow a link, as D-mod-K; the profile put 2
        before = {p: carried(fab, topo, *p) for p in live}
        for p in live:
            assert [d for d, _n in before[p]] == ways[p]
        wait_for(lambda: all(n - n0 > 100 for p in live for (_d, n), (_d0, n0) in zip(carried(fab, topo, *p), before[p])),
                 10, "the elephants' packets on the planner's routes")
        assert [p.poll() for p in procs] == [None, None]          # still sending
    assert {(d["src"], d["dst"]) for d in detection(ctl)["recent"] if d["job"] == job} >= set(live)
    assert conn.call("release", job=job, token=token)["status"] == "ok"


def test_a_profile_that_matches_the_live_traffic_stays(declared):
    ctl, fab, conn, job, token, topo, installed = declared
    live = [pair(MOVED), pair(MATCHING)]
    assert all(p in installed and p[::-1] in installed for p in live)      # and their ACKs' routes
    assert scores(topo, installed, live) == [(1, 1), (1, 1)]
    # the profile's data paths with the ACKs on their default paths: what the check scored before
    data_only = {p: w for p, w in installed.items() if p in {pair(h) for h in PROFILE}}
    assert scores(topo, data_only, live)[1] == (2, 1)
    flows = job_flows(fab, job)
    with elephants(fab, [MOVED, MATCHING], port=5411) as procs:
        first = wait_for(lambda: flagged(ctl, job, live), WAIT_S, "both elephants flagged")
        before = {p: carried(fab, topo, *p) for p in live}
        wait_for(lambda: detection(ctl)["counters"]["polls"] >= first + 2 * MISMATCH_POLLS, WAIT_S,
                 "%d more polls" % (2 * MISMATCH_POLLS))
        assert [p.poll() for p in procs] == [None, None]          # busy through every one of them
        after = {p: carried(fab, topo, *p) for p in live}
    assert [e for e in detection(ctl)["released"] if e["job"] == job] == []
    assert {k: v[0] for k, v in job_flows(fab, job).items()} == {k: v[0] for k, v in flows.items()}
    assert not job_doc(ctl, job)["traffic"]["dormant"]
    # the elephants ran on the profile's routes (the job's flows where installed) all along
    for p in live:
        assert [d for d, _n in after[p]] == installed[p]
        assert all(n - n0 > 100 for (_d, n), (_d0, n0) in zip(after[p], before[p])), (p, before[p], after[p])
    assert conn.call("release", job=job, token=token)["status"] == "ok"
