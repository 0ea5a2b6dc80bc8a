"""The send buffer of ovs-vswitchd's packet socket (userspace datapath), read and set.

With the userspace datapath, ovs-vswitchd sends every packet out of every "system" port (the
veths of a Mininet fabric) through ONE non-blocking AF_PACKET socket (lib/netdev-linux.c,
af_packet_sock()), whose send buffer is net.core.wmem_default (212992 bytes here) when it is
created. A packet stays charged to that buffer until it has left the egress qdisc of its port, so
the packets waiting in ALL the rate-limited (HTB) switch ports of the fabric share it; once it is
full, sendmmsg() fails with EAGAIN and OVS drops the packets of that batch. No qdisc, interface
or datapath counter counts them; the log has a rate-limited "error sending Ethernet packet on
PORT: Resource temporarily unavailable". (docs/jobroute-rate.md, "Per-flow rate: the slow pair".)

`send_sockets` reads the socket's use from `ss -0 -m -p`; `set_send_buffer` changes its size in
the running ovs-vswitchd through a duplicate of its descriptor (pidfd_getfd(2), root); the
probe (bench/rate_probe.py) sets it only for its own measurements and puts the old size back.
"""
import ctypes
import os
import socket
import subprocess
import threading

import ss_sockets

OVS_PIDFILE = "/var/run/openvswitch/ovs-vswitchd.pid"
SYS_PIDFD_GETFD = 438              # x86_64 and every architecture with the common syscall table
SO_SNDBUFFORCE = 32


def ovs_pid(pidfile=OVS_PIDFILE):
    """The running ovs-vswitchd's pid (OSError/ValueError if it has none)."""
    with open(pidfile) as f:
        return int(f.read().strip())


def send_sockets(ss_text, comm="ovs-vswitchd"):
    """[(pid, fd, {skmem field: value})] of ``comm``'s packet sockets bound to no interface and no
    protocol (`ss -0 -m -p`: "[0]:*"), the ones netdev-linux sends with; skmem's t is the bytes
    charged to the send buffer, tb its size."""
    return [(sock["users"][0][1], sock["users"][0][2], sock["skmem"]) for sock in ss_sockets.packet_sockets(ss_text)
            if sock["netid"] == "p_raw" and (sock["local"], sock["peer"]) == ("[0]:*", "*")
            and len(sock["users"]) == 1 and sock["users"][0][0] == comm]


def read_send_socket(pid):
    """(fd, skmem) of process ``pid``'s send socket, or (None, {})."""
    text = subprocess.run(["ss", "-0", "-m", "-p"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          universal_newlines=True, check=False).stdout
    for spid, fd, mem in send_sockets(text):
        if spid == pid:
            return fd, mem
    return None, {}


def set_send_buffer(pid, fd, nbytes):
    """Sets the send buffer of process ``pid``'s socket ``fd`` to ``nbytes`` (SO_SNDBUFFORCE: the
    kernel stores twice what it is given, so nbytes // 2 is passed); returns (old, new) sizes."""
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        dup = libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
        if dup < 0:
            err = ctypes.get_errno()
            raise OSError(err, "pidfd_getfd(%d, %d): %s" % (pid, fd, os.strerror(err)))
    finally:
        os.close(pidfd)
    sock = socket.socket(fileno=dup)
    try:
        old = sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
        sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, nbytes // 2)
        return old, sock.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    finally:
        sock.close()               # our duplicate only: the socket lives on in ovs-vswitchd


class UseSampler:
    """Samples the bytes charged to process ``pid``'s send socket every ``interval`` s in a thread
    (start/stop); stop() returns {"samples", "size", "max", "median", "full_share"}, full_share
    being the share of samples within one full-size packet (about 2.3 KB charged) of the size."""

    FULL_MARGIN = 2304

    def __init__(self, pid, interval=0.1, reader=read_send_socket):
        self.pid, self.interval, self.reader = pid, interval, reader
        self.used, self.size = [], None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            _fd, mem = self.reader(self.pid)
            if "t" in mem:
                self.used.append(mem["t"])
                self.size = mem.get("tb", self.size)
            self._stop.wait(self.interval)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join()
        return summary(self.used, self.size, self.FULL_MARGIN)


def summary(used, size, margin):
    if not used:
        return {"samples": 0, "size": size}
    ordered = sorted(used)
    full = sum(1 for u in used if size is not None and u >= size - margin)
    return {"samples": len(used), "size": size, "max": ordered[-1], "median": ordered[len(ordered) // 2],
            "full_share": round(full / len(used), 3)}
