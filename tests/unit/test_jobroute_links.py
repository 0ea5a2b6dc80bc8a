"""bench/jobroute_links.py (what the wire saw during a jobroute_rate.py run) and the run's steps."""
import types

import pytest

import bench_setup  # noqa: F401  (bench/ on sys.path)
import jobroute_links  # noqa: E402
import jobroute_rate  # noqa: E402

LINKS = ["s1>s2", "s2>s1", "s1>h1", "h1>s1", "s2>h2", "h2>s2", "s2>h3"]
SWITCHES, HOSTS = {"s1", "s2"}, {"h1", "h2", "h3"}
FLOW = 1000.0


def timeline():
    """Every 0.2 s. Exchange 1 (0.2 .. 2.2 s): h1 -> h2 over s1>s2, one flow, 100 bytes per sample;
    h2 -> h3 starts 0.6 s late. Quiet 2.2 .. 3.4 s (a few bytes). Exchange 2 (3.4 .. 4.4 s): two
    flows of 1000 bytes share s1>s2 (400 bytes per sample), one to h2 and one to h3."""
    t = [round(0.2 * i, 1) for i in range(24)]
    per = {name: [0] * len(t) for name in LINKS}
    for i in range(1, len(t)):
        inc = dict.fromkeys(LINKS, 0)
        if 1 <= i <= 10:                 # sample i covers (t[i-1], t[i]]
            inc.update({"h1>s1": 100, "s1>s2": 100, "s2>h2": 100})
            if i >= 4:
                inc["s2>h3"] = 100
        elif 18 <= i <= 22:
            inc.update({"h1>s1": 400, "s1>s2": 400, "s2>h2": 200, "s2>h3": 200})
        else:
            inc["s2>h2"] = 1             # a keep-alive: below the quiet share
        for name in LINKS:
            per[name][i] = per[name][i - 1] + inc[name]
    return {"links": LINKS, "t": t, "t0": 0.0, "bytes": [per[n] for n in LINKS], "events": []}


def into_hosts():
    return [k for k, name in enumerate(LINKS) if name.split(">")[1] in HOSTS]


def test_exchanges_split_at_quiet_gaps():
    spans = jobroute_links.exchanges(timeline(), into_hosts())
    assert spans == [(0, 10), (17, 22)]


def test_link_flows_count_bytes_in_flows_per_switch_link():
    tl = timeline()
    first, second = jobroute_links.exchanges(tl, into_hosts())
    assert jobroute_links.link_flows(tl, first, FLOW, SWITCHES) == {"s1>s2": 1.0, "s2>s1": 0.0}
    assert jobroute_links.link_flows(tl, second, FLOW, SWITCHES)["s1>s2"] == 2.0   # 5 x 400
    assert jobroute_links.link_flows(tl, second, 500.0, SWITCHES)["s1>s2"] == 4.0


def test_host_timeline_gives_first_and_last_arrival():
    tl = timeline()
    first, _ = jobroute_links.exchanges(tl, into_hosts())
    got = jobroute_links.host_timeline(tl, first, into_hosts(), FLOW)
    assert got["s2>h2"]["start"] == pytest.approx(0.2) and got["s2>h2"]["done"] == pytest.approx(2.0)
    assert got["s2>h3"]["start"] == pytest.approx(0.8) and got["s2>h3"]["bytes"] == 700
    assert got["s1>h1"]["start"] is None and got["s1>h1"]["bytes"] == 0


def test_summary_flags_shared_links_and_keeps_route_events():
    tl = timeline()
    tl["events"] = [(0.1, "job 1 phase 1: sdn-optimal routes 16 pairs"), (0.3, "unrelated line")]
    out = jobroute_links.summary(tl, HOSTS, SWITCHES, FLOW)
    one, two = out["exchanges"]
    assert one["links_over_1_2"] == {} and one["max_link_flows"] == 1.0
    assert two["links_over_1_2"] == {"s1>s2": 2.0}
    assert one["host_start_s"] == [pytest.approx(0.2), pytest.approx(0.8)]
    assert out["events"] == [(0.1, "job 1 phase 1: sdn-optimal routes 16 pairs")]


def test_read_counters_parses_proc_net_dev(tmp_path):
    path = tmp_path / "dev"
    path.write_text("Inter-|   Receive ...\n face |bytes packets ...\n"
                    "  lo: 100 2 0 0 0 0 0 0 300 4 0 0 0 0 0 0\n"
                    "jte1-eth1: 5000 10 0 0 0 0 0 0 7000 12 0 0 0 0 0 0\n")
    assert jobroute_links.read_counters(str(path)) == {"lo": (100, 300), "jte1-eth1": (5000, 7000)}
    path.write_text("h\nh\n e1-eth1: 5000 10 0 4 0 0 0 0 7000 12 0 2 0 0 0 0\n")
    assert jobroute_links.dev_drops(str(path)) == {"e1-eth1": (4, 2)}


