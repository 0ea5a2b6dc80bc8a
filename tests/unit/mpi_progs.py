"""The MPI test programs of tests/integration/progs, built for the unit tests that run them."""
import subprocess
from pathlib import Path

from libsdnmpi_harness import LIB, ROOT


def build_prog(name, out_dir):
    """tests/integration/progs/NAME.c built against libsdnmpi.a (warnings are errors): its path."""
    exe = Path(out_dir) / name
    subprocess.run(["mpicc", "-O2", "-Wall", "-Wextra", "-Werror", "-I%s" % (LIB / "include"),
                    str(ROOT / "tests" / "integration" / "progs" / (name + ".c")), "-o", str(exe),
                    str(LIB / "libsdnmpi.a"), "-lmsgpackc", "-lz", "-pthread"], check=True)
    return exe


def build_shim(name, out_dir):
    """tests/integration/progs/NAME.c built as an LD_PRELOAD shared object (warnings are errors): its
    path."""
    lib = Path(out_dir) / ("lib%s.so" % name)
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC",
                    str(ROOT / "tests" / "integration" / "progs" / (name + ".c")), "-o", str(lib), "-ldl"],
                   check=True)
    return lib
