"""Readers for bench/rate_probe.py: the texts of ovs-ofctl, ovs-appctl, ovs-vsctl, ss and tc, and
iperf3's JSON, turned into numbers; the installed route of a host pair walked through the
switches' flow tables. Pure functions (text in, dicts out), so tests run without Open vSwitch."""
import json
import re

import ss_sockets
from bench_flows import parse_flow

ROUTING_TABLE = 1                  # controller/constants.py TABLE: the routes
OUTPUT_RE = re.compile(r"^output:(\d+)$")
TABLE_RE = re.compile(r"\btable=(\d+)")
PACKETS_RE = re.compile(r"\bn_packets=(\d+)")
QDISC_RE = re.compile(r"Sent (?P<bytes>\d+) bytes (?P<pkts>\d+) pkt \(dropped (?P<dropped>\d+), "
                      r"overlimits (?P<overlimits>\d+) requeues (?P<requeues>\d+)\)")
BACKLOG_RE = re.compile(r"backlog (?P<bytes>\d+)b (?P<pkts>\d+)p")
SS_FIELDS = ("rtt_ms", "cwnd", "retrans_total", "unacked", "bbr_bw", "bbr_mrtt_ms", "delivery_rate",
             "bytes_acked")                  # ss_tcp's fields of ss_sockets.sockets' records


def flow_entries(text):
    """The entries of one switch's `ovs-ofctl dump-flows` text: dicts with table, priority,
    cookie, match fields, actions and n_packets (None where the text has no statistics)."""
    out = []
    for line in text.splitlines():
        flow = parse_flow(line)
        if flow is None:
            continue
        cookie, prio, fields, match, actions = flow
        table, packets = TABLE_RE.search(line), PACKETS_RE.search(line)
        out.append({"table": int(table.group(1)) if table else 0, "priority": prio, "cookie": cookie,
                    "fields": fields, "match": match, "actions": actions,
                    "n_packets": int(packets.group(1)) if packets else None})
    return out


def _matches(fields, src_ip, dst_ip):
    """Whether an IPv4 TCP packet src_ip -> dst_ip matches the routing entry's fields (only
    the fields routes use: ip, dl_type, nw_src, nw_dst, all exact; any other field: no)."""
    for key, value in fields.items():
        if key == "ip" or (key == "dl_type" and value == "0x0800"):
            continue
        if key == "nw_src" and value == src_ip or key == "nw_dst" and value == dst_ip:
            continue
        return False
    return True


def routing_entry(entries, src_ip, dst_ip):
    """The routing table's highest-priority entry that src_ip -> dst_ip matches, or None."""
    hits = [e for e in entries if e["table"] == ROUTING_TABLE and _matches(e["fields"], src_ip, dst_ip)]
    return max(hits, key=lambda e: e["priority"]) if hits else None


def walk(tables, peers, first_switch, src_ip, dst_ip, max_hops=16):
    """The route src_ip -> dst_ip as installed: from ``first_switch`` on, each switch's routing
    entry (routing_entry) and its output port. ``tables``: {switch: flow_entries}; ``peers``:
    {(node, port): neighbour node}. Returns (hops, end node or None) with hops = [(switch, out port,
    entry)]; the end is None where an entry is missing or does not output to a single port."""
    hops, node = [], first_switch
    while node in tables and len(hops) < max_hops:
        entry = routing_entry(tables[node], src_ip, dst_ip)
        m = OUTPUT_RE.match(entry["actions"]) if entry else None
        if m is None:
            hops.append((node, None, entry))
            return hops, None
        port = int(m.group(1))
        hops.append((node, port, entry))
        node = peers.get((node, port))
    return hops, node


def link_maps(topo):
    """(ports, peers, edge_of) of a Mininet topology: {(node, neighbour): node's port},
    {(node, port): neighbour} and {host: its switch}."""
    ports, peers, edge_of = {}, {}, {}
    for a, b, info in topo.links(sort=True, withInfo=True):
        ports[a, b], ports[b, a] = info["port1"], info["port2"]
        peers[a, info["port1"]], peers[b, info["port2"]] = b, a
        for host, switch in ((a, b), (b, a)):
            if host in topo.host_names:
                edge_of[host] = switch
    return ports, peers, edge_of


def egress_devices(nodes, ports, hosts):
    """The egress interface of each hop of a path [node, ...] (a host's is its eth0)."""
    return ["%s-eth0" % u if u in hosts else "%s-eth%d" % (u, ports[u, v]) for u, v in zip(nodes, nodes[1:])]


def coverage_totals(text):
    """{counter: total} of every `ovs-appctl coverage/show` counter."""
    out = {}
    for line in text.splitlines():
        words = line.split()
        if "total:" in words and words.index("total:") + 1 < len(words):
            out[words[0]] = int(words[words.index("total:") + 1])
    return out