def test_directed_links_use_the_switch_side_counter():
    def intf(node, name):
        return types.SimpleNamespace(node=types.SimpleNamespace(name=node), name=name)
    links = [(intf("h1", "h1-eth0"), intf("e1", "e1-eth1")), (intf("e1", "e1-eth3"), intf("a1", "a1-eth1"))]
    got = jobroute_links.directed_links(links, lambda node: node.name[0] in "ea")
    assert got == [("e1", "h1", "e1-eth1", "tx"), ("h1", "e1", "e1-eth1", "rx"),
                   ("e1", "a1", "e1-eth3", "tx"), ("a1", "e1", "e1-eth3", "rx")]


def test_sampler_records_counters_and_new_log_lines(tmp_path):
    log = tmp_path / "controller.log"
    log.write_text("before the run\n")
    counts = iter([{"e1-eth1": (1, 10)}, {"e1-eth1": (5, 30)}] + [{"e1-eth1": (5, 30)}] * 1000)
    sampler = jobroute_links.LinkSampler([("e1", "h1", "e1-eth1", "tx"), ("h1", "e1", "e1-eth1", "rx"),
                                          ("e1", "h9", "gone", "tx")],
                                         interval=60, log_path=str(log), reader=lambda: next(counts))
    sampler.start()
    with open(log, "a") as f:
        f.write("job 1 phase 1: routes\n")
    out = sampler.stop()
    assert out["links"] == ["e1>h1", "h1>e1", "e1>h9"]
    assert out["bytes"] == [[10, 30], [1, 5], [None, None]]
    assert [line for _t, line in out["events"]] == ["job 1 phase 1: routes"]


def test_rate_steps_and_kinds():
    spec = {"shift": 9, "perm": 12}
    assert jobroute_rate.steps(spec, 100) == ["phase", 1, "shift", 9, 100, "phase", 2, "perm", 12, 100, "phase", 0]
    assert jobroute_rate.steps(spec, 100, shift=3, pause=True)[:7] == ["phase", 1, "shift", 3, 100, "pause",
                                                                       jobroute_rate.PAUSE_MS]
    assert jobroute_rate.parse_args(["--kinds", "mpi-dmodk-host-order"]).kinds == ["mpi-dmodk-host-order"]
    with pytest.raises(SystemExit) as err:
        jobroute_rate.parse_args(["--kinds", "mpi-nonsense"])
    assert err.value.code == 2


def test_wire_counter_parsers():
    snmp = ("Ip: Forwarding DefaultTTL\nIp: 1 64\n"
            "Tcp: RtoAlgorithm RtoMin InSegs OutSegs RetransSegs InErrs\nTcp: 1 200 10 20 7 0\n")
    assert jobroute_links.tcp_retrans(snmp) == 7
    assert jobroute_links.tcp_retrans("Ip: a\nIp: 1\n") is None
    tc = ("qdisc htb 5: dev e1-eth1 root refcnt 3 r2q 10 default 0x1\n"
          " Sent 4779 bytes 46 pkt (dropped 3, overlimits 23 requeues 0)\n backlog 0b 0p requeues 0\n"
          "qdisc pfifo 10: dev e1-eth1 parent 5:1 limit 1000p\n Sent 4779 bytes 46 pkt (dropped 9, overlimits 0)\n"
          "qdisc noqueue 0: dev lo root refcnt 2\n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)\n")
    assert jobroute_links.qdisc_drops(tc) == {"e1-eth1": 3, "lo": 0}
    pmd = ("main thread:\n  packets received: 100\n  emc hits: 60\n  megaflow hits: 39\n"
           "  avg. subtable lookups per megaflow hit: 2.30\n  miss with success upcall: 1\n"
           "pmd thread numa_id 0 core_id 1:\n  packets received: 5\n  emc hits: 5\n")
    assert jobroute_links.datapath_stats(pmd) == {"packets received": 105, "emc hits": 65, "megaflow hits": 39,
                                                  "miss with success upcall": 1}
    before = {"retrans": {"h1": 3, "h2": None}, "datapath": {"emc hits": 5}}
    after = {"retrans": {"h1": 10, "h2": 4}, "datapath": {"emc hits": 65}}
    assert jobroute_links.counter_delta(before, after) == {"retrans": {"h1": 7, "h2": None},
                                                           "datapath": {"emc hits": 60}}


