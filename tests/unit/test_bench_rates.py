"""The link rates chosen per machine (bench/bench_rates.py, --rates link-bound): the ladder, the
probe's streams and fair shares, each rung's verdict, the choice, its report, and the fabric's rates
changed in place (bench_fabric.Bench.set_rates). No Mininet: fake probe figures and interfaces."""
import argparse

import pytest

import bench_setup  # noqa: F401 (bench/ on sys.path)

import bench_cli
import bench_fabric
import bench_rates
import benchcore
import emulation
import report


def test_ladder_parses_fastest_first_and_refuses_the_rest():
    assert bench_rates.parse_ladder("30/15, 20/10,12/6") == [(30.0, 15.0), (20.0, 10.0), (12.0, 6.0)]
    assert bench_rates.parse_ladder(bench_rates.DEFAULT_LADDER)[0] == (30.0, 15.0)
    assert [type(v) for v in bench_rates.parse_ladder("30/7.5")[0]] == [int, float]   # 30, not 30.0, in the records
    for bad in ("20/10,30/15", "30/15,30/10", "30/15,20/15", "30/0", "30", "a/b", "", " , "):
        with pytest.raises(ValueError):
            bench_rates.parse_ladder(bad)


@pytest.mark.parametrize("leaves,hpl", [(4, 2), (4, 4), (3, 3)])
def test_every_host_sends_once_across_the_spines_and_once_within_its_leaf(leaves, hpl):
    fab = benchcore.Fabric(spines=2, leaves=leaves, hosts_per_leaf=hpl, host_bw=30, fabric_bw=15)
    pairs = bench_rates.load_pairs(fab, "ring")
    for kind in ("across", "within"):
        mine = [(s, d) for s, d, k in pairs if k == kind]
        assert sorted(s for s, _d in mine) == list(range(1, fab.hosts + 1))   # each host sends one
        assert sorted(d for _s, d in mine) == list(range(1, fab.hosts + 1))   # and takes one
        same_leaf = {fab.leaf_of(s) == fab.leaf_of(d) for s, d in mine}
        assert same_leaf == ({False} if kind == "across" else {True})
    for leaf in range(1, leaves + 1):   # every leaf sends and takes hosts_per_leaf streams over its uplinks
        assert sum(1 for s, _d, k in pairs if k == "across" and fab.leaf_of(s) == leaf) == hpl
        assert sum(1 for _s, d, k in pairs if k == "across" and fab.leaf_of(d) == leaf) == hpl


def test_degenerate_fabrics_have_one_kind_of_stream():
    one_leaf = benchcore.Fabric(spines=2, leaves=1, hosts_per_leaf=4, host_bw=30, fabric_bw=15)
    assert {k for _s, _d, k in bench_rates.load_pairs(one_leaf, "ring")} == {"within"}
    assert bench_rates.link_shares(one_leaf, "ring") == {"within": 30}
    assert bench_rates.link_shares(one_leaf, "peers") == {"within": 10}   # 3 leaf mates a host
    one_host = benchcore.Fabric(spines=2, leaves=4, hosts_per_leaf=1, host_bw=30, fabric_bw=10)
    assert [(s, d) for s, d, _k in bench_rates.load_pairs(one_host, "ring")] == [(1, 2), (2, 3), (3, 4), (4, 1)]
    assert bench_rates.link_shares(one_host, "ring") == {"across": 20.0}   # 2 uplinks of 10, one stream a leaf


def test_fair_shares_follow_the_bottleneck():
    # 16 hosts, 4 a leaf: 4 streams share 2 x 15 Mbit/s of uplinks; the within stream takes the rest
    assert bench_rates.link_shares(benchcore.Fabric(2, 4, 4, 30, 15), "ring") == {"across": 7.5, "within": 22.5}
    assert bench_rates.link_shares(benchcore.Fabric(2, 4, 4, 12, 6), "ring") == {"across": 3.0, "within": 9.0}
    # 8 hosts, 2 a leaf: the uplinks would give 15, the host link caps each of its two streams at half
    assert bench_rates.link_shares(benchcore.Fabric(2, 4, 2, 20, 15), "ring") == {"across": 10.0, "within": 10.0}


