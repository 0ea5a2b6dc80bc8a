"""Prometheus metrics (controller/metrics.py, controller/rpcmetrics.py) of a controller core on a
simulated fabric: each value checked against what happened, read back through the text format."""
import json
import os
import re
import types
import urllib.error
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families
from ryu.ofproto import ofproto_v1_3 as OFP
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from operator_harness import OPERATOR_TOKEN, Operated, Served, port_stat
from sdnmpi.controller import app
from sdnmpi.primitives import fattree

LEAF1, SPINE1 = 0x201, 0x101
LEAF1_UP1 = 3   # leaf_spine(2, 4, 2): leaf ports 1-2 hosts, 3-4 uplinks


def scrape(op):
    """{(sample name, frozenset(labels)): value} of one scrape."""
    out = {}
    for family in text_string_to_metric_families(op.metrics.exposition().decode()):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(samples, name, **labels):
    return samples.get((name, frozenset((k, str(v)) for k, v in labels.items())))


def names(samples):
    return {name for name, _labels in samples}


def test_topology_gauges_follow_discovery_and_a_cut_link():
    op = Operated()
    s = scrape(op)
    assert (value(s, "sdnmpi_switches"), value(s, "sdnmpi_links"), value(s, "sdnmpi_hosts")) == (6, 8, 8)
    assert value(s, "sdnmpi_routing_policy_info", policy="dmodk") == 1
    assert value(s, "sdnmpi_packet_in_total", kind="lldp") == op.core.counters["packet_in_lldp"] > 0
    op.fab.cut_link(LEAF1, SPINE1)
    assert value(scrape(op), "sdnmpi_links") == 7


def test_port_rates_utilization_drops_and_counters():
    op = Operated(link_capacity=100e6)
    op.port_samples(LEAF1, LEAF1_UP1, rx_bytes=1_000_000, tx_bytes=3_000_000, seconds=2.0,
                    rx_dropped=7, tx_packets=40)
    op.core.port_stats_reply(LEAF1, [port_stat(OFP.OFPP_LOCAL, rx_bytes=5)], op.now + 2.0)
    s = scrape(op)
    key = dict(switch="%016x" % LEAF1, port=LEAF1_UP1)
    assert value(s, "sdnmpi_port_bytes_per_second", direction="rx", **key) == pytest.approx(500_000)
    assert value(s, "sdnmpi_port_bytes_per_second", direction="tx", **key) == pytest.approx(1_500_000)
    assert value(s, "sdnmpi_port_utilization_ratio", direction="tx", **key) == pytest.approx(0.12)
    assert value(s, "sdnmpi_port_utilization_ratio", direction="rx", **key) == pytest.approx(0.04)
    assert value(s, "sdnmpi_port_capacity_bytes_per_second", **key) == pytest.approx(12.5e6)
    assert value(s, "sdnmpi_port_bytes_total", direction="tx", **key) == 3_000_000
    assert value(s, "sdnmpi_port_dropped_packets_total", direction="rx", **key) == 7
    assert value(s, "sdnmpi_port_packets_total", direction="tx", **key) == 40
    assert not [k for k in s if ("port", str(OFP.OFPP_LOCAL)) in k[1]], "reserved ports are not links"


def test_utilization_uses_the_switchs_port_speed_without_the_option():
    op = Operated()
    op.port_samples(LEAF1, LEAF1_UP1, rx_bytes=0, tx_bytes=1_000_000)
    assert "sdnmpi_port_utilization_ratio" not in names(scrape(op)), "no capacity known: no ratio"
    op.fab.dps[LEAF1].ports = {LEAF1_UP1: PARSER.OFPPort(LEAF1_UP1, "0a:00:00:00:00:03", b"eth3", 0, 0, 0, 0, 0, 0,
                                                          10_000, 10_000)}  # 10 Mbit/s, in kbit/s
    s = scrape(op)
    key = dict(switch="%016x" % LEAF1, port=LEAF1_UP1, direction="tx")
    assert value(s, "sdnmpi_port_utilization_ratio", **key) == pytest.approx(0.8)


def test_flow_and_group_entries_are_the_switches_own_counts():
    op = Operated(routing="ecmp")
    op.answer_table_stats()
    s = scrape(op)
    for dpid, sw in op.fab.switches.items():
        assert value(s, "sdnmpi_switch_flow_entries", switch="%016x" % dpid) == len(sw.flows)
        assert value(s, "sdnmpi_switch_group_entries", switch="%016x" % dpid) == len(sw.groups)
    assert sum(len(sw.groups) for sw in op.fab.switches.values()) > 0, "ecmp installs SELECT groups"
    # A group-stats reply in several parts counts once, when the last part arrives.
    op.core.table_stats.groups_reply(LEAF1, 3, more=True)
    op.core.table_stats.groups_reply(LEAF1, 2, more=False)
    assert value(scrape(op), "sdnmpi_switch_group_entries", switch="%016x" % LEAF1) == 5
    op.fab.run(op.core.switch_leave(op.fab.dps[LEAF1]))
    assert value(scrape(op), "sdnmpi_switch_flow_entries", switch="%016x" % LEAF1) is None


