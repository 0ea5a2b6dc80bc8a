"""sdnmpi: SDN-enhanced MPI. The Python packages are sdnmpi.controller, sdnmpi.primitives and
sdnmpi.mininet_topos; see README.md for the architecture."""
__version__ = "0.1.0"