@pytest.mark.parametrize("leaves,hpl", [(4, 2), (4, 4), (3, 3)])
def test_peers_load_reaches_every_leaf_mate_and_every_place_mate(leaves, hpl):
    fab = benchcore.Fabric(spines=2, leaves=leaves, hosts_per_leaf=hpl, host_bw=30, fabric_bw=15)
    pairs = bench_rates.load_pairs(fab, "peers")
    assert len(set((s, d) for s, d, _k in pairs)) == len(pairs) == fab.hosts * (leaves - 1 + hpl - 1)
    for host in range(1, fab.hosts + 1):
        place = (host - 1) % hpl
        across = sorted(d for s, d, k in pairs if s == host and k == "across")
        within = sorted(d for s, d, k in pairs if s == host and k == "within")
        assert across == sorted(h for h in range(1, fab.hosts + 1) if fab.leaf_of(h) != fab.leaf_of(host)
                                and (h - 1) % hpl == place)
        assert within == sorted(h for h in range(1, fab.hosts + 1) if fab.leaf_of(h) == fab.leaf_of(host) and h != host)
    # the paced variant has the same streams; only the greedy loads leave iperf3's options alone
    assert bench_rates.load_pairs(fab, "peers-paced") == pairs
    assert bench_rates.client_args(fab, pairs, "peers") == [[]] * len(pairs)
    with pytest.raises(ValueError):
        bench_rates.load_pairs(fab, "everyone")


def test_peers_shares_and_paced_options():
    # 16 hosts: 12 across streams a leaf share its 2 x 15 Mbit/s of uplinks; 3 within streams the rest of 30
    assert bench_rates.link_shares(benchcore.Fabric(2, 4, 4, 30, 15), "peers") == {"across": 2.5, "within": 7.5}
    # 8 hosts: 6 across streams a leaf, 5 each; the one within stream takes the host link's other 15
    assert bench_rates.link_shares(benchcore.Fabric(2, 4, 2, 30, 15), "peers") == {"across": 5.0, "within": 15.0}
    # fat uplinks: the host link's even share caps the across streams (4 streams a host at 7.5)
    assert bench_rates.link_shares(benchcore.Fabric(2, 4, 2, 30, 100), "peers") == {"across": 7.5, "within": 7.5}
    fab = benchcore.Fabric(2, 4, 4, 12, 6)
    pairs = bench_rates.load_pairs(fab, "ring-paced")
    opts = bench_rates.client_args(fab, pairs, "ring-paced")
    assert opts[0] == ["-b", "3M", "-l", 4096, "-N"] and opts[1] == ["-b", "9M", "-l", 4096, "-N"]
    assert [k for _s, _d, k in pairs[:2]] == ["across", "within"]


def test_each_load_is_described_by_its_own_properties():
    """results.md's words follow the load's properties: the streams (ring or peers), the pacing,
    the polling ranks; each only where the load has it."""
    words = {load: bench_rates.describe_load(load) for load in bench_rates.LOADS}
    for load, text in words.items():
        props = bench_rates.LOADS[load]
        assert ("every other host of its leaf" in text) == props.every, load
        assert ("fair share" in text) == props.paced, load
        assert ("waiting MPI rank" in text) == props.ranks, load
    assert len(set(words.values())) == len(words)


