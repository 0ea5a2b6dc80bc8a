#!/usr/bin/env python3
"""Why Mininet elephants are flagged late (issue 16, docs/flows.md "Why not 95 % on Mininet"):
the first seconds of a TCP transfer on the emulated links, as the receiver sees them and as the
switch's flow counters show them.

    flock /tmp/sdnmpi-mininet.lock .venv/bin/python bench/flow_onset_probe.py [--trials 6]

A leaf-spine with one spine, two leaves and two hosts per leaf (host links 40 Mbit/s, the
leaf-spine links 20 Mbit/s, userspace OVS in standalone mode, no controller): h1 -> h3 and
h2 -> h4 start together (bench/tcp_transfer.py send, at one CLOCK_MONOTONIC instant) and share
the 20 Mbit/s uplink of leaf 1, as two flows of a shift share a fabric link in
bench/bench_flowdetect.py. The receivers log their cumulative bytes every few ms; the root
namespace reads the counting entries (table 0 of leaf 1, one per pair, as the controller's)
with `ovs-ofctl dump-flows` every --probe-ms. Reported per flow: when the counter changes (its
update period), how far it trails the receiver, and the rate in 0.25 s bins and in whole 1 s
polls at every poll phase, against the flow's steady rate.
"""
import argparse
import datetime
import json
import os
import re
import socket
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
TRANSFER = os.path.join(HERE, "tcp_transfer.py")
BYTES_RE = re.compile(r"n_bytes=(\d+).*nw_src=([\d.]+),nw_dst=([\d.]+)")
PORT = 5301


def recv(port):
    """Inside a host: accept one connection, read to its end, print [[monotonic t, bytes], ...]."""

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("0.0.0.0", port))
        srv.listen(1)
        print("ready", flush=True)
        conn, _ = srv.accept()
        total, trace, last = 0, [], 0.0
        with conn:
            while True:
                data = conn.recv(1 << 16)
                now = time.monotonic()
                total += len(data)
                if not data or now - last >= 0.005:
                    trace.append([now, total])
                    last = now
                if not data:
                    break
    print(json.dumps(trace), flush=True)


def counters(bridge):
    out = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "dump-flows", bridge, "table=0"],
                         capture_output=True, text=True, check=True).stdout
    return {(m.group(2), m.group(3)): int(m.group(1)) for m in map(BYTES_RE.search, out.splitlines()) if m}


def trial(fab, leaf, pairs, nbytes, probe_s, seconds):
    """{pair: {"recv": [[t, bytes]], "counter": [[t, bytes]]}} of one trial; t relative to the start."""
    servers = [fab.net[d].popen([sys.executable, __file__, "--recv", str(PORT)], stdout=subprocess.PIPE, text=True)
               for _s, d, _ip in pairs]
    for srv in servers:                      # listening before the senders connect
        if srv.stdout.readline().strip() != "ready":
            raise RuntimeError("receiver did not start")
    start = time.monotonic() + 1.0
    senders = [fab.net[s].popen([sys.executable, TRANSFER, "send", ip, str(PORT), str(nbytes), repr(start)])
               for s, _d, ip in pairs]
    base = counters(leaf)
    probe = []
    while time.monotonic() < start + seconds:
        t = time.monotonic()
        probe.append((t - start, counters(leaf)))
        time.sleep(max(0.0, probe_s - (time.monotonic() - t)))
    for p in senders:
        p.wait(timeout=120)
    out = {}
    for (s, d, ip), srv in zip(pairs, servers):
        trace = json.loads(srv.stdout.read())
        srv.wait(timeout=10)
        key = (fab.net[s].IP(), ip)
        out[f"{s}->{d}"] = {"recv": [[t - start, b] for t, b in trace],
                            "counter": [[t, c.get(key, 0) - base.get(key, 0)] for t, c in probe]}
    return out


