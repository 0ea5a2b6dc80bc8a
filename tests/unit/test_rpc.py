"""The RPC service: schema validation (fuzzed), jobs, plans, caching, release, isolation."""
import random
import socket
import struct
import threading

import msgpack
import pytest

from sdnmpi.controller import constants as C
from sdnmpi.controller import rpc, rpc_schema as schema

from rpc_helpers import GRAPH, IPS, FakeCore, Switches, call, client_of, exchange, reply, request, steps_for


@pytest.fixture
def service():
    switches = Switches()
    svc = rpc.RpcService(FakeCore(GRAPH), switches.confirm)
    svc.switches = switches
    return svc


def register(service, owner="conn", hosts=IPS):
    r = call(service, "register", hosts=hosts, client=owner)
    assert r["status"] == "ok", r
    return r["job"]


def test_register_plan_release(service):
    job = register(service)
    ranks = IPS[:]
    random.Random(1).shuffle(ranks)
    r = call(service, "plan_allreduce", req_id=7, job=job, comm=0, steps=steps_for(ranks))
    assert r["status"] == "ok" and r["id"] == 7 and r["error"] == ""
    assert r["max_load"] == r["lower_bound"] and r["flows"] > 0 and not r["cached"]
    assert set(r["timings"]) >= {"plan_s", "install_s", "total_s"}
    cookie = C.COOKIE_JOB | job
    installed = service.switches.job_flows(cookie)
    assert len(installed) == r["flows"]
    # Every inter-leaf pair of the schedule has a complete path of job flows to its host port.
    topo = service.core.topology
    for step in steps_for(ranks):
        for src, dst, _count in step:
            dpid = topo.host_by_ip(src).dpid
            target = topo.host_by_ip(dst)
            if dpid == target.dpid:
                continue
            for _hop in range(4):
                port = installed[(dpid, src, dst)]
                if (dpid, port) == (target.dpid, target.port):
                    break
                peer = topo.links[(dpid, port)]
                dpid = peer.dpid
            else:
                pytest.fail("no path %s -> %s" % (src, dst))
    # Same plan again: answered from the cache, switches untouched.
    batches = len(service.switches.batches)
    r2 = call(service, "plan_allreduce", job=job, comm=0, steps=steps_for(ranks))
    assert r2["cached"] and len(service.switches.batches) == batches
    assert call(service, "release", job=job)["status"] == "ok"
    assert service.switches.job_flows(cookie) == {}
    assert call(service, "release", job=job)["error"] == "unknown job %d" % job


def test_a_steps_pairs_are_a_multiset(service):
    """docs/rpc.md: a step's pairs listed in another order, or a pair listed twice with its count
    split, are the same plan (answered from the cache, switches untouched); a pair's count is part
    of it (a larger count is a new plan)."""
    job = register(service)
    a, b, c, d = IPS[0], IPS[-1], IPS[1], IPS[-2]
    first = call(service, "plan_allreduce", job=job, comm=0, steps=[[[a, b, 2], [c, d, 1]], [[b, a, 1]]])
    assert first["status"] == "ok" and not first["cached"]
    batches = len(service.switches.batches)
    same = call(service, "plan_allreduce", job=job, comm=0, steps=[[[c, d, 1], [a, b, 1], [a, b, 1]], [[b, a, 1]]])
    assert same["status"] == "ok" and same["cached"] and len(service.switches.batches) == batches
    more = call(service, "plan_allreduce", job=job, comm=0, steps=[[[c, d, 1], [a, b, 2], [a, b, 1]], [[b, a, 1]]])
    assert more["status"] == "ok" and not more["cached"]


def test_locate_gives_each_hosts_leaf(service):
    job = register(service)
    hosts = IPS[:5] + ["10.99.0.1", IPS[0]]
    r = call(service, "locate", req_id=3, job=job, hosts=hosts)
    assert r["status"] == "ok" and r["id"] == 3
    topo = service.core.topology
    assert r["locality"] == [topo.host_by_ip(ip).dpid for ip in IPS[:5]] + [-1, topo.host_by_ip(IPS[0]).dpid]
    assert len(set(r["locality"][:5])) > 1                   # the hosts sit on several leaves
    assert call(service, "locate", job=job + 1, hosts=IPS)["error"] == "unknown job %d" % (job + 1)
    assert "hosts must be a list" in call(service, "locate", job=job, hosts=[])["error"]


