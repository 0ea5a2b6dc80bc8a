"""What the controller-core tests (test_core*.py, test_fabric_sim.py) check with: the output ports
of a packet-out, and every host pair traced through a simulated fabric's tables."""
import networkx as nx


def out_ports(msg):
    return [a.port for a in msg.actions]


def assert_all_pairs_routed(sim, avoid=()):
    """Traces every (src, dst) host pair through the simulated tables: each way the packet can go
    ends at dst, along a shortest path of the live fabric, and never crosses a port in ``avoid``."""
    hosts = sim.hosts()
    live = sim.core.topology.graph()
    for src in hosts:
        lengths = nx.single_source_shortest_path_length(live, src)
        for dst in hosts:
            if src == dst:
                continue
            results = sim.trace(src, sim.host_ip[dst])
            assert results, (src, dst)
            for outcome, hops in results:
                assert outcome == ("host", dst), "%s -> %s: %s via %s" % (src, dst, outcome, hops)
                switches = [dpid for dpid, _, _ in hops]
                assert len(set(switches)) == len(switches), "loop: %s" % hops
                assert len(hops) + 1 == lengths[dst], "not shortest: %s" % hops
                for dpid, in_port, out_port in hops:
                    assert (dpid, in_port) not in avoid and (dpid, out_port) not in avoid, hops
    return True