@pytest.mark.parametrize("load", bench_rates.LOADS)
def test_every_load_asks_the_switch_at_least_what_the_allreduce_asks_at_its_bound(load):
    """At the links' rate no load can ask more crossings than the ring's: every host link full, the
    across streams at what the uplinks allow. The hierarchical allreduce at its bound asks 42 n over
    1.875 n (16 hosts) and 26 n over 1.75 n (8 hosts) at 30 Mbit/s: 80 and 53 MiB/s."""
    sixteen, eight = benchcore.Fabric(2, 4, 4, 30, 15), benchcore.Fabric(2, 4, 2, 30, 15)
    assert abs(bench_rates.allreduce_crossings(sixteen) - 16 * 30 * 42 / 1.875 / 16) < 1e-9
    assert abs(bench_rates.allreduce_crossings(eight) - 8 * 30 * 26 / 1.75 / 8) < 1e-9
    assert round(bench_rates.mib_s(bench_rates.allreduce_crossings(sixteen))) == 80
    assert round(bench_rates.mib_s(bench_rates.allreduce_crossings(eight))) == 53
    # 16 x (7.5 Mbit/s over 3 switches + 22.5 over 1) and 8 x (15 over 3 + 15 over 1)
    assert bench_rates.asked_crossings(sixteen, load) == 720.0 and bench_rates.asked_crossings(eight, load) == 480.0
    # 16 hosts at 20/10 ask what 8 hosts ask at 30/15
    assert bench_rates.asked_crossings(benchcore.Fabric(2, 4, 4, 20, 10), load) == 480.0
    assert bench_rates.allreduce_crossings(benchcore.Fabric(2, 1, 4, 30, 15)) is None
    assert bench_rates.allreduce_crossings(benchcore.Fabric(2, 4, 1, 30, 15)) is None


def fake_cpu(link, switch, foreign=1.0, crossings=40.0):
    return {"busiest_link_weighted_pct": link, "ovs_main_runnable_weighted_pct": switch,
            "ovs_main_run_weighted_pct": None if switch is None else switch - 10.0, "ovs_main_wait_weighted_pct": 10.0,
            "crossing_mib_s_weighted": crossings, "foreign_cpu_pct_of_one_cpu": {"median": foreign}, "stalls": []}


def probe_streams(pairs, across, within):
    return [{"mbit": across, "retransmits": 1} if k == "across" else {"mbit": within, "retransmits": 0}
            for _s, _d, k in pairs]


def test_rung_record_sums_the_streams_and_judges_like_check_4():
    fab = benchcore.Fabric(2, 4, 4, 30, 15)
    pairs = bench_rates.load_pairs(fab, "ring")
    streams = probe_streams(pairs, 7.0, 20.0)
    streams[0] = {}   # an unreadable sender output (host 1's across stream)
    rung = bench_rates.rung_record(fab, pairs, streams, fake_cpu(86.0, 97.0), "ring")
    across, within = rung["streams"]["across"], rung["streams"]["within"]
    assert across["streams"] == 16 and across["unread"] == 1 and across["retransmits"] == 15
    assert across["mbit_sum"] == 15 * 7.0 and across["mbit_median"] == 7.0
    assert abs(across["of_fair_share"] - 7.0 / 7.5) < 1e-12   # of the 15 streams that were read
    assert within["unread"] == 0 and abs(within["of_fair_share"] - 20.0 / 22.5) < 1e-12
    # the link figure: what the read streams got of what the links allow them, 425 of 472.5 Mbit/s
    assert abs(rung["delivered_pct"] - 100.0 * (15 * 7.0 + 16 * 20.0) / (15 * 7.5 + 16 * 22.5)) < 1e-9
    assert (rung["host_bw_mbit"], rung["fabric_bw_mbit"], rung["verdict"]) == (30, 15, "links")
    assert rung["load"] == "ring" and round(rung["asked_crossing_mib_s"]) == 86
    assert round(rung["allreduce_crossing_mib_s"]) == 80
    streams[4] = {"mbit": 3.0, "retransmits": 0}   # one slow across stream (host 3's)
    slow = bench_rates.rung_record(fab, pairs, streams, fake_cpu(86.0, 97.0), "ring")["streams"]
    assert abs(slow["across"]["slowest_of_fair_share"] - 3.0 / 7.5) < 1e-12
    assert abs(slow["within"]["slowest_of_fair_share"] - 20.0 / 22.5) < 1e-12
    # the peers load on the same fabric: 96 streams, judged against its own shares (2.5 and 7.5)
    peers = bench_rates.load_pairs(fab, "peers")
    rung = bench_rates.rung_record(fab, peers, probe_streams(peers, 2.0, 7.0), fake_cpu(86.0, 97.0), "peers")
    assert rung["streams"]["across"]["streams"] == 48 and abs(rung["streams"]["across"]["of_fair_share"] - 0.8) < 1e-12
    assert abs(rung["delivered_pct"] - 100.0 * (48 * 2.0 + 48 * 7.0) / (48 * 2.5 + 48 * 7.5)) < 1e-9
    # run 20261129-104927 at 30/15: one uplink at 81 % of its rate, but the streams got 34 % of their share
    starved = probe_streams(pairs, 72.3 / 16, 89.1 / 16)
    rung = bench_rates.rung_record(fab, pairs, starved, fake_cpu(81.0, 100.0), "ring")
    assert round(rung["delivered_pct"]) == 34 and rung["verdict"] == "switch"
    assert bench_rates.rung_record(fab, pairs, starved, fake_cpu(81.0, 50.0), "ring")["verdict"] == "other"
    assert bench_rates.rung_record(fab, pairs, [{}] * len(pairs), fake_cpu(90.0, 90.0), "ring")["verdict"] is None


