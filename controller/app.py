"""The thin Ryu application: turns Ryu events into calls on `Core` and sends what it returns.

Periodic work runs in Ryu hub threads: LLDP probes, link/host expiry, route recomputation (changes
are gathered for ``--sdnmpi-route-delay`` seconds) and port-stats polling. An exception in any
handler or loop is logged with its traceback and counted; the controller carries on.
"""
import functools
import logging
import time

from ryu.app.wsgi import WSGIApplication
from ryu.base import app_manager
from ryu.controller import ofp_event
from ryu.controller.handler import DEAD_DISPATCHER, MAIN_DISPATCHER, set_ev_cls
from ryu.lib import hub
from ryu.ofproto import ofproto_v1_3

from . import flowdetect, options, rest, rest_flows, rpc, web
from .access import RegisterAccess, parse_networks
from .auth import OperatorAuth
from .barriers import Confirmer
from .core import Core
from .jobidle import IdleWatch
from .metrics import Metrics
from .rpcmetrics import MeteredRpcService

LOG = logging.getLogger(__name__)
EXPIRY_INTERVAL = 0.5


def _logged(handler):
    """Runs a handler; an unexpected exception is logged loudly and counted, never raised."""
    @functools.wraps(handler)
    def wrapper(self, *args, **kwargs):
        try:
            return handler(self, *args, **kwargs)
        except Exception:  # pylint: disable=broad-except
            self.core.counters["handler_errors"] += 1
            LOG.exception("sdnmpi: %s failed", handler.__name__)
            return None
    return wrapper


def _port_is_up(dp, port):
    ofp = dp.ofproto
    return not (port.state & ofp.OFPPS_LINK_DOWN or port.config & ofp.OFPPC_PORT_DOWN)