def test_restart_gaps_find_a_late_sender(tmp_path, capsys):
    """Two senders: h1 pauses 0.4 s between its repetitions, h2 restarts 1.6 s late."""
    t = [round(0.2 * i, 1) for i in range(30)]
    rate = {"h1>s1": lambda i: 100 if i <= 10 or 13 <= i <= 22 else 0,
            "h2>s1": lambda i: 100 if i <= 10 or 19 <= i <= 28 else 0,
            "s1>h3": lambda i: 100 if i <= 28 else 0}
    tl = {"links": list(rate), "t": t, "t0": 0.0, "events": [],
          "bytes": [[sum(f(j) for j in range(1, i + 1)) for i in range(len(t))] for f in rate.values()]}
    gaps = jobroute_links.restart_gaps(tl, (0, len(t) - 1), busy_mbit=100 * 8 / 0.2 / 1e6 / 2,
                                       idle_mbit=1e-6)
    assert gaps == {"h1": pytest.approx(0.4), "h2": pytest.approx(1.6)}
    path = str(tmp_path / "tl.json.gz")
    jobroute_links.save(path, tl)
    assert jobroute_links.load(path) == tl
    assert jobroute_links.main(["1000", path]) == 0
    assert "tl.json.gz exchange 0" in capsys.readouterr().out
    assert jobroute_links.main(["x", path]) == 2


def test_idle_senders_finds_the_one_that_waits_while_the_others_send():
    """idle_senders: 4 senders
    every 0.2 s at 5 Mbit/s (125000 bytes per sample); h4 sends only ACKs (1000 bytes) in the
    first 1.0 s, then alone for 0.4 s at the end."""
    t = [round(0.2 * i, 1) for i in range(10)]
    links = ["h1>s1", "h2>s1", "h3>s1", "h4>s1", "s1>h1"]
    per = {n: [0] for n in links}
    for i in range(1, len(t)):
        for n in links[:3]:
            per[n].append(per[n][-1] + (125000 if i <= 7 else 0))
        per["h4>s1"].append(per["h4>s1"][-1] + (1000 if i <= 5 else 125000))
        per["s1>h1"].append(per["s1>h1"][-1] + 125000)
    tl = {"links": links, "t": t, "bytes": [per[n] for n in links]}
    got = jobroute_links.idle_senders(tl, (0, len(t) - 1))
    assert got == {"h4": pytest.approx(1.0)}
    # h1..h3 stop at 1.4 s while h4 runs alone: 2 of 3 others idle is under the busy share
    assert jobroute_links.idle_senders(tl, (5, len(t) - 1)) == {}


def test_steady_rates_leave_out_each_repetitions_start_and_drain():
    """Two repetitions per sender, 0.2-s samples: h1 at 5.0 Mbit/s (125000 bytes a sample), h2 at
    4.8 with one dip to 4.0 mid-run; both ramp up and drain over 2 samples and pause 2 samples
    between repetitions. The steady rate leaves the ramps, the drains and the pause out, keeps the
    dip (over 0.8 of the median sample; a deeper one would count as a pause)."""
    t = [round(0.2 * i, 1) for i in range(41)]
    ramp = [30000, 90000]

    def samples(full, dip_at=None):
        rep = ramp + [full] * 14 + ramp[::-1]                  # 18 samples
        out = rep + [0, 0] + rep
        if dip_at is not None:
            out[dip_at] = 100000
        return out

    per = {"h1>s1": samples(125000), "h2>s1": samples(120000, dip_at=8), "s1>h3": samples(125000)}
    tl = {"links": list(per), "t": t, "bytes": [[0] + [sum(v[:i]) for i in range(1, len(t))] for v in per.values()]}
    got = jobroute_links.steady_rates(tl, (0, len(t) - 1))
    assert set(got) == {"h1", "h2"}                          # senders' host links only
    assert got["h1"] == pytest.approx(5.0, abs=1e-3)
    # the ramps are under 0.8 of the median sample; then 2 samples are cut at each end of the 14
    # busy ones: 10 a repetition, one of them the dip
    assert got["h2"] == pytest.approx((19 * 120000 + 100000) * 8 / (20 * 0.2) / 1e6, abs=1e-3)
    assert jobroute_links.steady_rates(tl, (0, 3)) == {"h1": None, "h2": None}   # only a ramp: nothing steady
