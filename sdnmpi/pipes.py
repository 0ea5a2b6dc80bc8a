"""What the console scripts (sdnmpi-sim, sdnmpi-prof, sdnmpi-ctl) do when their reader leaves."""
import os
import sys


def silence(out=None):
    """After a BrokenPipeError (``sdnmpi-... | head``), points ``out``'s descriptor (stdout's by
    default) at /dev/null, so that the flush at exit has nowhere to fail, as Python's signal module
    docs advise. An ``out`` that is no file (a test's StringIO) is left alone."""
    out = sys.stdout if out is None else out
    try:
        fd = out.fileno()
    except (AttributeError, OSError, ValueError):   # not a file (io.UnsupportedOperation)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
