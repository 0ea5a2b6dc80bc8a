"""The RPC ops `traffic` and `phase` (docs/rpc.md, issue 15) on the RPC service with switches
that apply the job flows: replies, install/remove, tokens, limits, two jobs, idle, replan."""
import copy
import random

import msgpack
import pytest

from sdnmpi.controller import constants as C
from sdnmpi.controller import jobidle, rpc, rpc_schema as schema
from sdnmpi.controller.access import RegisterAccess, parse_networks
from sdnmpi.primitives import PAIR_ROUTERS, fabric, fattree, pairs

from rpc_helpers import GRAPH, IPS, FakeCore, Switches, call, client_of, reply

K4 = fattree.kary(4)
K4_IPS = [K4.nodes[m]["ip"] for m in fabric.hosts(K4)]


def make_service(graph=GRAPH, fail=False, idle_watch=None):
    switches = Switches(fail=fail)
    svc = rpc.RpcService(FakeCore(graph), switches.confirm, idle_watch=idle_watch,
                         access=RegisterAccess(parse_networks(["10.0.0.0/8"])))
    svc.switches = switches
    return svc


@pytest.fixture
def service():
    return make_service()


def register(service, owner="conn", hosts=IPS):
    r = call(service, "register", hosts=hosts, client=owner)
    assert r["status"] == "ok", r
    return r["job"]


def shift(ips, by, nbytes=1000):
    return [[ips[i], ips[(i + by) % len(ips)], nbytes] for i in range(len(ips))]


def perm(ips, seed, nbytes=1000):
    order = ips[:]
    random.Random(seed).shuffle(order)
    return [[a, b, nbytes] for a, b in zip(ips, order) if a != b]


def installed(service, job):
    return service.switches.job_flows(C.COOKIE_JOB | job)


def walk(service, job, src, dst):
    """The switches a packet from src to dst crosses on the job's flows (None where a switch has
    no job flow for it: the default routes would carry it)."""
    flows, topo = installed(service, job), service.core.topology
    target = topo.host_by_ip(dst)
    dpid, hops = topo.host_by_ip(src).dpid, []
    for _ in range(8):
        hops.append(dpid)
        port = flows.get((dpid, src, dst))
        if port is None:
            return None
        if (dpid, port) == (target.dpid, target.port):
            return hops
        dpid = topo.links[(dpid, port)].dpid
    raise AssertionError("loop")


def assert_follows_plan(service, job, phase, demand):
    """Every inter-leaf pair of ``demand`` crosses exactly the planner's switch path."""
    routes = service.jobs.jobs[job].traffic.routes[phase]
    topo = service.core.topology
    mac = {ip: topo.host_by_ip(ip).mac for ip in IPS + K4_IPS if topo.host_by_ip(ip)}
    for src, dst, _b in demand:
        if topo.host_by_ip(src).dpid != topo.host_by_ip(dst).dpid:
            assert walk(service, job, src, dst) == routes.paths[mac[src], mac[dst]][1:-1]


def test_phase_0_is_installed_at_once_on_the_planners_paths(service):
    job = register(service)
    demand = shift(IPS, 2)                     # every host to the next leaf: NL_D 1
    r = call(service, "traffic", req_id=4, job=job, phase=0, pairs=demand, planner="sdn-optimal")
    assert r["status"] == "ok" and r["id"] == 4, r
    assert r["stored"] is False and r["node_load"] == 1 and r["max_load"] == 1
    assert r["flows"] == len(installed(service, job)) > 0
    assert_follows_plan(service, job, 0, demand)
    # The same demand again: the routes stay, nothing new is installed.
    r = call(service, "traffic", job=job, phase=0, pairs=demand, planner="sdn-optimal")
    assert r["flows"] == 0 and r["stored"] is False


