"""controller/lldp.py: the controller's probes and the hosts' LLDPDUs, well-formed and not."""
import ipaddress
import random
import re
import struct

import pytest

from sdnmpi.controller import lldp
from sdnmpi.controller import constants as C

from conftest import LLDP_DST, lldp_host_frame, mac_bytes, mac_text, mgmt_ipv4_tlv, tlv
from frame_builders import lldpdu_end

HOST_MAC = "52:54:00:12:34:56"
CHASSIS_MAC = "52:54:00:ab:cd:ef"   # Debian's lldpd: the chassis MAC is some interface's, not this one's
ETH_LLDP = struct.pack("!H", C.ETH_TYPE_LLDP)


def frame(src_mac, *tlvs, end=True):
    return LLDP_DST + mac_bytes(src_mac) + ETH_LLDP + b"".join(tlvs) + (tlv(0) if end else b"")


def chassis_mac(mac):
    return tlv(1, bytes([4]) + mac_bytes(mac))


def port_ifname(name):
    return tlv(2, bytes([5]) + name.encode())


def ttl_tlv(ttl):
    return tlv(3, struct.pack("!H", ttl))


def mgmt_ipv6_tlv(ip, ifindex=2):
    return tlv(8, bytes([17, 2]) + ipaddress.IPv6Address(ip).packed + bytes([2]) + struct.pack("!I", ifindex)
               + bytes([0]))


def debian_lldpd_frame(ttl=120, ipv4s=("10.0.0.7",), ipv6="fe80::5054:ff:fe12:3456"):
    """What Debian 12's lldpd (1.0.16) puts on the wire for a Linux host: chassis ID = MAC of another
    interface (subtype 4), port ID = this interface's MAC (subtype 3), port description, system
    name and description, capabilities, management addresses (here IPv6 before IPv4), IEEE 802.3
    and 802.1 organizationally-specific TLVs."""
    tlvs = [chassis_mac(CHASSIS_MAC),
            tlv(2, bytes([3]) + mac_bytes(HOST_MAC)),
            ttl_tlv(ttl),
            tlv(4, b"eth0"),
            tlv(5, b"node07.cluster"),
            tlv(6, b"Debian GNU/Linux 12 (bookworm) Linux 6.1.0-13-amd64 #1 SMP PREEMPT_DYNAMIC x86_64"),
            tlv(7, struct.pack("!HH", 0x0014, 0x0010))]
    if ipv6:
        tlvs.append(mgmt_ipv6_tlv(ipv6))
    tlvs += [mgmt_ipv4_tlv(ip) for ip in ipv4s]
    tlvs += [tlv(127, bytes.fromhex("00120f01") + bytes.fromhex("03") + struct.pack("!HH", 0x6c00, 0x001e)),
             tlv(127, bytes.fromhex("00120f04") + struct.pack("!H", 1514)),
             tlv(127, bytes.fromhex("0080c201") + struct.pack("!H", 1))]
    return frame(HOST_MAC, *tlvs)


# ---------------------------------------------------------------------------------------------
# An independent, strict reference decoder (IEEE 802.1AB-2009 TLV rules), written without Ryu.
# Returns lldp.SwitchProbe / lldp.HostAdvert, or None when the frame is not a valid LLDPDU.
# TLV types 9..126 are reserved; Ryu cannot parse them, so they count as invalid here too.
LENGTH_BOUNDS = {0: (0, 0), 1: (2, 256), 2: (2, 256), 3: (2, 2), 4: (0, 255), 5: (0, 255), 6: (0, 255),
                 7: (4, 4), 8: (9, 167), 127: (4, 511)}