def test_register_reply_names_the_server_and_each_hosts_leaf(service):
    """Issue 17: register answers what hello and locate would, so that a client starts in one
    round trip; the same values as theirs."""
    hosts = IPS[3:] + IPS[:3] + [IPS[0]]
    r = call(service, "register", hosts=hosts, client="conn")
    assert r["status"] == "ok"
    assert r["server"] == call(service, "hello")["server"]
    located = call(service, "locate", job=r["job"], hosts=hosts)["locality"]
    topo = service.core.topology
    assert r["locality"] == located == [topo.host_by_ip(ip).dpid for ip in hosts]
    assert len(set(r["locality"])) > 1


def test_jobs_never_touch_each_others_flows(service):
    a, b = register(service, "A"), register(service, "B")
    for job, owner in ((a, "A"), (b, "B")):
        assert call(service, "plan_allreduce", job=job, comm=0, steps=steps_for(IPS), client=owner)["status"] == "ok"
    flows_b = service.switches.job_flows(C.COOKIE_JOB | b)
    assert flows_b and service.switches.job_flows(C.COOKIE_JOB | a)
    service.connection_closed(client_of(service, "A"))  # A's client went away
    assert service.switches.job_flows(C.COOKIE_JOB | a) == {}
    assert service.switches.job_flows(C.COOKIE_JOB | b) == flows_b
    assert [j["job"] for j in service.jobs_json()] == [b]


def test_lease_expiry_releases_the_job():
    now = [100.0]
    switches = Switches()
    svc = rpc.RpcService(FakeCore(GRAPH), switches.confirm, clock=lambda: now[0])
    job = call(svc, "register", hosts=IPS, lease_s=10)["job"]
    call(svc, "plan_allreduce", job=job, comm=0, steps=steps_for(IPS))
    now[0] += 9
    svc.expire()
    assert svc.jobs.jobs
    call(svc, "plan_allreduce", job=job, comm=0, steps=steps_for(IPS))  # renews the lease
    now[0] += 9
    svc.expire()
    assert svc.jobs.jobs
    now[0] += 11
    svc.expire()
    assert not svc.jobs.jobs and switches.job_flows(C.COOKIE_JOB | job) == {}


def test_unconfirmed_install_is_an_error_and_leaves_no_plan():
    svc = rpc.RpcService(FakeCore(GRAPH), Switches(fail=True).confirm)
    job = register(svc)
    r = call(svc, "plan_allreduce", job=job, comm=0, steps=steps_for(IPS))
    assert r["status"] == "error" and "did not confirm" in r["error"]
    assert svc.jobs.jobs[job].plans == {}


@pytest.mark.parametrize("fields,reason", [
    ({"op": "register", "hosts": []}, "hosts must be"),
    ({"op": "register", "hosts": ["10.0.0.1", "nope"]}, "not an IPv4"),
    ({"op": "register", "hosts": ["10.0.0.1"], "lease_s": 0}, "lease_s"),
    ({"op": "plan_allreduce", "job": 1, "comm": 0, "steps": [[["10.0.0.1", "10.0.0.9", 1]]]}, "not in the topology"),
    ({"op": "plan_allreduce", "job": 12345, "comm": 0, "steps": []}, "unknown job"),
    ({"op": "plan_allreduce", "job": 1, "comm": -1, "steps": []}, "comm"),
    ({"op": "plan_allreduce", "job": 1, "comm": 0, "steps": [[["10.0.0.1", "10.0.0.1", 1]]]}, "src == dst"),
    ({"op": "plan_allreduce", "job": 1, "comm": 0, "steps": [[["10.0.0.1", "10.0.0.2", 0]]]}, "count"),
    ({"op": "plan_allreduce", "job": 1, "comm": 0, "steps": [[["10.0.0.1", "10.0.0.2"]]]}, "a pair must be"),
    ({"op": "plan_allreduce", "job": 1, "comm": 0, "planner": "magic", "steps": []}, "unknown planner"),
    ({"op": "plan_allreduce", "job": 1, "comm": 0, "steps": [[]] * 65}, "at most 64"),
    ({"op": "release"}, "job id"),
    ({"op": "launch_missiles"}, "unknown op"),
    ({"op": "hello", "v": 2}, "unsupported protocol version"),
])
def test_invalid_requests_get_clear_errors(service, fields, reason):
    job = register(service)
    msg = {"v": 1, "id": 5}
    msg.update(fields)
    if msg.get("job") == 1:   # stands for the registered job
        msg.update(job=job, token=service.test_tokens[job])
    r = reply(service, msgpack.packb(msg))
    assert r["status"] == "error" and reason in r["error"], r
    assert r["id"] == 5