def rung(host, fabric, verdict, foreign=1.0):
    return {"host_bw_mbit": host, "fabric_bw_mbit": fabric, "verdict": verdict, "streams": {},
            "delivered_pct": 90.0 if verdict == "links" else 50.0,
            "busiest_link_weighted_pct": 90.0 if verdict == "links" else 60.0, "ovs_main_runnable_weighted_pct": 95.0,
            "ovs_main_run_weighted_pct": 75.0, "ovs_main_wait_weighted_pct": 20.0, "crossing_mib_s_weighted": 30.0,
            "foreign_cpu_pct": foreign}


def test_the_fastest_link_bound_rung_is_chosen():
    assert bench_rates.choose([rung(30, 15, "switch"), rung(20, 10, "switch"), rung(12, 6, "links"),
                               rung(8, 4, "links")]) == (2, True)
    assert bench_rates.choose([rung(30, 15, "links"), rung(20, 10, "switch")]) == (0, True)
    # "other" (links below their rate, the switch idle at times) is not link-bound either
    assert bench_rates.choose([rung(30, 15, "other"), rung(20, 10, None)]) == (1, False)
    assert bench_rates.choose([]) == (None, False)


def test_decision_and_its_report():
    ladder = bench_rates.parse_ladder("30/15,20/10,12/6,8/4")
    rec = bench_rates.decision(ladder, [rung(30, 15, "switch"), rung(20, 10, "switch"), rung(12, 6, "links")],
                               5, "dmodk", 32)
    assert rec["chosen"] == [12, 6] and rec["link_bound"] and not rec["busy"] and len(rec["ladder"]) == 4
    text = "\n".join(bench_rates.markdown(rec))
    assert "Chosen: **12 / 6 Mbit/s**, the fastest link-bound rung." in text
    assert text.count("\n| ") == 4 and "| 30 / 15 | 50% | 60% | 75% + 20% | 30 MiB/s |" in text
    none = bench_rates.decision(ladder, [rung(30, 15, "switch", foreign=40.0), rung(8, 4, "other")], 5, "dmodk", 32)
    assert none["chosen"] == [8, 4] and not none["link_bound"] and none["busy"]
    text = "\n".join(bench_rates.markdown(none))
    assert "**no rung was link-bound**" in text and "Other processes used >= 25% of a CPU" in text
    assert bench_rates.markdown(None) == []
    results = {"fabric": {"spines": 2, "leaves": 4, "hosts_per_leaf": 4, "hosts": 16, "host_bw_mbit": 12,
                          "fabric_bw_mbit": 6}, "rate_choice": rec}
    assert "Chosen: **12 / 6 Mbit/s**" in report.render_markdown(results)


def test_rates_option():
    fixed = bench_cli.parse_args([])
    assert (fixed.rates, fixed.host_bw, fixed.fabric_bw) == ("fixed", 30, 15)
    assert bench_cli.parse_args(["--host-bw", "20", "--fabric-bw", "10"]).fabric_bw == 10
    auto = bench_cli.parse_args(["--rates", "link-bound", "--rate-ladder", "20/10,12/6"])
    assert (auto.host_bw, auto.fabric_bw, auto.rate_ladder) == (20.0, 10.0, [(20.0, 10.0), (12.0, 6.0)])
    assert auto.bcast_rate_mbps == 10  # each tree's share of the first rung's links, until the choice
    for bad in (["--rates", "link-bound", "--host-bw", "20"], ["--rate-ladder", "12/6,20/10"],
                ["--rates", "link-bound", "--rate-probe-seconds", "0"]):
        with pytest.raises(SystemExit):
            bench_cli.parse_args(bad)