def analyse(flow, link_Bps, steady_from=3.0):
    """Numbers of one flow of a trial (times from the senders' start)."""
    rt, rb = np.array(flow["recv"], dtype=float).T
    ct, cb = np.array(flow["counter"], dtype=float).T
    changes = ct[1:][np.diff(cb) > 0]
    end = rt[-1]
    steady = (np.interp(end - 0.5, rt, rb) - np.interp(steady_from, rt, rb)) / (end - 0.5 - steady_from)
    bins = [(np.interp(a + 0.25, rt, rb) - np.interp(a, rt, rb)) / 0.25 / steady for a in np.arange(0, 2, 0.25)]
    # lag: at each counter reading, how long ago the receiver had received that many bytes
    on = (cb > 0) & (ct < end - 0.5) & (ct > 0)
    lag = ct[on] - np.interp(cb[on], rb, rt)
    whole = {}
    for src, (t, b) in (("recv", (rt, rb)), ("counter", (ct, cb))):
        ratios = []
        for phase in np.arange(0.0, 1.0, 0.1):      # polls at phase + k s
            first = next(k for k in range(20) if np.interp(phase + k, t, b) > 0)   # first busy poll
            ratios.append((np.interp(phase + first + 1, t, b) - np.interp(phase + first, t, b)) / steady)
        whole[src] = ratios
    return {"steady_share": steady / link_Bps, "first_bytes_s": float(rt[rb > 0][0]),
            "counter_first_s": float(ct[cb > 0][0]) if (cb > 0).any() else None,
            "counter_update_gap_s": float(np.median(np.diff(changes))) if len(changes) > 2 else None,
            "counter_lag_s": [float(np.percentile(lag, q)) for q in (50, 90)] if len(lag) else None,
            "rate_bins_0.25s": [float(x) for x in bins],
            "first_whole_poll": {k: [float(x) for x in v] for k, v in whole.items()}}


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=6)
    p.add_argument("--bytes", type=int, default=8 << 20, help="per transfer")
    p.add_argument("--probe-ms", type=float, default=50.0)
    p.add_argument("--seconds", type=float, default=9.0, help="counter probing per trial")
    p.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--recv", type=int, help=argparse.SUPPRESS)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.recv:
        recv(args.recv)
        return 0
    import benchcore  # noqa: F401  (puts the tree on sys.path)
    from sdnmpi.mininet_topos.fattree import LeafSpineTopo
    from sdnmpi.mininet_topos.net import FabricNet, ensure_ovs
    stamp = datetime.datetime.utcnow().strftime("%Y%m%dT%H%M%SZ")
    folder = os.path.join(args.out_dir, "flowonset-" + stamp)
    ensure_ovs()
    topo = LeafSpineTopo(spines=1, leaves=2, hosts_per_leaf=2, host_bw=40, fabric_bw=20, prefix="fo")
    runs = []
    with FabricNet(topo, standalone=True, mgmt=False) as fab:
        leaf = topo.leaf_names[0]
        ips = fab.host_ips()
        h = sorted(ips)
        pairs = [(h[0], h[2], ips[h[2]]), (h[1], h[3], ips[h[3]])]
        for s, _d, dst in pairs:
            subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "add-flow", leaf,
                            f"table=0,priority=100,ip,nw_src={ips[s]},nw_dst={dst},actions=NORMAL"], check=True)
        fab.net.pingAll()
        for i in range(args.trials):
            runs.append(trial(fab, leaf, pairs, args.bytes, args.probe_ms / 1000, args.seconds))
            print(f"trial {i + 1}/{args.trials} done", flush=True)
    os.makedirs(folder)
    link = 40e6 / 8
    result = {"command": sys.argv, "args": vars(args), "trials": runs,
              "analysis": [{f: analyse(v, link) for f, v in r.items()} for r in runs]}
    with open(os.path.join(folder, "results.json"), "w", encoding="utf-8") as f:
        json.dump(result, f)
    flat = [a for r in result["analysis"] for a in r.values()]
    summary = {
        "flows": len(flat),
        "steady share of the host link (median)": np.median([a["steady_share"] for a in flat]),
        "counter update gap s (median of flows' medians)": np.median([a["counter_update_gap_s"] for a in flat
                                                                      if a["counter_update_gap_s"]]),
        "counter lag behind receiver s (median, p90)": np.median([a["counter_lag_s"] for a in flat
                                                                  if a["counter_lag_s"]], axis=0).tolist(),
        "0.25 s bins / steady, first 2 s (median over flows)": np.median([a["rate_bins_0.25s"] for a in flat],
                                                                        axis=0).round(2).tolist(),
    }
    for src in ("recv", "counter"):
        r = np.concatenate([a["first_whole_poll"][src] for a in flat])
        summary[f"first whole 1 s poll / steady, {src} (p10, p25, median)"] = \
            np.percentile(r, [10, 25, 50]).round(2).tolist()
        summary[f"first whole poll < 2/3 steady, {src}"] = round(float(np.mean(r < 2 / 3)), 3)
    lines = [f"- {k}: {v:.3f}" if isinstance(v, float) else f"- {k}: {v}" for k, v in summary.items()]
    text = f"flow onset probe {stamp} ({' '.join(sys.argv[1:])})\n\n" + "\n".join(lines) + "\n"
    with open(os.path.join(folder, "results.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(text + f"results: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
