"""Frame builders and address helpers for the unit tests: LLDP frames exactly as sdnmpi's lldpd/
sends them (and malformed ones, TLV by TLV), ARP and UDP/IPv4 frames, and the MACs of the
simulated fabric's switch ports. Plain bytes; nothing here talks to a switch."""
import ipaddress
import struct

from ryu.lib.packet import arp as ryu_arp
from ryu.lib.packet import ethernet, ipv4, packet, udp

from sdnmpi.controller import constants as C

LLDP_DST = bytes.fromhex("0180c200000e")


# ---------------------------------------------------------------------------------------------
# addresses
def mac_bytes(mac):
    return bytes(int(x, 16) for x in mac.split(":"))


def mac_text(raw):
    return ":".join("%02x" % b for b in raw)


def mac_int(mac):
    return int.from_bytes(mac_bytes(mac), "big")


def ip_int(ip):
    return int(ipaddress.IPv4Address(ip))


def port_hw_addr(dpid, port):
    """The MAC of switch port (dpid, port) in the simulated fabric (unique, locally administered)."""
    return "0a:%02x:%02x:%02x:%02x:%02x" % ((dpid >> 16) & 0xFF, (dpid >> 8) & 0xFF, dpid & 0xFF,
                                            (port >> 8) & 0xFF, port & 0xFF)


# ---------------------------------------------------------------------------------------------
# frames
def tlv(tlv_type, payload=b"", length=None):
    """One raw LLDP TLV; ``length`` overrides the header's length field (for malformed frames)."""
    length = len(payload) if length is None else length
    return struct.pack("!H", (tlv_type << 9) | length) + payload


def mgmt_ipv4_tlv(ip, ifindex=2):
    return tlv(8, bytes([5, 1]) + ipaddress.IPv4Address(ip).packed + bytes([2]) + struct.pack("!I", ifindex)
               + bytes([0]))


def lldp_host_frame(mac, ip, name, ifname="eth0", ttl=120, ifindex=2, pad=True):
    """An LLDPDU exactly as sdnmpi's lldpd/ sends it (lldpd/lldp_frame.c): chassis = MAC (subtype 4),
    port = interface name (subtype 5), TTL, system name (may be empty), IPv4 management address
    with ifIndex numbering, End, zero padding to 60 bytes."""
    body = (tlv(1, bytes([4]) + mac_bytes(mac)) + tlv(2, bytes([5]) + ifname.encode()) + tlv(3, struct.pack("!H", ttl))
            + tlv(5, (name or "").encode()))
    if ip is not None:
        body += mgmt_ipv4_tlv(ip, ifindex)
    frame = LLDP_DST + mac_bytes(mac) + struct.pack("!H", C.ETH_TYPE_LLDP) + body + tlv(0)
    if pad and len(frame) < 60:
        frame += bytes(60 - len(frame))
    return frame


def arp_frame(opcode, src_mac, src_ip, dst_mac, dst_ip, eth_src=None, eth_dst=None, hlen=6, plen=4,
              hwtype=1, proto=C.ETH_TYPE_IPV4):
    eth_src = eth_src or src_mac
    eth_dst = eth_dst or (C.BROADCAST_MAC if opcode == 1 else dst_mac)
    body = struct.pack("!HHBBH6s4s6s4s", hwtype, proto, hlen, plen, opcode, mac_bytes(src_mac),
                       ipaddress.IPv4Address(src_ip).packed, mac_bytes(dst_mac), ipaddress.IPv4Address(dst_ip).packed)
    frame = mac_bytes(eth_dst) + mac_bytes(eth_src) + struct.pack("!H", C.ETH_TYPE_ARP) + body
    return frame + bytes(max(0, 60 - len(frame)))


def ipv4_frame(src_mac, dst_mac, src_ip, dst_ip, payload=b"sdnmpi test payload"):
    """A UDP/IPv4 frame with correct checksums (built with Ryu's packet library)."""
    pkt = packet.Packet()
    pkt.add_protocol(ethernet.ethernet(dst=dst_mac, src=src_mac, ethertype=C.ETH_TYPE_IPV4))
    pkt.add_protocol(ipv4.ipv4(src=src_ip, dst=dst_ip, proto=17))
    pkt.add_protocol(udp.udp(src_port=4242, dst_port=4343))
    pkt.add_protocol(payload)
    pkt.serialize()
    return bytes(pkt.data)


def parse_arp(data):
    """(eth_dst, eth_src, arp) of an ARP frame, decoded with Ryu."""
    pkt = packet.Packet(bytes(data))
    eth = pkt.get_protocol(ethernet.ethernet)
    return eth.dst, eth.src, pkt.get_protocol(ryu_arp.arp)


def lldpdu_end(data):
    """Offset just past the End TLV of a well-formed LLDP frame (the rest is padding)."""
    off = 14
    while True:
        head = struct.unpack("!H", data[off:off + 2])[0]
        off += 2 + (head & 0x1FF)
        if head >> 9 == 0:
            return off