class FakeIntf:
    """A Mininet interface as emulation.run_tc and Bench.set_rates use it."""

    def __init__(self, name, node, bw):
        self.name, self.node, self.params, self.commands = name, node, ({"bw": bw} if bw else {}), []

    def cmd(self, text):
        self.commands.append(text)
        return emulation.MARK


def test_set_rates_changes_every_limited_link_in_place():
    from mininet.node import Host
    from sdnmpi.mininet_topos.fattree import LeafSpineTopo
    host = Host.__new__(Host)      # only its type matters here
    switch = object()
    h1, l1_down = FakeIntf("zzh1-eth0", host, 30), FakeIntf("zzl1-eth1", switch, 30)
    l1_up, s1 = FakeIntf("zzl1-eth3", switch, 15), FakeIntf("zzs1-eth1", switch, 15)
    mgmt = FakeIntf("zzh1-eth1", host, None)
    links = [argparse.Namespace(intf1=h1, intf2=l1_down), argparse.Namespace(intf1=l1_up, intf2=s1),
             argparse.Namespace(intf1=mgmt, intf2=FakeIntf("mgmt-eth1", switch, None))]
    bench = bench_fabric.Bench.__new__(bench_fabric.Bench)
    bench.args = argparse.Namespace(spines=2, leaves=4, hosts_per_leaf=2, host_bw=30, fabric_bw=15)
    bench.fab_model = benchcore.Fabric(2, 4, 2, 30, 15)
    bench.fabric = argparse.Namespace(net=argparse.Namespace(links=links))
    bench.topo = LeafSpineTopo(spines=2, leaves=4, hosts_per_leaf=2, host_bw=30, fabric_bw=15, prefix="zz")
    bench.emulation = emulation.Emulation(ovs_sndbuf=0, ack_class=True)
    bench.emulation.classed = [(l1_up, 15.0)]          # the ACK classes were put on this one only
    assert bench.set_rates(12, 6) == 4
    assert h1.commands == [" && ".join(emulation.rate_commands("zzh1-eth0", 12, False)) + " && echo " + emulation.MARK]
    assert "rate 12Mbit" in l1_down.commands[0] and "rate 6Mbit" in s1.commands[0]
    assert "classid 5:12" in l1_up.commands[0] and "classid 5:12" not in s1.commands[0]
    assert mgmt.commands == [] and "bw" not in mgmt.params
    assert (h1.params["bw"], l1_down.params["bw"], l1_up.params["bw"], s1.params["bw"]) == (12, 12, 6, 6)
    directions = bench.link_directions()
    assert ("zzl1-eth1", "rx", 12) in directions and ("zzs1-eth1", "tx", 6) in directions
    assert {bw for _i, _d, bw in directions} == {12, 6}
    assert (bench.fab_model.host_bw, bench.fab_model.fabric_bw, bench.args.host_bw) == (12, 6, 12)
    assert bench.set_rates(12, 6) == 0 and len(h1.commands) == 1   # already there: nothing runs


class FakeBench:
    """What choose_on_fabric asks of a Bench: the controller, the fabric, its rates."""

    def __init__(self):
        self.calls, self.fabric = [], None
        self.fab_model = benchcore.Fabric(2, 4, 4, 30, 15)

    def start_controller(self, routing):
        self.calls.append(("controller", routing))

    def start_fabric(self):
        self.calls.append(("fabric",))
        self.fabric = object()

    def wait_ready(self, timeout):
        self.calls.append(("ready", timeout))

    def set_rates(self, host_bw, fabric_bw):
        self.calls.append(("rates", host_bw, fabric_bw))
        self.fab_model = benchcore.Fabric(2, 4, 4, host_bw, fabric_bw)


