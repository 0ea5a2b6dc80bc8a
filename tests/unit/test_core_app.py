"""controller/core.py's JSON views, and the Ryu app's handler wrapper (controller/app.py): a failing
handler is logged and counted, never raised into Ryu."""
import collections
import logging
import types

from ryu.ofproto import ofproto_v1_3 as OFP
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from sdnmpi.controller import app, options
from sdnmpi.controller.core import Core
from sdnmpi.primitives import fattree

from core_checks import out_ports
from frame_builders import arp_frame
from switch_sim import FakeDatapath


# ---------------------------------------------------------------------------------------------
# views
def test_routes_and_stats_json(make_fabric):
    sim = make_fabric(fattree.leaf_spine(2, 2, 1), routing="ecmp")
    sim.discover()
    routes = sim.core.routes_json()
    assert sorted(routes) == ["%016x" % d for d in sim.switch_ids]
    assert routes["%016x" % 0x201] == {sim.host_ip[sim.hosts()[0]]: [1], sim.host_ip[sim.hosts()[1]]: [2, 3]}
    stats = sim.core.stats_json()
    assert stats["routing"] == "ecmp" and stats["route_recomputes"] == 1 and stats["handler_errors"] == 0
    assert set(stats) == {"routing", "packet_in", "malformed", "arp_replies", "arp_probes", "route_recomputes",
                          "routes_pending", "handler_errors", "host_claims_refused", "hosts_refused_port_full",
                          "arp_probes_limited"}
    assert stats["host_claims_refused"] == 0
    assert stats["packet_in"]["total"] == sim.to_controller
    kinds = collections.Counter((m.datapath.id, type(m).__name__) for m in sim.core.stats_requests())
    assert kinds == {(d, kind): 1 for d in sim.switch_ids
                     for kind in ("OFPPortStatsRequest", "OFPAggregateStatsRequest", "OFPGroupStatsRequest")}


# ---------------------------------------------------------------------------------------------
# the Ryu app's handler wrapper
def test_logged_logs_and_counts_instead_of_raising(caplog):
    holder = types.SimpleNamespace(core=Core(options.Settings()))

    @app._logged
    def handler(self, value):
        if value == "boom":
            raise RuntimeError("kaboom")
        return value * 2

    assert handler.__name__ == "handler"
    assert handler(holder, 21) == 42 and holder.core.counters["handler_errors"] == 0
    with caplog.at_level(logging.ERROR, logger=app.LOG.name):
        assert handler(holder, "boom") is None
        assert handler(holder, "boom") is None
    assert holder.core.counters["handler_errors"] == 2
    records = [r for r in caplog.records if r.name == app.LOG.name]
    assert len(records) == 2 and records[0].levelno == logging.ERROR
    assert "handler" in records[0].getMessage() and isinstance(records[0].exc_info[1], RuntimeError)
    assert holder.core.stats_json()["handler_errors"] == 2


def test_app_packet_in_handler_survives_a_failing_core(monkeypatch, caplog):
    core = Core(options.Settings())
    dp = FakeDatapath(0x201)
    core.switch_enter(dp, {1: "0a:00:00:00:00:01", 2: "0a:00:00:00:00:02"})
    holder = types.SimpleNamespace(core=core, _send=app.SdnMpiApp._send)
    h1, h2 = "00:00:00:00:00:01", "00:00:00:00:00:02"
    core.packet_in(dp, 2, arp_frame(2, h2, "10.0.0.2", h1, "10.0.0.1"), 0.0)   # h2 known

    def event(data):
        return types.SimpleNamespace(msg=types.SimpleNamespace(datapath=dp, match={"in_port": 1}, data=data))

    app.SdnMpiApp._packet_in(holder, event(arp_frame(1, h1, "10.0.0.1", "00:00:00:00:00:00", "10.0.0.2")))
    (reply,) = dp.sent   # the handler sent the core's answer
    assert isinstance(reply, PARSER.OFPPacketOut) and out_ports(reply) == [1]

    def broken(*_args):
        raise KeyError("core bug")

    monkeypatch.setattr(core, "packet_in", broken)
    with caplog.at_level(logging.ERROR, logger=app.LOG.name):
        assert app.SdnMpiApp._packet_in(holder, event(b"x" * 60)) is None
        app.SdnMpiApp._run(holder, lambda: 1 / 0)
    assert core.counters["handler_errors"] == 2
    assert len(dp.sent) == 1


def test_port_is_up():
    port = types.SimpleNamespace(state=0, config=0)
    dp = FakeDatapath(1)
    assert app._port_is_up(dp, port)
    assert not app._port_is_up(dp, types.SimpleNamespace(state=OFP.OFPPS_LINK_DOWN, config=0))
    assert not app._port_is_up(dp, types.SimpleNamespace(state=0, config=OFP.OFPPC_PORT_DOWN))
