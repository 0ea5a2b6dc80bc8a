"""bench/rate_probe_parse.py: the readers of bench/rate_probe.py, on texts as Open vSwitch 3.1,
iproute2 and iperf3 print them on this project's machines."""
import glob
import gzip
import json
import os
import re
import threading

import pytest

import bench_setup  # noqa: F401  (bench/ on sys.path)
import emulation  # noqa: E402
import ovs_sendbuf  # noqa: E402
import rate_probe  # noqa: E402
import rate_probe_queues  # noqa: E402
import rate_probe_parse as parse  # noqa: E402

# Two switches: e1 (host h1 on port 1, a1 on port 3) and a1 (e1 on port 1, c1 on port 3). A job
# route for 10.0.0.1 -> 10.0.0.9 on e1 only; a1 has a default route to 10.0.0.9 only.
E1 = """OFPST_FLOW reply (OF1.3) (xid=0x2):
 cookie=0x5d4d504901000000, duration=4.579s, table=0, n_packets=36, n_bytes=2862, priority=0 actions=goto_table:1
 cookie=0x5d4d504901000000, duration=4.579s, table=1, n_packets=18, n_bytes=1298, priority=60000,dl_type=0x88cc actions=CONTROLLER:65535
 cookie=0x5d4d504901000000, duration=4.579s, table=1, n_packets=0, n_bytes=0, priority=10,ip actions=CONTROLLER:65535
 cookie=0x5d4d504902000000, duration=3.880s, table=1, n_packets=5, n_bytes=0, priority=1000,ip,nw_dst=10.0.0.9 actions=output:4
 cookie=0x5d4d504903000001, duration=1.0s, table=1, n_packets=4100, n_bytes=6000000, priority=2001,ip,nw_src=10.0.0.1,nw_dst=10.0.0.9 actions=output:3
 cookie=0x5d4d504903000001, duration=1.0s, table=1, n_packets=7, n_bytes=0, priority=2001,ip,nw_src=10.0.0.2,nw_dst=10.0.0.9 actions=output:4
"""
A1 = """ cookie=0x5d4d504902000000, duration=3.880s, table=1, n_packets=4090, n_bytes=0, priority=1000,ip,nw_dst=10.0.0.9 actions=output:3
 cookie=0x5d4d504902000000, duration=3.880s, table=1, n_packets=0, n_bytes=0, priority=1000,ip,nw_dst=10.0.0.1 actions=output:1
"""
PEERS = {("e1", 1): "h1", ("e1", 3): "a1", ("a1", 1): "e1", ("a1", 3): "c1"}


def test_flow_entries_read_table_priority_and_counts():
    entries = parse.flow_entries(E1)
    assert len(entries) == 6
    job = entries[4]
    assert (job["table"], job["priority"], job["n_packets"], job["actions"]) == (1, 2001, 4100, "output:3")
    assert job["fields"] == {"ip": "", "nw_src": "10.0.0.1", "nw_dst": "10.0.0.9"}
    assert entries[0]["table"] == 0 and entries[0]["actions"] == "goto_table:1"


def test_routing_entry_prefers_the_job_route_and_ignores_other_pairs():
    entries = parse.flow_entries(E1)
    assert parse.routing_entry(entries, "10.0.0.1", "10.0.0.9")["priority"] == 2001
    assert parse.routing_entry(entries, "10.0.0.3", "10.0.0.9")["priority"] == 1000   # the default route
    # the LLDP entry (dl_type 0x88cc) never matches IPv4; the IPv4 miss entry does where nothing else does
    assert parse.routing_entry(entries, "10.0.0.3", "10.0.0.77")["priority"] == 10


def test_walk_follows_outputs_until_a_node_without_a_table():
    tables = {"e1": parse.flow_entries(E1), "a1": parse.flow_entries(A1)}
    hops, end = parse.walk(tables, PEERS, "e1", "10.0.0.1", "10.0.0.9")
    assert [(sw, port, e["n_packets"]) for sw, port, e in hops] == [("e1", 3, 4100), ("a1", 3, 4090)]
    assert end == "c1"


