"""Offline, from a bench/rate_probe.py results directory: per stream, the packets queued mid-run
on the egress ports of its data path and of its ACK path (the installed route of the reverse
pair, walked in the saved flow tables), with its rate, RTT and window (docs/jobroute-rate.md).

    .venv/bin/python bench/rate_probe_queues.py bench/results/rate-probe-20261128-164539
"""
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_common  # noqa: E402,F401  (the project root on sys.path)
import rate_probe_parse as parse  # noqa: E402


def load_results(directory):
    path = os.path.join(directory, "results.json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    with gzip.open(path + ".gz", "rt") as f:
        return json.load(f)


def saved_tables(path):
    """{switch: flow_entries} from a probe's raw/flows-TAG.txt.gz ("== SWITCH" headed blocks)."""
    blocks, cur = {}, None
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.startswith("== "):
                cur = line[3:].strip()
                blocks[cur] = []
            elif cur is not None:
                blocks[cur].append(line)
    return {sw: parse.flow_entries("".join(lines)) for sw, lines in blocks.items()}


def rows(directory, topo):
    """{exchange tag: [(share of the link, pair, mean RTT ms, cwnd mid-run, queued on the data
    path, queued on the ACK path)], slowest first} for the exchanges with mid-run queues."""
    res = load_results(directory)
    ports, peers, edge_of = parse.link_maps(topo)
    hosts, ips, out = set(topo.host_names), topo.host_ips(), {}
    for ex in res["exchanges"]:
        queued = ex.get("backlog_mid")
        if not queued:
            continue
        tables = saved_tables(os.path.join(directory, "raw", "flows-%s.txt.gz" % ex["tag"]))
        got = []
        for s in ex["streams"]:
            src, dst = ("h%d" % h for h in s["pair"])
            hops, end = parse.walk(tables, peers, edge_of[dst], ips[dst], ips[src])
            ack = [dst] + [h[0] for h in hops] + ([end] if end else [])
            total = [sum(queued.get(d) or 0 for d in parse.egress_devices(nodes, ports, hosts))
                     for nodes in (s["route"]["nodes"], ack)]
            got.append((round(s["mbit"] / res["rate"], 3), "%s>%s" % (src, dst), s.get("mean_rtt_ms"),
                        s["ss_mid"].get("cwnd"), total[0], total[1]))
        out[ex["tag"]] = sorted(got)
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or not os.path.isdir(argv[0]):
        print("usage: rate_probe_queues.py RESULTS_DIR", file=sys.stderr)
        return 2
    from sdnmpi.mininet_topos.fattree import FatTreeTopo
    res = load_results(argv[0])
    topo = FatTreeTopo(k=4, host_bw=res["rate"], fabric_bw=res["rate"], prefix=res["prefix"])
    for tag, got in rows(argv[0], topo).items():
        print("%s: share, pair, mean RTT ms, cwnd mid-run, queued on data path, queued on ACK path" % tag)
        for row in got:
            print("  %.0f %%  %-8s %6s %5s %4d %4d" % (100 * row[0], row[1], row[2], row[3], row[4], row[5]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
