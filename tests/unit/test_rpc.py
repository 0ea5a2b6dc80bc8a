"""The RPC service: schema validation (fuzzed), jobs, plans, caching, release, isolation."""
import random
import socket
import struct
import threading

import msgpack
import pytest

from sdnmpi.controller import constants as C
from sdnmpi.controller import rpc, rpc_schema as schema
from sdnmpi.controller.topology import Topology
from sdnmpi.primitives import fabric, fattree, schedule


class FakeDatapath:
    def __init__(self, dpid):
        from ryu.ofproto import ofproto_v1_3, ofproto_v1_3_parser
        self.id, self.ofproto, self.ofproto_parser = dpid, ofproto_v1_3, ofproto_v1_3_parser


class FakeCore:
    """What RpcService uses of Core: the topology and the connected datapaths."""

    def __init__(self, graph):
        self.topology = Topology()
        for dpid in fabric.switches(graph):
            ports = {graph.edges[dpid, n]["ports"][dpid]: "00:00:00:00:00:00" for n in graph.neighbors(dpid)}
            self.topology.add_switch(dpid, ports)
        for u, v, data in graph.edges(data=True):
            if len(data["ports"]) == 2:
                self.topology.saw_probe((u, data["ports"][u]), (v, data["ports"][v]), 0.0)
                self.topology.saw_probe((v, data["ports"][v]), (u, data["ports"][u]), 0.0)
        for mac in fabric.hosts(graph):
            dpid, port = fabric.attachment(graph, mac)
            self.topology.learn_host(mac, graph.nodes[mac]["ip"], dpid, port, "lldp", 0.0)
        self.datapaths = {d: FakeDatapath(d) for d in fabric.switches(graph)}


class Switches:
    """Records confirmed messages and applies job flows to per-switch tables."""

    def __init__(self, fail=False):
        self.fail, self.batches, self.tables, self.groups = fail, [], {}, {}

    def confirm(self, msgs):
        if self.fail:
            raise rpc.ConfirmError("no barrier reply")
        self.batches.append(msgs)
        for msg in msgs:
            table = self.tables.setdefault(msg.datapath.id, {})
            groups = self.groups.setdefault(msg.datapath.id, {})
            ofp = msg.datapath.ofproto
            if isinstance(msg, msg.datapath.ofproto_parser.OFPGroupMod):
                if msg.command == ofp.OFPGC_ADD:
                    assert msg.group_id not in groups, "duplicate group"
                if msg.command in (ofp.OFPGC_ADD, ofp.OFPGC_MODIFY):
                    groups[msg.group_id] = (msg.type, [b.actions[0].port for b in msg.buckets])
                else:
                    groups.pop(msg.group_id, None)
                    for key in [k for k, v in table.items() if v[1] == ("group", msg.group_id)]:
                        del table[key]
                continue
            if "udp_dst" in msg.match:  # a multicast tree flow
                key = (msg.priority, msg.match["ipv4_src"], msg.match["ipv4_dst"])
                if msg.command == ofp.OFPFC_ADD:
                    gid = msg.instructions[0].actions[0].group_id
                    assert gid in groups, "flow points at a missing group"
                    table[key] = (msg.cookie, ("group", gid))
                else:
                    table.pop(key, None)
                continue
            if msg.command == ofp.OFPFC_ADD:
                key = (msg.priority, msg.match["ipv4_src"], msg.match["ipv4_dst"])
                table[key] = (msg.cookie, msg.instructions[0].actions[0].port)
            elif msg.command == ofp.OFPFC_DELETE_STRICT:
                key = (msg.priority, msg.match["ipv4_src"], msg.match["ipv4_dst"])
                if table.get(key, (None,))[0] == msg.cookie:
                    del table[key]
            elif msg.command == ofp.OFPFC_DELETE:
                for key in [k for k, v in table.items() if v[0] & msg.cookie_mask == msg.cookie & msg.cookie_mask]:
                    del table[key]

    def job_flows(self, cookie):
        return {(d, k[1], k[2]): v[1] for d, t in self.tables.items() for k, v in t.items() if v[0] == cookie}


GRAPH = fattree.leaf_spine(2, 4, 2)
IPS = [GRAPH.nodes[m]["ip"] for m in fabric.hosts(GRAPH)]