def test_fuzzed_requests_never_crash_the_service(service):
    rng = random.Random(1234)
    job = register(service)
    token = service.test_tokens[job]
    valid = [request("hello"), request("register", hosts=IPS[:3]),
             request("plan_allreduce", job=job, token=token, comm=1, steps=steps_for(IPS[:4])),
             request("release", job=99, token=token)]
    atoms = [None, True, -1, 0, 1, 2 ** 63, 1.5, "", "x" * 300, b"\x00\xff", [], {}, "10.0.0.1", "plan_allreduce",
             [["10.0.0.1", "10.0.0.2", 1]], [[["10.0.0.1", "10.0.0.2", "1"]]], {"a": {"b": [1]}}]
    for i in range(5000):
        kind = i % 4
        if kind == 0:
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
        elif kind == 1:
            body = bytearray(rng.choice(valid))
            for _ in range(rng.randrange(1, 4)):
                body[rng.randrange(len(body))] = rng.randrange(256)
            body = bytes(body)
        elif kind == 2:
            base = rng.choice(valid)
            body = base[:rng.randrange(1, len(base))]
        else:
            msg = {rng.choice(["v", "id", "op", "job", "comm", "steps", "hosts", "planner", "lease_s"]): rng.choice(atoms)
                   for _ in range(rng.randrange(0, 8))}
            msg.setdefault("v", 1)
            msg.setdefault("id", i)
            msg.setdefault("op", rng.choice(["hello", "register", "plan_allreduce", "release", "?"]))
            body = msgpack.packb(msg)
        r = reply(service, body)
        assert r["status"] in ("ok", "error")
        assert r["status"] == "ok" or r["error"]
    assert call(service, "hello")["status"] == "ok"


def test_serve_connection_over_a_socket(service):
    server, client = socket.socketpair()
    thread = threading.Thread(target=rpc.serve_connection, args=(service, server, (IPS[3], 40000)))
    thread.start()
    assert exchange(client, request("hello"))["status"] == "ok"
    assert exchange(client, b"\xc1garbage")["error"].startswith("malformed msgpack")  # connection stays usable
    r = exchange(client, request("register", hosts=IPS))
    job, token = r["job"], r["token"]
    assert exchange(client, request("plan_allreduce", job=job, token=token, comm=0,
                                    steps=steps_for(IPS)))["status"] == "ok"
    client.sendall(struct.pack("!I", schema.MAX_FRAME + 1))  # cannot resync: error, then closed
    (length,) = struct.unpack("!I", client.recv(4))
    assert msgpack.unpackb(client.recv(length))["error"] == "oversized request"
    assert client.recv(4) == b""
    thread.join(5)
    assert not thread.is_alive()
    assert service.jobs.jobs == {}  # the owner's connection closed: job released
    assert service.switches.job_flows(C.COOKIE_JOB | job) == {}
    client.close()


def test_replan_moves_job_routes_off_a_failed_link(service):
    job = register(service)
    ranks = IPS[:]
    random.Random(2).shuffle(ranks)
    assert call(service, "plan_allreduce", job=job, comm=0, steps=steps_for(ranks))["status"] == "ok"
    cookie = C.COOKIE_JOB | job
    before = service.switches.job_flows(cookie)
    leaf, uplink = 0x201, 3  # leaf 1's uplink to spine 1
    assert (leaf, uplink) in {(d, p) for (d, _s, _t), p in before.items()}
    service.core.topology.port_down(leaf, uplink)
    service.replan()
    after = service.switches.job_flows(cookie)
    assert (leaf, uplink) not in {(d, p) for (d, _s, _t), p in after.items()}
    assert not any(d == 0x101 and p == 1 for (d, _s, _t), p in after.items())  # spine 1 -> leaf 1
    # Unchanged topology: re-planning sends nothing.
    batches = len(service.switches.batches)
    service.replan()
    assert len(service.switches.batches) == batches