def test_a_phase_is_stored_installed_by_the_first_rank_in_and_removed_by_the_last_out(service):
    job = register(service)
    demand = perm(IPS, 5)
    r = call(service, "traffic", job=job, phase=3, pairs=demand)
    assert r["status"] == "ok" and r["stored"] is True and r["flows"] == 0 and r["max_load"] == -1
    assert r["node_load"] == 1 and installed(service, job) == {}
    r = call(service, "phase", job=job, rank=0, phase=3)
    assert r == dict(r, status="ok", installed=True) and r["flows"] == len(installed(service, job)) > 0
    assert_follows_plan(service, job, 3, demand)
    r = call(service, "phase", job=job, rank=7, phase=3)
    assert r["installed"] is True and r["flows"] == 0
    r = call(service, "phase", job=job, rank=0, phase=0)       # rank 7 is still inside
    assert r["installed"] is False and r["flows"] == 0 and installed(service, job)
    r = call(service, "phase", job=job, rank=7, phase=0)
    assert r["status"] == "ok" and installed(service, job) == {}
    # A phase without a demand: nothing to install.
    r = call(service, "phase", job=job, rank=1, phase=9)
    assert r["status"] == "ok" and r["installed"] is False and r["flows"] == 0
    # A traffic op for the phase a rank is in installs at once.
    r = call(service, "traffic", job=job, phase=9, pairs=demand)
    assert r["stored"] is False and r["flows"] > 0


def test_entering_the_next_phase_switches_routes(service):
    job = register(service)
    call(service, "traffic", job=job, phase=1, pairs=perm(IPS, 1))
    call(service, "traffic", job=job, phase=2, pairs=shift(IPS, 2))
    call(service, "phase", job=job, rank=0, phase=1)
    r = call(service, "phase", job=job, rank=0, phase=2)
    assert r["installed"] is True
    traffic = service.jobs.jobs[job].traffic
    assert set(traffic.routes) == {2} and installed(service, job) == traffic.flows()
    assert_follows_plan(service, job, 2, shift(IPS, 2))


def test_add_accumulates_hints_and_a_hint_from_another_connection_needs_the_token(service):
    job = register(service, owner="rank0")
    a, b, c = IPS[0], IPS[2], IPS[4]
    assert call(service, "traffic", job=job, phase=1, pairs=[[a, b, 5]])["node_load"] == 1
    r = call(service, "traffic", job=job, phase=1, pairs=[[a, c, 5]], add=True, client="rank3")
    assert r["status"] == "ok" and r["node_load"] == 2
    assert service.jobs.jobs[job].traffic.demands[1] == [(a, b, 5), (a, c, 5)]
    r = call(service, "traffic", job=job, phase=1, pairs=[[a, b, 5]], add=True, token="0" * 32, client="x")
    assert r["status"] == "error" and r["error"] == "bad token for job %d" % job
    assert service.jobs.jobs[job].traffic.demands[1] == [(a, b, 5), (a, c, 5)]


@pytest.mark.parametrize("op, fields, reason", [
    ("traffic", {"token": None}, "bad token for job"),
    ("traffic", {"token": "f" * 32}, "bad token for job"),
    ("traffic", {"job": 999}, "unknown job 999"),
    ("phase", {"token": "f" * 32}, "bad token for job"),
    ("phase", {"job": 999}, "unknown job 999"),
])
def test_traffic_and_phase_are_token_checked(service, op, fields, reason):
    job = register(service)
    call(service, "traffic", job=job, phase=1, pairs=perm(IPS, 1))
    call(service, "phase", job=job, rank=0, phase=1)
    before = installed(service, job)
    args = {"job": job, "phase": 2 if op == "traffic" else 0}
    args.update({"pairs": shift(IPS, 2)} if op == "traffic" else {"rank": 0})
    msg = {"v": 1, "id": 9, "op": op, "token": service.test_tokens[job]}
    msg.update(args)
    msg.update(fields)
    if msg["token"] is None:
        del msg["token"]
    r = reply(service, msgpack.packb(msg), "other")
    assert r["status"] == "error" and reason in r["error"], r
    assert installed(service, job) == before and set(service.jobs.jobs[job].traffic.demands) == {1}
    assert service.jobs.jobs[job].traffic.inside() == {1: {0}}


