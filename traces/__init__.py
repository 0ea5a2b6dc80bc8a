"""sdnmpi.traces: read per-rank MPI traffic traces (PFProf's and sdnmpi's profiler's ``oxton-result<rank>.json``).

    trace = sdnmpi.traces.load("cg-c-128.tar.gz")
    trace.n_procs, trace.tx_bytes[i, j], trace.traffic_matrix(), trace.phases[k].tx_bytes

Matrices are n x n ``numpy.int64`` arrays. See reader.py and docs/traces.md.
"""
from .reader import RANK_FILE, Phase, Trace, TraceError, load

__all__ = ["RANK_FILE", "Phase", "Trace", "TraceError", "load"]
