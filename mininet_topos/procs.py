"""Starting and stopping the helper processes of the emulated fabric (by PID, never by name)."""
import logging
import os
import signal
import subprocess
import time

LOG = logging.getLogger(__name__)


def in_host(host, argv):
    """argv that runs ``argv`` in the network and mount namespaces of a Mininet host."""
    return ["mnexec", "-a", str(host.pid)] + [str(a) for a in argv]


def popen_in_host(host, argv, log_path=None, **kwargs):
    """Start ``argv`` inside ``host`` in its own session; output to ``log_path`` (or discarded)."""
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    if log_path is None:
        return subprocess.Popen(in_host(host, argv), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True, **kwargs)
    with open(log_path, "ab") as log:
        return subprocess.Popen(in_host(host, argv), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True, **kwargs)


def _signal_group(proc, sig):
    """Send ``sig`` to the process group led by ``proc`` (each was started in its own session)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def terminate(procs, timeout=5.0):
    """SIGTERM the process groups of ``procs``, wait up to ``timeout`` s, then SIGKILL the rest.

    Returns the list of processes that had to be killed.
    """
    procs = [p for p in procs if p is not None]
    for proc in procs:
        if proc.poll() is None:
            _signal_group(proc, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    killed = []
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            LOG.warning("pid %d ignored SIGTERM for %.1f s: SIGKILL", proc.pid, timeout)
            _signal_group(proc, signal.SIGKILL)
            proc.wait()
            killed.append(proc)
        # Children left in the group after the leader exited
        _signal_group(proc, signal.SIGKILL)
    return killed


def pids_with_environ(marker):
    """PIDs of processes whose environment contains the byte string ``marker`` (str)."""
    needle = marker.encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % entry, "rb") as env:
                if needle in env.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def kill_by_environ(marker):
    """SIGKILL every process whose environment contains ``marker`` (a unique temp path).

    Used for Open MPI daemons started through the launcher script: they are not our children,
    but each carries its job's private directory in its environment. Returns the PIDs killed.
    """
    pids = pids_with_environ(marker)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if pids:
        LOG.warning("killed %d leftover processes of %s", len(pids), marker)
    return pids


def describe(pid, namespaces=None):
    """One line about a live process for a post-mortem: PID, state, the kernel function it waits
    in, its network namespace (named through ``namespaces``: {'net:[inode]': name}), command line.

    Returns None when the process is gone.
    """
    try:
        with open("/proc/%d/stat" % pid) as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
        with open("/proc/%d/wchan" % pid) as wchan:
            waits = wchan.read().strip() or "-"
        with open("/proc/%d/cmdline" % pid, "rb") as cmdline:
            argv = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
        netns = os.readlink("/proc/%d/ns/net" % pid)
        netns = (namespaces or {}).get(netns, netns)
    except (OSError, IndexError):
        return None
    return "pid %d %s wchan=%s %s %s" % (pid, state, waits, netns, argv[:160])
