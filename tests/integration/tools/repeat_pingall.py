"""Starts the integration tests' 2-tier fabric again and again (their leaf_spine_fabric: the same
controller, topology and waits) and does one pingall on each fresh fabric, right after the waits.
Prints one line per fabric and a summary; exit status 1 if any ping was lost.

    flock /tmp/sdnmpi-mininet.lock .venv/bin/python tests/integration/tools/repeat_pingall.py ecmp 480

It is how the ECMP first-packet loss (README, Known issues) was looked for: 124 fresh fabrics under
ecmp on a loaded machine, no ping lost."""
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fabric_helpers import PING_TIMEOUT, leaf_spine_fabric  # noqa: E402  (the tests' own fixture)


def main(argv):
    if len(argv) != 3 or argv[1] not in ("dmodk", "ecmp", "single"):
        sys.exit("usage: repeat_pingall.py dmodk|ecmp|single SECONDS")
    routing, seconds = argv[1], float(argv[2])
    deadline, fabrics, lossy = time.monotonic() + seconds, 0, 0
    with tempfile.TemporaryDirectory(prefix="sdnmpi-pingall-") as tmp:
        while time.monotonic() < deadline:
            with leaf_spine_fabric(routing, tmp) as (_ctl, fab):
                lost = fab.net.pingAll(timeout=PING_TIMEOUT)
            fabrics += 1
            lossy += lost > 0
            print("fabric %d: %.1f %% lost" % (fabrics, lost), flush=True)
    print("%s: %d fresh fabrics, %d with a lost ping" % (routing, fabrics, lossy))
    return 1 if lossy else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
