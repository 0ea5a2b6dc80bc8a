"""Shared set-up for the Mininet integration tests: a real ryu-manager, userspace OVS, lldpd.

Each test module brings up its own fabric through `running_fabric`, and tears down only what it
started (its controller process, its Mininet bridges, its management bridge, its lldpd processes).
"""
import contextlib
import os
import subprocess

import pytest

from sdnmpi.mininet_topos import controller_proc, net as fabric_net

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLDPD = os.path.join(ROOT, "lldpd", "sdnmpi-lldpd")
LIBSDNMPI = os.path.join(ROOT, "libsdnmpi")


@pytest.fixture(scope="session", autouse=True)
def _environment():
    if os.geteuid() != 0:
        pytest.fail("the integration tests need root (Mininet, Open vSwitch)")
    # libsdnmpi's `check` target builds every test program the integration tests run
    # (traffic_patterns, plain_bcast, ...), so no test depends on another having built one.
    subprocess.run(["make", "-C", os.path.join(ROOT, "lldpd")], check=True, capture_output=True)
    subprocess.run(["make", "-C", LIBSDNMPI, "all", "check"], check=True, capture_output=True)
    fabric_net.ensure_ovs()


@contextlib.contextmanager
def running_fabric(topo, routing="dmodk", tmp_path=None, lldpd=True, extra_args=()):
    """Controller + fabric + lldpd on every host, with the whole topology discovered."""
    log_path = os.path.join(str(tmp_path), "ryu.log") if tmp_path else None
    rpc_port = controller_proc.free_port()
    extra_args = ("--sdnmpi-rpc-host", "0.0.0.0", "--sdnmpi-rpc-port", str(rpc_port)) + tuple(extra_args)
    ctl = controller_proc.start_controller(controller_proc.free_port(), controller_proc.free_port(), routing=routing,
                                           extra_args=extra_args, log_path=log_path)
    ctl.rpc_port = rpc_port  # reachable from the hosts over the management network
    fab = None
    try:
        ctl.wait_rest_ready(timeout=30)
        fab = fabric_net.FabricNet(topo, controller_port=ctl.ofp_port)
        fab.start()
        if lldpd:
            fab.start_lldpd(LLDPD, interval=1.0)
        yield ctl, fab
    finally:
        if fab is not None:
            fab.stop()
        ctl.stop()