def test_replan_drops_a_plan_whose_host_left(service):
    job = register(service)
    call(service, "plan_allreduce", job=job, comm=3, steps=steps_for(IPS))
    host = service.core.topology.host_by_ip(IPS[0])
    service.core.topology.remove_host(host.mac, "test")
    service.replan()
    assert service.jobs.jobs[job].plans == {}
    assert service.switches.job_flows(C.COOKIE_JOB | job) == {}


def bcast_walk(service, switches, root_ip, group_ip):
    """Hosts that receive a datagram the root sends to group_ip, with copy counts."""
    topo = service.core.topology
    root = topo.host_by_ip(root_ip)
    got, frontier, seen = {}, [root.dpid], set()
    while frontier:
        dpid = frontier.pop()
        assert dpid not in seen
        seen.add(dpid)
        entry = switches.tables.get(dpid, {}).get((C.PRIORITY_JOB_MULTICAST, root_ip, group_ip))
        if entry is None:
            continue
        gtype, ports = switches.groups[dpid][entry[1][1]]
        assert gtype == 0  # OFPGT_ALL
        for port in ports:
            if (dpid, port) in topo.links:
                frontier.append(topo.links[(dpid, port)].dpid)
            else:
                host = next(h for h in topo.hosts.values() if (h.dpid, h.port) == (dpid, port))
                got[host.ip] = got.get(host.ip, 0) + 1
    return got


def test_plan_bcast_installs_a_tree_reaching_every_member_once(service):
    job = register(service)
    members = IPS + IPS[:3]  # several ranks per host
    r = call(service, "plan_bcast", job=job, comm=0, root=IPS[2], members=members)
    assert r["status"] == "ok", r
    assert r["group"].startswith("239.77.") and r["port"] > 0 and r["top"] and not r["cached"]
    assert bcast_walk(service, service.switches, IPS[2], r["group"]) == {ip: 1 for ip in IPS if ip != IPS[2]}
    again = call(service, "plan_bcast", job=job, comm=0, root=IPS[2], members=members)
    assert again["cached"] and again["group"] == r["group"]
    other = call(service, "plan_bcast", job=job, comm=0, root=IPS[5], members=members)
    assert other["group"] != r["group"] and other["top"] != r["top"]  # second tree on the other spine
    assert call(service, "release", job=job)["status"] == "ok"
    assert all(not t for t in service.switches.tables.values())
    assert all(not g for g in service.switches.groups.values())


def test_plan_bcast_validation(service):
    job = register(service)
    for fields, reason in (({"root": IPS[0], "members": IPS[1:]}, "not among the members"),
                           ({"root": "10.9.9.9", "members": ["10.9.9.9", IPS[0]]}, "not in the topology"),
                           ({"root": IPS[0], "members": []}, "members must be"),
                           ({"root": 5, "members": IPS}, "root is not a string")):
        r = call(service, "plan_bcast", job=job, comm=0, **fields)
        assert r["status"] == "error" and reason in r["error"], r


def test_bcast_tree_moves_off_a_failed_spine_link(service):
    job = register(service)
    r = call(service, "plan_bcast", job=job, comm=0, root=IPS[0], members=IPS)
    top = int(r["top"], 16)
    leaf = 0x203
    port = next(p for (d, p), end in service.core.topology.links.items() if d == leaf and end.dpid == top)
    service.core.topology.port_down(leaf, port)
    service.replan()
    assert bcast_walk(service, service.switches, IPS[0], r["group"]) == {ip: 1 for ip in IPS[1:]}
    assert service.jobs_json()[0]["trees"][0]["top"] != r["top"]


def test_a_reconnecting_switch_gets_every_jobs_routes_and_trees_back(service):
    job = register(service)
    call(service, "plan_allreduce", job=job, comm=0, steps=steps_for(IPS))
    tree = call(service, "plan_bcast", job=job, comm=0, root=IPS[0], members=IPS)
    cookie = C.COOKIE_JOB | job
    before = service.switches.job_flows(cookie)
    leaf = 0x201
    assert any(d == leaf for d, _s, _t in before)
    service.switches.tables[leaf], service.switches.groups[leaf] = {}, {}   # the switch came back empty
    service.switches.confirm(service.switch_reset(leaf))
    assert service.switches.job_flows(cookie) == before
    assert bcast_walk(service, service.switches, IPS[0], tree["group"]) == {ip: 1 for ip in IPS[1:]}
    assert service.switch_reset(0xDEAD) == []
