"""A controller core on a simulated fabric with the real operator surface on top: the metered RPC
service, the Prometheus metrics and the real REST and web handlers served over HTTP on loopback
(Ryu's WSGI application under the standard library's wsgiref server, no eventlet hub).

Used by test_metrics.py, test_web_views.py and test_ctl.py.
"""
import collections
import threading
import wsgiref.simple_server

from ryu.app.wsgi import WSGIApplication
from ryu.ofproto import ofproto_v1_3_parser as PARSER

import rpc_helpers
from conftest import FabricSim
from sdnmpi.controller import rest, web
from sdnmpi.controller.metrics import Metrics
from sdnmpi.controller.portstats import COUNTERS
from sdnmpi.controller.rpcmetrics import MeteredRpcService
from sdnmpi.controller.auth import OperatorAuth
from sdnmpi.primitives import fabric, fattree

OPERATOR_TOKEN = "operator-token-for-the-tests"

PortStat = collections.namedtuple("PortStat", ("port_no",) + COUNTERS)


def port_stat(port_no, **counters):
    return PortStat(port_no, **{name: counters.get(name, 0) for name in COUNTERS})


class Operated:
    """FabricSim + MeteredRpcService + Metrics; ``clock`` is a settable number for job leases."""

    def __init__(self, graph=None, routing="dmodk", **settings):
        self.graph = graph if graph is not None else fattree.leaf_spine(2, 4, 2)
        self.fab = FabricSim(self.graph, routing=routing, **settings)
        self.fab.discover()
        self.core = self.fab.core
        self.now = 1000.0
        self.metrics = Metrics(self.core)
        self.fail_confirm = False
        self.rpc = MeteredRpcService(self.core, self.confirm, self.metrics, clock=lambda: self.now)
        self.ips = [self.graph.nodes[m]["ip"] for m in fabric.hosts(self.graph)]

    @classmethod
    def with_job(cls, graph, **settings):
        """A controller on ``graph`` with one job on every host: an Allreduce plan (comm 0) and a
        Bcast tree (comm 1, root the 4th host, members hosts 3-11)."""
        op = cls(graph, **settings)
        op.job = op.register(hosts=op.ips)
        assert op.plan_allreduce(op.job)["status"] == "ok"
        assert op.call("plan_bcast", job=op.job, comm=1, root=op.ips[3], members=op.ips[2:11])["status"] == "ok"
        return op

    def confirm(self, msgs):
        from sdnmpi.controller.rpc import ConfirmError  # pylint: disable=import-outside-toplevel
        if self.fail_confirm:
            raise ConfirmError("barrier timeout (test)")
        self.fab.run(msgs)

    # -- RPC (requests carry the job's token, from clients on host 10.0.0.1: rpc_helpers) ------------
    def client(self, name="conn"):
        return rpc_helpers.client_of(self.rpc, name)

    def call(self, op, owner="conn", req_id=1, **fields):
        return rpc_helpers.call(self.rpc, op, req_id=req_id, client=owner, **fields)

    def raw_call(self, body, owner="conn"):
        return rpc_helpers.reply(self.rpc, body, owner)

    def register(self, hosts=None, owner="conn", lease_s=60):
        r = self.call("register", owner=owner, hosts=hosts or self.ips, lease_s=lease_s)
        assert r["status"] == "ok", r
        return r["job"]

    def plan_allreduce(self, job, ranks=None, comm=0, planner="balanced", owner="conn"):
        steps = rpc_helpers.steps_for(ranks or self.ips)
        return self.call("plan_allreduce", owner=owner, job=job, comm=comm, planner=planner, steps=steps)

    # -- switches' statistics ----------------------------------------------------------------------
    def answer_table_stats(self):
        """Answers the core's statistics requests as the simulated switches' tables stand."""
        for msg in self.core.stats_requests():
            sw = self.fab.switches[msg.datapath.id]
            if isinstance(msg, PARSER.OFPAggregateStatsRequest):
                self.core.table_stats.flows_reply(sw.dpid, len(sw.flows))
            elif isinstance(msg, PARSER.OFPGroupStatsRequest):
                self.core.table_stats.groups_reply(sw.dpid, len(sw.groups), more=False)

    def port_samples(self, dpid, port, rx_bytes, tx_bytes, seconds=1.0, **counters):
        """Two port-stats polls ``seconds`` apart, the second ``rx_bytes``/``tx_bytes`` later."""
        t0 = self.now
        self.core.port_stats_reply(dpid, [port_stat(port, **counters)], t0)
        later = {k: v for k, v in counters.items()}
        later["rx_bytes"] = counters.get("rx_bytes", 0) + rx_bytes
        later["tx_bytes"] = counters.get("tx_bytes", 0) + tx_bytes
        self.core.port_stats_reply(dpid, [port_stat(port, **later)], t0 + seconds)


class Served:
    """The real REST API and operator handlers of an `Operated` controller on 127.0.0.1."""

    def __init__(self, operated):
        app = WSGIApplication()
        auth = OperatorAuth(OPERATOR_TOKEN)
        rest.register(app, operated.core, operated.rpc, auth)
        web.register(app, operated.core, operated.rpc, operated.metrics, auth)
        self.server = wsgiref.simple_server.make_server("127.0.0.1", 0, app, handler_class=_QuietHandler)
        self.url = "http://127.0.0.1:%d" % self.server.server_port
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


class _QuietHandler(wsgiref.simple_server.WSGIRequestHandler):
    def log_message(self, *_args):
        pass
