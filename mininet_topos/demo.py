"""End-to-end demo: controller + leaf-spine fabric + lldpd, then pingall and iperf3.

    python -m sdnmpi.mininet_topos.demo [--spines 2 --leaves 4 --hosts-per-leaf 2
        --host-bw 40 --fabric-bw 20 --routing dmodk --ofp-port 6653 --wsapi-port 8080
        --lldpd PATH --log-dir DIR]

Steps (each a function, so that later steps such as MPI collectives can be added to ``STEPS``):
start Open vSwitch if needed, start the controller, build the fabric, start lldpd in every host,
wait until the controller has discovered the whole fabric, print it, pingall, iperf3 between the
first and the last host (different leaves). Everything is stopped in ``finally``; the exit status
is non-zero if any step failed.
"""
import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time

from sdnmpi.primitives import DEFAULT_ROUTING

from . import procs
from .controller_proc import format_topology, start_controller, wait_for_topology
from .fattree import LeafSpineTopo
from .net import FabricNet, ensure_ovs

LOG = logging.getLogger(__name__)

DEFAULT_LLDPD = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                              "..", "lldpd", "sdnmpi-lldpd"))
IPERF_PORT = 5201


def parse_args(argv):
    """Command-line options."""
    parser = argparse.ArgumentParser(prog="python -m sdnmpi.mininet_topos.demo",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--spines", type=int, default=2)
    parser.add_argument("--leaves", type=int, default=4)
    parser.add_argument("--hosts-per-leaf", type=int, default=2)
    parser.add_argument("--host-bw", type=float, default=40, help="Mbit/s (0: unlimited)")
    parser.add_argument("--fabric-bw", type=float, default=20, help="Mbit/s (0: unlimited)")
    parser.add_argument("--routing", default="dmodk", choices=sorted(DEFAULT_ROUTING),
                        help="the controller's default routing policy")
    parser.add_argument("--ofp-port", type=int, default=6653)
    parser.add_argument("--wsapi-port", type=int, default=8080)
    parser.add_argument("--lldpd", default=DEFAULT_LLDPD, help="sdnmpi-lldpd binary")
    parser.add_argument("--lldp-interval", type=float, default=1.0)
    parser.add_argument("--discovery-timeout", type=float, default=90)
    parser.add_argument("--iperf-seconds", type=int, default=5)
    parser.add_argument("--log-dir", help="controller and lldpd logs (default: a new temp dir)")
    return parser.parse_args(argv)


class Demo:
    """State shared by the demo steps; ``close()`` stops everything that was started."""

    def __init__(self, args):
        self.args = args
        self.log_dir = args.log_dir or tempfile.mkdtemp(prefix="sdnmpi-demo-")
        os.makedirs(self.log_dir, exist_ok=True)
        self.ctl = None
        self.fabric = None
        self.topo = None
        self.results = {}

    def close(self):
        """Stop the fabric (lldpd, Mininet, mgmt) and the controller."""
        if self.fabric is not None:
            self.fabric.stop()
        if self.ctl is not None:
            self.ctl.stop()
        print("logs in %s" % self.log_dir)


def _bw(value):
    """Bandwidth option: 0 or negative means unlimited (None)."""
    return value if value and value > 0 else None


def step_controller(demo):
    """Start Open vSwitch and the controller; wait for its REST API."""
    ensure_ovs()
    args = demo.args
    demo.ctl = start_controller(args.ofp_port, args.wsapi_port, routing=args.routing,
                                log_path=os.path.join(demo.log_dir, "controller.log"))
    demo.ctl.wait_rest_ready(timeout=30)
    print("controller up (pid %d, routing %s)" % (demo.ctl.pid, args.routing))


def step_fabric(demo):
    """Build and start the leaf-spine fabric."""
    args = demo.args
    demo.topo = LeafSpineTopo(spines=args.spines, leaves=args.leaves,
                              hosts_per_leaf=args.hosts_per_leaf,
                              host_bw=_bw(args.host_bw), fabric_bw=_bw(args.fabric_bw))
    demo.fabric = FabricNet(demo.topo, controller_port=args.ofp_port)
    demo.fabric.start()
    print("fabric up: %d switches, %d hosts" % (len(demo.topo.switch_names),
                                                 len(demo.topo.host_names)))


def step_lldpd(demo):
    """Start lldpd in every host."""
    demo.fabric.start_lldpd(demo.args.lldpd, interval=demo.args.lldp_interval,
                            log_dir=demo.log_dir)


def step_discovery(demo):
    """Wait until the controller sees every switch, link and host; print the topology."""
    topo = demo.topo
    start = time.monotonic()
    found = wait_for_topology(demo.ctl, len(topo.switch_names), topo.expected_switch_links,
                              len(topo.host_names), timeout=demo.args.discovery_timeout)
    print("topology discovered in %.1f s" % (time.monotonic() - start))
    print(format_topology(found))


def step_pingall(demo):
    """pingall; fails unless 0 % loss."""
    loss = demo.fabric.net.pingAll(timeout=2)
    demo.results["ping_loss"] = loss
    print("pingall: %.1f %% loss" % loss)
    if loss > 0:
        raise RuntimeError("pingall lost %.1f %% of the pings" % loss)


def iperf3(server, client, server_ip, seconds=5, timeout=None):
    """TCP iperf3 from ``client`` to ``server`` (Mininet hosts); returns Mbit/s received."""
    srv = procs.popen_in_host(server, ["iperf3", "-s", "-1", "-p", IPERF_PORT])
    try:
        _wait_listening(server, IPERF_PORT)
        argv = procs.in_host(client, ["iperf3", "-c", server_ip, "-p", IPERF_PORT,
                                      "-t", seconds, "-J"])
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                             universal_newlines=True, timeout=timeout or seconds + 30).stdout
        result = json.loads(out)
        if "error" in result:
            raise RuntimeError("iperf3: %s" % result["error"])
        return result["end"]["sum_received"]["bits_per_second"] / 1e6
    finally:
        procs.terminate([srv], timeout=2)


