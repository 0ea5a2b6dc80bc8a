"""bench/sim_validate.py's prediction and bench/tcp_transfer.py on loopback (no Mininet)."""
import json
import os
from sdnmpi.mininet_topos import controller_proc
from sdnmpi.mininet_topos.polling import poll_until
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import sim_validate  # noqa: E402


def rate(mbit):
    return mbit * 1e6 / 8 * sim_validate.PAYLOAD_FRACTION


def test_prediction_of_shift2_under_dmodk_and_single():
    flows = sim_validate.PATTERNS["shift2"]
    nbytes = 1_500_000
    done, paths = sim_validate.predict("dmodk", flows, nbytes, 10 * sim_validate.PAYLOAD_FRACTION,
                                       5 * sim_validate.PAYLOAD_FRACTION)
    # dmodk: every flow alone on its leaf uplink (5 Mbit/s)
    assert done == pytest.approx([nbytes * k / rate(5) for _s, _d, k in flows])
    assert len({tuple(p[1:4]) for p in paths}) == len(flows)
    done, _ = sim_validate.predict("single", flows, nbytes, 10 * sim_validate.PAYLOAD_FRACTION,
                                   5 * sim_validate.PAYLOAD_FRACTION)
    # single: a 1x and a 2x flow share each uplink: the 1x ends at 2 x 1x / C, the 2x at 3 x 1x / C
    for (_s, _d, k), t in zip(flows, done):
        assert t == pytest.approx((2 if k == 1 else 3) * nbytes / rate(5))


def listening(port):
    out = subprocess.run(["ss", "-Hltn", "sport = :%d" % port], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    return bool(out.strip())


def test_tcp_transfer_on_loopback_times_the_last_byte():
    script = os.path.join(BENCH, "tcp_transfer.py")
    port = controller_proc.free_port()
    recv = subprocess.Popen([sys.executable, script, "recv", str(port), "65536"], stdout=subprocess.PIPE,
                            universal_newlines=True)
    try:
        poll_until(lambda: listening(port), 20, "the receiver to listen", interval=0.05)
        start_at = time.monotonic() + 0.2
        subprocess.run([sys.executable, script, "send", "127.0.0.1", str(port), "3000000",
                        repr(start_at)], timeout=30, check=True)
        result = json.loads(recv.communicate(timeout=10)[0])
    finally:
        recv.kill()
        recv.wait()
    assert result["bytes"] == 3_000_000
    assert start_at <= result["first"] <= result["eof"] <= time.monotonic()
    assert subprocess.run([sys.executable, script, "nonsense"], stderr=subprocess.DEVNULL).returncode == 2
