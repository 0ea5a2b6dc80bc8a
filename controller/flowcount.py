"""Per host-pair byte counters for flow detection (issue 16), taken from the switches.

The counting table (C.TABLE_COUNT, ahead of routing) holds, for every ordered pair (A, B) of a
registered job's hosts that sit on different edge switches, one entry on A's edge switch:
``eth_type=IPv4, ipv4_src=A, ipv4_dst=B -> goto_table(routing)`` with the cookie
``C.COOKIE_COUNT | job id``. The switch counts the pair's bytes as they enter the fabric; no packet
goes to the controller. A poll is one OFPFlowStatsRequest per edge switch holding entries,
filtered by table and cookie kind; its replies give each pair's cumulative ``byte_count`` and
``packet_count`` (the packets tell a TCP ACK stream from data: controller/flowdetect.py).

Pairs on one edge switch are not counted: no job route can change their path. A pair of two jobs
is counted once, for the job with the smaller id. At most ``max_entries`` entries fabric-wide (job
id order, then pair order); pairs beyond that are not counted (logged when the set changes).

Faucet style: `CountingTable.sync` and `requests` return messages, `reply` takes the replies;
nothing here sends or waits. See docs/flows.md for the cost per poll.
"""
import logging

from . import constants as C
from . import ofmsgs

LOG = logging.getLogger(__name__)
DEFAULT_MAX_ENTRIES = 4096
UNAVAILABLE = 2 ** 64 - 1          # OpenFlow: a counter the switch does not keep reads all ones


def pair_match(dp, src_ip, dst_ip):
    return dp.ofproto_parser.OFPMatch(eth_type=C.ETH_TYPE_IPV4, ipv4_src=src_ip, ipv4_dst=dst_ip)


def wanted_entries(topology, jobs, max_entries=DEFAULT_MAX_ENTRIES):
    """({dpid: {(src ip, dst ip): job id}}, pairs left uncounted by the cap) for the live jobs of
    ``jobs`` (a JobTable) on ``topology``. Hosts not (yet) in the topology are skipped."""
    wanted, seen, left_out = {}, set(), 0
    for job_id, job in sorted(jobs.jobs.items()):
        edge = {}
        for ip in sorted(set(job.hosts)):
            host = topology.host_by_ip(ip)
            if host is not None:
                edge[ip] = host.dpid
        for src in sorted(edge):
            for dst in sorted(edge):
                if src == dst or edge[src] == edge[dst] or (src, dst) in seen:
                    continue
                if len(seen) >= max_entries:
                    left_out += 1
                    continue
                seen.add((src, dst))
                wanted.setdefault(edge[src], {})[(src, dst)] = job_id
    return wanted, left_out


class CountingTable:
    """What the counting tables hold, and the readings of the polls."""

    def __init__(self, max_entries=DEFAULT_MAX_ENTRIES):
        self.max_entries = max_entries
        self.installed = {}      # dpid -> {(src ip, dst ip): job id}
        self.job_of = {}         # (src ip, dst ip) -> job id, of every installed entry
        self.left_out = 0        # pairs over the cap at the last sync
        self._waiting = set()    # dpids whose reply to the current poll is not complete
        self._readings = {}      # (src ip, dst ip) -> byte count, of the current poll
        self._packets = {}       # (src ip, dst ip) -> packet count, of the current poll (where kept)

    def sync(self, datapaths, topology, jobs):
        """Messages that bring the connected switches' counting entries to what the live jobs
        need: adds for new pairs (or a pair that changed jobs), strict deletes for gone ones."""
        wanted, left_out = wanted_entries(topology, jobs, self.max_entries)
        if left_out != self.left_out:
            if left_out:
                LOG.warning("flow detection: %d job host pairs over the cap of %d counting entries "
                            "are not counted (--sdnmpi-flow-max-pairs)", left_out, self.max_entries)
            self.left_out = left_out
        msgs = []
        for dpid in sorted(set(wanted) | set(self.installed)):
            dp = datapaths.get(dpid)
            if dp is None:
                self.installed.pop(dpid, None)
                continue
            have, want = self.installed.get(dpid, {}), wanted.get(dpid, {})
            for pair, job_id in sorted(want.items()):
                if have.get(pair) != job_id:
                    msgs.append(ofmsgs.goto_routing(dp, C.PRIORITY_COUNT, pair_match(dp, *pair),
                                                    C.COOKIE_COUNT | job_id))
            for pair in sorted(set(have) - set(want)):
                msgs.append(ofmsgs.flow_delete_strict(dp, C.PRIORITY_COUNT, pair_match(dp, *pair),
                                                      table=C.TABLE_COUNT))
            if want:
                self.installed[dpid] = dict(want)
            else:
                self.installed.pop(dpid, None)
        self.job_of = {pair: job_id for entries in self.installed.values() for pair, job_id in entries.items()}
        return msgs

    def switch_reset(self, dpid):
        """The switch (re)connected: its tables were wiped, the next `sync` installs its entries."""
        self.installed.pop(dpid, None)
        self._waiting.discard(dpid)

    def requests(self, datapaths):
        """One poll: a flow-stats request to every switch holding counting entries."""
        self._waiting = {d for d in self.installed if d in datapaths}
        self._readings = {}
        self._packets = {}
        return [ofmsgs.flow_stats_request(datapaths[d], C.TABLE_COUNT, C.COOKIE_COUNT, C.COOKIE_KIND_MASK)
                for d in sorted(self._waiting)]

    def reply(self, dpid, stats, more):
        """One part of a switch's OFPFlowStatsReply (``stats``: OFPFlowStats with ``match``,
        ``byte_count`` and ``packet_count``; ``more``: parts follow). True when every switch of the
        poll has answered."""
        if dpid not in self._waiting:
            return False
        for stat in stats:
            if stat.cookie & C.COOKIE_KIND_MASK != C.COOKIE_COUNT:
                continue
            try:
                pair = (stat.match["ipv4_src"], stat.match["ipv4_dst"])
            except KeyError:
                continue
            if pair in self.job_of:
                self._readings[pair] = stat.byte_count
                if stat.packet_count is not None and stat.packet_count != UNAVAILABLE:
                    self._packets[pair] = stat.packet_count
        if not more:
            self._waiting.discard(dpid)
        return not self._waiting

    @property
    def complete(self):
        return not self._waiting

    def readings(self):
        """{(src ip, dst ip): cumulative bytes} of the current poll (the pairs answered so far)."""
        return dict(self._readings)

    def packet_readings(self):
        """{(src ip, dst ip): cumulative packets} of the current poll (the pairs answered so far
        whose switch keeps packet counts)."""
        return dict(self._packets)

    def entries(self):
        return sum(len(e) for e in self.installed.values())