def test_walk_stops_where_an_entry_does_not_output_to_a_port():
    tables = {"e1": parse.flow_entries(E1)}
    hops, end = parse.walk(tables, PEERS, "e1", "10.0.0.3", "10.0.0.77")   # to the controller
    assert end is None and hops[-1][1] is None and hops[-1][2]["priority"] == 10


def test_coverage_and_interface_statistics():
    cov = ("Event coverage, avg rate over last: 5 seconds, last minute, last hour,  hash=032b214e:\n"
           "ofproto_packet_out        25.6/sec    24.400/sec        7.6272/sec   total: 27482\n"
           "datapath_drop_userspace_action_error   1.0/sec 0.5/sec 0.1/sec   total: 1049\n"
           "92 events never hit\n")
    assert parse.coverage_totals(cov) == {"ofproto_packet_out": 27482, "datapath_drop_userspace_action_error": 1049}
    vsctl = json.dumps({"headings": ["name", "statistics"], "data": [
        ["s2-eth4", ["map", [["rx_dropped", 1], ["rx_packets", 7], ["tx_packets", 9]]]],
        ["s2", ["map", []]], ["other-eth1", ["map", [["rx_packets", 3]]]]]})
    assert parse.interface_stats(vsctl, {"s2-eth4", "s2"}) == {"s2-eth4": {"rx_dropped": 1, "rx_packets": 7,
                                                                           "tx_packets": 9}, "s2": {}}


def test_packet_socket_drops_per_interface():
    ss = ("Netid Recv-Q Send-Q Local Address:Port    Peer Address:PortProcess\n"
          "p_raw 0      0                [0]:*                   *     users:((\"ovs-vswitchd\",pid=1,fd=47)) "
          "skmem:(r0,rb212992,t78336,tb212992,f0,w0,o0,bl0,d0)\n"
          "p_raw 0      0                  *:l1-eth4             *     users:((\"ovs-vswitchd\",pid=1,fd=39)) "
          "skmem:(r0,rb212992,t0,tb212992,f0,w0,o176,bl0,d12)\n"
          "p_raw 0      0                  *:x-eth1             *     users:((\"ovs-vswitchd\",pid=1,fd=40)) "
          "skmem:(r0,rb212992,t0,tb212992,f0,w0,o176,bl0,d3)\n")
    assert parse.packet_socket_drops(ss) == {"l1-eth4": 12, "x-eth1": 3}
    assert parse.packet_socket_drops(ss, {"l1-eth4"}) == {"l1-eth4": 12}


def test_qdisc_stats_of_root_qdiscs_only():
    tc = ("qdisc htb 5: root refcnt 2 r2q 10 default 0x1 direct_packets_stat 0 direct_qlen 1000\n"
          " Sent 6200000 bytes 4100 pkt (dropped 2, overlimits 3800 requeues 1)\n"
          " backlog 3028b 2p requeues 1\n"
          "qdisc pfifo 8001: parent 5:1 limit 1000p\n"
          " Sent 9 bytes 9 pkt (dropped 9, overlimits 0 requeues 0)\n"
          " backlog 0b 0p requeues 0\n"
          "qdisc noqueue 0: dev lo root refcnt 2\n"
          " Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)\n")
    tc = tc.replace("qdisc htb 5: root", "qdisc htb 5: dev h1-eth0 root")
    alone = "qdisc htb 5: root refcnt 3 r2q 10 default 0x1\n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)\n" \
            " backlog 3028b 2p requeues 0\n"           # `tc -s qdisc show dev h1-eth0` names no device
    assert parse.qdisc_stats(alone, "h1-eth0")["h1-eth0"]["backlog_pkts"] == 2 and parse.qdisc_stats(alone) == {}
    assert parse.qdisc_stats(tc) == {
        "h1-eth0": {"sent_pkts": 4100, "dropped": 2, "overlimits": 3800, "requeues": 1, "backlog_pkts": 2},
        "lo": {"sent_pkts": 0, "dropped": 0, "overlimits": 0, "requeues": 0}}