def test_jobs_registered_released_expired_and_active():
    op = Operated()
    j1 = op.register(owner="a")
    op.register(owner="b", lease_s=5)
    op.register(owner="c")
    op.register(owner="c")
    assert value(scrape(op), "sdnmpi_jobs_active") == 4
    assert op.call("release", owner="a", job=j1)["status"] == "ok"
    op.now += 10
    op.rpc.expire()                       # b's job: lease expired
    op.rpc.connection_closed(op.client("c"))   # c's two jobs
    s = scrape(op)
    assert value(s, "sdnmpi_jobs_active") == 0
    assert value(s, "sdnmpi_jobs_registered_total") == 4
    assert value(s, "sdnmpi_jobs_released_total", reason="client") == 1
    assert value(s, "sdnmpi_jobs_released_total", reason="disconnected") == 2
    assert value(s, "sdnmpi_jobs_expired_total") == 1


def test_operator_release_over_rest_is_counted_as_such():
    op = Operated()
    job = op.register()
    served = Served(op)
    url = "%s/sdnmpi/jobs/%d" % (served.url, job)
    try:
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(urllib.request.Request(url, method="DELETE"), timeout=5)
        assert err.value.code == 401
        assert value(scrape(op), "sdnmpi_jobs_active") == 1
        req = urllib.request.Request(url, method="DELETE", headers={"Authorization": "Bearer " + OPERATOR_TOKEN})
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert resp.status == 200
    finally:
        served.close()
    s = scrape(op)
    assert value(s, "sdnmpi_jobs_active") == 0
    assert value(s, "sdnmpi_jobs_released_total", reason="operator") == 1


def test_rpc_requests_errors_by_op_and_reason():
    op = Operated()
    job = op.register()
    assert op.call("release", job=999)["status"] == "error"
    assert op.call("locate", job=job, hosts=["10.9.9.9"])["status"] == "ok"
    bad = op.call("plan_allreduce", job=job, comm=0, planner="balanced", steps=[[["10.0.0.1", "10.9.9.9", 1]]])
    assert bad["status"] == "error" and "not in the topology" in bad["error"]
    assert op.call("plan_allreduce", job=job, comm=0, planner="nonsense", steps=[])["status"] == "error"
    assert op.raw_call(b"\xc1garbage")["status"] == "error"
    assert op.call("locate", job=job, token="0" * 32, hosts=[op.ips[0]])["status"] == "error"
    assert op.call("register", hosts=[op.ips[5]])["status"] == "error"   # the client is on another host
    op.fail_confirm = True
    assert op.plan_allreduce(job)["status"] == "error"
    s = scrape(op)
    assert value(s, "sdnmpi_rpc_requests_total", op="register") == 2
    assert value(s, "sdnmpi_rpc_requests_total", op="release") == 1
    assert value(s, "sdnmpi_rpc_requests_total", op="locate") == 2
    assert value(s, "sdnmpi_rpc_errors_total", op="locate", reason="bad_token") == 1
    assert value(s, "sdnmpi_rpc_errors_total", op="register", reason="not_allowed") == 1
    assert value(s, "sdnmpi_rpc_requests_total", op="plan_allreduce") == 2
    assert value(s, "sdnmpi_rpc_requests_total", op="invalid") == 2   # garbage, and an unknown planner
    assert value(s, "sdnmpi_rpc_errors_total", op="release", reason="unknown_job") == 1
    assert value(s, "sdnmpi_rpc_errors_total", op="plan_allreduce", reason="unknown_host") == 1
    assert value(s, "sdnmpi_rpc_errors_total", op="plan_allreduce", reason="not_confirmed") == 1
    assert value(s, "sdnmpi_rpc_errors_total", op="invalid", reason="invalid_request") == 2
    assert value(s, "sdnmpi_rpc_errors_total", op="register", reason="unknown_job") is None
    assert value(s, "sdnmpi_rpc_request_duration_seconds_count", op="plan_allreduce") == 2
    assert value(s, "sdnmpi_rpc_errors_total", op="locate", reason="refused") is None


def test_planning_latency_per_planner_and_cache_hits():
    op = Operated()
    job = op.register()
    assert op.plan_allreduce(job, comm=0)["cached"] is False
    assert op.plan_allreduce(job, comm=0)["cached"] is True
    assert op.plan_allreduce(job, comm=1, planner="dmodk")["cached"] is False
    tree = op.call("plan_bcast", job=job, comm=0, root=op.ips[0], members=op.ips)
    assert tree["status"] == "ok" and not tree["cached"]
    assert op.call("plan_bcast", job=job, comm=0, root=op.ips[0], members=op.ips)["cached"]
    s = scrape(op)
    assert value(s, "sdnmpi_plan_duration_seconds_count", planner="balanced") == 1
    assert value(s, "sdnmpi_plan_duration_seconds_count", planner="dmodk") == 1
    assert value(s, "sdnmpi_plan_duration_seconds_count", planner="bcast") == 1
    assert value(s, "sdnmpi_plan_duration_seconds_bucket", planner="balanced", le="+Inf") == 1
    assert value(s, "sdnmpi_plan_cache_hits_total", op="plan_allreduce") == 1
    assert value(s, "sdnmpi_plan_cache_misses_total", op="plan_allreduce") == 2
    assert value(s, "sdnmpi_plan_cache_hits_total", op="plan_bcast") == 1
    assert value(s, "sdnmpi_plan_install_duration_seconds_count", op="plan_bcast") == 1
    assert value(s, "sdnmpi_allreduce_plans_total") == 2
    assert value(s, "sdnmpi_bcast_trees_total") == 1


