"""Helpers of the operator-surface integration tests (test_metrics_prometheus.py,
test_webview_mininet.py): an RPC client that registers jobs from the test process, a Prometheus
server from apt pointed at the controller, an iperf3 flow in the background, and (from
tests/unit/browser.py) a headless Chromium under Selenium."""
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

import msgpack

from sdnmpi.controller import constants as C
from sdnmpi.controller import rpc_schema as schema
from sdnmpi.mininet_topos import controller_proc, demo, procs
from sdnmpi.mininet_topos.polling import poll_until
from sdnmpi.primitives import schedule

import ofdump

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "unit"))
from browser import chromium, console_errors, halo_ends  # noqa: E402,F401  pylint: disable=wrong-import-position

PROMETHEUS = "/usr/bin/prometheus"


ARTIFACTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "test-artifacts")


def artifacts_dir(_tmp_path):
    """Where screenshots go: $SDNMPI_ARTIFACTS, else test-artifacts/ in the checkout, which
    outlives the run (CI's clone keeps it; git ignores it)."""
    path = os.path.abspath(os.environ.get("SDNMPI_ARTIFACTS") or ARTIFACTS)
    os.makedirs(path, exist_ok=True)
    return path


def wait_until(predicate, timeout, what, interval=0.25):
    """predicate()'s first truthy value; its exceptions count as "not yet" (a server still starting)."""
    return poll_until(predicate, timeout, what, interval, tolerate=(Exception,))


# ---------------------------------------------------------------------------------------------
# RPC
# The test process registers jobs from the root namespace: the controller must allow it.
RPC_ALLOW_LOCAL = ("--sdnmpi-rpc-allow", "127.0.0.1/32")


class RpcClient:
    """One RPC connection to the controller (a job lives as long as its connection); requests
    naming a job this client registered carry the job's token."""

    def __init__(self, port, host="127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=30)
        self.stream = self.sock.makefile("rb")
        self.next_id = 1
        self.tokens = {}

    def call(self, op, **fields):
        if "job" in fields and fields["job"] in self.tokens:
            fields.setdefault("token", self.tokens[fields["job"]])
        self.next_id += 1
        self.sock.sendall(schema.frame(msgpack.packb(dict(v=schema.VERSION, id=self.next_id, op=op, **fields))))
        (length,) = schema.HEADER.unpack(self.stream.read(schema.HEADER.size))
        reply = msgpack.unpackb(self.stream.read(length))
        assert reply["status"] == "ok", reply
        return reply

    def register_and_plan(self, ips):
        """A job on ``ips`` (rank i on ips[i]) with its recursive-doubling Allreduce plan installed."""
        reply = self.call("register", hosts=ips)
        job = reply["job"]
        self.tokens[job] = reply["token"]
        steps = [[[s, d, c] for (s, d), c in step]
                 for step in schedule.host_steps(schedule.recursive_doubling_steps(len(ips)), ips)]
        self.call("plan_allreduce", job=job, comm=0, planner="balanced", steps=steps)
        return job

    def close(self):
        self.stream.close()
        self.sock.close()


def job_out_ports(fab, job):
    """{"DPID:PORT"} of every output port of the job's flows, as OVS holds them."""
    ends = set()
    for sw in fab.net.switches:
        for flow in ofdump.flows(sw.name):
            if flow["cookie"] == C.COOKIE_JOB | job:
                assert flow["actions"].startswith("output:"), flow
                ends.add("%s:%d" % (sw.dpid, int(flow["actions"][len("output:"):])))
    return ends


def route_port(fab, bridge, dst_ip):
    """The output port of the default route to ``dst_ip`` on ``bridge``."""
    actions = ofdump.routes(bridge, C.PRIORITY_ROUTE)[dst_ip]
    assert actions.startswith("output:"), actions
    return int(actions[len("output:"):])


# ---------------------------------------------------------------------------------------------
# iperf3
class BackgroundIperf:
    """iperf3 from ``client`` to ``server`` for ``seconds`` in a thread; ``join()`` -> Mbit/s."""

    def __init__(self, fab, client, server, seconds):
        self.result, self.error = None, None
        hosts = fab.net
        args = (hosts.get(server), hosts.get(client), hosts.get(server).IP())
        self.thread = threading.Thread(target=self._run, args=args + (seconds,), daemon=True)
        self.start = time.time()
        self.thread.start()

    def _run(self, server, client, server_ip, seconds):
        try:
            self.result = demo.iperf3(server, client, server_ip, seconds=seconds)
        except Exception as err:  # pylint: disable=broad-except  # reported by join()
            self.error = err

    def join(self):
        self.thread.join()
        self.end = time.time()
        if self.error is not None:
            raise self.error
        return self.result


# ---------------------------------------------------------------------------------------------
# Prometheus
class Prometheus:
    def __init__(self, url):
        self.url = url

    def query(self, promql, at=None):
        """The result vector of an instant query: [(labels, value)]."""
        params = {"query": promql}
        if at is not None:
            params["time"] = "%.3f" % at
        with urllib.request.urlopen(self.url + "/api/v1/query?" + urllib.parse.urlencode(params), timeout=10) as resp:
            answer = json.loads(resp.read())
        assert answer["status"] == "success", answer
        return [(r["metric"], float(r["value"][1])) for r in answer["data"]["result"]]

    def scalar(self, promql, at=None):
        """The value of a query with one result (None if it has none)."""
        result = self.query(promql, at)
        assert len(result) <= 1, result
        return result[0][1] if result else None


@contextlib.contextmanager
def prometheus_server(target_port, tmp_path, interval="1s"):
    """A Prometheus from apt scraping 127.0.0.1:``target_port``/metrics every ``interval``, its
    data under ``tmp_path``; yields a `Prometheus` once the target has been scraped."""
    port = controller_proc.free_port()
    config = os.path.join(str(tmp_path), "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: %s\n  evaluation_interval: %s\n"
                "scrape_configs:\n  - job_name: sdnmpi\n    static_configs:\n      - targets: ['127.0.0.1:%d']\n"
                % (interval, interval, target_port))
    log = open(os.path.join(str(tmp_path), "prometheus.log"), "ab")
    proc = subprocess.Popen([PROMETHEUS, "--config.file=" + config, "--storage.tsdb.path=" + os.path.join(str(tmp_path), "tsdb"),
                             "--web.listen-address=127.0.0.1:%d" % port], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        prom = Prometheus("http://127.0.0.1:%d" % port)
        wait_until(lambda: proc.poll() is None and urllib.request.urlopen(prom.url + "/-/ready", timeout=2).status == 200,
                   60, "Prometheus to be ready")
        wait_until(lambda: prom.scalar('up{job="sdnmpi"}') == 1, 30, "Prometheus to scrape the controller")
        yield prom
    finally:
        procs.terminate([proc], timeout=10)
        log.close()
