"""What per-pair counting costs the switches and the control channel (docs/flows.md).

Counting entries: for every ordered pair (A, B) of a registered job's hosts on different edge
switches (a pair on one edge switch has one path: nothing to reroute), one entry on A's edge
switch, in a table ahead of routing (``ipv4_src=A, ipv4_dst=B -> goto_table``). Each poll is one
OFPMP_FLOW request per switch holding entries, filtered by table and cookie. Sizes are OpenFlow
1.3's, as Ryu serialises them.
"""
import collections

REQUEST_BYTES = 16 + 40      # multipart request header + ofp_flow_stats_request with empty match
REPLY_HEADER_BYTES = 16      # multipart reply header, per reply message
ENTRY_BYTES_IP = 48 + 32 + 8   # ofp_flow_stats fixed part + match(eth_type, ipv4_src, ipv4_dst) + goto_table
ENTRY_BYTES_MAC = 48 + 24 + 8  # the same with match(eth_src, eth_dst)
MAX_REPLY_BYTES = 65535      # one OpenFlow message; larger replies are split


def counting_entries(jobs, edge_of):
    """{edge switch: [(a, b), ...]}: the counting entries of ``jobs`` (lists of hosts), each pair
    on its source's edge switch (``edge_of[host]``), pairs on one edge switch left out. A pair in
    two jobs is counted once (controller/flowcount.py installs exactly these)."""
    per_edge = collections.defaultdict(set)
    for hosts in jobs:
        hosts = list(dict.fromkeys(hosts))
        for a in hosts:
            for b in hosts:
                if edge_of[a] != edge_of[b]:
                    per_edge[edge_of[a]].add((a, b))
    return {edge: sorted(pairs, key=repr) for edge, pairs in per_edge.items()}


def poll_bytes(entries_per_switch, entry_bytes=ENTRY_BYTES_IP):
    """(request bytes, reply bytes) of one poll of every switch in ``entries_per_switch`` ({switch:
    entry count}), OpenFlow payload only (no TCP/IP headers)."""
    request = reply = 0
    per_message = (MAX_REPLY_BYTES - REPLY_HEADER_BYTES) // entry_bytes
    for count in entries_per_switch.values():
        if not count:
            continue
        request += REQUEST_BYTES
        messages = -(-count // per_message)
        reply += messages * REPLY_HEADER_BYTES + count * entry_bytes
    return request, reply


def bound(n_hosts, hosts_per_edge, entry_bytes=ENTRY_BYTES_IP):
    """Upper bounds with ``n_hosts`` hosts in registered jobs: (entries fabric-wide, entries per
    edge switch, bytes per poll counting at most one reply header per started entry batch)."""
    total = n_hosts * (n_hosts - hosts_per_edge)
    per_edge = hosts_per_edge * (n_hosts - hosts_per_edge)
    switches = -(-n_hosts // hosts_per_edge)
    per_message = (MAX_REPLY_BYTES - REPLY_HEADER_BYTES) // entry_bytes
    messages = switches * -(-per_edge // per_message)
    return total, per_edge, switches * REQUEST_BYTES + messages * REPLY_HEADER_BYTES + total * entry_bytes