def test_htb_rate():
    text = "class htb 5:1 root prio 0 rate 5Mbit ceil 5Mbit burst 15Kb cburst 1600b \n"
    assert parse.htb_rate(text) == "5Mbit" and parse.htb_rate("") is None


def test_ss_tcp_takes_the_data_connection():
    ss = ("State Recv-Q Send-Q Local Address:Port Peer Address:Port Process\n"
          "ESTAB 0 0 10.0.0.4:40000 10.0.0.9:5401\n"
          "\t bbr wscale:7,7 rto:204 rtt:0.5/0.1 cwnd:10 bytes_acked:120 unacked:0\n"
          "ESTAB 0 180000 10.0.0.4:40002 10.0.0.9:5401\n"
          "\t bbr wscale:7,7 rto:400 rtt:95.2/3.1 mss:1448 cwnd:58 bytes_acked:4000000 retrans:0/17 "
          "unacked:40 bbr:(bw:4.6Mbps,mrtt:12.5,pacing_gain:1,cwnd_gain:2) delivery_rate 4.4Mbps\n")
    got = parse.ss_tcp(ss)
    assert got["rtt_ms"] == 95.2 and got["cwnd"] == 58 and got["retrans_total"] == 17
    assert got["bbr_bw"] == 4.6e6 and got["bbr_mrtt_ms"] == 12.5 and got["delivery_rate"] == 4.4e6
    assert parse.ss_tcp("") == {}


def test_ss_tcp_rereads_what_every_recorded_probe_wrote():
    """Each stream of the probes committed under bench/results: ss_tcp of its sender's section of
    the raw mid-run `ss -tin` text is the ss_mid the probe recorded during the run."""
    streams = 0
    results = os.path.join(bench_setup.ROOT, "bench", "results")
    for path in sorted(glob.glob(os.path.join(results, "rate-probe-*", "results.json.gz"))):
        with gzip.open(path, "rt") as f:
            exchanges = json.load(f)["exchanges"]
        for ex in exchanges:
            with gzip.open(os.path.join(os.path.dirname(path), "raw", "ss-%s-mid.txt.gz" % ex["tag"]), "rt") as f:
                hosts = dict(re.findall(r"^== (h\d+)\n(.*?)(?=^== h\d+\n|\Z)", f.read(), re.M | re.S))
            for s in ex["streams"]:
                assert parse.ss_tcp(hosts["h%d" % s["pair"][0]]) == s["ss_mid"], (path, ex["tag"], s["pair"])
                streams += 1
    assert streams == 480


def test_ss_tcp_of_loopback_sockets_takes_the_one_with_most_bytes_acked():
    with gzip.open(os.path.join(bench_setup.ROOT, "tests", "data", "ss", "tin-loopback.txt.gz"), "rt") as f:
        got = parse.ss_tcp(f.read())
    assert got == {"rtt_ms": 0.026, "cwnd": 1.0, "retrans_total": 4.0, "unacked": 1.0, "bbr_bw": 10279999384.0,
                   "bbr_mrtt_ms": 0.017, "delivery_rate": 10280000000.0, "bytes_acked": 21846.0}


def test_iperf_stream():
    doc = {"intervals": [{"sum": {"bits_per_second": 4.5e6, "retransmits": 2}},
                         {"sum": {"bits_per_second": 2.5e6, "retransmits": 0}}],
           "end": {"sum_received": {"bits_per_second": 3.3e6}, "sum_sent": {"retransmits": 2},
                   "streams": [{"sender": {"min_rtt": 900, "mean_rtt": 50000, "max_rtt": 120000}}]}}
    got = parse.iperf_stream(json.dumps(doc))
    assert got["mbit"] == 3.3 and got["retransmits"] == 2
    assert (got["min_rtt_ms"], got["mean_rtt_ms"], got["max_rtt_ms"]) == (0.9, 50.0, 120.0)
    assert got["intervals_mbit"] == [4.5, 2.5] and got["intervals_retrans"] == [2, 0]
    assert parse.iperf_stream("iperf3: error - unable to connect") == {}


