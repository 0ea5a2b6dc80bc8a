"""Synthetic fat-tree graphs (same conventions as primitives/fabric.py), for tests, the offline
planner benchmarks and simulators. Numbering follows mininet_topos/fattree.py where both exist."""
from . import fabric


def host_ip(n):
    """IPv4 address of host n (1-based): 10.0.0.1 ... 10.0.0.254, 10.0.1.0, ..."""
    return "10.%d.%d.%d" % ((n >> 16) & 0xFF, (n >> 8) & 0xFF, n & 0xFF)


def host_mac(n):
    return "00:00:00:%02x:%02x:%02x" % ((n >> 16) & 0xFF, (n >> 8) & 0xFF, n & 0xFF)


def leaf_spine(spines=2, leaves=4, hosts_per_leaf=2):
    """2-tier leaf-spine: spine i = dpid T+i, leaf i = 2T+i (1-based; T = 0x100 while both tiers have
    at most 255 switches, else 0x10000). On a leaf, host ports
    are 1..H and the uplink to spine j is port H+j; on a spine, port i goes to leaf i."""
    tier = 0x100 if max(spines, leaves) <= 0xFF else 0x10000
    g = fabric.new_graph()
    for s in range(1, spines + 1):
        fabric.add_switch(g, tier + s)
    n = 0
    for leaf in range(1, leaves + 1):
        dpid = 2 * tier + leaf
        fabric.add_switch(g, dpid)
        for port in range(1, hosts_per_leaf + 1):
            n += 1
            fabric.add_host(g, host_mac(n), host_ip(n), dpid, port, "h%d" % n)
        for s in range(1, spines + 1):
            fabric.add_link(g, dpid, hosts_per_leaf + s, tier + s, leaf)
    return g


def kary(k=4, hosts_per_edge=None):
    """3-tier k-ary fat-tree: (k/2)^2 cores, k pods of k/2 aggregation and k/2 edge switches, k/2
    hosts per edge (k^3/4 hosts). Edge: hosts on ports 1..k/2, uplink to the pod's j-th aggregation
    on k/2+j. Aggregation: port j to the pod's j-th edge, port k/2+m to its m-th core. Core: port p
    (1-based) to pod p. DPIDs: edge i = T+i, aggregation i = 2T+i, core i = 3T+i (1-based), with
    T = 0x100 as in mininet_topos/fattree.py while every tier has at most 255 switches (k <= 22),
    else T = 0x10000 (so that the tiers never overlap)."""
    assert k % 2 == 0 and k >= 2
    half = k // 2
    hosts_per_edge = half if hosts_per_edge is None else hosts_per_edge
    tier = 0x100 if k * half <= 0xFF else 0x10000
    g = fabric.new_graph()
    n = 0
    for c in range(half * half):
        fabric.add_switch(g, 3 * tier + c + 1)
    for pod in range(k):
        aggs = [2 * tier + pod * half + j + 1 for j in range(half)]
        edges = [tier + pod * half + j + 1 for j in range(half)]
        for sw in aggs + edges:
            fabric.add_switch(g, sw)
        for e_idx, edge in enumerate(edges):
            for port in range(1, hosts_per_edge + 1):
                n += 1
                fabric.add_host(g, host_mac(n), host_ip(n), edge, port, "h%d" % n)
            for a_idx, agg in enumerate(aggs):
                fabric.add_link(g, edge, hosts_per_edge + a_idx + 1, agg, e_idx + 1)
        for a_idx, agg in enumerate(aggs):
            for m in range(half):
                core = 3 * tier + a_idx * half + m + 1
                fabric.add_link(g, agg, half + m + 1, core, pod + 1)
    return g