def reference(data):
    if len(data) < 14 or data[12:14] != ETH_LLDP:
        return None
    src = data[6:12]
    buf, tlvs = data[14:], []
    while True:
        if len(buf) < 2:
            return None
        head = struct.unpack("!H", buf[:2])[0]
        ttype, length = head >> 9, head & 0x1FF
        if ttype not in LENGTH_BOUNDS or len(buf) < 2 + length:
            return None
        low, high = LENGTH_BOUNDS[ttype]
        if not low <= length <= high:
            return None
        info = buf[2:2 + length]
        if ttype == 8:
            # address string length (subtype + address), subtype, address, interface subtype,
            # interface number (4), OID length, OID: the lengths must add up exactly.
            addr_len = info[0]
            if not 2 <= addr_len <= 32 or addr_len + 7 > length or addr_len + 7 + info[addr_len + 6] != length:
                return None
        tlvs.append((ttype, info))
        buf = buf[2 + length:]
        if ttype == 0:
            break
    if len(tlvs) < 4 or [t for t, _ in tlvs[:3]] != [1, 2, 3]:
        return None
    (_, chassis), (_, port_id), (_, ttl) = tlvs[:3]
    ttl = struct.unpack("!H", ttl)[0]
    if chassis[0] == 7 and port_id[0] == 2 and len(port_id) == 5:
        match = re.fullmatch(rb"dpid:([0-9a-f]{16})", chassis[1:])
        if match:
            return lldp.SwitchProbe(int(match.group(1), 16), struct.unpack("!I", port_id[1:])[0])
    if src[0] & 1 or src == bytes(6):
        return None  # a host's frame from a group or zero MAC is bogus
    addresses = []
    for ttype, info in tlvs:
        if ttype == 8 and info[1] == 1 and info[0] == 5:
            address = ipaddress.IPv4Address(info[2:6])
            if not (address.is_unspecified or address.is_multicast or address.is_loopback) \
                    and str(address) not in addresses and len(addresses) < 16:
                addresses.append(str(address))
    ip = addresses[0] if addresses else None
    name = next((info.decode("utf-8", "replace").strip("\x00") or None for t, info in tlvs if t == 5), None)
    port_raw = port_id[1:]
    port_text = mac_text(port_raw) if port_id[0] == 3 and len(port_raw) == 6 else port_raw.decode("utf-8", "replace")
    return lldp.HostAdvert(mac=mac_text(src), ip=ip, name=name, port_id=port_text, ttl=ttl, addresses=tuple(addresses))


def parse_or_none(data):
    try:
        return lldp.parse(data)
    except lldp.LldpError:
        return None


# ---------------------------------------------------------------------------------------------
# probes
@pytest.mark.parametrize("dpid,port", [(1, 1), (0x201, 7), (0, 0xFFFFFF00), (2**64 - 1, 65535), (0x5D4D50, 48)])
def test_probe_round_trip(dpid, port):
    data = lldp.build_probe(dpid, port, "0a:00:00:00:01:02", 4)
    assert data[:6] == LLDP_DST and data[6:12] == mac_bytes("0a:00:00:00:01:02") and data[12:14] == ETH_LLDP
    assert lldp.parse(data) == lldp.SwitchProbe(dpid=dpid, port=port)
    assert reference(data) == lldp.SwitchProbe(dpid=dpid, port=port)


def test_signed_probes_need_the_key_they_were_signed_with():
    key = bytes(range(16))
    data = lldp.build_probe(0x201, 7, "0a:00:00:00:01:02", 4, key)
    assert lldp.parse(data, key) == lldp.parse(data) == reference(data) == lldp.SwitchProbe(0x201, 7)
    for other in (bytes(16), b"another key"):
        with pytest.raises(lldp.LldpError, match="without our signature"):
            lldp.parse(data, other)
    with pytest.raises(lldp.LldpError, match="without our signature"):   # unsigned
        lldp.parse(lldp.build_probe(0x201, 7, "0a:00:00:00:01:02", 4), key)
    with pytest.raises(lldp.LldpError, match="without our signature"):   # signed for another port
        lldp.parse(lldp.build_probe(0x201, 7, "0a:00:00:00:01:02", 4, key).replace(
            struct.pack("!I", 7), struct.pack("!I", 8)), key)