class SdnMpiApp(app_manager.RyuApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]
    _CONTEXTS = {"wsgi": WSGIApplication}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.settings = options.settings()
        self.core = Core(self.settings)
        self.confirmer = Confirmer(self.settings.barrier_timeout)
        s = self.settings
        idle = IdleWatch(s.idle_threshold, s.idle_time) if s.idle_threshold > 0 else None
        self.metrics = Metrics(self.core)
        self.rpc = MeteredRpcService(self.core, self.confirmer.confirm, self.metrics,
                                     access=RegisterAccess(parse_networks(s.rpc_allow.split(","))),
                                     idle_watch=idle)
        self.rpc_limits = rpc.Limits(max_connections=s.rpc_max_connections, idle_timeout=s.rpc_idle_timeout,
                                     frame_timeout=s.rpc_frame_timeout)
        self.auth = OperatorAuth.from_file(s.operator_token_file)
        self.flow_detection = flowdetect.from_settings(s)   # None: --sdnmpi-flow-detection none
        rest_flows.register(kwargs["wsgi"], self.flow_detection)
        self._flows_polled = hub.Event()
        rest.register(kwargs["wsgi"], self.core, self.rpc, self.auth)
        web.register(kwargs["wsgi"], self.core, self.rpc, self.metrics, self.auth)
        LOG.info("sdnmpi controller: %s", self.settings)

    def start(self):
        thread = super().start()
        s = self.settings
        for interval, work in ((s.lldp_interval, self.core.lldp_probes),
                               (EXPIRY_INTERVAL, lambda: self.core.expire(time.monotonic())),
                               (max(s.route_delay, 0.05), self._update_routes),
                               (s.stats_interval, self._poll_stats),
                               (EXPIRY_INTERVAL, self.rpc.expire)):
            self.threads.append(hub.spawn(self._every, interval, work))
        if self.flow_detection is not None:
            self.threads.append(hub.spawn(self._flow_loop))
        if s.rpc_port:
            server = hub.StreamServer((s.rpc_host, s.rpc_port), self._rpc_connection)
            self.threads.append(hub.spawn(server.serve_forever))
            LOG.info("RPC service on %s:%d", s.rpc_host, s.rpc_port)
        return thread

    def _rpc_connection(self, sock, addr):
        rpc.serve_connection(self.rpc, sock, addr, self.rpc_limits)

    def _every(self, interval, work):
        while self.is_active:
            self._run(work)
            hub.sleep(interval)

    @_logged
    def _run(self, work):
        self._send(work())

    def _update_routes(self):
        """Default routes, then the jobs' routes, after a topology change; nothing otherwise. The
        pass counts as confirmed (GET /sdnmpi/stats "routes_pending") once every switch answered
        the barrier after its default routes and the jobs' re-planned routes are in place."""
        recomputes = self.core.counters["route_recomputes"]
        msgs = self.core.recompute_routes()
        done = self.core.counters["route_recomputes"]
        if done == recomputes:
            return []
        confirmed = True
        try:
            self.confirmer.confirm(msgs)
        except rpc.ConfirmError as err:
            confirmed = False
            LOG.warning("route pass %d not confirmed: %s", done, err)
        self.rpc.replan()
        if confirmed:
            self.core.routes_confirmed = done
        return []

    def _poll_stats(self):
        """Dynamic phase detection on the counters of the polls so far, then the next poll."""
        self.rpc.watch_idle(time.monotonic())
        return self.core.stats_requests()

    def _flow_loop(self):
        """Flow detection, once per --sdnmpi-flow-interval (measured from poll start to poll start)."""
        interval = self.settings.flow_interval
        while self.is_active:
            started = time.monotonic()
            self._run(self._flow_poll)
            hub.sleep(max(0.0, interval - (time.monotonic() - started)))

    def _flow_poll(self):
        """Counting entries and flow-stats requests out, the replies awaited (at most half an
        interval), then detection and the routes of new elephants (confirmed)."""
        fd = self.flow_detection
        self._flows_polled.clear()
        self._send(fd.poll(self.core, self.rpc.jobs))
        if not fd.counting.complete:
            self._flows_polled.wait(timeout=self.settings.flow_interval / 2)
        fd.detect(self.rpc)
        return []

    @staticmethod
    def _send(msgs):
        for msg in msgs or ():
            msg.datapath.send_msg(msg)

    @set_ev_cls(ofp_event.EventOFPStateChange, [MAIN_DISPATCHER, DEAD_DISPATCHER])
    @_logged
    def _state_change(self, ev):
        dp = ev.datapath
        if ev.state == MAIN_DISPATCHER:
            ports = {p.port_no: p.hw_addr for p in dp.ports.values() if _port_is_up(dp, p)}
            self._send(self.core.switch_enter(dp, ports))
            if self.flow_detection is not None:
                self.flow_detection.switch_reset(dp.id)   # the counting entries went with the tables
            self._send(self.rpc.switch_reset(dp.id))  # a reconnecting switch lost the jobs' flows
        elif dp.id is not None:
            self._send(self.core.switch_leave(dp))

    @set_ev_cls(ofp_event.EventOFPPortStatus, MAIN_DISPATCHER)
    @_logged
    def _port_status(self, ev):
        msg = ev.msg
        dp, desc = msg.datapath, msg.desc
        up = msg.reason != dp.ofproto.OFPPR_DELETE and _port_is_up(dp, desc)
        self._send(self.core.port_status(dp, desc.port_no, desc.hw_addr, up))

    @set_ev_cls(ofp_event.EventOFPPacketIn, MAIN_DISPATCHER)
    @_logged
    def _packet_in(self, ev):
        msg = ev.msg
        self._send(self.core.packet_in(msg.datapath, msg.match["in_port"], msg.data, time.monotonic()))

    @set_ev_cls(ofp_event.EventOFPPortStatsReply, MAIN_DISPATCHER)
    @_logged
    def _port_stats_reply(self, ev):
        self.core.port_stats_reply(ev.msg.datapath.id, ev.msg.body, time.monotonic())

    @set_ev_cls(ofp_event.EventOFPAggregateStatsReply, MAIN_DISPATCHER)
    @_logged
    def _aggregate_stats_reply(self, ev):
        self.core.table_stats.flows_reply(ev.msg.datapath.id, ev.msg.body.flow_count)

    @set_ev_cls(ofp_event.EventOFPFlowStatsReply, MAIN_DISPATCHER)
    @_logged
    def _flow_stats_reply(self, ev):
        msg = ev.msg
        more = bool(msg.flags & msg.datapath.ofproto.OFPMPF_REPLY_MORE)
        if self.flow_detection is not None and self.flow_detection.reply(msg.datapath.id, msg.body, more):
            self._flows_polled.set()

    @set_ev_cls(ofp_event.EventOFPGroupStatsReply, MAIN_DISPATCHER)
    @_logged
    def _group_stats_reply(self, ev):
        msg = ev.msg
        more = bool(msg.flags & msg.datapath.ofproto.OFPMPF_REPLY_MORE)
        self.core.table_stats.groups_reply(msg.datapath.id, len(msg.body), more)

    @set_ev_cls(ofp_event.EventOFPBarrierReply, MAIN_DISPATCHER)
    @_logged
    def _barrier_reply(self, ev):
        self.confirmer.barrier_reply(ev.msg.datapath.id, ev.msg.xid)

    @set_ev_cls(ofp_event.EventOFPErrorMsg, MAIN_DISPATCHER)
    @_logged
    def _error(self, ev):
        msg = ev.msg
        self.core.counters["switch_errors"] += 1
        self.metrics.openflow_error(msg.type)
        self.confirmer.error(msg.datapath.id, msg.xid, msg.type, msg.code)
        LOG.warning("switch %016x reported OpenFlow error type=%d code=%d", msg.datapath.id, msg.type, msg.code)
