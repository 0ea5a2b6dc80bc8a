"""What the RPC tests share: a fake core over a synthetic fabric, switches that apply the job flows,
and request helpers (a test's requests naming a job it registered carry the job's token)."""
import ipaddress
import struct

import msgpack

from sdnmpi.controller import options, rpc, rpc_schema as schema
from sdnmpi.controller.portstats import PortStats
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
        self.port_stats = PortStats()
        self.settings = options.Settings()
        self.routing = self.settings.default_routing   # as Core: the default routing's name
        self.routes = {}            # no default routes: no job flow is ever elided


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


def client_of(service, name):
    """The rpc.Client called ``name`` of this service (created on first use, on host IPS[0])."""
    clients = service.__dict__.setdefault("test_clients", {})
    return clients.setdefault(name, rpc.Client(peer=ipaddress.ip_address(IPS[0])))


def reply(service, body, client="conn"):
    framed = service.reply_for(body, client_of(service, client))
    (length,) = struct.unpack("!I", framed[:4])
    assert length == len(framed) - 4
    return msgpack.unpackb(framed[4:])


def call(service, op, req_id=1, client="conn", **fields):
    """The reply to one request; a request naming a job this test registered carries its token."""
    tokens = service.__dict__.setdefault("test_tokens", {})
    if "job" in fields and "token" not in fields and fields["job"] in tokens:
        fields["token"] = tokens[fields["job"]]
    r = reply(service, request(op, req_id=req_id, **fields), client)
    if op == "register" and r["status"] == "ok":
        tokens[r["job"]] = r["token"]
    return r


def steps_for(ranks):
    return [[[s, d, c] for (s, d), c in step]
            for step in schedule.host_steps(schedule.recursive_doubling_steps(len(ranks)), ranks)]


def exchange(sock, body):
    """Sends one framed request, returns the decoded reply (None if the connection closed)."""
    sock.sendall(schema.frame(body))
    header = recv_all(sock, 4)
    if header is None:
        return None
    return msgpack.unpackb(recv_all(sock, struct.unpack("!I", header)[0]))


def recv_all(sock, n):
    """n bytes from sock, or None when the peer closed first."""
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data
