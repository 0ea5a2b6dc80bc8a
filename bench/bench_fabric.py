"""Bringing up the emulated fabric and the controller for the bench (Bench). The one place a bench's
fabric is built: start_fabric also applies the emulation choices (bench/emulation.py, from the
args' --ovs-sndbuf/--ack-class, both on by default) and stop_fabric undoes them."""

import logging
import os
import time

from bench_common import PRIORITY_ROUTE, ROOT, free_port, now_s
from bench_flows import ofctl
import benchcore
import emulation


class Bench:
    def __init__(self, args):
        self.args = args
        self.fab_model = benchcore.Fabric(args.spines, args.leaves, args.hosts_per_leaf,
                                          args.host_bw, args.fabric_bw)
        self.ctl = None
        self.fabric = None
        self.topo = None
        self.ports = {"ofp": args.ofp_port or free_port(), "wsapi": args.wsapi_port or free_port(),
                      "rpc": args.rpc_port or free_port()}
        self.results = None
        self.out_dir = None
        self.log_dir = None
        self._mn_log = None
        self.have_sdn_bcast = None
        self.coll_bench = None
        self.emulation = None

    def attach(self, ctl, fabric, out_dir):
        """Run jobs on a controller and a started fabric that their owner (``make demo``) started
        and stops, instead of start_controller/start_fabric; job logs go to ``out_dir``."""
        self.ctl, self.fabric, self.topo = ctl, fabric, fabric.topo
        self.out_dir = self.log_dir = out_dir

    # controller
    def start_controller(self, routing):
        from sdnmpi.mininet_topos import controller_proc
        log_path = os.path.join(self.log_dir, "controller-%s.log" % routing)
        extra = ("--sdnmpi-rpc-host", "0.0.0.0", "--sdnmpi-rpc-port", str(self.ports["rpc"]),
                 *getattr(self.args, "controller_arg", ()))
        self.ctl = controller_proc.start_controller(self.ports["ofp"], self.ports["wsapi"], routing=routing,
                                                    extra_args=extra, log_path=log_path)
        self.ctl.wait_rest_ready(timeout=60)

    def stop_controller(self):
        if self.ctl is not None:
            self.ctl.stop()
            self.ctl = None

    def start_fabric(self, topo=None):
        """The fabric of ``topo`` (default: the args' leaf-spine) started, lldpd on every host and
        the emulation choices applied (self.emulation; its record also in self.results["emulation"]
        when the bench keeps a results dict)."""
        from sdnmpi.mininet_topos.fattree import LeafSpineTopo
        from sdnmpi.mininet_topos.net import FabricNet
        self._mininet_log_to_file()
        a = self.args
        self.topo = topo or LeafSpineTopo(spines=a.spines, leaves=a.leaves, hosts_per_leaf=a.hosts_per_leaf,
                                          host_bw=a.host_bw or None, fabric_bw=a.fabric_bw or None, prefix=a.prefix)
        self.fabric = FabricNet(self.topo, controller_port=self.ports["ofp"], mgmt_prefix=a.mgmt_subnet)
        self.fabric.start()
        self.fabric.start_lldpd(os.path.join(ROOT, "lldpd", "sdnmpi-lldpd"), interval=1.0, log_dir=self.log_dir)
        self.emulation = emulation.Emulation.from_args(a)
        if isinstance(self.results, dict):
            self.results["emulation"] = self.emulation.record
        self.emulation.apply(self.rate_limited_interfaces())

    def rate_limited_interfaces(self):
        """emulation.rate_limited() of the started fabric: [(interface, Mbit/s, on a host)]."""
        from mininet.node import Host
        return emulation.rate_limited(self.fabric.net.links, lambda node: isinstance(node, Host))

    def set_rates(self, host_bw, fabric_bw):
        """Every rate-limited link of the started fabric to ``host_bw`` (a link to a host) or
        ``fabric_bw`` (between switches) Mbit/s, in place: Mininet's HTB class of each end, and the
        emulation's ACK classes where it put them (emulation.rate_commands). The interfaces' and the
        topology's link records, the model (fab_model) and the args follow, so link_directions, the
        limits and the job plans see the new rates. Returns how many interfaces changed (0 when the
        rates are already these)."""
        from mininet.node import Host
        if (self.fab_model.host_bw, self.fab_model.fabric_bw) == (host_bw, fabric_bw):
            return 0
        changed = 0
        for link in self.fabric.net.links:
            to_host = any(isinstance(intf.node, Host) for intf in (link.intf1, link.intf2))
            for intf in (link.intf1, link.intf2):
                if intf.params.get("bw"):
                    classed = self.emulation is not None and self.emulation.has_ack_class(intf)
                    emulation.run_tc(intf, emulation.rate_commands(intf.name, host_bw if to_host else fabric_bw,
                                                                   classed))
                    intf.params["bw"] = host_bw if to_host else fabric_bw
                    changed += 1
        topo = self.topo
        for _a, _b, info in topo.links(withInfo=True):
            if info.get("bw"):
                info["bw"] = fabric_bw if topo.isSwitch(info["node1"]) and topo.isSwitch(info["node2"]) else host_bw
        self.args.host_bw, self.args.fabric_bw = host_bw, fabric_bw
        a = self.args
        self.fab_model = benchcore.Fabric(a.spines, a.leaves, a.hosts_per_leaf, host_bw, fabric_bw)
        return changed

    def stop_fabric(self):
        if self.emulation is not None:
            self.emulation.restore(tc=False)     # ovs-vswitchd's buffer back; the ACK classes go with the fabric
        if self.fabric is not None:
            self.fabric.stop()
            self.fabric = None
        self._mininet_log_restore()

    def _mininet_log_to_file(self):
        """Mininet's log (info level: what it builds and stops, and its tc warnings, e.g. one
        'sch_htb: quantum of class 50001 is big' per rate-limited interface, which is harmless:
        the kernel caps the quantum) goes to logs/mininet.log instead of the console; restored by
        stop_fabric. Mininet writes its own newlines, as on its console."""
        from mininet.log import lg
        if self._mn_log is not None:
            return
        handler = logging.FileHandler(os.path.join(self.log_dir, "mininet.log"))
        handler.terminator = ""
        handler.setFormatter(logging.Formatter("%(message)s"))
        self._mn_log = (handler, list(lg.handlers), lg.level, lg.propagate)
        for old in list(lg.handlers):
            lg.removeHandler(old)
        lg.addHandler(handler)
        lg.setLevel(logging.INFO)
        lg.propagate = False

    def _mininet_log_restore(self):
        from mininet.log import lg
        if self._mn_log is None:
            return
        handler, handlers, level, propagate = self._mn_log
        self._mn_log = None
        lg.removeHandler(handler)
        handler.close()
        for old in handlers:
            lg.addHandler(old)
        lg.setLevel(level)
        lg.propagate = propagate

    def link_directions(self):
        """[(switch interface, "tx"|"rx", Mbit/s)]: every direction of every rate-limited link,
        counted at a switch port (switch-switch links: tx at both ends; host links: tx and rx of
        the switch's port)."""
        topo = self.topo
        out = []
        for _a, _b, info in topo.links(sort=True, withInfo=True):
            n1, n2, p1, p2 = info["node1"], info["node2"], info["port1"], info["port2"]
            bw = info.get("bw")
            if not bw:
                continue
            if topo.isSwitch(n1) and topo.isSwitch(n2):
                out += [("%s-eth%d" % (n1, p1), "tx", bw), ("%s-eth%d" % (n2, p2), "tx", bw)]
            else:
                sw, port = (n1, p1) if topo.isSwitch(n1) else (n2, p2)
                out += [("%s-eth%d" % (sw, port), "tx", bw), ("%s-eth%d" % (sw, port), "rx", bw)]
        return out

    def wait_ready(self, timeout):
        """Every switch, link and host discovered and every switch holding a route to every host."""
        from sdnmpi.mininet_topos import controller_proc
        topo = self.topo
        controller_proc.wait_for_topology(self.ctl, len(topo.switch_names), topo.expected_switch_links,
                                          len(topo.host_names), timeout=timeout)
        deadline = now_s() + timeout
        want = len(topo.host_names)
        while True:
            counts = {}
            for br in topo.switch_names:
                out = ofctl("dump-flows", br).stdout
                counts[br] = sum(1 for line in out.splitlines() if "priority=%d," % PRIORITY_ROUTE in line)
            if all(c == want for c in counts.values()):
                return
            if now_s() > deadline:
                raise TimeoutError("routes not installed after %.0f s: %s" % (timeout, counts))
            time.sleep(0.5)

    def wait_no_jobs(self, timeout=30):
        deadline = now_s() + timeout
        while now_s() < deadline:
            try:
                if self.ctl.rest("/sdnmpi/jobs") == []:
                    return True
            except (OSError, ValueError):
                pass
            time.sleep(0.3)
        return False

    def spine_ports(self):
        """spine bridge name -> its interfaces (towards the leaves)."""
        out = {}
        for spine in self.topo.spine_names:
            out[spine] = ["%s-eth%d" % (spine, leaf) for leaf in range(1, self.topo.leaves + 1)]
        return out

    def host_names(self, host_numbers):
        return ["h%d" % n for n in host_numbers]

    def rpc_stats(self):
        """The controller's RPC counters, plus its route recomputations (``route_recomputes``,
        which grow when the topology changes: a link or switch lost and found again)."""
        try:
            stats = self.ctl.rest("/sdnmpi/stats")
        except (OSError, ValueError):
            return {}
        out = dict(stats.get("rpc") or {})
        out["route_recomputes"] = stats.get("route_recomputes", 0)
        return out