def test_probe_with_zero_source_mac_still_parses():
    # The controller falls back to 00:00:00:00:00:00 when it does not know a port's MAC.
    data = lldp.build_probe(0x101, 3, "00:00:00:00:00:00", 4)
    assert lldp.parse(data) == lldp.SwitchProbe(0x101, 3)


def test_probe_lookalikes_are_not_probes():
    """Only the exact chassis ``dpid:<16 lower-case hex>`` + 4-byte port component is ours."""
    port = tlv(2, bytes([2]) + struct.pack("!I", 3))
    for chassis in (b"dpid:%016x\n" % 5, b"dpid:%015x" % 5, b"dpid:%016X" % 0xAB, b"xdpid:%016x" % 5,
                    b"dpid:%016x0" % 5):
        data = frame(HOST_MAC, tlv(1, bytes([7]) + chassis), port, ttl_tlv(4))
        result = lldp.parse(data)
        assert isinstance(result, lldp.HostAdvert), chassis
        assert result == reference(data)
    chassis = tlv(1, bytes([7]) + b"dpid:%016x" % 5)
    for port_id in (tlv(2, bytes([2]) + struct.pack("!H", 3)), tlv(2, bytes([5]) + struct.pack("!I", 3))):
        assert isinstance(lldp.parse(frame(HOST_MAC, chassis, port_id, ttl_tlv(4))), lldp.HostAdvert)


# ---------------------------------------------------------------------------------------------
# hosts: sdnmpi's lldpd
def test_our_lldpd_frame():
    data = lldp_host_frame(HOST_MAC, "10.0.3.17", "node17", ifname="h17-eth0", ttl=4, ifindex=31)
    assert len(data) >= 60
    assert lldp.parse(data) == lldp.HostAdvert(mac=HOST_MAC, ip="10.0.3.17", name="node17", port_id="h17-eth0", ttl=4,
                                                  addresses=("10.0.3.17",))
    assert reference(data) == lldp.parse(data)


def test_our_lldpd_frame_unpadded_and_long_names():
    name = "n" * 255
    data = lldp_host_frame(HOST_MAC, "192.168.7.1", name, ifname="e" * 255, ttl=65535, pad=False)
    assert lldp.parse(data) == lldp.HostAdvert(HOST_MAC, "192.168.7.1", name, "e" * 255, 65535, ("192.168.7.1",))


def test_our_lldpd_frame_empty_system_name():
    # lldpd/ sends a zero-length system name TLV when the host has no name: valid, name None.
    data = lldp_host_frame(HOST_MAC, "10.0.0.1", "", ttl=120)
    assert lldp.parse(data) == lldp.HostAdvert(HOST_MAC, "10.0.0.1", None, "eth0", 120, ("10.0.0.1",))


def test_no_management_address_means_no_ip():
    data = lldp_host_frame(HOST_MAC, None, "node1")
    assert lldp.parse(data) == lldp.HostAdvert(HOST_MAC, None, "node1", "eth0", 120)


def test_ttl_zero_is_a_shutdown_advert():
    result = lldp.parse(lldp_host_frame(HOST_MAC, "10.0.0.1", "node1", ttl=0))
    assert isinstance(result, lldp.HostAdvert) and result.ttl == 0 and result.mac == HOST_MAC


def test_source_mac_is_lower_cased_and_comes_from_ethernet():
    data = lldp_host_frame("AA:BB:CC:DD:EE:F0".lower(), "10.0.0.9", "x")
    data = data[:6] + bytes.fromhex("AABBCCDDEEF0") + data[12:]
    assert lldp.parse(data).mac == "aa:bb:cc:dd:ee:f0"


@pytest.mark.parametrize("ip", ["0.0.0.0", "127.0.0.1", "224.0.0.1"])
def test_unusable_management_addresses_are_ignored(ip):
    data = frame(HOST_MAC, chassis_mac(HOST_MAC), port_ifname("eth0"), ttl_tlv(9), mgmt_ipv4_tlv(ip),
                 mgmt_ipv4_tlv("10.1.2.3"))
    assert lldp.parse(data).ip == "10.1.2.3"
    data = frame(HOST_MAC, chassis_mac(HOST_MAC), port_ifname("eth0"), ttl_tlv(9), mgmt_ipv4_tlv(ip))
    assert lldp.parse(data).ip is None


