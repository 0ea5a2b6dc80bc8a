"""The simulator's time model against Mininet: simultaneous TCP transfers on the bench's fabric.

    flock /tmp/sdnmpi-mininet.lock timeout 900 .venv/bin/python bench/sim_validate.py \
        [--routings dmodk,single] [--patterns one,shift2,fan] [--repeat 3] [--json OUT]

For each routing policy: the controller (``--sdnmpi-default-routing``) and the bench's 8-host
fabric shape (2 spines, 4 leaves, 2 hosts per leaf, leaf uplinks at half the host rate: 2:1
oversubscribed; 10 and 5 Mbit/s by default, low enough that the userspace switches on a shared
2-core machine are not the bottleneck), lldpd on every host, every route installed, ARP warm (one
pingall). Then per pattern, ``--repeat`` times: the transfers of bench/tcp_transfer.py (plain TCP
like iperf3's streams, but timed to the last byte received: iperf3's server stops counting when
the client's end-of-test message overtakes data still queued, 3.76 of 4 MB in a trial here), all
starting at one instant; each transfer's time from that instant to its last byte; medians.

The prediction routes the same host pairs with the pair router of the same name
(``primitives.PAIR_ROUTERS``; ``dmodk`` and ``single`` follow the controller's tables) on
``leafspine:spines=2,leaves=4,hosts=2`` with the same link rates times `PAYLOAD_FRACTION` and runs
the time model (simulator/timemodel.py) on the payload bytes. Needs root, Open vSwitch, Mininet.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LLDPD = os.path.join(ROOT, "lldpd", "sdnmpi-lldpd")
SPINES, LEAVES, HPL = 2, 4, 2
N_HOSTS = LEAVES * HPL
FIRST_PORT = 5301
TRANSFER = os.path.join(HERE, "tcp_transfer.py")
START_DELAY = 1.0  # s: every sender is running before the common start
#: TCP payload per byte that the links' HTB shaper counts: 1448 bytes of a 1514-byte frame
#: (Ethernet 14, IP 20, TCP 20 + 12 of timestamps). The model's bytes are payload bytes, so the
#: prediction runs the links at this fraction of their nominal rate.
PAYLOAD_FRACTION = 1448 / 1514

from sdnmpi.controller import constants  # noqa: E402
from sdnmpi.mininet_topos.polling import poll_until  # noqa: E402
from sdnmpi.primitives import fattree  # noqa: E402
from sdnmpi.simulator import job, timemodel, topology  # noqa: E402

#: pattern -> [(src host number, dst host number, size factor)]; hosts h1..h8, h1-h2 on leaf 1, ...
PATTERNS = {
    # every host sends to the host two places on (the next leaf), odd senders 1x, even 2x bytes:
    # dmodk spreads the two flows of a leaf over both spines; single puts both on one uplink,
    # where the smaller flow finishes first and the larger then runs alone
    "shift2": [(n, (n + 1) % N_HOSTS + 1, 1 if n % 2 else 2) for n in range(1, N_HOSTS + 1)],
    # one transfer alone between two leaves: calibrates the emulated link itself
    "one": [(1, 3, 1)],
    # four flows out of leaf 1 and one more into h3: host links and uplinks both matter
    "fan": [(1, 3, 1), (1, 5, 1), (2, 4, 1), (2, 6, 1), (7, 3, 1)],
}


def predict(routing, flows, nbytes, host_bw, fabric_bw):
    """Predicted seconds of each transfer of ``flows`` (pattern rows)."""
    from sdnmpi.primitives import pairs
    graph = topology.from_spec("leafspine:spines=%d,leaves=%d,hosts=%d,host_bw=%s,fabric_bw=%s"
                               % (SPINES, LEAVES, HPL, host_bw, fabric_bw))
    mac = fattree.host_mac
    demand = [pairs.Flow(mac(s), mac(d), nbytes * k) for s, d, k in flows]
    routed = job.route(graph, demand, {(f.src, f.dst): 1 for f in demand}, routing)
    done = timemodel.completion(routed.bytes, routed.entry_flow, routed.entry_link,
                                job.bandwidths(graph))
    at = {pair: t for pair, t in zip(routed.pairs, done.tolist())}
    return [at[mac(s), mac(d)] for s, d, _ in flows], [routed.paths[routed.pairs.index((mac(s), mac(d)))]
                                                        for s, d, _ in flows]


def routes_installed(fab):
    for sw in fab.net.switches:
        out = subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", "dump-flows", sw.name],
                             stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout
        if sum("priority=%d," % constants.PRIORITY_ROUTE in line for line in out.splitlines()) < N_HOSTS:
            return False
    return True


def listening(host, port):
    from sdnmpi.mininet_topos import procs
    out = subprocess.run(procs.in_host(host, ["ss", "-Hltn", "sport = :%d" % port]),
                         stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout
    return bool(out.strip())


def measure(fab, flows, nbytes, window, log_dir):
    """Runs the transfers of ``flows`` together (bench/tcp_transfer.py); returns per transfer
    (seconds from the common start to the last byte received, bytes received)."""
    from sdnmpi.mininet_topos import procs
    host = {n: fab.net.get("h%d" % n) for n in range(1, N_HOSTS + 1)}
    receivers, senders = [], []
    outs = [open(os.path.join(log_dir, "recv-%d.json" % i), "w+") for i in range(len(flows))]
    try:
        for i, (_s, d, _k) in enumerate(flows):
            receivers.append(subprocess.Popen(
                procs.in_host(host[d], [sys.executable, TRANSFER, "recv", FIRST_PORT + i, window]),
                stdout=outs[i], stderr=subprocess.STDOUT, start_new_session=True))
        for i, (_s, d, _k) in enumerate(flows):
            poll_until(lambda: listening(host[d], FIRST_PORT + i), 15, "the receiver on h%d" % d)
        start_at = time.monotonic() + START_DELAY
        for i, (s, d, k) in enumerate(flows):
            senders.append(procs.popen_in_host(host[s], [sys.executable, TRANSFER, "send", host[d].IP(),
                                                         FIRST_PORT + i, nbytes * k, repr(start_at)]))
        for proc in receivers + senders:
            proc.wait(timeout=300)
        if time.monotonic() - start_at < 0:
            raise RuntimeError("transfers ended before they were due to start")
        seconds, received = [], []
        for i, out in enumerate(outs):
            out.seek(0)
            text = out.read()
            try:
                result = json.loads(text)
            except ValueError:
                raise RuntimeError("receiver %d failed: %s" % (i, text[-500:])) from None
            seconds.append(result["eof"] - start_at)
            received.append(result["bytes"])
        return seconds, received
    finally:
        procs.terminate(senders + receivers, timeout=3)
        for out in outs:
            out.close()


def run_routing(routing, patterns, args, log_dir):
    from sdnmpi.mininet_topos import controller_proc
    from sdnmpi.mininet_topos.fattree import LeafSpineTopo
    from sdnmpi.mininet_topos.net import FabricNet
    ctl = controller_proc.start_controller(controller_proc.free_port(), controller_proc.free_port(), routing=routing,
                                           log_path=os.path.join(log_dir, "ryu-%s.log" % routing))
    fab = None
    rows = []
    try:
        ctl.wait_rest_ready(timeout=60)
        fab = FabricNet(LeafSpineTopo(SPINES, LEAVES, HPL, host_bw=args.host_bw,
                                      fabric_bw=args.fabric_bw), controller_port=ctl.ofp_port)
        fab.start()
        fab.start_lldpd(LLDPD, interval=1.0, log_dir=log_dir)
        controller_proc.wait_for_topology(ctl, SPINES + LEAVES, SPINES * LEAVES, N_HOSTS, timeout=120)
        poll_until(lambda: routes_installed(fab), 60, "default routes on every switch")
        loss = fab.net.pingAll(timeout=5)
        if loss:
            raise RuntimeError("pingall lost %s %% under %s" % (loss, routing))
        nbytes = int(args.mbytes * 1e6)
        for name in patterns:
            flows = PATTERNS[name]
            predicted, paths = predict(routing, flows, nbytes, args.host_bw * args.payload_fraction,
                                       args.fabric_bw * args.payload_fraction)
            runs = [measure(fab, flows, nbytes, int(args.window_kb * 1024), log_dir)
                    for _ in range(args.repeat)]
            measured = [statistics.median(r[0][i] for r in runs) for i in range(len(flows))]
            for i, ((s, d, k), p, m, path) in enumerate(zip(flows, predicted, measured, paths)):
                rows.append({"routing": routing, "pattern": name, "src": "h%d" % s, "dst": "h%d" % d,
                             "bytes": nbytes * k, "received": [r[1][i] for r in runs],
                             "predicted_s": p, "measured_s": m, "runs_s": [r[0][i] for r in runs],
                             "error": p / m - 1, "spine": [n for n in path if isinstance(n, int)]})
            last_p = max(predicted)
            last_runs = [max(r[0]) for r in runs]
            last_m = statistics.median(last_runs)
            rows.append({"routing": routing, "pattern": name, "src": "all", "dst": "last byte",
                         "bytes": sum(nbytes * k for _s, _d, k in flows),
                         "received": [sum(r[1]) for r in runs], "predicted_s": last_p,
                         "measured_s": last_m, "runs_s": last_runs, "error": last_p / last_m - 1})
            print("%-7s %-7s completion: predicted %.2f s, measured %s s (%+.1f %% against the median)"
                  % (routing, name, last_p, "/".join("%.2f" % x for x in last_runs),
                     100 * (last_p / last_m - 1)), flush=True)
    finally:
        if fab is not None:
            fab.stop()
        ctl.stop()
    return rows


def build_parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--routings", default="dmodk,single")
    p.add_argument("--patterns", default=",".join(PATTERNS))
    p.add_argument("--mbytes", type=float, default=1.5, help="MB per transfer (x the pattern's factor)")
    p.add_argument("--host-bw", type=float, default=10.0, help="host links, Mbit/s")
    p.add_argument("--fabric-bw", type=float, default=5.0, help="leaf-spine links, Mbit/s")
    p.add_argument("--window-kb", type=float, default=24.0,
                   help="receive buffer of each transfer (caps TCP's window; bench/tcp_transfer.py)")
    p.add_argument("--repeat", type=int, default=3, help="runs per pattern (medians are compared)")
    p.add_argument("--payload-fraction", type=float, default=PAYLOAD_FRACTION,
                   help="TCP payload per byte the link shaper counts (default 1448/1514)")
    p.add_argument("--json", help="write the rows here")
    p.add_argument("--log-dir", default=None)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    patterns = args.patterns.split(",")
    unknown = [x for x in patterns if x not in PATTERNS]
    if unknown:
        p.error("unknown pattern %s (known: %s)" % (unknown[0], ", ".join(PATTERNS)))
    import tempfile
    log_dir = args.log_dir or tempfile.mkdtemp(prefix="sim-validate-")
    os.makedirs(log_dir, exist_ok=True)
    rows = []
    for routing in args.routings.split(","):
        rows += run_routing(routing, patterns, args, log_dir)
    print("\nrouting pattern flow       MB    predicted_s  measured_s  error")
    for r in rows:
        print("%-7s %-7s %-10s %5.1f  %11.2f  %10.2f  %+5.1f %%"
              % (r["routing"], r["pattern"], "%s>%s" % (r["src"], r["dst"]), r["bytes"] / 1e6,
                 r["predicted_s"], r["measured_s"], 100 * r["error"]))
    worst = max(abs(r["error"]) for r in rows if r["src"] == "all")
    print("worst completion error: %.1f %% (logs: %s)" % (100 * worst, log_dir))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"host_bw_mbit": args.host_bw, "fabric_bw_mbit": args.fabric_bw,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
