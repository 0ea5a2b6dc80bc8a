"""procs.describe: the post-mortem line of a hung job's process."""
import os
import subprocess
import sys

from sdnmpi.mininet_topos import procs


def test_describes_a_live_process_with_its_named_namespace():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        netns = os.readlink("/proc/%d/ns/net" % child.pid)
        line = procs.describe(child.pid, {netns: "h7"})
        assert line.startswith("pid %d " % child.pid), line
        assert " h7 " in line and line.endswith("-c import time; time.sleep(60)"), line
    finally:
        child.kill()
        child.wait()


def test_a_finished_process_is_none():
    child = subprocess.Popen(["true"])
    child.wait()
    assert procs.describe(child.pid) is None
