"""What the tests of lldpd/sdnmpi-lldpd (test_lldpd.py) drive the daemon with: veth pairs into a
network namespace of their own, an AF_PACKET capture of the LLDP frames on the root-namespace ends,
the daemon's process, and the checks of a frame's every field (decoded with ryu.lib.packet). The
fixtures that make and clean these up are test_lldpd.py's."""
import itertools
import json
import os
import signal
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

from ryu.lib.packet import ethernet, lldp, packet

from sdnmpi.mininet_topos.polling import poll_until

REPO = Path(__file__).resolve().parents[2]
LLDPD_DIR = REPO / "lldpd"
BINARY = LLDPD_DIR / "sdnmpi-lldpd"

PID = os.getpid()
NETNS = f"sdnl{PID}"
HOSTNAME = f"lldpt{PID}"
ETH_P_LLDP = 0x88CC
LLDP_DST = bytes.fromhex("0180c200000e")
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)   # linux/asm-generic/socket.h

_counter = itertools.count(1)
ADDRESSES = {}   # every IPv4 address a Veth got -> its ifindex (the daemon advertises the others)


def sh(*cmd, check=True):
    return subprocess.run(list(cmd), check=check, capture_output=True, text=True, timeout=20)


class Veth:
    """A veth pair: `root` end in the root namespace, `name` end in netns."""

    def __init__(self, ns, ipv4=None):
        k = next(_counter)
        self.ns = ns
        self.root = f"lr{PID}x{k}"
        self.name = f"ln{PID}x{k}"
        self.ipv4 = None
        sh("ip", "link", "add", self.root, "type", "veth", "peer", "name", self.name, "netns", ns)
        sh("ip", "link", "set", self.root, "up")
        sh("ip", "-n", ns, "link", "set", self.name, "up")
        info = json.loads(sh("ip", "-n", ns, "-j", "link", "show", self.name).stdout)[0]
        self.mac = bytes.fromhex(info["address"].replace(":", ""))
        self.ifindex = info["ifindex"]
        if ipv4:
            self.add_ipv4(ipv4)

    def add_ipv4(self, addr):
        sh("ip", "-n", self.ns, "addr", "add", f"{addr}/24", "dev", self.name)
        self.ipv4 = addr
        ADDRESSES[addr] = self.ifindex

    def delete(self):
        sh("ip", "link", "del", self.root, check=False)


def arrival(ancdata):
    """The monotonic time at which the kernel received a frame, from its SO_TIMESTAMPNS stamp (wall
    clock) in ``ancdata``: a capture thread that reads late (held off on a loaded machine) still
    sees the daemon's own pacing."""
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            sec, nsec = struct.unpack("qq", data[:16])
            return time.monotonic() - (time.time() - (sec + nsec * 1e-9))
    raise AssertionError("a captured frame without its kernel time stamp")