OTHER = "10.9.9.9"
BAD_TRAFFIC = [
    ({"phase": 65}, "phase must be an integer in 0..64"),
    ({"phase": -1}, "phase must be an integer in 0..64"),
    ({"phase": "1"}, "phase must be an integer in 0..64"),
    ({"pairs": []}, "pairs must be a list of 1..65536"),
    ({"pairs": "10.0.0.1 10.0.0.2 5"}, "pairs must be a list"),
    ({"pairs": [[IPS[0], IPS[1], 5]] * 65537}, "pairs must be a list of 1..65536"),
    ({"pairs": [[IPS[0], IPS[1]]]}, "a pair must be [src_ip, dst_ip, bytes]"),
    ({"pairs": [[IPS[0], IPS[0], 5]]}, "has src == dst"),
    ({"pairs": [[IPS[0], IPS[1], 0]]}, "must be an integer >= 1"),
    ({"pairs": [[IPS[0], IPS[1], 2.5]]}, "must be an integer >= 1"),
    ({"pairs": [[IPS[0], IPS[1], True]]}, "must be an integer >= 1"),
    ({"pairs": [[IPS[0], "10.0.0.300", 5]]}, "is not an IPv4 address"),
    ({"pairs": [[IPS[0], OTHER, 5]]}, "host %s is not one of the job's hosts" % OTHER),
    ({"pairs": [[IPS[0], IPS[1], 5]] * 99 + [[IPS[1], OTHER, 5]]}, "not one of the job's hosts"),
    ({"planner": "fastest"}, "unknown planner 'fastest'"),
    ({"planner": 3}, "unknown planner"),
    ({"add": 1}, "add must be true or false"),
]


@pytest.mark.parametrize("fields, reason", BAD_TRAFFIC)
def test_malformed_or_oversized_traffic_gets_a_clear_error_and_changes_nothing(service, fields, reason):
    job = register(service, hosts=IPS[:6])
    good = shift(IPS[:6], 2)
    call(service, "traffic", job=job, phase=0, pairs=good)
    state = copy.deepcopy(service.jobs.jobs[job].traffic.demands)
    before, batches = installed(service, job), len(service.switches.batches)
    args = {"job": job, "phase": 0, "pairs": shift(IPS[:6], 1)}
    args.update(fields)
    r = call(service, "traffic", req_id=8, **args)
    assert r["status"] == "error" and reason in r["error"] and r["id"] == 8, r["error"]
    assert installed(service, job) == before and len(service.switches.batches) == batches
    assert service.jobs.jobs[job].traffic.demands == state
    assert call(service, "hello")["status"] == "ok"


@pytest.mark.parametrize("fields, reason", [
    ({"rank": 8}, "bad rank 8 for a job of 8 ranks"),
    ({"rank": -1}, "missing or invalid rank"),
    ({"rank": None}, "missing or invalid rank"),
    ({"phase": 65}, "phase must be an integer in 0..64"),
    ({"phase": True}, "phase must be an integer in 0..64"),
])
def test_bad_phase_requests_are_refused(service, fields, reason):
    job = register(service)
    call(service, "traffic", job=job, phase=1, pairs=perm(IPS, 1))
    args = {"job": job, "rank": 0, "phase": 1}
    args.update(fields)
    r = call(service, "phase", **args)
    assert r["status"] == "error" and reason in r["error"], r
    assert installed(service, job) == {} and service.jobs.jobs[job].traffic.inside() == {}


def test_an_unconfirmed_install_is_an_error_and_puts_the_job_back():
    svc = make_service(fail=True)
    job = register(svc)
    r = call(svc, "traffic", job=job, phase=0, pairs=perm(IPS, 2))
    assert r["status"] == "error" and "did not confirm" in r["error"]
    assert svc.jobs.jobs[job].traffic.demands == {} and svc.jobs.jobs[job].traffic.routes == {}
    r = call(svc, "phase", job=job, rank=0, phase=1)
    assert r["status"] == "ok" and r["flows"] == 0     # nothing to install: nothing to confirm
    r = call(svc, "traffic", job=job, phase=1, pairs=perm(IPS, 2))
    assert r["status"] == "error" and svc.jobs.jobs[job].traffic.demands == {}
    assert svc.jobs.jobs[job].traffic.inside() == {1: {0}}     # the earlier phase op stands


