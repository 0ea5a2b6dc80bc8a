"""sdnmpi.mininet_topos: emulated fat-tree fabrics for developing and testing sdnmpi.

- :mod:`.fattree`: Mininet topologies (``LeafSpineTopo``, ``FatTreeTopo``), address scheme;
- :mod:`.net`: ``FabricNet`` (run a fabric: OVS userspace switches, lldpd, mpirun), ``ensure_ovs``;
- :mod:`.mgmt`: the out-of-band management network between the hosts and the root namespace;
- :mod:`.controller_proc`: run the Ryu controller and read its REST API;
- :mod:`.demo`: ``python -m sdnmpi.mininet_topos.demo``.

Importing this package needs no root. The submodules import Mininet, whose ``mininet.log``
makes ``MininetLogger`` the class of every logger created after it (level OUTPUT, a handler of its
own), so that the ``logging`` of any module imported later in the same process (the controller's,
in tests and tools) would silently drop INFO records. Importing Mininet here first and restoring the
standard logger class keeps Mininet's own ``lg`` and leaves everyone else's loggers alone.
"""
import logging

try:
    import mininet.log  # noqa: F401  pylint: disable=unused-import
except ImportError:     # no Mininet on this machine: the submodules that need it say so
    pass
else:
    logging.setLoggerClass(logging.Logger)
