"""A fake OpenFlow 1.3 switch over TCP, for tests that drive the real ryu-manager without Mininet.

It does what the controller needs from a switch and nothing more: the handshake (hello, features,
port description), echo and barrier replies, packet-ins of frames a test injects on its ports
(e.g. hosts' LLDP or ARP), and cables: a packet-out on a port that `connect` joined to another
fake switch's port arrives there as a packet-in (so the controller's LLDP probes discover links).
Every message the controller sends is kept (type, xid, body) so a test can look at the flow-mods
it got. One thread reads; `packet_in` may be called from any.
"""
import itertools
import socket
import struct
import threading

from ryu.ofproto import ofproto_v1_3 as OFP

HEADER = struct.Struct("!BBHI")                  # version, type, length, xid
PORT = struct.Struct("!I4x6s2x16sIIIIIIII")       # ofp_port (64 bytes)
FLOW_MOD = struct.Struct("!QQBBHHHIIIH2x")        # ofp_flow_mod after the header
PACKET_OUT = struct.Struct("!IIH6x")              # ofp_packet_out after the header: buffer, in port, actions len
ACTION = struct.Struct("!HH")                     # type, length of one action
NO_BUFFER = 0xFFFFFFFF
OXM_NAMES = {OFP.OFPXMT_OFB_ETH_TYPE: "eth_type", OFP.OFPXMT_OFB_IP_PROTO: "ip_proto",
             OFP.OFPXMT_OFB_IPV4_SRC: "ipv4_src", OFP.OFPXMT_OFB_IPV4_DST: "ipv4_dst"}


def _port_mac(dpid, port):
    return bytes([0x0A, 0, (dpid >> 8) & 0xFF, dpid & 0xFF, 0, port & 0xFF])


