"""sdnmpi.profiler: the command line side of the traffic profiler (``sdnmpi-prof``).

The profiler itself is a C library (``libsdnmpi_prof.so``, libsdnmpi/src/prof_*.c) that an MPI job
loads with LD_PRELOAD; it writes one ``oxton-result<rank>.json`` per rank and a ``<job>.tar.gz``.
This package summarises and plots such traces, read with `sdnmpi.traces`. See docs/profiler.md.
"""