def test_two_jobs_are_planned_together_and_a_release_never_touches_the_other():
    svc = make_service(K4)
    a_ips, b_ips = K4_IPS[0::2], K4_IPS[1::2]        # both jobs on every edge switch
    a, b = register(svc, "A", a_ips), register(svc, "B", b_ips)
    # one host per edge switch each, every flow leaves its pod: each job alone is a permutation
    # (max 1 flow per link); the second, planned with the first's load, keeps it at 1 in all
    da, db = shift(a_ips, 2), shift(b_ips, 2)
    ra = call(svc, "traffic", job=a, phase=0, pairs=da, planner="sdn-optimal", client="A")
    rb = call(svc, "traffic", job=b, phase=0, pairs=db, planner="sdn-optimal", client="B")
    assert ra["status"] == rb["status"] == "ok" and ra["flows"] and rb["flows"]
    graph = svc.core.topology.graph()
    load = pairs.LinkLoad()
    for job in (a, b):
        routes = svc.jobs.jobs[job].traffic.routes[0]
        load = pairs.link_load(graph, routes.demand, routes.paths, base=load)
    assert ra["max_load"] == rb["max_load"] == 1 and load.max_flows() == 1
    routes_a = svc.jobs.jobs[a].traffic.routes[0]
    blind = PAIR_ROUTERS["sdn-optimal"](graph, svc.jobs.jobs[b].traffic.routes[0].demand)   # without a's load
    both_blind = pairs.link_load(graph, svc.jobs.jobs[b].traffic.routes[0].demand, blind,
                                 base=pairs.link_load(graph, routes_a.demand, routes_a.paths))
    assert both_blind.max_flows() == 2
    flows_a = installed(svc, a)
    assert call(svc, "release", job=b, client="B")["status"] == "ok"
    assert installed(svc, b) == {} and installed(svc, a) == flows_a
    rb = call(svc, "register", hosts=b_ips, client="B")
    svc.test_tokens[rb["job"]] = rb["token"]
    call(svc, "traffic", job=rb["job"], phase=1, pairs=db, client="B")
    call(svc, "phase", job=rb["job"], rank=0, phase=1, client="B")
    assert installed(svc, rb["job"])
    svc.connection_closed(client_of(svc, "B"))            # the owner's connection closed
    assert installed(svc, rb["job"]) == {} and installed(svc, a) == flows_a
    assert [j["job"] for j in svc.jobs_json()] == [a]


def test_replan_routes_traffic_phases_off_a_failed_link(service):
    job = register(service)
    demand = shift(IPS, 2)
    call(service, "traffic", job=job, phase=0, pairs=demand, planner="sdn-optimal")
    leaf, uplink = 0x201, 3  # leaf 1's uplink to spine 1
    assert (leaf, uplink) in {(d, p) for (d, _s, _t), p in installed(service, job).items()}
    service.core.topology.port_down(leaf, uplink)
    service.replan()
    after = installed(service, job)
    assert (leaf, uplink) not in {(d, p) for (d, _s, _t), p in after.items()}
    assert_follows_plan(service, job, 0, demand)
    batches = len(service.switches.batches)
    service.replan()
    assert len(service.switches.batches) == batches


class Stat:
    def __init__(self, port_no, rx_bytes):
        self.port_no, self.rx_bytes = port_no, rx_bytes
        self.rx_packets = self.tx_packets = self.tx_bytes = 0
        self.rx_dropped = self.tx_dropped = self.rx_errors = self.tx_errors = 0


def test_idle_hosts_lose_the_traffic_routes_until_the_next_phase_entry():
    svc = make_service(idle_watch=jobidle.IdleWatch(threshold_bps=8000, quiet_s=2.0))
    job = register(svc)
    call(svc, "traffic", job=job, phase=0, pairs=perm(IPS, 3))
    call(svc, "traffic", job=job, phase=1, pairs=shift(IPS, 2))
    call(svc, "phase", job=job, rank=0, phase=1)
    flows = installed(svc, job)
    topo = svc.core.topology

    def poll(now, rx):
        for ip in IPS:
            host = topo.host_by_ip(ip)
            svc.core.port_stats.update(host.dpid, [Stat(host.port, rx)], now)
        svc.watch_idle(now)

    poll(0.0, 0)
    poll(1.0, 10_000)            # 80 kbit/s per host: busy
    poll(2.0, 10_000)            # quiet since 2.0
    assert installed(svc, job) == flows
    poll(4.0, 10_000)
    assert installed(svc, job) == {} and svc.stats_json()["idle_releases"] == 1
    r = call(svc, "phase", job=job, rank=3, phase=1)
    assert r["installed"] is True and installed(svc, job) == flows
    svc_off = make_service()     # no IdleWatch: nothing happens
    svc_off.watch_idle(10.0)


def test_schema_limits_match_the_spec():
    assert schema.MAX_PHASE == 64 and schema.MAX_PAIRS == 65536
    assert schema.DEFAULT_TRAFFIC_PLANNER == "sdn-adaptive"