def _wait_listening(host, port, timeout=10.0):
    """Wait until something listens on TCP ``port`` inside ``host``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(procs.in_host(host, ["ss", "-Hltn", "sport = :%d" % port]),
                             stdout=subprocess.PIPE, universal_newlines=True, check=False).stdout
        if out.strip():
            return
        time.sleep(0.1)
    raise TimeoutError("nothing listens on port %d in %s" % (port, host.name))


def step_iperf(demo):
    """iperf3 between the first and the last host (on different leaves)."""
    hosts = demo.fabric.hosts
    server, client = hosts[-1], hosts[0]
    mbps = iperf3(server, client, demo.fabric.host_ips()[server.name],
                  seconds=demo.args.iperf_seconds)
    demo.results["iperf_mbps"] = mbps
    print("iperf3 %s -> %s: %.1f Mbit/s" % (client.name, server.name, mbps))


STEPS = (step_controller, step_fabric, step_lldpd, step_discovery, step_pingall, step_iperf)


def run_steps(demo, steps=STEPS):
    """Run the steps in order, stopping at the first failure; True if all succeeded."""
    for step in steps:
        LOG.info("step %s", step.__name__)
        try:
            step(demo)
        except Exception as exc:  # pylint: disable=broad-except
            LOG.exception("step %s failed", step.__name__)
            print("FAILED: %s: %s" % (step.__name__, exc))
            if demo.ctl is not None:
                print("controller log tail:\n%s" % demo.ctl.log_tail())
            return False
    return True


def main(argv=None):
    """Entry point; returns the exit status."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("mininet").propagate = False  # Mininet prints through its own handler
    demo = Demo(args)
    try:
        ok = run_steps(demo)
    finally:
        demo.close()
    print("demo %s" % ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
