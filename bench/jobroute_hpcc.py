"""hpcc (Debian's HPC Challenge 1.5.0, unmodified) in the job-routing bench (issue 15).

Why a run is stopped at its LatencyBandwidth section (measured; hpcc's bench_lat_bw.c): that
section's ring benchmark sends a fixed volume per rank whatever hpccinf.txt or the rank count
says: 2,000,000-byte messages to both ring neighbours, 3 measurements x 11 rings (the natural one
and 10 random ones) x 2 variants x 3 iterations, about 0.8 GB out of and into every rank, plus a
ping-pong part bounded at 10 + 30 s. At the bench's 15 Mbit/s (2:1 fabric) that is over 7
minutes per run, at the k=4 tree's 5 Mbit/s over 20; hpcc 1.5.0 cannot skip a section (every
Run* flag is set to 1 in HPCC_Init). Its random rings are seeded with time(0), so no profile can
predict their pairs anyway. So:

- the trace is profiled once, the whole run, on the local machine over loopback TCP
  (`profile_local`): a trace holds bytes per rank pair, which do not depend on the network
  (except those time-seeded rings and the time-bounded ping-pong's pair count);
- each measured rerun on the fabric is stopped when hpccoutf.txt says the LatencyBandwidth
  section begins (`StopAt`): what is measured is RandomAccess (MPI and LCG), PTRANS, DGEMM, STREAM
  and FFT (hpcc 1.5.0 runs them in that order, then LatencyBandwidth, then HPL: HPL is not
  reached), each as hpcc itself times it (`parse_sections`), and the wall time from mpirun's start
  to that point.
"""
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

HPCC = shutil.which("hpcc") or "/usr/bin/hpcc"
EXAMPLE = "/usr/share/doc/hpcc/examples/_hpccinf.txt"
STOP_MARKER = "Begin of LatencyBandwidth section."
# the sections before LatencyBandwidth that report their own time, in seconds (hpcc 1.5.0 runs
# RandomAccess, PTRANS, DGEMM, STREAM, FFT, then LatencyBandwidth, and HPL last)
SECTION_KEYS = ("MPIRandomAccess_time", "MPIRandomAccess_LCG_time", "PTRANS_time", "MPIFFT_time")
_PTRANS_WALL = re.compile(r"^WALL\s+(?:\d+\s+){6}(?P<s>[\d.]+)\s+(?P<check>\w+)", re.M)
_REAL_TIME = re.compile(r"^Real time used = (?P<s>[\d.eE+-]+) seconds", re.M)
_FFT_TIMES = re.compile(r"^(?:Computing|Inverse FFT):\s+(?P<s>[\d.]+)", re.M)