class Capture:
    """Collect LLDP frames arriving on a root-namespace interface."""

    def __init__(self, ifname):
        self.ifname = ifname
        self.frames = []  # (monotonic time of arrival, bytes)
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_LLDP))
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.bind((ifname, ETH_P_LLDP))
        self.sock.settimeout(0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                data, ancdata, _flags, addr = self.sock.recvmsg(65535, socket.CMSG_SPACE(16))
            except socket.timeout:
                continue
            except OSError:
                return
            if addr[2] == PACKET_OUTGOING:
                continue
            self.frames.append((arrival(ancdata), data))

    def wait_for(self, n, timeout):
        """Wait (at most timeout s) until at least n frames are captured; return the count."""
        self.wait_until(lambda frames: len(frames) >= n, timeout)
        return len(self.frames)

    def wait_until(self, pred, timeout):
        """Wait (at most timeout s) until pred(frames) holds; return whether it did."""
        try:
            return bool(poll_until(lambda: pred(self.frames), timeout, "captured frames", interval=0.01))
        except TimeoutError:
            return False

    def close(self):
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


class Daemon:
    def __init__(self, proc, errfile):
        self.proc = proc
        self.errfile = errfile

    def stderr(self):
        return self.errfile.read_text(errors="replace")


def netns_pids(ns):
    res = sh("ip", "netns", "pids", ns, check=False)
    return [int(p) for p in res.stdout.split()]


def is_our_daemon(pid):
    try:
        return os.readlink(f"/proc/{pid}/exe") == str(BINARY)
    except OSError:
        return False


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def kill_pid(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def decode(data):
    """Return (ethernet header, list of TLVs) of a captured LLDP frame."""
    pkt = packet.Packet(data)
    eth = pkt.get_protocol(ethernet.ethernet)
    lldpdu = pkt.get_protocol(lldp.lldp)
    assert eth is not None and lldpdu is not None, data.hex()
    return eth, lldpdu.tlvs


def ttl_of(data):
    return [t for t in decode(data)[1] if t.tlv_type == lldp.LLDP_TLV_TTL][0].ttl


def expected_len(veth, hostname=HOSTNAME, extras=0):
    n = 14 + (2 + 7) + (2 + 1 + len(veth.name)) + (2 + 2) + (2 + len(hostname)) + 2
    if veth.ipv4:
        n += 2 + 12
    return max(60, n + extras * (2 + 12))


def other_addresses(data):
    """The IPv4 addresses of a frame's management address TLVs after the interface's own."""
    mgmt = [t for t in decode(data)[1] if t.tlv_type == lldp.LLDP_TLV_MANAGEMENT_ADDRESS]
    return [socket.inet_ntoa(t.addr) for t in mgmt]


def check_frame(data, veth, ttl, hostname=HOSTNAME):
    """Assert every field of one frame. Management addresses after the interface's own must be
    other interfaces' (with their ifindex)."""
    assert len(data) >= 60
    _eth, tlvs = decode(data)
    mgmt = [t for t in tlvs if t.tlv_type == lldp.LLDP_TLV_MANAGEMENT_ADDRESS]
    extras = mgmt[1:] if veth.ipv4 else mgmt
    assert len(extras) <= 8
    for extra in extras:
        ip = socket.inet_ntoa(extra.addr)
        assert ip != veth.ipv4 and ADDRESSES.get(ip) == extra.intf_num, ip
        assert (extra.addr_len, extra.addr_subtype, extra.intf_subtype, extra.oid_len) == (5, 1, 2, 0)
    assert len(data) == expected_len(veth, hostname, len(extras))
    assert data[0:6] == LLDP_DST
    assert data[6:12] == veth.mac
    assert data[12:14] == b"\x88\xcc"

    eth, tlvs = decode(data)
    assert eth.ethertype == ETH_P_LLDP
    assert eth.dst == "01:80:c2:00:00:0e"

    types = [t.tlv_type for t in tlvs]
    want = [lldp.LLDP_TLV_CHASSIS_ID, lldp.LLDP_TLV_PORT_ID, lldp.LLDP_TLV_TTL,
            lldp.LLDP_TLV_SYSTEM_NAME]
    want += [lldp.LLDP_TLV_MANAGEMENT_ADDRESS] * len(mgmt)
    want.append(lldp.LLDP_TLV_END)
    assert types == want

    chassis, port, ttl_tlv, sysname = tlvs[:4]
    assert chassis.subtype == lldp.ChassisID.SUB_MAC_ADDRESS == 4
    assert chassis.chassis_id == veth.mac
    assert port.subtype == lldp.PortID.SUB_INTERFACE_NAME == 5
    assert port.port_id == veth.name.encode()
    assert ttl_tlv.ttl == ttl
    assert sysname.system_name == hostname.encode()
    if veth.ipv4:
        mgmt = tlvs[4]
        assert mgmt.addr_len == 5
        assert mgmt.addr_subtype == 1
        assert mgmt.addr == socket.inet_aton(veth.ipv4)
        assert mgmt.intf_subtype == 2
        assert mgmt.intf_num == veth.ifindex
        assert mgmt.oid_len == 0 and mgmt.oid == b""
    # padding after the End TLV is zero
    end = sum(2 + t.len for t in tlvs) + 14
    assert data[end:] == bytes(len(data) - end)


def run_cli(binary, netns, *args, timeout=5):
    return subprocess.run(["ip", "netns", "exec", netns, binary, *args],
                          capture_output=True, text=True, timeout=timeout)


def addr(k):
    return f"10.213.{k}.1"