def test_openflow_errors_by_type():
    op = Operated()
    op.metrics.openflow_error(OFP.OFPET_BAD_MATCH)
    op.metrics.openflow_error(OFP.OFPET_BAD_MATCH)
    op.metrics.openflow_error(OFP.OFPET_GROUP_MOD_FAILED)
    s = scrape(op)
    assert value(s, "sdnmpi_openflow_errors_total", type="bad_match") == 2
    assert value(s, "sdnmpi_openflow_errors_total", type="group_mod_failed") == 1


def test_two_controllers_in_one_process_have_their_own_metrics():
    small, big = Operated(fattree.leaf_spine(1, 2, 1)), Operated(fattree.kary(4))
    small.register()
    s, b = scrape(small), scrape(big)
    assert (value(s, "sdnmpi_switches"), value(b, "sdnmpi_switches")) == (3, 20)
    assert (value(s, "sdnmpi_jobs_registered_total"), value(b, "sdnmpi_jobs_registered_total")) == (1, 0)


def test_metrics_over_http_in_the_prometheus_text_format():
    op = Operated()
    served = Served(op)
    try:
        with urllib.request.urlopen(served.url + "/metrics", timeout=5) as resp:
            ctype, body = resp.headers["Content-Type"], resp.read().decode()
    finally:
        served.close()
    assert ctype.startswith("text/plain") and "version=0.0.4" in ctype
    families = {f.name: f for f in text_string_to_metric_families(body)}
    assert families["sdnmpi_hosts"].samples[0].value == 8
    assert families["sdnmpi_rpc_requests"].type == "counter"
    for name in families:
        assert name.startswith("sdnmpi_"), name


def test_app_feeds_the_switches_stats_replies_and_errors_to_the_metrics():
    op = Operated()
    holder = types.SimpleNamespace(core=op.core, metrics=op.metrics, confirmer=types.SimpleNamespace(error=lambda *a: None))
    dp = op.fab.dps[LEAF1]

    def event(msg):
        return types.SimpleNamespace(msg=msg)

    aggregate = PARSER.OFPAggregateStatsReply(dp, body=PARSER.OFPAggregateStats(10, 1000, 17))
    app.SdnMpiApp._aggregate_stats_reply(holder, event(aggregate))
    more = PARSER.OFPGroupStatsReply(dp, flags=OFP.OFPMPF_REPLY_MORE, body=[object()] * 2)
    last = PARSER.OFPGroupStatsReply(dp, flags=0, body=[object()] * 3)
    app.SdnMpiApp._group_stats_reply(holder, event(more))
    assert value(scrape(op), "sdnmpi_switch_group_entries", switch="%016x" % LEAF1) is None
    app.SdnMpiApp._group_stats_reply(holder, event(last))
    error = PARSER.OFPErrorMsg(dp, type_=OFP.OFPET_FLOW_MOD_FAILED, code=OFP.OFPFMFC_TABLE_FULL)
    error.xid = 7
    app.SdnMpiApp._error(holder, event(error))
    s = scrape(op)
    assert value(s, "sdnmpi_switch_flow_entries", switch="%016x" % LEAF1) == 17
    assert value(s, "sdnmpi_switch_group_entries", switch="%016x" % LEAF1) == 5
    assert value(s, "sdnmpi_openflow_errors_total", type="flow_mod_failed") == 1


def test_grafana_dashboard_queries_only_metrics_the_controller_exports():
    op = Operated(link_capacity=1e9)
    job = op.register()
    op.plan_allreduce(job)
    op.plan_allreduce(job)
    op.call("release", job=job)
    op.register(lease_s=1)
    op.now += 5
    op.rpc.expire()
    op.call("release", job=77)
    op.metrics.openflow_error(OFP.OFPET_BAD_MATCH)
    op.answer_table_stats()
    op.port_samples(LEAF1, LEAF1_UP1, rx_bytes=10, tx_bytes=10, rx_dropped=1)
    exported = names(scrape(op))
    path = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "grafana-dashboard.json")
    with open(path) as f:
        dashboard = json.load(f)
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    used = {name for e in exprs for name in re.findall(r"\bsdnmpi_[a-z_]+", e)}
    assert len(used) >= 20
    assert used <= exported, sorted(used - exported)