def test_megaflows_of_a_pair_and_userspace_actions():
    dp = ("flow-dump from the main thread:\n"
          "ufid:1, recirc_id(0),in_port(rp-e2-eth1),eth_type(0x0800),ipv4(src=10.0.0.4,dst=10.0.0.9,proto=6/0,"
          "frag=no), packets:4000, bytes:6000000, used:0.001s, dp:ovs, actions:rp-e2-eth3\n"
          "ufid:2, recirc_id(0),in_port(rp-a1-eth1),eth_type(0x0800),ipv4(src=10.0.0.4/0.0.0.0,dst=10.0.0.9,"
          "proto=6/0,frag=no), packets:12, bytes:800, used:0.1s, dp:ovs, actions:rp-a1-eth4\n"
          "ufid:3, recirc_id(0),in_port(s1-eth2),eth(src=6e:dd:76:42:8b:a2/00:00:00:00:00:00,"
          "dst=01:80:c2:00:00:0e/00:00:00:00:00:00),eth_type(0x88cc), packets:3, bytes:219, used:0.482s, dp:ovs, "
          "actions:userspace(pid=0,controller(reason=1,dont_send=0,continuation=0,recirc_id=1023))\n")
    pair = parse.megaflows(dp, "10.0.0.4", "10.0.0.9")
    assert [(m["in_port"], m["packets"], m["actions"]) for m in pair] == [("rp-e2-eth1", 4000, "rp-e2-eth3")]
    assert [m["packets"] for m in parse.megaflows(dp) if "userspace" in m["actions"]] == [3]


def test_probe_options():
    args = rate_probe.parse_args(["--variants", "base,ackclass", "--seconds", "8"])
    assert args.variants == ["base", "ackclass"] and args.swap == ["c1", "c2"] and args.seconds == 8
    assert rate_probe.variant_options("ackclass", args) == {"sndbuf": 4 << 20, "ack_class": (5.0, False)}
    assert rate_probe.variant_options("ackclass-all", args)["ack_class"] == (5.0, True)
    assert rate_probe.variant_options("swap", args) == {"cores": ["c1", "c2"]}
    for bad in (["--swap-cores", "c1"], ["--swap-cores", "c1,c1"], ["--seconds", "1"], ["--variants", "fast"],
                ["--sndbuf", "0"]):
        with pytest.raises(SystemExit) as exc:
            rate_probe.parse_args(bad)
        assert exc.value.code == 2


def test_ack_class_commands_put_back_mininets_class():
    apply, revert = emulation.ack_class_commands("h1-eth0", 5.0)
    assert apply[-1].endswith("match ip protocol 6 0xff match u16 0x0000 0xff80 at 2 flowid 5:12")
    assert "classid 5:12 htb rate 0.5Mbit ceil 5Mbit burst 15k prio 0" in apply[-2]
    assert revert[1:] == ["tc qdisc add dev h1-eth0 root handle 5: htb default 1",
                          "tc class add dev h1-eth0 parent 5: classid 5:1 htb rate 5Mbit burst 15k"]


def test_send_sockets_of_ovs_vswitchd_only():
    ss = ("p_raw 0      0                [0]:*                *     users:((\"ovs-vswitchd\",pid=23066,fd=47)) "
          "skmem:(r0,rb212992,t78336,tb212992,f0,w0,o0,bl0,d0)\n"
          "p_raw 0      0                  *:l1-eth4             *     users:((\"ovs-vswitchd\",pid=23066,fd=39)) "
          "skmem:(r0,rb212992,t0,tb212992,f0,w0,o176,bl0,d0)\n"
          "p_raw 0      0                [0]:*                *     users:((\"lldpd\",pid=9,fd=3)) "
          "skmem:(r0,rb212992,t5,tb212992,f0,w0,o0,bl0,d0)\n")
    got = ovs_sendbuf.send_sockets(ss)
    assert [(pid, fd, mem["t"], mem["tb"]) for pid, fd, mem in got] == [(23066, 47, 78336, 212992)]