def test_choose_on_fabric_stops_at_the_first_link_bound_rung(monkeypatch):
    verdicts = {30: "switch", 20: "switch", 12: "links", 8: "links"}
    probed = []

    def fake_probe(bench, seconds):
        fab = bench.fab_model
        probed.append((fab.host_bw, seconds))
        return dict(rung(fab.host_bw, fab.fabric_bw, verdicts[fab.host_bw]), streams={})
    monkeypatch.setattr(bench_rates, "probe_rung", fake_probe)
    ladder = bench_rates.parse_ladder(bench_rates.DEFAULT_LADDER)
    bench, said = FakeBench(), []
    rec = bench_rates.choose_on_fabric(bench, ladder, 4, "dmodk", 99, say=said.append)
    assert probed == [(30, 4), (20, 4), (12, 4)] and len(said) == 3 and "12/6" in said[-1]
    assert rec["chosen"] == [12, 6] and rec["link_bound"] and rec["streams"] == 32 and not rec["every_rung"]
    assert rec["load"] == bench_rates.DEFAULT_LOAD == "ring"
    assert "32 TCP streams at once under dmodk routing (every host one across the spines, to its place on the next " \
        "leaf, and one within its leaf)" in "\n".join(bench_rates.markdown(rec))
    assert bench.calls[:3] == [("controller", "dmodk"), ("fabric",), ("ready", 99)]
    assert bench.calls[-1] == ("rates", 12, 6) and (bench.fab_model.host_bw, bench.fab_model.fabric_bw) == (12, 6)
    # every rung for the record: the same choice, and the fabric goes back up to it after 8/4
    bench, probed[:] = FakeBench(), []
    rec = bench_rates.choose_on_fabric(bench, ladder, 4, "dmodk", 99, say=said.append, every_rung=True)
    assert [h for h, _s in probed] == [30, 20, 12, 8] and rec["chosen"] == [12, 6] and rec["every_rung"]
    assert bench.calls[-2:] == [("rates", 8, 4), ("rates", 12, 6)]
    # none link-bound: the slowest rung, marked
    verdicts.update({12: "switch", 8: "other"})
    bench = FakeBench()
    rec = bench_rates.choose_on_fabric(bench, ladder, 4, "single", 99, say=said.append)
    assert rec["chosen"] == [8, 4] and not rec["link_bound"] and bench.fab_model.host_bw == 8


def test_probe_rung_samples_from_the_streams_start(monkeypatch):
    import json
    import bench_sampling
    import jobroute_iperf
    events = []

    class FakeMonitor:
        def __init__(self, links=()):
            events.append(("monitor", tuple(links)))

        def __enter__(self):
            events.append(("enter",))
            return self

        def __exit__(self, *exc):
            events.append(("exit",))

        def summary(self):
            return fake_cpu(91.0, 96.0)

    def fake_streams(bench, pairs, seconds, on_start=None, client_args=None):
        events.append(("streams", len(pairs), seconds))
        on_start()
        return [json.dumps({"end": {"sum_received": {"bits_per_second": (8.8e6 if k % 2 else 2.9e6)},
                                    "sum_sent": {"retransmits": 2}}}) for k, _pair in enumerate(pairs)]
    monkeypatch.setattr(bench_sampling, "CpuMonitor", FakeMonitor)
    monkeypatch.setattr(jobroute_iperf, "iperf_streams", fake_streams)
    bench = argparse.Namespace(fab_model=benchcore.Fabric(2, 4, 4, 12, 6), link_directions=lambda: [("l", "tx", 6)])
    rec = bench_rates.probe_rung(bench, 3, "ring")
    assert events == [("monitor", (("l", "tx", 6),)), ("streams", 32, 3), ("enter",), ("exit",)]
    assert rec["verdict"] == "links" and (rec["host_bw_mbit"], rec["fabric_bw_mbit"]) == (12, 6)
    assert abs(rec["streams"]["across"]["mbit_sum"] - 16 * 2.9) < 1e-9 and rec["streams"]["within"]["retransmits"] == 32
    assert abs(rec["delivered_pct"] - 100.0 * 16 * (2.9 + 8.8) / (16 * (3.0 + 9.0))) < 1e-9


