"""What the bench test files share: the repository's paths, bench/ on sys.path (the bench's
modules are scripts, not a package), and the small fabric most tests reason about."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import benchcore  # noqa: E402


def small_fabric():
    """2 spines, 4 leaves, 2 hosts per leaf; 40 Mbit/s host links, 20 Mbit/s fabric links."""
    return benchcore.Fabric(spines=2, leaves=4, hosts_per_leaf=2, host_bw=40, fabric_bw=20)
