"""Running the sdnmpi Ryu controller as a subprocess and reading its REST API.

``start_controller`` launches the venv's ``ryu-manager`` (found next to ``sys.executable``) in its
own process group, with output to a log file. ``wait_for_topology`` polls
``GET /sdnmpi/topology`` until the controller has discovered the expected fabric; demos and tests
wait with it instead of fixed sleeps. REST schema (see the controller):

- ``/sdnmpi/topology``: ``{"switches": [{"dpid", "ports"}], "links": [{"src": {"dpid", "port"},
  "dst": {...}}], "hosts": [{"mac", "ip", "name", "dpid", "port", "source"}]}``
- ``/sdnmpi/ports``: per-port counters and rates; ``/sdnmpi/stats``: packet-in counts, routing,
  ``routes_pending`` (a topology change whose routes not every switch has confirmed yet).
"""
import json
import logging
import os
import random
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from . import procs
from .polling import poll_until

LOG = logging.getLogger(__name__)

TOPOLOGY_PATH = "/sdnmpi/topology"
READY_PATH = "/sdnmpi/stats"
POLL_INTERVAL = 0.5


EPHEMERAL_RANGE = "/proc/sys/net/ipv4/ip_local_port_range"
SERVER_PORTS_FROM = 10000      # free_port's lowest port
_handed_out = set()


def free_port():
    """A TCP port that is free on every address now, for a server about to start on it (the
    controller's OpenFlow, REST and RPC ports). Never the same port twice in one process.

    Chosen at random below the kernel's ephemeral range (net.ipv4.ip_local_port_range): the port
    that bind(0) returns is an ephemeral one, which any outgoing connection on the machine may
    take in the seconds before ryu-manager binds it; ports below that range are only ever taken
    by an explicit bind. Falls back to bind(0) where that range leaves no room below it."""
    try:
        with open(EPHEMERAL_RANGE) as ports:
            first_ephemeral = int(ports.read().split()[0])
    except (OSError, ValueError, IndexError):
        first_ephemeral = 32768
    room = first_ephemeral > SERVER_PORTS_FROM + 1000
    rnd = random.SystemRandom()
    for _ in range(200):
        port = rnd.randrange(SERVER_PORTS_FROM, first_ephemeral) if room else 0
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("0.0.0.0", port))
            except OSError:
                continue
            port = sock.getsockname()[1]
        if port not in _handed_out:
            _handed_out.add(port)
            return port
    raise RuntimeError("no free TCP port below %d" % first_ephemeral)


def ryu_manager_path():
    """The ``ryu-manager`` of the running interpreter's environment (the project venv)."""
    return os.path.join(os.path.dirname(sys.executable), "ryu-manager")


class ControllerProcess:
    """A running ryu-manager: stop it, query its REST API, read its log."""

    def __init__(self, popen, ofp_port, wsapi_port, log_path, own_log):
        self.popen = popen
        self.ofp_port = ofp_port
        self.wsapi_port = wsapi_port
        self.log_path = log_path
        self._own_log = own_log
        self._final_log = None
        self._stopped = False

    @property
    def pid(self):
        """PID of ryu-manager (also its process group id)."""
        return self.popen.pid

    def running(self):
        """True while the process is alive."""
        return self.popen.poll() is None

    def url(self, path):
        """Full URL of a REST path."""
        return "http://127.0.0.1:%d%s" % (self.wsapi_port, path)

    def rest(self, path, timeout=5.0):
        """GET ``path`` and return the decoded JSON."""
        with urllib.request.urlopen(self.url(path), timeout=timeout) as resp:
            return json.loads(resp.read().decode("utf-8"))

    def wait_rest_ready(self, timeout=30.0):
        """Poll the REST API until it answers; raise if ryu-manager exits or time runs out."""
        def answer():
            if not self.running():
                raise RuntimeError("ryu-manager exited with %s:\n%s" % (self.popen.returncode, self.log_tail()))
            return self.rest(READY_PATH, timeout=2.0)
        return poll_until(answer, timeout, "the controller's REST API", POLL_INTERVAL, tolerate=(OSError, ValueError),
                          describe=lambda: "its log:\n" + self.log_tail())

    def log_text(self):
        """The controller's output so far (kept after stop() even if the log was temporary)."""
        if self._final_log is not None:
            return self._final_log
        try:
            with open(self.log_path, errors="replace") as log:
                return log.read()
        except OSError:
            return ""

    def log_tail(self, lines=40):
        """The last ``lines`` lines of the log."""
        return "\n".join(self.log_text().splitlines()[-lines:])

    def stop(self, timeout=10.0):
        """SIGTERM the process group, wait, SIGKILL after ``timeout``. Safe to call twice."""
        if self._stopped:
            return self.popen.returncode
        self._stopped = True
        procs.terminate([self.popen], timeout=timeout)
        if self._own_log and self._final_log is None:
            self._final_log = self.log_text()
            try:
                os.unlink(self.log_path)
            except OSError:
                pass
        return self.popen.returncode


