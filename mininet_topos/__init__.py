"""sdnmpi.mininet_topos: emulated fat-tree fabrics for developing and testing sdnmpi.

- :mod:`.fattree`: Mininet topologies (``LeafSpineTopo``, ``FatTreeTopo``), address scheme;
- :mod:`.net`: ``FabricNet`` (run a fabric: OVS userspace switches, lldpd, mpirun), ``ensure_ovs``;
- :mod:`.mgmt`: the out-of-band management network between the hosts and the root namespace;
- :mod:`.controller_proc`: run the Ryu controller and read its REST API;
- :mod:`.demo`: ``python -m sdnmpi.mininet_topos.demo``.

Importing this package does nothing else (no root needed); the submodules import Mininet.
"""
