"""procs.describe: the post-mortem line of a hung job's process."""
import os
import subprocess
import sys

from sdnmpi.mininet_topos import procs


PROGRAM = "import time; print('up', flush=True); time.sleep(60)"


def test_describes_a_live_process_with_its_named_namespace():
    child = subprocess.Popen([sys.executable, "-c", PROGRAM], stdout=subprocess.PIPE, text=True)
    try:
        # Popen returns once the child's exec has begun, before the kernel has set up its argument
        # pages: /proc/PID/cmdline can still be empty then. The child's first line means it runs.
        assert child.stdout.readline() == "up\n"
        netns = os.readlink("/proc/%d/ns/net" % child.pid)
        line = procs.describe(child.pid, {netns: "h7"})
        assert line.startswith("pid %d " % child.pid), line
        assert " h7 " in line and line.endswith("-c " + PROGRAM), line
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


def test_a_finished_process_is_none():
    child = subprocess.Popen(["true"])
    child.wait()
    assert procs.describe(child.pid) is None