def test_ipv4_management_address_of_the_wrong_size_is_ignored():
    # Structurally valid TLVs (the lengths add up) whose IPv4 address is 3 or 5 bytes long.
    for addr in (bytes([10, 0, 0]), bytes([10, 0, 0, 1, 9])):
        mgmt = tlv(8, bytes([1 + len(addr), 1]) + addr + bytes([2, 0, 0, 0, 1, 0]))
        data = frame(HOST_MAC, CHASSIS, PORT, TTL, mgmt)
        assert lldp.parse(data) == reference(data) == lldp.HostAdvert(HOST_MAC, None, None, "eth0", 120)


# ---------------------------------------------------------------------------------------------
# hosts: Debian's lldpd
def test_debian_lldpd_frame():
    data = debian_lldpd_frame()
    result = lldp.parse(data)
    # The host is the Ethernet source, not the chassis ID; the IPv4 address, not the IPv6 one.
    assert result == lldp.HostAdvert(mac=HOST_MAC, ip="10.0.0.7", name="node07.cluster", port_id=HOST_MAC, ttl=120,
                                    addresses=("10.0.0.7",))
    assert result.mac != CHASSIS_MAC
    assert reference(data) == result


def test_debian_lldpd_first_ipv4_management_address_wins():
    advert = lldp.parse(debian_lldpd_frame(ipv4s=("10.9.8.7", "172.16.0.1")))
    assert advert.ip == "10.9.8.7" and advert.addresses == ("10.9.8.7", "172.16.0.1")


def test_every_management_address_is_kept_once_in_order():
    tlvs = [mgmt_ipv4_tlv(ip) for ip in ["10.0.0.5", "172.30.0.5", "10.0.0.5", "0.0.0.0"]
            + ["172.31.0.%d" % i for i in range(1, 30)]]
    advert = lldp.parse(frame(HOST_MAC, CHASSIS, PORT, TTL, *tlvs))
    assert advert.ip == "10.0.0.5"
    assert advert.addresses == ("10.0.0.5", "172.30.0.5") + tuple("172.31.0.%d" % i for i in range(1, 15))


def test_debian_lldpd_ipv6_only():
    assert lldp.parse(debian_lldpd_frame(ipv4s=())).ip is None


def test_debian_lldpd_shutdown():
    assert lldp.parse(debian_lldpd_frame(ttl=0)).ttl == 0


# ---------------------------------------------------------------------------------------------
# malformed frames: always LldpError
VALID_FRAMES = {
    "probe": lldp.build_probe(0x201, 5, "0a:00:00:00:02:05", 4),
    "ours": lldp_host_frame(HOST_MAC, "10.0.0.5", "node5", pad=False),
    "ours-padded": lldp_host_frame(HOST_MAC, "10.0.0.5", "node5"),
    "debian": debian_lldpd_frame(),
}


@pytest.mark.parametrize("name", sorted(VALID_FRAMES))
def test_every_truncation_is_rejected(name):
    data = VALID_FRAMES[name]
    assert reference(data) == lldp.parse(data)
    end = lldpdu_end(data)
    for length in range(end):
        with pytest.raises(lldp.LldpError):
            lldp.parse(data[:length])
    for length in range(end, len(data) + 1):  # cutting padding off is harmless
        assert lldp.parse(data[:length]) == lldp.parse(data)


