"""LLDP: the controller's own link probes, and parsing of every LLDP frame a switch hands us.

Two kinds of frames matter:

- `SwitchProbe`: sent by this controller out of every switch port. Chassis ID ``dpid:<16 hex>``
  (subtype *locally assigned*) and port ID the 4-byte port number (subtype *port component*). When
  another switch hands it back, the two ports form a link.
- `HostAdvert`: sent by a host's LLDP agent (our lldpd/, or any standards-conformant agent such as
  Debian's lldpd). The host's MAC is the frame's Ethernet source (agents differ in what they put in
  the chassis ID), its IPv4 address the first IPv4 management-address TLV, its name the
  system-name TLV. A TTL of 0 means the agent is shutting down. Every IPv4 management address
  (our lldpd advertises the host's other interfaces' addresses after the first) is kept: the RPC
  service accepts a job's registration from a host's advertised management address.

Parsing is Ryu's packet library; anything it cannot make sense of raises `LldpError`.
"""
import dataclasses
import ipaddress
import logging
import re
import struct

from ryu.lib import addrconv
from ryu.lib.packet import ethernet, lldp, packet

from . import constants as C

LOG = logging.getLogger(__name__)

PROBE_CHASSIS = re.compile(rb"dpid:([0-9a-f]{16})")  # used with fullmatch: "$" would accept a trailing "\n"
ADDR_SUBTYPE_IPV4 = 1
MAX_ADDRESSES = 16  # IPv4 management addresses kept per frame
# IEEE 802.1AB-2009 bounds of each TLV's information-string length. Ryu's parser does not check
# them, so we do: a TLV outside its bounds makes the whole LLDPDU malformed.
TLV_LENGTHS = {
    lldp.LLDP_TLV_END: (0, 0),
    lldp.LLDP_TLV_CHASSIS_ID: (2, 256),
    lldp.LLDP_TLV_PORT_ID: (2, 256),
    lldp.LLDP_TLV_TTL: (2, 2),
    lldp.LLDP_TLV_PORT_DESCRIPTION: (0, 255),
    lldp.LLDP_TLV_SYSTEM_NAME: (0, 255),
    lldp.LLDP_TLV_SYSTEM_DESCRIPTION: (0, 255),
    lldp.LLDP_TLV_SYSTEM_CAPABILITIES: (4, 4),
    lldp.LLDP_TLV_MANAGEMENT_ADDRESS: (9, 167),
    lldp.LLDP_TLV_ORGANIZATIONALLY_SPECIFIC: (4, 511),
}


class LldpError(ValueError):
    """The frame is not a usable LLDPDU."""


@dataclasses.dataclass(frozen=True)
class SwitchProbe:
    dpid: int
    port: int


@dataclasses.dataclass(frozen=True)
class HostAdvert:
    mac: str
    ip: str  # or None: the agent advertised no IPv4 management address
    name: str  # or None
    port_id: str
    ttl: int
    addresses: tuple = ()  # every usable IPv4 management address advertised, in order (ip first)


def build_probe(dpid, port_no, src_mac, ttl):
    """The controller's LLDP probe for (dpid, port_no), as bytes ready for a packet-out."""
    pkt = packet.Packet()
    pkt.add_protocol(ethernet.ethernet(dst=C.LLDP_MAC_NEAREST_BRIDGE, src=src_mac,
                                       ethertype=C.ETH_TYPE_LLDP))
    pkt.add_protocol(lldp.lldp([
        lldp.ChassisID(subtype=lldp.ChassisID.SUB_LOCALLY_ASSIGNED, chassis_id=b"dpid:%016x" % dpid),
        lldp.PortID(subtype=lldp.PortID.SUB_PORT_COMPONENT, port_id=struct.pack("!I", port_no)),
        lldp.TTL(ttl=ttl),
        lldp.End(),
    ]))
    pkt.serialize()
    return bytes(pkt.data)


def parse(data):
    """Returns a `SwitchProbe` or `HostAdvert` for an Ethernet frame; raises `LldpError`."""
    try:
        pkt = packet.Packet(bytes(data))
    except Exception as err:  # Ryu's parsers raise more than struct.error on garbage
        raise LldpError("unparseable frame: %s" % err) from err
    eth = pkt.get_protocol(ethernet.ethernet)
    if eth is None or eth.ethertype != C.ETH_TYPE_LLDP:
        raise LldpError("not an LLDP frame")
    lldpdu = pkt.get_protocol(lldp.lldp)
    if lldpdu is None:
        raise LldpError("malformed LLDPDU (%d bytes)" % len(data))
    _check_lengths(lldpdu.tlvs)
    chassis, port_id, ttl = lldpdu.tlvs[0], lldpdu.tlvs[1], lldpdu.tlvs[2]
    probe = _as_probe(chassis, port_id)
    if probe is not None:
        return probe
    if int(eth.src[:2], 16) & 1 or eth.src == "00:00:00:00:00:00":
        raise LldpError("host LLDPDU from group or zero MAC %s" % eth.src)
    addresses = _ipv4_management_addresses(lldpdu.tlvs)
    return HostAdvert(mac=eth.src.lower(), ip=addresses[0] if addresses else None,
                      name=_system_name(lldpdu.tlvs), port_id=_port_text(port_id), ttl=ttl.ttl,
                      addresses=addresses)


def _check_lengths(tlvs):
    for tlv in tlvs:
        low, high = TLV_LENGTHS.get(tlv.tlv_type, (0, -1))
        if not low <= tlv.len <= high:
            raise LldpError("TLV type %d with length %d" % (tlv.tlv_type, tlv.len))
        # address string length (subtype + address), ..., interface (5), OID length, OID: must add up
        if isinstance(tlv, lldp.ManagementAddress) and not (
                2 <= tlv.addr_len <= 32 and tlv.addr_len + 7 + tlv.oid_len == tlv.len):
            raise LldpError("inconsistent management address TLV")


def _as_probe(chassis, port_id):
    if chassis.subtype != lldp.ChassisID.SUB_LOCALLY_ASSIGNED:
        return None
    match = PROBE_CHASSIS.fullmatch(bytes(chassis.chassis_id))
    if not match or port_id.subtype != lldp.PortID.SUB_PORT_COMPONENT or len(port_id.port_id) != 4:
        return None
    return SwitchProbe(dpid=int(match.group(1), 16), port=struct.unpack("!I", port_id.port_id)[0])


def _ipv4_management_addresses(tlvs):
    """The usable IPv4 management addresses, in order, without repeats (at most MAX_ADDRESSES)."""
    out = []
    for tlv in tlvs:
        if (isinstance(tlv, lldp.ManagementAddress) and tlv.addr_subtype == ADDR_SUBTYPE_IPV4
                and len(tlv.addr) == 4):
            address = ipaddress.IPv4Address(bytes(tlv.addr))
            if not (address.is_unspecified or address.is_multicast or address.is_loopback) \
                    and str(address) not in out and len(out) < MAX_ADDRESSES:
                out.append(str(address))
    return tuple(out)


def _system_name(tlvs):
    for tlv in tlvs:
        if isinstance(tlv, lldp.SystemName):
            return bytes(tlv.system_name).decode("utf-8", "replace").strip("\x00") or None
    return None


def _port_text(port_id):
    raw = bytes(port_id.port_id)
    if port_id.subtype == lldp.PortID.SUB_MAC_ADDRESS and len(raw) == 6:
        return addrconv.mac.bin_to_text(raw)
    return raw.decode("utf-8", "replace")
