"""A simulated fabric for the unit tests: `FabricSim` wires `SwitchSim`s (switch_sim.py) and hosts
together like a synthetic fat-tree from primitives/fattree.py, hands packet-outs to the peer switch
or host, runs packets through the tables and gives the controller (a `Core`) its packet-ins --
exactly what a real fabric does with the controller's LLDP probes. Time is a plain number
(`FabricSim.now`); there is no sleeping anywhere."""
import collections
import ipaddress
import zlib

from ryu.ofproto import ofproto_v1_3 as OFP
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from sdnmpi.controller import constants as C
from sdnmpi.controller import options
from sdnmpi.controller.core import Core
from sdnmpi.primitives import fabric

from frame_builders import ip_int, ipv4_frame, lldp_host_frame, port_hw_addr
from switch_sim import FakeDatapath, SwitchError, SwitchSim, flow_actions, packet_fields

MAX_HOPS = 64


class FabricSim:
    """A synthetic fat-tree (primitives.fattree graph) of `SwitchSim`s and hosts, driving a `Core`."""

    def __init__(self, graph, routing="dmodk", **settings):
        self.graph = graph
        self.settings = options.Settings(default_routing=routing, **settings)
        self.core = Core(self.settings)
        self.now = 100.0
        self.ports = collections.defaultdict(dict)      # dpid -> {port: hw addr}
        self.peer = {}                                  # (dpid, port) -> (dpid, port), live links
        self.host_at = {}                               # (dpid, port) -> host mac
        self.host_port = {}                             # host mac -> (dpid, port)
        self.host_ip = {}
        self.host_name = {}
        for u, v, data in graph.edges(data=True):
            ends = data["ports"]
            for sw, port in ends.items():
                self.ports[sw][port] = port_hw_addr(sw, port)
            if len(ends) == 2:
                (a, pa), (b, pb) = ends.items()
                self.peer[(a, pa)] = (b, pb)
                self.peer[(b, pb)] = (a, pa)
            else:
                (sw, port), = ends.items()
                mac = u if u != sw else v
                self.host_at[(sw, port)] = mac
                self.host_port[mac] = (sw, port)
                self.host_ip[mac] = graph.nodes[mac].get("ip")
                self.host_name[mac] = graph.nodes[mac].get("name")
        self.switch_ids = fabric.switches(graph)
        self.dps = {d: FakeDatapath(d) for d in self.switch_ids}
        self.switches = {d: SwitchSim(d, self.ports[d]) for d in self.switch_ids}
        self.connected = set()
        self.inbox = collections.defaultdict(list)      # host mac -> frames it received
        self.to_controller = 0                          # packet-ins handed to the controller
        self.lost = []                                  # (dpid, port, frame) sent out of dead ports
        self._queue = collections.deque()

    # -- topology views --------------------------------------------------------------------------
    def hosts(self):
        """Host MACs in destination-index order (fabric.hosts)."""
        return fabric.hosts(self.graph)

    def mac_of_ip(self, ip):
        return next(m for m, i in self.host_ip.items() if i == ip)

    def edge_ports(self):
        return sorted(self.host_at)

    def fabric_ports(self):
        return sorted(self.peer)

    def links(self):
        """Live switch links, each once, smaller end first."""
        return sorted({tuple(sorted((a, b))) for a, b in self.peer.items()})

    # -- events ----------------------------------------------------------------------------------
    def run(self, msgs):
        """Sends the controller's messages and everything that follows from them (packet-ins of
        forwarded packets, the controller's answers, ...), until the network is quiet."""
        for msg in msgs:
            self._queue.append(("msg", msg))
        self._drain()
        return msgs

    def _drain(self):
        steps = 0
        while self._queue:
            steps += 1
            assert steps < 1_000_000, "the simulated network never went quiet"
            event = self._queue.popleft()
            if event[0] == "msg":
                self._send(event[1])
            else:
                self._arrive(*event[1:])

    def _send(self, msg):
        dpid = msg.datapath.id
        assert msg.datapath is self.dps[dpid], "message for a datapath this fabric does not own"
        self.dps[dpid].send_msg(msg)
        if dpid not in self.connected:
            raise SwitchError("message for switch %#x, which is not connected" % dpid)
        if isinstance(msg, PARSER.OFPPacketOut):
            assert msg.buffer_id == OFP.OFP_NO_BUFFER and msg.in_port == OFP.OFPP_CONTROLLER
            for kind, port in flow_actions(dpid, msg.actions):
                assert kind == "output", "packet-out with %s" % kind
                self._emit(dpid, port, bytes(msg.data), 0)
        else:
            self.switches[dpid].apply(msg)

    def _emit(self, dpid, port, data, hops):
        if (dpid, port) in self.peer:
            self._queue.append(("arrive", *self.peer[(dpid, port)], data, hops + 1))
        elif (dpid, port) in self.host_at:
            self.inbox[self.host_at[(dpid, port)]].append(data)
        else:
            self.lost.append((dpid, port, data))

    def _arrive(self, dpid, in_port, data, hops):
        if hops > MAX_HOPS:
            raise AssertionError("forwarding loop: frame still travelling after %d hops" % hops)
        if dpid not in self.connected:
            return  # a switch with no controller (fail-mode secure) forwards nothing
        sw = self.switches[dpid]
        flow = sw.lookup(packet_fields(data, in_port))
        if flow is None:
            return
        alternatives = sw.expand(flow.actions)
        ports = alternatives[zlib.crc32(data) % len(alternatives)]  # SELECT: a hash of the packet
        for port in ports:
            if port == OFP.OFPP_CONTROLLER:
                self.to_controller += 1
                for msg in self.core.packet_in(self.dps[dpid], in_port, data, self.now):
                    self._queue.append(("msg", msg))
            elif port == in_port:
                continue  # OpenFlow never sends a packet back out of its in_port (OFPP_IN_PORT does)
            else:
                self._emit(dpid, port, data, hops)

    def host_send(self, mac, frame):
        """Host ``mac`` puts ``frame`` on its wire."""
        dpid, port = self.host_port[mac]
        self._queue.append(("arrive", dpid, port, bytes(frame), 0))
        self._drain()

    # -- controller life cycle ---------------------------------------------------------------------
    def connect(self, dpid):
        self.connected.add(dpid)
        return self.run(self.core.switch_enter(self.dps[dpid], dict(self.ports[dpid])))

    def connect_all(self, order=None):
        for dpid in order or self.switch_ids:
            self.connect(dpid)

    def probe_round(self):
        return self.run(self.core.lldp_probes())

    def advertise(self, mac, ttl=120, ip=None, name=None):
        ip = self.host_ip[mac] if ip is None else ip
        name = self.host_name[mac] if name is None else name
        self.host_send(mac, lldp_host_frame(mac, ip, name, ttl=ttl))

    def advertise_all(self, ttl=120):
        for mac in self.hosts():
            self.advertise(mac, ttl=ttl)

    def recompute(self):
        return self.run(self.core.recompute_routes())

    def discover(self):
        """Switches connect, two rounds of LLDP probes, every host's LLDP agent speaks, routes."""
        self.connect_all()
        self.probe_round()
        self.probe_round()
        self.advertise_all()
        return self.recompute()

    def tick(self, seconds):
        """Time passes: one probe round and an expiry pass at the new time."""
        self.now += seconds
        self.probe_round()
        self.core.expire(self.now)

    def cut_link(self, a, b, notify=True):
        """Unplugs the cable between switches a and b (both ends report port-down if ``notify``)."""
        pa, pb = fabric.port_towards(self.graph, a, b), fabric.port_towards(self.graph, b, a)
        del self.peer[(a, pa)], self.peer[(b, pb)]
        if notify:
            for sw, port in ((a, pa), (b, pb)):
                self.run(self.core.port_status(self.dps[sw], port, self.ports[sw][port], False))
        return pa, pb

    def restore_link(self, a, b):
        pa, pb = fabric.port_towards(self.graph, a, b), fabric.port_towards(self.graph, b, a)
        self.peer[(a, pa)], self.peer[(b, pb)] = (b, pb), (a, pa)
        for sw, port in ((a, pa), (b, pb)):
            self.run(self.core.port_status(self.dps[sw], port, self.ports[sw][port], True))

    # -- tracing -----------------------------------------------------------------------------------
    def trace(self, src_mac, dst_ip):
        """Every way an IPv4 packet from host ``src_mac`` to ``dst_ip`` can go through the current
        flow tables (one per SELECT-group choice), without involving the controller.

        Returns [(outcome, hops)]: outcome ("host", mac), ("controller", dpid), ("drop", dpid) or
        ("lost", dpid, port); hops [(dpid, in_port, out_port), ...]."""
        dst_mac = next((m for m, i in self.host_ip.items() if i == dst_ip), "02:00:00:00:00:99")
        frame = ipv4_frame(src_mac, dst_mac, self.host_ip[src_mac], dst_ip)
        results = []

        def walk(dpid, in_port, hops):
            if len(hops) > MAX_HOPS:
                results.append((("loop", dpid), hops))
                return
            if dpid not in self.connected:
                results.append((("drop", dpid), hops))
                return
            sw = self.switches[dpid]
            flow = sw.lookup(packet_fields(frame, in_port))
            if flow is None or not flow.actions:
                results.append((("drop", dpid), hops))
                return
            for ports in dict.fromkeys(map(tuple, sw.expand(flow.actions))):   # a SELECT group's ports once each
                for port in ports:
                    hop = hops + [(dpid, in_port, port)]
                    if port == OFP.OFPP_CONTROLLER:
                        results.append((("controller", dpid), hop))
                    elif port == in_port:
                        results.append((("drop", dpid), hop))
                    elif (dpid, port) in self.peer:
                        walk(*self.peer[(dpid, port)], hop)
                    elif (dpid, port) in self.host_at:
                        results.append((("host", self.host_at[(dpid, port)]), hop))
                    else:
                        results.append((("lost", dpid, port), hop))

        walk(*self.host_port[src_mac], [])
        return results

    def job_entries(self, job):
        """{(dpid, src ip, dst ip): out port} of the flows with ``job``'s cookie on the switches,
        each checked to be a plain host-pair route at the job's priority."""
        out = {}
        for dpid, sw in self.switches.items():
            for flow in sw.flows.values():
                if flow.cookie != job.cookie:
                    continue
                fields = {name: val for name, val, _mask in flow.key}
                assert set(fields) == {"eth_type", "ipv4_src", "ipv4_dst"} and flow.priority == job.priority, flow
                (kind, port), = flow.actions
                assert kind == "output", flow
                ips = tuple(str(ipaddress.IPv4Address(fields[f])) for f in ("ipv4_src", "ipv4_dst"))
                out[(dpid,) + ips] = port
        return out

    def check_job_routes(self, job):
        """What the switches hold for ``job`` is exactly ``job.installed`` (a part of its planned
        hops, ``job.flows()``), and every planned hop sends the pair's packets out of its planned
        port: through a job flow where the hop is installed, through the switch's default route (a
        single port, no SELECT group) where it is elided (--sdnmpi-elide-default-hops). Then every
        planned pair's packets take exactly the plan's hops, end to end (one way, delivered).
        Returns the elided hops."""
        planned = job.flows()
        assert self.job_entries(job) == job.installed
        assert all(planned.get(key) == port for key, port in job.installed.items()), "installed, not planned"
        elided = {}
        for key, port in sorted(planned.items()):
            dpid, src, dst = key
            frame = ipv4_frame(self.mac_of_ip(src), self.mac_of_ip(dst), src, dst)
            sw = self.switches[dpid]
            flow = sw.lookup(packet_fields(frame, None))
            assert flow is not None and sw.expand(flow.actions) == [[port]], (key, port, flow)
            if key in job.installed:
                assert flow.cookie & C.COOKIE_KIND_MASK == C.COOKIE_JOB, (key, flow)
            else:
                assert (flow.cookie, flow.priority) == (C.COOKIE_ROUTE, C.PRIORITY_ROUTE), (key, flow)
                elided[key] = port
        by_pair = {}
        for (dpid, src, dst), port in planned.items():
            by_pair.setdefault((src, dst), {})[dpid] = port
        for (src, dst), hops in by_pair.items():
            ways = self.trace(self.mac_of_ip(src), dst)
            assert len(ways) == 1 and ways[0][0] == ("host", self.mac_of_ip(dst)), ways
            assert {dpid: out for dpid, _in, out in ways[0][1]} == hops, (src, dst, ways, hops)
        return elided

    def check_tables_consistent(self):
        """The controller's record of what it installed matches the switches, and no group is
        dangling (unreferenced) or missing."""
        for dpid in sorted(self.connected):
            sw = self.switches[dpid]
            installed = {ip_int(ip): tuple(sorted(ports)) for ip, ports in self.core.routes[dpid].flows.items()}
            assert sw.route_flows() == installed, "switch %#x: tables differ from the controller's record" % dpid
            assert set(sw.groups) == sw.referenced_groups(), "switch %#x: dangling groups" % dpid
            assert set(sw.groups) == set(self.core.routes[dpid].groups.values())
            for gid, (_gtype, buckets) in sw.groups.items():
                ports = tuple(dict.fromkeys(p for bucket in buckets for _, p in bucket))   # select_slots: ports first
                assert self.core.routes[dpid].groups[ports] == gid