def write_input(path, grid, n, ptrans_n=()):
    """hpccinf.txt in directory ``path``: Debian's example with HPL's N, the P x Q grid and PTRANS's
    additional matrix sizes ``ptrans_n`` (hpcc's own PTRANS size is N/2)."""
    with open(EXAMPLE) as f:
        lines = f.read().splitlines()
    p, q = grid
    values = {" Ns": n, " Ps": p, " Qs": q}
    for i, line in enumerate(lines):
        for suffix, value in values.items():
            if line.rstrip().endswith(suffix):
                lines[i] = "%-13d%s" % (value, suffix)
    # line 33/34 (after the separator): how many additional PTRANS sizes, then their values
    sep = next(i for i, line in enumerate(lines) if line.startswith("#####"))
    lines[sep + 1] = "%-23d Number of additional problem sizes for PTRANS" % len(ptrans_n)
    lines[sep + 2] = "%-23s values of N" % (" ".join(str(v) for v in ptrans_n) or "1200")
    with open(os.path.join(path, "hpccinf.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def _section(text, name):
    """The text of hpcc's section ``name`` (between its Begin and End lines), or ''."""
    start = text.find("Begin of %s section." % name)
    if start < 0:
        return ""
    end = text.find("End of %s section." % name, start)
    return text[start:end if end >= 0 else len(text)]


def parse_sections(text):
    """{key: seconds} of the sections before LatencyBandwidth (SECTION_KEYS, those found) and
    "checks_passed" (PTRANS's checks and RandomAccess's verifications passed, by hpcc's verdict:
    MPI RandomAccess tolerates errors in up to 1 % of the table, seen under every routing here)."""
    out = {}
    for key, name in (("MPIRandomAccess_time", "MPIRandomAccess"),
                      ("MPIRandomAccess_LCG_time", "MPIRandomAccess_LCG")):
        m = _REAL_TIME.search(_section(text, name))
        if m:
            out[key] = float(m["s"])
    walls = _PTRANS_WALL.findall(_section(text, "PTRANS"))
    if walls:
        out["PTRANS_time"] = sum(float(s) for s, _check in walls)
    fft = _FFT_TIMES.findall(_section(text, "MPIFFT"))
    if fft:
        out["MPIFFT_time"] = sum(float(s) for s in fft)
    checks = ("FAILED" not in text and bool(walls) and all(c == "PASSED" for _s, c in walls)
              and all("locations (passed)" in _section(text, n) for n in ("MPIRandomAccess", "MPIRandomAccess_LCG")))
    out["checks_passed"] = checks
    return out


class StopAt(threading.Thread):
    """Watches ``path`` (hpccoutf.txt); once it contains ``STOP_MARKER``, records the time
    (``seen``, time.monotonic()) and calls ``stop()`` (which ends the job)."""

    def __init__(self, path, stop, poll_s=0.1):
        threading.Thread.__init__(self, daemon=True)
        self.path, self.stop, self.poll_s = path, stop, poll_s
        self.seen = None
        self._done = threading.Event()

    def run(self):
        while not self._done.is_set():
            try:
                with open(self.path) as f:
                    found = STOP_MARKER in f.read()
            except OSError:
                found = False
            if found:
                self.seen = time.monotonic()
                self.stop()
                return
            self._done.wait(self.poll_s)

    def finish(self):
        self._done.set()
        self.join(timeout=5)


def profile_local(trace_dir, name, nranks, grid, n, ptrans_n, prof_lib, timeout=600.0):
    """One whole hpcc run on this machine (no fabric: Open MPI's TCP over loopback), profiled by
    ``prof_lib``; returns (trace path, {"wall_s", "rc", "output", "sections"})."""
    wdir = tempfile.mkdtemp(prefix="jr-hpcc-prof-")
    try:
        write_input(wdir, grid, n, ptrans_n)
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   TMPDIR=wdir, SDN_MPI_PROF_DIR=trace_dir, SDN_MPI_PROF_JOB=name, SDN_MPI_PROF_SOURCE="pmpi")
        argv = ["mpirun", "--oversubscribe", "-np", str(nranks), "--mca", "btl", "tcp,self",
                "--mca", "btl_tcp_if_include", "lo", "--mca", "mpi_yield_when_idle", "1",
                "-x", "LD_PRELOAD=%s" % prof_lib, "-x", "SDN_MPI_PROF_DIR", "-x", "SDN_MPI_PROF_JOB",
                "-x", "SDN_MPI_PROF_SOURCE", "--wdir", wdir, HPCC]
        t0 = time.monotonic()
        proc = subprocess.run(argv, env=env, cwd=wdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True, timeout=timeout, check=False)
        wall = time.monotonic() - t0
        try:
            with open(os.path.join(wdir, "hpccoutf.txt")) as f:
                text = f.read()
        except OSError:
            text = ""
        for f in os.listdir(trace_dir):
            if f.startswith("oxton-result"):
                os.unlink(os.path.join(trace_dir, f))
        path = os.path.join(trace_dir, name + ".tar.gz")
        if proc.returncode != 0 or not os.path.isfile(path) or "End of HPC Challenge tests" not in text:
            raise RuntimeError("profiling hpcc locally failed (rc %s): %s" % (proc.returncode, proc.stdout[-2000:]))
        return path, {"rc": proc.returncode, "wall_s": wall, "output": proc.stdout[-4000:], "hpccoutf": text,
                      "sections": parse_sections(text)}
    finally:
        shutil.rmtree(wdir, ignore_errors=True)