CHASSIS, PORT, TTL = chassis_mac(HOST_MAC), port_ifname("eth0"), ttl_tlv(120)
MALFORMED = {
    "empty": b"",
    "ethernet only": LLDP_DST + mac_bytes(HOST_MAC) + ETH_LLDP,
    "not lldp": LLDP_DST + mac_bytes(HOST_MAC) + b"\x08\x00" + CHASSIS + PORT + TTL + tlv(0),
    "vlan tagged": LLDP_DST + mac_bytes(HOST_MAC) + b"\x81\x00\x00\x05" + ETH_LLDP + CHASSIS + PORT + TTL + tlv(0),
    "end only": frame(HOST_MAC),
    "no end": frame(HOST_MAC, CHASSIS, PORT, TTL, end=False),
    "port first": frame(HOST_MAC, PORT, CHASSIS, TTL),
    "ttl second": frame(HOST_MAC, CHASSIS, TTL, PORT),
    "ttl first": frame(HOST_MAC, TTL, CHASSIS, PORT),
    "no chassis": frame(HOST_MAC, PORT, TTL),
    "no port": frame(HOST_MAC, CHASSIS, TTL),
    "no ttl": frame(HOST_MAC, CHASSIS, PORT),
    "name before ttl": frame(HOST_MAC, CHASSIS, PORT, tlv(5, b"x"), TTL),
    "zero-length chassis": frame(HOST_MAC, tlv(1), PORT, TTL),
    "zero-length port": frame(HOST_MAC, CHASSIS, tlv(2), TTL),
    "zero-length ttl": frame(HOST_MAC, CHASSIS, PORT, tlv(3)),
    "zero-length mgmt": frame(HOST_MAC, CHASSIS, PORT, TTL, tlv(8)),
    "zero-length capabilities": frame(HOST_MAC, CHASSIS, PORT, TTL, tlv(7)),
    "zero-length org-specific": frame(HOST_MAC, CHASSIS, PORT, TTL, tlv(127)),
    "chassis subtype only": frame(HOST_MAC, tlv(1, b"\x04"), PORT, TTL),
    "port subtype only": frame(HOST_MAC, CHASSIS, tlv(2, b"\x05"), TTL),
    "ttl one byte": frame(HOST_MAC, CHASSIS, PORT, tlv(3, b"\x05")),
    "ttl three bytes": frame(HOST_MAC, CHASSIS, PORT, tlv(3, b"\x00\x05\x00")),
    "chassis too long": frame(HOST_MAC, tlv(1, b"\x07" + b"a" * 256), PORT, TTL),
    "name too long": frame(HOST_MAC, CHASSIS, PORT, TTL, tlv(5, b"n" * 256)),
    "capabilities too short": frame(HOST_MAC, CHASSIS, PORT, TTL, tlv(7, b"\x00\x14")),
    "org-specific too short": frame(HOST_MAC, CHASSIS, PORT, TTL, tlv(127, b"\x00\x12\x0f")),
    "mgmt address length past its TLV": frame(HOST_MAC, CHASSIS, PORT, TTL,
                                              tlv(8, bytes([30, 1]) + bytes([10, 0, 0, 1, 2, 0, 0, 0, 1, 0]))),
    "mgmt address length zero": frame(HOST_MAC, CHASSIS, PORT, TTL,
                                      tlv(8, bytes([0, 1]) + bytes([10, 0, 0, 1, 2, 0, 0, 0, 1, 0]))),
    "mgmt address oid past its TLV": frame(HOST_MAC, CHASSIS, PORT, TTL,
                                           tlv(8, bytes([5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 1, 9, 1, 2]))),
    "mgmt address trailing junk": frame(HOST_MAC, CHASSIS, PORT, TTL,
                                        tlv(8, bytes([5, 1, 10, 0, 0, 1, 2, 0, 0, 0, 1, 0, 0xEE]))),
    "length past the end": frame(HOST_MAC, CHASSIS, PORT, TTL, tlv(5, b"abc", length=511), end=False),
    "chassis length past the end": frame(HOST_MAC, tlv(1, b"\x04" + mac_bytes(HOST_MAC), length=300), end=False),
    "end with a length": frame(HOST_MAC, CHASSIS, PORT, TTL, end=False) + tlv(0, b"\x00\x00"),
    "reserved tlv type": frame(HOST_MAC, CHASSIS, PORT, TTL, tlv(9, b"x")),
    "multicast source": LLDP_DST + mac_bytes("01:00:5e:00:00:01") + ETH_LLDP + CHASSIS + PORT + TTL + tlv(0),
    "broadcast source": LLDP_DST + mac_bytes("ff:ff:ff:ff:ff:ff") + ETH_LLDP + CHASSIS + PORT + TTL + tlv(0),
    "zero source": LLDP_DST + bytes(6) + ETH_LLDP + CHASSIS + PORT + TTL + tlv(0),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_frames_raise_lldp_error(name):
    data = MALFORMED[name]
    assert reference(data) is None, "the reference decoder disagrees that this is malformed"
    with pytest.raises(lldp.LldpError):
        lldp.parse(data)


def test_zero_padding_reads_as_the_end_tlv():
    # 00 00 is an End TLV, so a frame whose padding directly follows the TTL is complete.
    data = frame(HOST_MAC, CHASSIS, PORT, TTL, end=False) + bytes(20)
    assert lldp.parse(data) == reference(data) == lldp.HostAdvert(HOST_MAC, None, None, "eth0", 120)


def test_parse_accepts_bytearray_and_memoryview():
    data = lldp_host_frame(HOST_MAC, "10.0.0.5", "node5")
    assert lldp.parse(bytearray(data)) == lldp.parse(memoryview(data)) == lldp.parse(data)


def _check(data):
    """lldp.parse either raises LldpError (and nothing else) or returns exactly what the strict
    reference decoder returns; when the reference rejects the frame, parse must reject it too."""
    expected = reference(data)
    try:
        result = lldp.parse(data)
    except lldp.LldpError:
        assert expected is None, "valid frame rejected: %s -> %r" % (data.hex(), expected)
        return None
    assert result == expected, "frame %s: got %r, expected %r" % (data.hex(), result, expected)
    return result


def test_random_bytes():
    rng = random.Random(0x5D4D)
    for _ in range(3000):
        _check(bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 120))))