def request(op, req_id=1, **fields):
    return msgpack.packb(dict(v=1, id=req_id, op=op, **fields))


def reply(service, body, owner="conn"):
    framed = service.reply_for(body, owner)
    (length,) = struct.unpack("!I", framed[:4])
    assert length == len(framed) - 4
    return msgpack.unpackb(framed[4:])


def steps_for(ranks):
    return [[[s, d, c] for (s, d), c in step]
            for step in schedule.host_steps(schedule.recursive_doubling_steps(len(ranks)), ranks)]


@pytest.fixture
def service():
    switches = Switches()
    svc = rpc.RpcService(FakeCore(GRAPH), switches.confirm)
    svc.switches = switches
    return svc


def register(service, owner="conn", hosts=IPS):
    r = reply(service, request("register", hosts=hosts), owner)
    assert r["status"] == "ok", r
    return r["job"]


def test_register_plan_release(service):
    job = register(service)
    ranks = IPS[:]
    random.Random(1).shuffle(ranks)
    r = reply(service, request("plan_allreduce", req_id=7, job=job, comm=0, steps=steps_for(ranks)))
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
    r2 = reply(service, request("plan_allreduce", job=job, comm=0, steps=steps_for(ranks)))
    assert r2["cached"] and len(service.switches.batches) == batches
    assert reply(service, request("release", job=job))["status"] == "ok"
    assert service.switches.job_flows(cookie) == {}
    assert reply(service, request("release", job=job))["error"] == "unknown job %d" % job


def test_locate_gives_each_hosts_leaf(service):
    job = register(service)
    hosts = IPS[:5] + ["10.99.0.1", IPS[0]]
    r = reply(service, request("locate", req_id=3, job=job, hosts=hosts))
    assert r["status"] == "ok" and r["id"] == 3
    topo = service.core.topology
    assert r["locality"] == [topo.host_by_ip(ip).dpid for ip in IPS[:5]] + [-1, topo.host_by_ip(IPS[0]).dpid]
    assert len(set(r["locality"][:5])) > 1                   # the hosts sit on several leaves
    assert reply(service, request("locate", job=job + 1, hosts=IPS))["error"] == "unknown job %d" % (job + 1)
    assert "hosts must be a list" in reply(service, request("locate", job=job, hosts=[]))["error"]


def test_jobs_never_touch_each_others_flows(service):
    a, b = register(service, "A"), register(service, "B")
    for job, owner in ((a, "A"), (b, "B")):
        assert reply(service, request("plan_allreduce", job=job, comm=0, steps=steps_for(IPS)), owner)["status"] == "ok"
    flows_b = service.switches.job_flows(C.COOKIE_JOB | b)
    assert flows_b and service.switches.job_flows(C.COOKIE_JOB | a)
    service.connection_closed("A")  # A's client went away
    assert service.switches.job_flows(C.COOKIE_JOB | a) == {}
    assert service.switches.job_flows(C.COOKIE_JOB | b) == flows_b
    assert [j["job"] for j in service.jobs_json()] == [b]


def test_lease_expiry_releases_the_job():
    now = [100.0]
    switches = Switches()
    svc = rpc.RpcService(FakeCore(GRAPH), switches.confirm, clock=lambda: now[0])
    job = reply(svc, request("register", hosts=IPS, lease_s=10))["job"]
    reply(svc, request("plan_allreduce", job=job, comm=0, steps=steps_for(IPS)))
    now[0] += 9
    svc.expire()
    assert svc.jobs.jobs
    reply(svc, request("plan_allreduce", job=job, comm=0, steps=steps_for(IPS)))  # renews the lease
    now[0] += 9
    svc.expire()
    assert svc.jobs.jobs
    now[0] += 11
    svc.expire()
    assert not svc.jobs.jobs and switches.job_flows(C.COOKIE_JOB | job) == {}


def test_unconfirmed_install_is_an_error_and_leaves_no_plan():
    svc = rpc.RpcService(FakeCore(GRAPH), Switches(fail=True).confirm)
    job = register(svc)
    r = reply(svc, request("plan_allreduce", job=job, comm=0, steps=steps_for(IPS)))
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
    register(service)
    msg = {"v": 1, "id": 5}
    msg.update(fields)
    r = reply(service, msgpack.packb(msg))
    assert r["status"] == "error" and reason in r["error"], r
    assert r["id"] == 5


