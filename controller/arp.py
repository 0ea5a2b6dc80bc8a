"""ARP without flooding: the controller answers every request from its IP-to-MAC table.

For a target it does not know yet (a host that sent no LLDP and no traffic), it sends one ARP probe
(RFC 5227: sender IP 0.0.0.0, so no host caches anything from it) out of every *edge* port. The
host's reply comes back to the controller, which learns it; the requester's next retry is then
answered. Probes never enter the fabric's switch links, so no storm is possible. `ProbeBudget`
bounds how many: a host asking for thousands of made-up IPs gets a few probes a second.
"""
import collections
import dataclasses
import ipaddress
import logging

from ryu.lib.packet import arp, ethernet, packet

from . import constants as C

LOG = logging.getLogger(__name__)
ZERO_IP = "0.0.0.0"
ZERO_MAC = "00:00:00:00:00:00"
PROBE_HOLDOFF = 1.0     # seconds between probes for the same unknown IP, and the budget's window
# Probes per PROBE_HOLDOFF window. Only IPs nobody has sent from yet are probed (a host running
# sdnmpi-lldpd is known before it speaks), so a real requester needs at most one per silent peer,
# and a host that is told nothing retries its ARP a second later. One requesting port may cause
# PROBES_PER_PORT, all ports together PROBES_MAX (each probe is a packet-out per edge port).
PROBES_PER_PORT = 32
PROBES_MAX = 128
PROBE, PROBE_HELD, PROBE_LIMITED = "probe", "held", "limited"


class ArpError(ValueError):
    """Not an ARP packet we can use."""


@dataclasses.dataclass(frozen=True)
class Arp:
    opcode: int
    src_mac: str      # sender hardware address
    src_ip: str       # sender protocol address
    dst_mac: str      # target hardware address
    dst_ip: str       # target protocol address
    eth_src: str

    @property
    def is_request(self):
        return self.opcode == arp.ARP_REQUEST

    @property
    def is_gratuitous(self):
        return self.src_ip == self.dst_ip


def parse(pkt):
    """An `Arp` from a parsed Ryu packet; raises `ArpError` for anything unusable."""
    eth = pkt.get_protocol(ethernet.ethernet)
    req = pkt.get_protocol(arp.arp)
    if eth is None or req is None:
        raise ArpError("no ARP header")
    if (req.hwtype, req.proto, req.hlen, req.plen) != (1, C.ETH_TYPE_IPV4, 6, 4):
        raise ArpError("not Ethernet/IPv4 ARP (hwtype %s proto %#x hlen %s plen %s)"
                       % (req.hwtype, req.proto, req.hlen, req.plen))
    if req.opcode not in (arp.ARP_REQUEST, arp.ARP_REPLY):
        raise ArpError("unknown ARP opcode %s" % req.opcode)
    for ip in (req.src_ip, req.dst_ip):
        ipaddress.IPv4Address(ip)
    if _is_group_mac(req.src_mac) or req.src_mac == ZERO_MAC:
        raise ArpError("bogus sender MAC %s" % req.src_mac)
    return Arp(req.opcode, req.src_mac.lower(), req.src_ip, req.dst_mac.lower(), req.dst_ip, eth.src.lower())


def usable_sender_ip(ip):
    address = ipaddress.IPv4Address(ip)
    return not (address.is_unspecified or address.is_multicast or address.is_loopback
                or address == ipaddress.IPv4Address("255.255.255.255"))


def build_reply(target_mac, target_ip, requester_mac, requester_ip):
    """The reply ``target_ip is-at target_mac``, addressed to the requester."""
    return _build(arp.ARP_REPLY, eth_dst=requester_mac, src_mac=target_mac, src_ip=target_ip,
                  dst_mac=requester_mac, dst_ip=requester_ip)


def build_probe(probe_mac, target_ip):
    """An RFC 5227 probe ``who-has target_ip`` from ``probe_mac`` with sender IP 0.0.0.0."""
    return _build(arp.ARP_REQUEST, eth_dst=C.BROADCAST_MAC, src_mac=probe_mac, src_ip=ZERO_IP,
                  dst_mac=ZERO_MAC, dst_ip=target_ip)


class ProbeBudget:
    """Decides which unknown IPs are probed: each at most once per PROBE_HOLDOFF, and at most
    PROBES_PER_PORT per requesting port and PROBES_MAX in all per PROBE_HOLDOFF. It holds only the
    last window's probes, so it stays small whatever hosts ask for."""

    def __init__(self):
        self.recent = collections.OrderedDict()   # ip -> (time, requesting port) of its probe, oldest first
        self.per_port = collections.Counter()     # requesting port -> probes in `recent`

    def __len__(self):
        return len(self.recent)

    def take(self, ip, port, now):
        """PROBE (and records it), PROBE_HELD (``ip`` was probed less than PROBE_HOLDOFF ago) or
        PROBE_LIMITED (over the port's or the controller's budget)."""
        while self.recent:
            oldest, (then, by) = next(iter(self.recent.items()))
            if now - then < PROBE_HOLDOFF:
                break
            del self.recent[oldest]
            self.per_port[by] -= 1
            if not self.per_port[by]:
                del self.per_port[by]
        if ip in self.recent:
            return PROBE_HELD
        if self.per_port[port] >= PROBES_PER_PORT or len(self.recent) >= PROBES_MAX:
            return PROBE_LIMITED
        self.recent[ip] = (now, port)
        self.per_port[port] += 1
        return PROBE


def _build(opcode, eth_dst, src_mac, src_ip, dst_mac, dst_ip):
    pkt = packet.Packet()
    pkt.add_protocol(ethernet.ethernet(dst=eth_dst, src=src_mac, ethertype=C.ETH_TYPE_ARP))
    pkt.add_protocol(arp.arp(opcode=opcode, src_mac=src_mac, src_ip=src_ip, dst_mac=dst_mac, dst_ip=dst_ip))
    pkt.serialize()
    return bytes(pkt.data)


def _is_group_mac(mac):
    return int(mac.split(":")[0], 16) & 1 == 1
