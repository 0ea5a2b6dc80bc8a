"""Shared fixtures for the unit tests.

`make_fabric` gives a simulated fabric (fabric_sim.FabricSim: simulated OpenFlow 1.3 switches from
switch_sim.py, hosts, the controller's Core; no switch, no sleeping). The frame builders live in
frame_builders.py; the names tests import from here are re-exported below.

For the libsdnmpi tests (test_libsdnmpi*.py): `built` (make -C libsdnmpi all check, once) and
`stub_factory` (stub controllers from libsdnmpi_harness.py, closed after the test). `mpirun_path`:
Open MPI's mpirun, whose absence fails (never skips) the tests that run MPI.
"""
import shutil
import subprocess

import pytest

from fabric_sim import MAX_HOPS, FabricSim  # noqa: F401  (re-exported)
from frame_builders import (LLDP_DST, arp_frame, ip_int, ipv4_frame, lldp_host_frame,  # noqa: F401  (re-exported)
                            mac_bytes, mac_int, mac_text, mgmt_ipv4_tlv, parse_arp, port_hw_addr, tlv)
from libsdnmpi_harness import LIB, StubController
from switch_sim import (FakeDatapath, Flow, SwitchError, SwitchSim, key_matches,  # noqa: F401  (re-exported)
                        match_key, packet_fields)


@pytest.fixture
def make_fabric():
    """make_fabric(graph, routing="dmodk", **settings) -> FabricSim."""
    return FabricSim


# ---------------------------------------------------------------------------------------------
# libsdnmpi
@pytest.fixture(scope="session")
def built():
    """Builds the libraries and the test programs; a build error fails the tests."""
    res = subprocess.run(["make", "-C", str(LIB), "all", "check"], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.fail("make -C libsdnmpi all check failed:\n%s\n%s" % (res.stdout[-4000:], res.stderr[-4000:]))
    return LIB


@pytest.fixture(scope="session")
def mpirun_path():
    """Open MPI's mpirun; a machine without it fails the test (scripts/install-deps.sh installs it)."""
    path = shutil.which("mpirun")
    if path is None:
        pytest.fail("Open MPI's mpirun is missing: scripts/install-deps.sh installs it (openmpi-bin)")
    return path


@pytest.fixture
def stub_factory():
    """stub_factory(mode="ok", **options) -> a StubController (see libsdnmpi_harness.py), closed
    after the test."""
    stubs = []

    def make(mode="ok", **options):
        stub = StubController(mode, **options)
        stubs.append(stub)
        return stub

    yield make
    for stub in stubs:
        stub.close()