def test_loads_side_by_side_options_and_table():
    import rate_probe_loads
    args, bargs = rate_probe_loads.parse_args(["--loads", "ring,peers-paced", "--leaves", "4", "--hosts-per-leaf", "4",
                                               "--rate-ladder", "30/15,20/10", "--rate-probe-seconds", "3"])
    assert args.loads == ["ring", "peers-paced"] and bargs.rates == "link-bound" and bargs.hosts_per_leaf == 4
    assert bargs.rate_ladder == [(30.0, 15.0), (20.0, 10.0)] and bargs.rate_probe_seconds == 3
    with pytest.raises(SystemExit):
        rate_probe_loads.parse_args(["--loads", "ring,all"])
    fab = benchcore.Fabric(2, 4, 4, 30, 15)
    rungs = []
    for load, across, within, cpu in (("ring", 7.0, 22.5, fake_cpu(90.0, 97.0)),
                                      ("peers", 1.0, 6.0, fake_cpu(90.0, 99.0))):
        pairs = bench_rates.load_pairs(fab, load)
        rec = bench_rates.rung_record(fab, pairs, probe_streams(pairs, across, within), cpu, load)
        rungs.append(dict(rec, streams_n=len(pairs)))
    text = "\n".join(rate_probe_loads.markdown({"fabric": fab.to_json(), "started": "t0", "finished": "t1",
                                                "routing": "dmodk", "seconds": 5, "rungs": rungs, "notes": []}))
    assert "| 30 / 15 | ring | 32 | 98% | 93% (slowest 93%) | 100% (slowest 100%) | 87% + 10% | 40 of 86 MiB/s |" \
        in text
    # 48 x 1.0 + 48 x 6.0 of 48 x 2.5 + 48 x 7.5 Mbit/s: 70 %, with the thread busy: switch-bound
    assert "| 30 / 15 | peers | 96 | 70% | 40% (slowest 40%) | 80% (slowest 80%) |" in text
    assert text.endswith("| switch |\n\nNotes: none")


def test_ranks_loads_poll_one_process_a_host_while_the_streams_run(monkeypatch):
    import json
    import bench_sampling
    import jobroute_iperf
    from sdnmpi.mininet_topos import procs
    events = []

    class FakeMonitor:
        def __init__(self, links=()):
            pass

        def __enter__(self):
            events.append("sample")
            return self

        def __exit__(self, *exc):
            events.append("stop sampling")

        def summary(self):
            return fake_cpu(91.0, 96.0)

    def fake_streams(bench, pairs, seconds, on_start=None, client_args=None):
        events.append(("streams", len(pairs), [a[:2] for a in client_args[:2]]))
        on_start()
        return [json.dumps({"end": {"sum_received": {"bits_per_second": 1e6}, "sum_sent": {"retransmits": 0}}})
                for _pair in pairs]
    monkeypatch.setattr(bench_sampling, "CpuMonitor", FakeMonitor)
    monkeypatch.setattr(jobroute_iperf, "iperf_streams", fake_streams)
    monkeypatch.setattr(procs, "popen_in_host", lambda host, argv: events.append(("poll", host, argv[-1])) or host)
    monkeypatch.setattr(procs, "terminate", lambda ps, timeout: events.append(("terminate", list(ps))))
    fabric = argparse.Namespace(host=lambda name: name)
    bench = argparse.Namespace(fab_model=benchcore.Fabric(2, 4, 2, 30, 15), link_directions=lambda: [], fabric=fabric)
    rec = bench_rates.probe_rung(bench, 3, "ring-ranks")
    hosts = ["h%d" % h for h in range(1, 9)]
    assert events[:8] == [("poll", h, bench_rates.RANK_POLLER) for h in hosts]
    assert events[8:] == [("streams", 16, [[], []]), "sample", "stop sampling", ("terminate", hosts)]
    assert rec["load"] == "ring-ranks" and abs(rec["delivered_pct"] - 100.0 / 15) < 1e-9
    events[:] = []
    bench_rates.probe_rung(bench, 3, "peers-paced")   # no pollers; each client paced at its share
    assert events[0] == ("streams", 32, [["-b", "5M"], ["-b", "5M"]]) and events[-1] == ("terminate", [])
