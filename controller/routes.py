"""Installs default routes: turns a planner's RouteTable into the smallest set of flow and group
changes against what each switch already has.

A route is one flow per (switch, destination IPv4): ``ipv4_dst=IP -> output:PORT``, or, when the
policy gives several equal-cost ports, ``-> group:G`` where G is a SELECT group over those ports.
Groups are shared by every destination with the same port set on a switch.
"""
import logging

from . import constants as C
from . import ofmsgs
from sdnmpi.primitives import fabric

LOG = logging.getLogger(__name__)


class SwitchRoutes:
    """What one switch has installed: {ip: ports} flows and {ports: group id} groups."""

    def __init__(self):
        self.flows = {}
        self.groups = {}

    def _allocate_group(self):
        used = set(self.groups.values())
        for gid in range(C.GROUP_ECMP_BASE, C.GROUP_ECMP_MAX + 1):
            if gid not in used:
                return gid
        raise RuntimeError("out of ECMP group ids")

    def sync(self, dp, desired):
        """Messages that take the switch from its installed routes to ``desired`` ({ip: ports})."""
        adds, deletes = [], []
        wanted_groups = {ports for ports in desired.values() if len(ports) > 1}
        group_msgs = []
        for ports in sorted(wanted_groups - set(self.groups)):
            self.groups[ports] = self._allocate_group()
            group_msgs.append(ofmsgs.group_select(dp, dp.ofproto.OFPGC_ADD, self.groups[ports], ports))
        for ip, ports in sorted(desired.items()):
            if self.flows.get(ip) != ports:
                adds.append(ofmsgs.flow_add(dp, C.PRIORITY_ROUTE, ofmsgs.ipv4_dst_match(dp, ip),
                                            self._actions(dp, ports), C.COOKIE_ROUTE))
        for ip in sorted(set(self.flows) - set(desired)):
            deletes.append(ofmsgs.flow_delete_strict(dp, C.PRIORITY_ROUTE, ofmsgs.ipv4_dst_match(dp, ip)))
        stale_groups = [self.groups.pop(ports) for ports in sorted(set(self.groups) - wanted_groups)]
        self.flows = dict(desired)
        # Groups first (flows point at them), stale groups last (deleting a group deletes its flows).
        return group_msgs + adds + deletes + [ofmsgs.group_delete(dp, gid) for gid in stale_groups]

    def _actions(self, dp, ports):
        if len(ports) == 1:
            return [dp.ofproto_parser.OFPActionOutput(ports[0])]
        return [dp.ofproto_parser.OFPActionGroup(self.groups[ports])]


def desired_by_switch(route_table, graph):
    """RouteTable ({dpid: {mac: ports}}) -> {dpid: {ip: ports}} for hosts with an IPv4 address."""
    ips = {mac: data.get("ip") for mac, data in graph.nodes(data=True) if data.get("kind") == fabric.HOST}
    return {dpid: {ips[mac]: tuple(ports) for mac, ports in routes.items() if ips.get(mac)}
            for dpid, routes in route_table.items()}
