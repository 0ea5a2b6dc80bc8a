"""sdnmpi.simulator: replay profiled MPI jobs on a fat-tree under every registered pair router
(primitives.PAIR_ROUTERS), in bytes (PFSim's maximum link load) and in time (max-min fair flows).

Command line: ``sdnmpi-sim job ...`` and ``sdnmpi-sim scenario FILE.yml`` (cli.py); see
docs/simulator.md.
"""