def test_packet_sockets_of_a_recorded_probe():
    """`ss -0 -m -p` as a rate probe saved it (raw/counters-*.txt.gz): ovs-vswitchd's one send socket
    and a receive socket on each of the 80 switch ports, none of which had dropped a packet."""
    path = os.path.join(bench_setup.ROOT, "bench", "results", "rate-probe-20261128-165754", "raw",
                        "counters-perm-sndbuf-r1-before.txt.gz")
    with gzip.open(path, "rt") as f:
        text = f.read()
    drops = parse.packet_socket_drops(text)
    assert len(drops) == 80 and set(drops.values()) == {0} and "rpa1-eth4" in drops
    assert parse.packet_socket_drops(text, {"rpa1-eth4", "nowhere"}) == {"rpa1-eth4": 0}
    got = ovs_sendbuf.send_sockets(text)
    assert [(pid, fd, mem["t"], mem["tb"]) for pid, fd, mem in got] == [(23066, 47, 0, 212992)]


def test_use_sampler_records_the_charged_bytes():
    readings = [(47, {"t": 0, "tb": 10000}), (None, {}), (47, {"t": 9000, "tb": 10000}), (47, {"t": 4000, "tb": 10000}),
                (47, {"t": 7800, "tb": 10000})]
    done = threading.Event()

    def reader(pid):
        assert pid == 7
        if len(readings) == 1:
            done.set()
        return readings.pop(0) if len(readings) > 1 else readings[0]

    sampler = ovs_sendbuf.UseSampler(7, interval=0, reader=reader).start()
    assert done.wait(10)
    got = sampler.stop()
    assert got["size"] == 10000 and got["max"] == 9000 and got["samples"] >= 4
    assert ovs_sendbuf.summary([0, 9000, 4000, 7800], 10000, 2304) == {
        "samples": 4, "size": 10000, "max": 9000, "median": 7800, "full_share": 0.5}
    assert ovs_sendbuf.summary([], None, 2304) == {"samples": 0, "size": None}
    assert ovs_sendbuf.UseSampler(7).stop() == {"samples": 0, "size": None}    # never started


class TwoSwitches:
    """h1 - e1 (port 1) ; e1 (port 3) - a1 (port 1) ; a1 (port 2) - h2."""
    host_names = ["h1", "h2"]

    @staticmethod
    def links(sort=True, withInfo=True):
        return [("h1", "e1", {"port1": 0, "port2": 1}), ("e1", "a1", {"port1": 3, "port2": 1}),
                ("a1", "h2", {"port1": 2, "port2": 0})]


def test_link_maps_and_egress_devices():
    ports, peers, edge_of = parse.link_maps(TwoSwitches)
    assert ports["e1", "a1"] == 3 and ports["a1", "e1"] == 1 and peers["a1", 2] == "h2"
    assert edge_of == {"h1": "e1", "h2": "a1"}
    assert parse.egress_devices(["h1", "e1", "a1", "h2"], ports, {"h1", "h2"}) == ["h1-eth0", "e1-eth3", "a1-eth2"]


def test_saved_tables_read_back(tmp_path):
    path = tmp_path / "flows-x.txt.gz"
    with gzip.open(path, "wt") as f:
        f.write("== e1\n" + E1 + "== a1\n" + A1)
    tables = rate_probe_queues.saved_tables(str(path))
    assert sorted(tables) == ["a1", "e1"] and len(tables["e1"]) == 6 and len(tables["a1"]) == 2