def interface_stats(vsctl_json, names=None):
    """{interface: {statistic: value}} from `ovs-vsctl --format=json --columns=name,statistics
    list Interface`, for ``names`` only if given."""
    table = json.loads(vsctl_json)
    cols = table["headings"]
    out = {}
    for row in table["data"]:
        rec = dict(zip(cols, row))
        name = rec["name"]
        if names is not None and name not in names:
            continue
        stats = rec["statistics"]
        out[name] = {k: v for k, v in stats[1]} if stats and stats[0] == "map" else {}
    return out


def packet_socket_drops(ss_text, names=None):
    """{interface: packets dropped} of the packet sockets bound to an interface (`ss -0 -m`:
    ovs-vswitchd's receive socket on each of its ports; the ``d`` field of skmem)."""
    out = {}
    for sock in ss_sockets.packet_sockets(ss_text):
        dev = sock["local"][2:] if sock["local"].startswith("*:") else None
        if dev is None or names is not None and dev not in names:
            continue
        out[dev] = out.get(dev, 0) + sock["skmem"].get("d", 0)
    return out


def qdisc_stats(tc_text, dev_shown=None):
    """{device: {sent_pkts, dropped, overlimits, requeues, backlog_pkts}} of the root qdiscs in a
    `tc -s qdisc show` text; ``dev_shown``: the device of a `tc -s qdisc show dev DEV` text (whose
    lines do not name it)."""
    out, dev = {}, None
    for line in tc_text.splitlines():
        words = line.split()
        if line.startswith("qdisc "):
            dev = None
            if "root" in words:
                dev = words[words.index("dev") + 1] if "dev" in words else dev_shown
            continue
        if dev is None:
            continue
        m = QDISC_RE.search(line)
        if m:
            out[dev] = {"sent_pkts": int(m["pkts"]), "dropped": int(m["dropped"]),
                        "overlimits": int(m["overlimits"]), "requeues": int(m["requeues"])}
        m = BACKLOG_RE.search(line)
        if m and dev in out:
            out[dev]["backlog_pkts"] = int(m["pkts"])
    return out


def htb_rate(text):
    """The rate of the first HTB class in a `tc class show` text ('5Mbit'), or None."""
    m = re.search(r"class htb \S+ .*?\brate (\S+)", text)
    return m.group(1) if m else None


def ss_tcp(text):
    """The TCP connection with the most bytes acked in an `ss -tin` text (an iperf3 sender's
    data connection, not its control connection): {rtt_ms, cwnd, retrans_total, unacked, bbr_bw,
    bbr_mrtt_ms, delivery_rate, bytes_acked} (bits/s for the rates), or {}."""
    best = {}
    for sock in ss_sockets.sockets(text):
        rec = {name: sock[name] for name in SS_FIELDS if name in sock}
        if rec.get("bytes_acked", -1) > best.get("bytes_acked", -1):
            best = rec
    return best


def iperf_stream(output):
    """What one sender's `iperf3 -J` output says about its stream: receiver Mbit/s, sender
    retransmits, RTTs (ms), and its per-interval Mbit/s and retransmits; {} if unreadable."""
    try:
        doc = json.loads(output)
        end = doc["end"]
        sender = (end.get("streams") or [{}])[0].get("sender", {})
        out = {"mbit": end["sum_received"]["bits_per_second"] / 1e6, "retransmits": end["sum_sent"].get("retransmits")}
    except (ValueError, KeyError, TypeError, IndexError):
        return {}
    for key in ("min_rtt", "mean_rtt", "max_rtt"):
        if key in sender:
            out[key + "_ms"] = sender[key] / 1000.0
    out["intervals_mbit"] = [round(i["sum"]["bits_per_second"] / 1e6, 2) for i in doc.get("intervals", [])]
    out["intervals_retrans"] = [i["sum"].get("retransmits") for i in doc.get("intervals", [])]
    return out


def megaflows(text, src_ip=None, dst_ip=None):
    """The lines of an `ovs-appctl dpctl/dump-flows -m` text for src_ip -> dst_ip (exact source and
    destination in the key), or all lines, each as {in_port, packets, actions, key}."""
    out = []
    for line in text.splitlines():
        if src_ip is not None and "src=%s," % src_ip not in line:
            continue
        if dst_ip is not None and "dst=%s," % dst_ip not in line:
            continue
        in_port = re.search(r"in_port\(([^)]*)\)", line)
        packets = re.search(r"packets:(\d+)", line)
        actions = line.split("actions:", 1)[1].strip() if "actions:" in line else ""
        if packets is None:
            continue
        out.append({"in_port": in_port.group(1) if in_port else None, "packets": int(packets.group(1)),
                    "actions": actions, "key": line.split(", packets:", 1)[0].strip()})
    return out