def test_fuzzed_requests_never_crash_the_service(service):
    rng = random.Random(1234)
    job = register(service)
    valid = [request("hello"), request("register", hosts=IPS[:3]),
             request("plan_allreduce", job=job, comm=1, steps=steps_for(IPS[:4])), request("release", job=99)]
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
    assert reply(service, request("hello"))["status"] == "ok"


def test_serve_connection_over_a_socket(service):
    server, client = socket.socketpair()
    thread = threading.Thread(target=rpc.serve_connection, args=(service, server, "test"))
    thread.start()

    def call(body):
        client.sendall(schema.frame(body))
        (length,) = struct.unpack("!I", client.recv(4))
        data = b""
        while len(data) < length:
            data += client.recv(length - len(data))
        return msgpack.unpackb(data)

    assert call(request("hello"))["status"] == "ok"
    assert call(b"\xc1garbage")["error"].startswith("malformed msgpack")  # connection stays usable
    job = call(request("register", hosts=IPS))["job"]
    assert call(request("plan_allreduce", job=job, comm=0, steps=steps_for(IPS)))["status"] == "ok"
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
    assert reply(service, request("plan_allreduce", job=job, comm=0, steps=steps_for(ranks)))["status"] == "ok"
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
    reply(service, request("plan_allreduce", job=job, comm=3, steps=steps_for(IPS)))
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
    r = reply(service, request("plan_bcast", job=job, comm=0, root=IPS[2], members=members))
    assert r["status"] == "ok", r
    assert r["group"].startswith("239.77.") and r["port"] > 0 and r["top"] and not r["cached"]
    assert bcast_walk(service, service.switches, IPS[2], r["group"]) == {ip: 1 for ip in IPS if ip != IPS[2]}
    again = reply(service, request("plan_bcast", job=job, comm=0, root=IPS[2], members=members))
    assert again["cached"] and again["group"] == r["group"]
    other = reply(service, request("plan_bcast", job=job, comm=0, root=IPS[5], members=members))
    assert other["group"] != r["group"] and other["top"] != r["top"]  # second tree on the other spine
    assert reply(service, request("release", job=job))["status"] == "ok"
    assert all(not t for t in service.switches.tables.values())
    assert all(not g for g in service.switches.groups.values())


def test_plan_bcast_validation(service):
    job = register(service)
    for fields, reason in (({"root": IPS[0], "members": IPS[1:]}, "not among the members"),
                           ({"root": "10.9.9.9", "members": ["10.9.9.9", IPS[0]]}, "not in the topology"),
                           ({"root": IPS[0], "members": []}, "members must be"),
                           ({"root": 5, "members": IPS}, "root is not a string")):
        r = reply(service, request("plan_bcast", job=job, comm=0, **fields))
        assert r["status"] == "error" and reason in r["error"], r


def test_bcast_tree_moves_off_a_failed_spine_link(service):
    job = register(service)
    r = reply(service, request("plan_bcast", job=job, comm=0, root=IPS[0], members=IPS))
    top = int(r["top"], 16)
    leaf = 0x203
    port = next(p for (d, p), end in service.core.topology.links.items() if d == leaf and end.dpid == top)
    service.core.topology.port_down(leaf, port)
    service.replan()
    assert bcast_walk(service, service.switches, IPS[0], r["group"]) == {ip: 1 for ip in IPS[1:]}
    assert service.jobs_json()[0]["trees"][0]["top"] != r["top"]


def test_a_reconnecting_switch_gets_every_jobs_routes_and_trees_back(service):
    job = register(service)
    reply(service, request("plan_allreduce", job=job, comm=0, steps=steps_for(IPS)))
    tree = reply(service, request("plan_bcast", job=job, comm=0, root=IPS[0], members=IPS))
    cookie = C.COOKIE_JOB | job
    before = service.switches.job_flows(cookie)
    leaf = 0x201
    assert any(d == leaf for d, _s, _t in before)
    service.switches.tables[leaf], service.switches.groups[leaf] = {}, {}   # the switch came back empty
    service.switches.confirm(service.switch_reset(leaf))
    assert service.switches.job_flows(cookie) == before
    assert bcast_walk(service, service.switches, IPS[0], tree["group"]) == {ip: 1 for ip in IPS[1:]}
    assert service.switch_reset(0xDEAD) == []