def test_random_lldpdus():
    """Random bytes behind a real LLDP Ethernet header, and random TLV chains built from valid and
    invalid TLVs, so that the TLV parser itself is exercised."""
    rng = random.Random(1802)
    head = LLDP_DST + mac_bytes(HOST_MAC) + ETH_LLDP
    parts = [CHASSIS, PORT, TTL, tlv(5, b"node"), tlv(4, b"eth0"), mgmt_ipv4_tlv("10.0.0.3"), tlv(0),
             tlv(1, bytes([7]) + b"dpid:%016x" % 9), tlv(2, bytes([2]) + struct.pack("!I", 4)), tlv(3),
             tlv(8), tlv(7, b"\x00\x01\x00\x01"), tlv(127, b"\x00\x12\x0f\x01\x00"), tlv(5, b"", length=40)]
    parsed = 0
    for _ in range(4000):
        if rng.random() < 0.3:
            body = bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 80)))
        else:
            body = b"".join(rng.choice(parts) for _ in range(rng.randrange(0, 8)))
            if rng.random() < 0.5:
                body = CHASSIS + PORT + TTL + body
        parsed += _check(head + body) is not None
    assert parsed > 100  # the generator does produce valid frames, so the comparison means something


def test_mutated_valid_frames():
    """Single and multiple byte corruptions, insertions and deletions of real frames."""
    rng = random.Random(7)
    for _ in range(3000):
        data = bytearray(rng.choice(list(VALID_FRAMES.values())))
        for _ in range(rng.randrange(1, 4)):
            op, pos = rng.randrange(3), rng.randrange(len(data))
            if op == 0:
                data[pos] = rng.getrandbits(8)
            elif op == 1:
                data.insert(pos, rng.getrandbits(8))
            elif len(data) > 1:
                del data[pos]
        _check(bytes(data))


def test_errors_are_value_errors():
    # core.py catches LldpError; make sure it stays a ValueError subclass (arp.py relies on the same).
    assert issubclass(lldp.LldpError, ValueError)