class FakeSwitch:
    def __init__(self, dpid, nports, controller_port, host="127.0.0.1"):
        self.dpid, self.nports = dpid, nports
        self.sock = socket.create_connection((host, controller_port), timeout=30)
        self.sock.settimeout(None)
        self.lock = threading.Lock()
        self.received = []          # (type, xid, body) of every message from the controller
        self.main = threading.Event()
        self.closed = threading.Event()
        self.cables = {}            # port -> (peer FakeSwitch, peer port)
        self._xids = itertools.count(0x70000000)
        self._send(OFP.OFPT_HELLO, 1, b"")
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    # -- to the controller ---------------------------------------------------------------------
    def _send(self, msg_type, xid, body):
        with self.lock:
            self.sock.sendall(HEADER.pack(OFP.OFP_VERSION, msg_type, HEADER.size + len(body), xid) + body)

    def packet_in(self, port, frame):
        """``frame`` arrived on ``port``: hand it to the controller (reason no-match, table 0)."""
        oxm = struct.pack("!IIxxxx", (0x8000 << 16) | (OFP.OFPXMT_OFB_IN_PORT << 9) | 4, port)
        match = struct.pack("!HH", OFP.OFPMT_OXM, 4 + 8) + oxm       # 12 bytes, padded to 16
        body = struct.pack("!IHBBQ", NO_BUFFER, len(frame), OFP.OFPR_NO_MATCH, 0, 0) + match + b"\0\0" + frame
        self._send(OFP.OFPT_PACKET_IN, next(self._xids), body)

    def connect(self, port, peer, peer_port):
        """A cable between our ``port`` and ``peer``'s ``peer_port`` (both directions)."""
        self.cables[port] = (peer, peer_port)
        peer.cables[peer_port] = (self, port)

    def _ports(self):
        return b"".join(PORT.pack(p, _port_mac(self.dpid, p), b"p%d" % p, 0, 0, 0, 0, 0, 0, 10000000, 10000000)
                        for p in range(1, self.nports + 1))

    # -- from the controller -------------------------------------------------------------------
    def _recv(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def _read(self):
        try:
            while True:
                header = self._recv(HEADER.size)
                if header is None:
                    return
                _version, msg_type, length, xid = HEADER.unpack(header)
                body = self._recv(length - HEADER.size) if length > HEADER.size else b""
                if body is None:
                    return
                self.received.append((msg_type, xid, body))
                self._answer(msg_type, xid, body)
        except OSError:
            return
        finally:
            self.closed.set()

    def _answer(self, msg_type, xid, body):
        if msg_type == OFP.OFPT_ECHO_REQUEST:
            self._send(OFP.OFPT_ECHO_REPLY, xid, body)
        elif msg_type == OFP.OFPT_FEATURES_REQUEST:
            self._send(OFP.OFPT_FEATURES_REPLY, xid, struct.pack("!QIBB2xII", self.dpid, 0, 254, 0, 0x4F, 0))
        elif msg_type == OFP.OFPT_MULTIPART_REQUEST and struct.unpack("!H", body[:2])[0] == OFP.OFPMP_PORT_DESC:
            self._send(OFP.OFPT_MULTIPART_REPLY, xid, struct.pack("!HH4x", OFP.OFPMP_PORT_DESC, 0) + self._ports())
            self.main.set()
        elif msg_type == OFP.OFPT_BARRIER_REQUEST:
            self._send(OFP.OFPT_BARRIER_REPLY, xid, b"")
        elif msg_type == OFP.OFPT_PACKET_OUT:
            self._packet_out(body)

    def _packet_out(self, body):
        _buffer, _in_port, actions_len = PACKET_OUT.unpack_from(body)
        actions, frame = body[PACKET_OUT.size:PACKET_OUT.size + actions_len], body[PACKET_OUT.size + actions_len:]
        offset = 0
        while offset + ACTION.size <= len(actions):
            kind, length = ACTION.unpack_from(actions, offset)
            if kind == OFP.OFPAT_OUTPUT and length >= 8:
                (port,) = struct.unpack_from("!I", actions, offset + 4)
                if port in self.cables:
                    peer, peer_port = self.cables[port]
                    peer.packet_in(peer_port, frame)
            offset += max(length, 8)

    # -- for tests -----------------------------------------------------------------------------
    def flow_mods(self):
        """(cookie, command, priority) of every flow-mod received so far."""
        out = []
        for msg_type, _xid, body in list(self.received):
            if msg_type == OFP.OFPT_FLOW_MOD:
                cookie, _mask, _table, command, _idle, _hard, priority = FLOW_MOD.unpack(body[:FLOW_MOD.size])[:7]
                out.append((cookie, command, priority))
        return out

    def flow_mod_entries(self):
        """(cookie, command, priority, match, actions) of every flow-mod received so far: the match
        as {OXM field name: value} (IPv4 addresses as text, other fields as int), the apply-actions
        as a tuple of ("output", port) and ("group", id)."""
        out = []
        for msg_type, _xid, body in list(self.received):
            if msg_type != OFP.OFPT_FLOW_MOD:
                continue
            cookie, _mask, _table, command, _idle, _hard, priority = FLOW_MOD.unpack(body[:FLOW_MOD.size])[:7]
            _kind, length = struct.unpack_from("!HH", body, FLOW_MOD.size)
            match, offset = {}, FLOW_MOD.size + 4
            while offset < FLOW_MOD.size + length:
                (header,) = struct.unpack_from("!I", body, offset)
                field, size = (header >> 9) & 0x7F, header & 0xFF
                value = body[offset + 4:offset + 4 + size]
                name = OXM_NAMES.get(field, field)
                match[name] = socket.inet_ntoa(value) if name in ("ipv4_src", "ipv4_dst") else int.from_bytes(value, "big")
                offset += 4 + size
            offset = FLOW_MOD.size + (length + 7) // 8 * 8
            actions = []
            while offset + 4 <= len(body):
                kind, size = struct.unpack_from("!HH", body, offset)
                if kind == OFP.OFPIT_APPLY_ACTIONS:
                    at = offset + 8
                    while at < offset + size:
                        act, act_size = ACTION.unpack_from(body, at)
                        (arg,) = struct.unpack_from("!I", body, at + 4)
                        actions.append(("output" if act == OFP.OFPAT_OUTPUT else "group" if act == OFP.OFPAT_GROUP else act, arg))
                        at += act_size
                offset += max(size, 8)
            out.append((cookie, command, priority, match, tuple(actions)))
        return out

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.thread.join(10)
