"""Tests for lldpd/sdnmpi-lldpd, the LLDP transmit daemon.

The daemon runs inside a network namespace created here (as on a Mininet
host) with its own UTS namespace so that the hostname it announces is known.
Frames are captured in the root namespace on our own veth ends with an
AF_PACKET socket and decoded with ryu.lib.packet.

Needs root (network namespaces, veth pairs, raw sockets). The veths, the capture, the daemon's
process and the frame checks: lldpd_harness.py; their fixtures are here.
"""
import os
import signal
import statistics
import subprocess
import time

import pytest
from ryu.lib.packet import lldp

from sdnmpi.mininet_topos.polling import poll_until

from lldpd_harness import (BINARY, HOSTNAME, LLDPD_DIR, NETNS, PID, Capture, Daemon, Veth, addr, alive, check_frame,
                           decode, is_our_daemon, kill_pid, netns_pids, other_addresses, run_cli, sh, ttl_of)


# --------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="session")
def binary():
    """Build the daemon; a failed build fails (not skips) the tests."""
    res = subprocess.run(["make", "-C", str(LLDPD_DIR)], capture_output=True, text=True, timeout=120)
    if res.returncode != 0 or not BINARY.exists():
        pytest.fail(f"make -C lldpd failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
    return str(BINARY)


@pytest.fixture(scope="module")
def netns():
    """A network namespace of our own (a Mininet host stand-in)."""
    sh("ip", "netns", "add", NETNS)
    try:
        sh("ip", "-n", NETNS, "link", "set", "lo", "up")
        yield NETNS
    finally:
        for pid in netns_pids(NETNS):
            if is_our_daemon(pid):
                kill_pid(pid)
        sh("ip", "netns", "del", NETNS, check=False)


@pytest.fixture
def veths(netns):
    """Factory for veth pairs; deletes the ones it made."""
    made = []

    def make(ipv4=None):
        v = Veth(netns, ipv4)
        made.append(v)
        return v

    yield make
    for v in made:
        v.delete()


@pytest.fixture
def capture():
    caps = []

    def make(veth):
        c = Capture(veth.root)
        caps.append(c)
        return c

    yield make
    for c in caps:
        c.close()


@pytest.fixture
def daemon(binary, netns, tmp_path):
    """Start the daemon in netns with hostname HOSTNAME (own UTS namespace).

    `ip netns exec`, `unshare` (no --fork) and `sh -c exec` all exec, so the
    Popen pid is the daemon's pid."""
    started = []

    def start(*args, foreground=True, hostname=HOSTNAME):
        errfile = tmp_path / f"stderr{len(started)}.txt"
        argv = list(args) + (["-f"] if foreground else [])
        with open(errfile, "wb") as err:
            proc = subprocess.Popen(
                ["ip", "netns", "exec", netns, "unshare", "--uts", "sh", "-c",
                 'hostname "$0" && exec "$@"', hostname, binary, *argv],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        d = Daemon(proc, errfile)
        started.append(d)
        return d

    yield start
    for d in started:
        if d.proc.poll() is None:
            d.proc.kill()
            d.proc.wait(5)


# --------------------------------------------------------------------------
# build and command line


def test_build_flags_and_install(binary, tmp_path):
    out = sh("make", "-C", str(LLDPD_DIR), "-n", "-B").stdout
    assert "-std=c11" in out and "-O2" in out and "-Wall" in out
    assert "-Wextra" in out and "-Werror" in out
    sh("make", "-C", str(LLDPD_DIR), "install", "PREFIX=/usr", f"DESTDIR={tmp_path}")
    installed = tmp_path / "usr" / "sbin" / "sdnmpi-lldpd"
    assert installed.is_file() and os.access(installed, os.X_OK)


def test_help(binary, netns):
    res = run_cli(binary, netns, "--help")
    assert res.returncode == 0
    for opt in ("--interval", "--interface", "--ttl", "--foreground", "--verbose", "--once"):
        assert opt in res.stdout


@pytest.mark.parametrize("args, words", [
    (["-i", "0"], ["interval", "'0'"]),
    (["--interval", "-1"], ["interval", "'-1'"]),
    (["-i", "abc"], ["interval", "'abc'"]),
    (["-i", "1s"], ["interval", "'1s'"]),
    (["-i", "nan"], ["interval"]),
    (["-t", "0"], ["ttl", "'0'"]),
    (["--ttl", "65536"], ["ttl", "65536"]),
    (["-t", "x"], ["ttl", "'x'"]),
    (["-I", "a" * 16], ["too long", "a" * 16]),
    (["-I", "eth0,,eth1"], ["empty interface name"]),
    (["--bogus"], ["unknown option", "--bogus"]),
    (["-x"], ["unknown option", "-x"]),
    (["-i"], ["requires an argument", "-i"]),
    (["stray"], ["unexpected argument", "stray"]),
])
def test_bad_options(binary, netns, args, words):
    res = run_cli(binary, netns, *args)
    assert res.returncode == 2, res
    for w in words:
        assert w in res.stderr, (w, res.stderr)
    assert res.stdout == ""


def test_needs_raw_socket_permission(binary, netns):
    """Without CAP_NET_RAW the daemon is useless: clear message, non-zero."""
    res = subprocess.run(
        ["ip", "netns", "exec", netns, "setpriv", "--reuid=65534", "--regid=65534",
         "--clear-groups", binary, "--once"],
        capture_output=True, text=True, timeout=5)
    assert res.returncode == 1, res
    assert "AF_PACKET" in res.stderr and "CAP_NET_RAW" in res.stderr


# --------------------------------------------------------------------------
# frames


def test_periodic_frames_with_all_tlvs(daemon, veths, capture):
    with_ip = veths(ipv4=addr(1))
    no_ip = veths()
    cap_ip, cap_noip = capture(with_ip), capture(no_ip)

    d = daemon("-i", "0.2")
    assert cap_ip.wait_for(7, 3) >= 7
    assert cap_noip.wait_for(7, 1) >= 7
    assert d.proc.poll() is None

    for cap, veth in ((cap_ip, with_ip), (cap_noip, no_ip)):
        frames = list(cap.frames)
        for _, data in frames:
            check_frame(data, veth, ttl=4)  # max(ceil(4 * 0.2), 4)
        gaps = [b[0] - a[0] for a, b in zip(frames, frames[1:])]
        assert all(0.1 < g < 0.4 for g in gaps), gaps
        assert 0.17 < statistics.mean(gaps) < 0.25, gaps

    # default: only errors and start/stop are logged
    assert "sent on" not in d.stderr()


def test_frames_advertise_the_other_interfaces_addresses(daemon, veths, capture):
    """A host's management-network address travels in its fabric frames: the controller lets
    the host register MPI jobs from there (docs/rpc.md)."""
    fabric, mgmt, bare = veths(ipv4=addr(11)), veths(ipv4=addr(12)), veths()
    caps = {v.name: capture(v) for v in (fabric, mgmt, bare)}
    daemon("-i", "0.2")
    for cap in caps.values():
        assert cap.wait_for(3, 3) >= 3
    for veth, want in ((fabric, [addr(11), addr(12)]), (mgmt, [addr(11), addr(12)]),
                       (bare, [addr(11), addr(12)])):
        data = caps[veth.name].frames[-1][1]
        check_frame(data, veth, ttl=4)
        got = other_addresses(data)
        assert sorted(got) == sorted(want), (veth.name, got)
        if veth.ipv4:
            assert got[0] == veth.ipv4   # the interface's own address first: the controller's host IP


def test_no_ipv4_no_management_address(daemon, veths, capture):
    v = veths()
    cap = capture(v)
    daemon("-i", "0.2")
    assert cap.wait_for(1, 2) >= 1
    _, tlvs = decode(cap.frames[0][1])
    assert lldp.LLDP_TLV_MANAGEMENT_ADDRESS not in [t.tlv_type for t in tlvs]
    check_frame(cap.frames[0][1], v, ttl=4)


def test_verbose_logs_each_frame(daemon, veths, capture):
    v = veths(ipv4=addr(2))
    cap = capture(v)
    d = daemon("-i", "0.2", "-v")
    assert cap.wait_for(2, 2) >= 2
    d.proc.terminate()
    assert d.proc.wait(2) == 0
    log = d.stderr()
    mac = ":".join(f"{b:02x}" for b in v.mac)
    line = [ln for ln in log.splitlines() if "sent on " + v.name in ln][0]
    assert mac in line and v.ipv4 in line


@pytest.mark.parametrize("args, ttl", [
    ([], 4),                # interval 1 s -> max(4, 4)
    (["-i", "0.3"], 4),     # ceil(1.2) = 2 -> 4
    (["-i", "2"], 8),
    (["-i", "2.5"], 10),
    (["-t", "77"], 77),
    (["-i", "0.2", "--ttl", "1"], 1),
])
def test_ttl(daemon, veths, capture, args, ttl):
    v = veths(ipv4=addr(3))
    cap = capture(v)
    d = daemon("--once", *args)
    assert d.proc.wait(3) == 0
    assert cap.wait_for(1, 1) == 1
    check_frame(cap.frames[0][1], v, ttl=ttl)


def test_once_sends_one_frame_per_interface(daemon, veths, capture):
    vs = [veths(ipv4=addr(4)), veths(), veths(ipv4=addr(5))]
    caps = [capture(v) for v in vs]
    d = daemon("--once", "-i", "0.2", "-v")
    assert d.proc.wait(3) == 0   # --once ends (the log's counts below catch an extra round)
    log = d.stderr()
    for v, c in zip(vs, caps):
        # the daemon's own log (-v: a line per frame) counts what it sent; the captures may still
        # be reading
        assert log.count("sent on %s (ifindex" % v.name) == 1, log
        assert c.wait_for(1, 2) >= 1, v.name
        check_frame(c.frames[0][1], v, ttl=4)


@pytest.mark.parametrize("syntax", ["repeated", "comma"])
def test_interface_option_restricts(daemon, veths, capture, syntax):
    a, b, c = veths(ipv4=addr(6)), veths(ipv4=addr(7)), veths()
    caps = {v.name: capture(v) for v in (a, b, c)}
    missing = f"nx{PID}"  # named but absent: ignored, may appear later
    if syntax == "repeated":
        sel = ["-I", a.name, "--interface", c.name, "-I", missing]
    else:
        sel = ["-I", f"{a.name},{c.name},{missing}"]
    d = daemon("-i", "0.2", *sel)
    assert caps[a.name].wait_for(4, 2) >= 4
    assert caps[c.name].wait_for(4, 1) >= 4
    assert caps[b.name].frames == []
    assert d.proc.poll() is None
    check_frame(caps[a.name].frames[-1][1], a, ttl=4)
    check_frame(caps[c.name].frames[-1][1], c, ttl=4)
    # b sends nothing, but its address (e.g. the management network's) travels in a's and c's frames
    assert other_addresses(caps[a.name].frames[-1][1]) == [addr(6), addr(7)]
    assert sorted(other_addresses(caps[c.name].frames[-1][1])) == [addr(6), addr(7)]


def test_interface_and_address_added_later(daemon, veths, capture):
    first = veths(ipv4=addr(8))
    cap_first = capture(first)
    d = daemon("-i", "0.2")
    assert cap_first.wait_for(2, 2) >= 2

    # a new interface (with IPv4) is picked up within a couple of intervals (counted from when it
    # is ready and watched: creating it takes the test itself a while on a loaded machine)
    late = veths(ipv4=addr(9))
    cap_late = capture(late)
    t0 = time.monotonic()
    assert cap_late.wait_for(1, 1.0) >= 1
    assert cap_late.frames[0][0] - t0 < 0.7
    check_frame(cap_late.frames[-1][1], late, ttl=4)

    # an address added later shows up in the management address TLV
    bare = veths()
    cap_bare = capture(bare)
    assert cap_bare.wait_for(1, 1.0) >= 1
    check_frame(cap_bare.frames[-1][1], bare, ttl=4)
    bare.add_ipv4(addr(10))
    t1 = time.monotonic()

    def newest_with_the_address():   # (its own address first, then the other veths')
        recent = [f for t, f in cap_bare.frames if t > t1 + 0.05]
        return recent and other_addresses(recent[-1])[:1] == [addr(10)] and recent[-1]
    check_frame(poll_until(newest_with_the_address, 1.0, "a frame with the address added", interval=0.02), bare, ttl=4)
    assert d.proc.poll() is None


def test_interface_removed_without_error_spam(daemon, veths, capture):
    keep, gone = veths(ipv4=addr(11)), veths(ipv4=addr(12))
    cap_keep, cap_gone = capture(keep), capture(gone)
    d = daemon("-i", "0.2")
    assert cap_gone.wait_for(2, 2) >= 2
    gone.delete()
    # an interface that is down is dropped as well
    n = len(cap_keep.frames)
    assert cap_keep.wait_for(n + 5, 2) >= n + 5
    assert d.proc.poll() is None

    down = veths()
    cap_down = capture(down)
    assert cap_down.wait_for(1, 1) >= 1
    sh("ip", "-n", down.ns, "link", "set", down.name, "down")
    # a frame sent just before may still be on its way to the capture thread: count only after
    # the daemon has done three more rounds (paced by the daemon, not by a fixed pause)
    n = len(cap_keep.frames)
    assert cap_keep.wait_for(n + 3, 2) >= n + 3
    m = len(cap_down.frames)
    n = len(cap_keep.frames)
    assert cap_keep.wait_for(n + 3, 2) >= n + 3
    assert len(cap_down.frames) == m

    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(2) == 0
    lines = d.stderr().splitlines()
    assert len(lines) <= 3, lines  # start, stop, at most one other line


def test_send_error_logged_once_then_recovery(daemon, veths, capture):
    """A persistent send error is logged once, not every interval."""
    host = ("h" * 60 + str(PID))[-64:]  # Linux maximum: frame > 68 + 14 bytes
    ok, small = veths(ipv4=addr(15)), veths(ipv4=addr(16))
    cap_ok, cap_small = capture(ok), capture(small)
    sh("ip", "-n", small.ns, "link", "set", small.name, "mtu", "68")
    d = daemon("-i", "0.2", hostname=host)
    assert cap_ok.wait_for(6, 3) >= 6
    check_frame(cap_ok.frames[-1][1], ok, ttl=4, hostname=host)
    assert cap_small.frames == []
    errors = [ln for ln in d.stderr().splitlines() if small.name in ln]
    assert len(errors) == 1 and "too long" in errors[0], errors

    sh("ip", "-n", small.ns, "link", "set", small.name, "mtu", "1500")
    assert cap_small.wait_for(1, 1) >= 1
    check_frame(cap_small.frames[-1][1], small, ttl=4, hostname=host)
    d.proc.send_signal(signal.SIGTERM)
    assert d.proc.wait(2) == 0
    # the daemon sent its shutdown frame before exiting; the capture thread may not have read it yet
    assert cap_small.wait_until(lambda frames: frames and ttl_of(frames[-1][1]) == 0, 1)
    errors = [ln for ln in d.stderr().splitlines() if small.name in ln]
    assert len(errors) == 2 and "works again" in errors[1], errors


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_sends_shutdown_frame(daemon, veths, capture, sig):
    a, b = veths(ipv4=addr(13)), veths()
    cap_a, cap_b = capture(a), capture(b)
    # long interval: the signal must interrupt the wait, not end it (so everything below takes
    # less than one interval; a loaded machine may take more than a second)
    interval = 5
    d = daemon("-i", str(interval))
    assert cap_a.wait_for(1, 2) >= 1 and cap_b.wait_for(1, 1) >= 1
    # (no pause needed: the stop signals are blocked except inside pselect, so one sent at any moment
    # ends the wait; main.c's sleep_until)
    t0 = time.monotonic()
    d.proc.send_signal(sig)
    assert d.proc.wait(interval) == 0
    assert time.monotonic() - t0 < interval
    for cap, veth in ((cap_a, a), (cap_b, b)):
        assert cap.wait_for(2, interval) == 2
        (t1, first), (t2, last) = cap.frames
        check_frame(first, veth, ttl=4 * interval)
        check_frame(last, veth, ttl=0)
        assert t2 - t0 < interval
    err = d.stderr()
    assert "starting" in err and "stopping" in err


def test_daemonizes_without_foreground(binary, netns, veths, capture):
    v = veths(ipv4=addr(14))
    cap = capture(v)
    before = set(netns_pids(netns))
    res = subprocess.run(
        ["ip", "netns", "exec", netns, "unshare", "--uts", "sh", "-c",
         'hostname "$0" && exec "$@"', HOSTNAME, binary, "-i", "0.2"],
        capture_output=True, text=True, timeout=5)
    # the parent may exit before the grandchild (the daemon) is listed
    pids = poll_until(lambda: [p for p in set(netns_pids(netns)) - before if is_our_daemon(p)], 1.0,
                      "the daemon in the namespace", interval=0.02)
    try:
        assert res.returncode == 0, res
        assert len(pids) == 1, pids
        pid = pids[0]
        assert cap.wait_for(3, 2) >= 3
        check_frame(cap.frames[-1][1], v, ttl=4)
        assert os.readlink(f"/proc/{pid}/cwd") == "/"
        for fd in (0, 1, 2):
            assert os.readlink(f"/proc/{pid}/fd/{fd}") == "/dev/null"
        assert os.getsid(pid) != os.getsid(0)

        n = len(cap.frames)
        os.kill(pid, signal.SIGTERM)
        poll_until(lambda: not alive(pid), 1.0, "the daemon to exit", interval=0.02)
        assert cap.wait_for(n + 1, 0.5) >= n + 1
        assert ttl_of(cap.frames[-1][1]) == 0
    finally:
        for p in pids:
            kill_pid(p)
