"""Per-switch flow and group entry counts, from the aggregate-flow and group statistics replies
polled with the port statistics (one cheap request of each kind per switch and interval)."""


class TableStats:
    def __init__(self):
        self.flows = {}      # dpid -> flow entries (all tables)
        self.groups = {}     # dpid -> group entries
        self._partial = {}   # dpid -> groups counted so far in a multipart reply

    def flows_reply(self, dpid, flow_count):
        self.flows[dpid] = flow_count

    def groups_reply(self, dpid, count, more):
        """One part of a group-statistics reply with ``count`` entries; ``more``: parts follow."""
        total = self._partial.pop(dpid, 0) + count
        if more:
            self._partial[dpid] = total
        else:
            self.groups[dpid] = total

    def forget_switch(self, dpid):
        for table in (self.flows, self.groups, self._partial):
            table.pop(dpid, None)
