"""bench/ss_sockets.py: the bench's one `ss -ti` reader, on texts iproute2's ss printed on this
project's machine (tests/data/ss/*.txt.gz: loopback connections made for them, some idle, one sending to a
receiver that never reads, one paced at 40 kbit/s by SO_MAX_PACING_RATE), in the three forms the
bench tools run: `ss -tin` (State column), `ss -tni state established` under `## t=T HOST` lines
(bench_flowdetect.py --sockets-every) and `ss -tinpH state established` (hpcc_pairs.py)."""
import gzip
import os

import bench_setup  # noqa: F401  (bench/ on sys.path)
import ss_sockets

DATA = os.path.join(bench_setup.ROOT, "tests", "data", "ss")


def text(name):
    with gzip.open(os.path.join(DATA, name + ".gz"), "rt") as f:
        return f.read()


def test_the_state_column_form_reads_every_socket_with_its_numbers():
    socks = ss_sockets.sockets(text("tin-loopback.txt"))
    assert len(socks) == 12 and {s["state"] for s in socks} == {"ESTAB"}
    assert {s["pid"] for s in socks} == {None} and {s["cc"] for s in socks} == {"bbr", "cubic", "reno"}
    stuck = socks[8]                                   # the sender whose receiver never reads
    assert (stuck["local"], stuck["peer"], stuck["recv_q"], stuck["send_q"]) == (
        "127.0.0.1:43826", "127.0.0.1:33983", 0.0, 131070.0)
    assert {k: stuck[k] for k in ss_sockets.INFO if k in stuck} == {
        "rtt_ms": 0.026, "cwnd": 1.0, "retrans_total": 4.0, "unacked": 1.0, "bbr_bw": 10279999384.0,
        "bbr_mrtt_ms": 0.017, "delivery_rate": 10280000000.0, "bytes_acked": 21846.0, "minrtt": 0.017,
        "pacing_rate": 178370738432.0}
    assert socks[11]["local"] == "[::ffff:127.0.0.1]:51665"    # the IPv6 listener's accepted socket
    assert socks[1]["info"].startswith("bbr wscale:9,9 rto:200 ") and "bytes_acked" not in socks[1]


def test_the_paced_socket_reads_its_pacing_rate_not_its_cap():
    paced = [s for s in ss_sockets.sockets(text("tin-loopback.txt")) if s.get("pacing_rate") == 40000.0]
    assert len(paced) == 1 and "pacing_rate 40000bps/40000bps" in paced[0]["info"]
    assert paced[0]["send_q"] == 98155.0 and paced[0]["local"] == "127.0.0.1:43838"


def test_the_process_form_names_each_sockets_process_and_no_state():
    socks = ss_sockets.sockets(text("tinpH-ranks.txt"))
    assert len(socks) == 12 and {s["state"] for s in socks} == {None}
    assert {s["process"] for s in socks} == {"python3"}
    assert sorted({s["pid"] for s in socks}) == [28091, 28133, 28134, 28135]
    assert sum(1 for s in socks if "bytes_acked" in s) == 8       # the other four only received


def test_headers_and_other_lines_end_a_socket_and_indented_lines_before_one_are_ignored():
    sample = ("\tstray information\nState Recv-Q Send-Q Local Address:Port Peer Address:Port\n"
              "ESTAB 0 10 10.0.0.1:1 10.0.0.2:2\n\t cubic cwnd:7 bytes_acked:5\n== h2\n\t reno cwnd:9\n"
              "0 0 10.0.0.2:2 10.0.0.1:1\n")
    socks = ss_sockets.sockets(sample)
    assert [(s["state"], s["cc"], s.get("cwnd"), s.get("bytes_acked")) for s in socks] == [
        ("ESTAB", "cubic", 7.0, 5.0), (None, None, None, None)]
    assert ss_sockets.sockets("") == []


def test_rates_in_units_with_and_without_numeric_output():
    assert ss_sockets.rate_value("4.6M") == 4.6e6 and ss_sockets.rate_value("29592") == 29592.0
    assert ss_sockets.info_fields("bbr delivery_rate 1.5Kbps pacing_rate 2Gbps") == {
        "delivery_rate": 1500.0, "pacing_rate": 2e9}


def test_packet_sockets_with_their_processes_and_memory():
    text = ("Netid Recv-Q Send-Q Local Address:Port Peer Address:PortProcess\n"
            "p_raw 0 0 [0]:* * users:((\"ovs-vswitchd\",pid=7,fd=47),(\"child\",pid=8,fd=47)) "
            "skmem:(r0,rb212992,t78336,tb4194304,f0,w0,o0,bl0,d2)\n"
            "p_raw 0 0 *:s1-eth1 * skmem:(r0,rb212992,t0,tb212992,f0,w0,o176,bl0,d12)\n"
            "ESTAB 0 0 10.0.0.1:1 10.0.0.2:2\n")
    got = ss_sockets.packet_sockets(text)
    assert [(s["local"], s["peer"], s["users"]) for s in got] == [
        ("[0]:*", "*", [("ovs-vswitchd", 7, 47), ("child", 8, 47)]), ("*:s1-eth1", "*", [])]
    assert got[0]["skmem"] == {"r": 0, "rb": 212992, "t": 78336, "tb": 4194304, "f": 0, "w": 0, "o": 0, "bl": 0, "d": 2}
    assert got[1]["skmem"]["d"] == 12 and ss_sockets.packet_sockets("") == []