def start_controller(ofp_port, wsapi_port, routing="dmodk", extra_args=(), log_path=None):
    """Start ``ryu-manager ... sdnmpi.controller`` and return a :class:`ControllerProcess`.

    Output goes to ``log_path``, or to a temporary file removed by ``stop()``.
    """
    own_log = log_path is None
    if own_log:
        fd, log_path = tempfile.mkstemp(prefix="sdnmpi-ryu-", suffix=".log")
        os.close(fd)
    argv = [ryu_manager_path(), "--ofp-tcp-listen-port", str(ofp_port),
            "--wsapi-host", "127.0.0.1", "--wsapi-port", str(wsapi_port),
            "sdnmpi.controller", "--sdnmpi-default-routing", routing] + list(extra_args)
    LOG.info("starting controller: %s (log %s)", " ".join(argv), log_path)
    with open(log_path, "ab") as log:
        popen = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
    return ControllerProcess(popen, ofp_port, wsapi_port, log_path, own_log)


def wait_rest_ready(ctl, timeout=30.0):
    """Module-level form of :meth:`ControllerProcess.wait_rest_ready`."""
    return ctl.wait_rest_ready(timeout=timeout)


def topology_counts(topo_json):
    """(switches, links, hosts) counts of a /sdnmpi/topology answer."""
    return tuple(len(topo_json.get(key) or []) for key in ("switches", "links", "hosts"))


def wait_for_topology(ctl, switches, links, hosts, timeout=60.0, interval=POLL_INTERVAL):
    """Poll /sdnmpi/topology until it has exactly these counts; return the topology JSON.

    Raises TimeoutError with the last seen counts (or error) after ``timeout`` seconds, and
    RuntimeError at once if the controller process died.
    """
    want = (switches, links, hosts)
    seen = ["nothing"]

    def discovered():
        if hasattr(ctl, "running") and not ctl.running():
            raise RuntimeError("controller died while waiting for the topology")
        topo = ctl.rest(TOPOLOGY_PATH)
        counts = topology_counts(topo)
        seen[0] = "switches=%d links=%d hosts=%d" % counts
        return topo if counts == want else None
    return poll_until(discovered, timeout, "the topology: switches=%d links=%d hosts=%d" % want, interval,
                      tolerate=(OSError, ValueError), describe=lambda: "last seen " + seen[0])


def wait_for_links(ctl, links, timeout=15.0, interval=POLL_INTERVAL):
    """After a link went down or came back: polls until the topology has ``links`` switch links
    and every switch confirmed the routes of that change (``routes_pending`` false). The topology
    changes before any route does, so traffic sent on the count alone may still take the old path."""
    seen = ["nothing"]

    def settled():
        count = len(ctl.rest(TOPOLOGY_PATH)["links"])
        pending = ctl.rest(READY_PATH)["routes_pending"]   # read after the count: covers its change
        seen[0] = "links=%d routes_pending=%s" % (count, pending)
        return count == links and not pending
    poll_until(settled, timeout, "links=%d with routes confirmed" % links, interval,
               describe=lambda: "last seen " + seen[0])


def _endpoint(end):
    """'dpid:port' of a link end."""
    return "%s:%s" % (end.get("dpid"), end.get("port"))


def format_topology(topo_json):
    """Readable multi-line rendering of a /sdnmpi/topology answer (for the demo)."""
    switches = sorted(topo_json.get("switches") or [], key=lambda s: s.get("dpid", ""))
    links = sorted(topo_json.get("links") or [],
                   key=lambda l: (_endpoint(l.get("src", {})), _endpoint(l.get("dst", {}))))
    hosts = sorted(topo_json.get("hosts") or [],
                   key=lambda h: (h.get("dpid") or "", h.get("port") or 0, h.get("mac") or ""))
    lines = ["Switches (%d):" % len(switches)]
    lines += ["  %s  ports %s" % (s.get("dpid"), ",".join(str(p) for p in s.get("ports") or []))
              for s in switches]
    lines.append("Links (%d):" % len(links))
    lines += ["  %s <-> %s" % (_endpoint(l.get("src", {})), _endpoint(l.get("dst", {})))
              for l in links]
    lines.append("Hosts (%d):" % len(hosts))
    lines += ["  %-6s %-15s %s  at %s:%s  (%s)" % (h.get("name") or "-", h.get("ip") or "-",
                                                   h.get("mac"), h.get("dpid"), h.get("port"),
                                                   h.get("source") or "?")
              for h in hosts]
    return "\n".join(lines)
