"""Per-job routes: a planner's host-pair paths as flows, and the messages that install them.

A path (switch dpids from the sender's leaf to the receiver's leaf) becomes one flow per switch,
``ipv4_src=SRC, ipv4_dst=DST -> output:PORT`` at the job's priority and cookie. Pairs on one leaf
need no job flow: the default route already delivers them.

With ``--sdnmpi-elide-default-hops`` (the default; ``--nosdnmpi-elide-default-hops`` installs every hop)
a hop is not installed either where the switch's default route
for the destination is that same single output port (on a tree, every hop down from the top, and
the uplinks the default routing picks anyway): the packets go the same way through the default
flow. Never elided: a hop whose default is an ECMP SELECT group (a pinned port is not the same as a
hash over several), a hop on a switch whose default routes are not installed, and a (switch, pair)
that another live job also routes (the other job's flow, at its own priority, would decide).
This covers every host-pair route of a job (``Job.flows()``: its plan_allreduce plans and its traffic
routes), never its Bcast trees (`tree_messages`: groups, always installed).
``Job.installed`` is what the switches hold; `sync_jobs` keeps it equal to what every job needs.
"""
from sdnmpi.primitives import fabric

from . import constants as C
from . import ofmsgs


class ConfirmError(RuntimeError):
    """The switches did not confirm a change (barrier timeout, OpenFlow error, disconnect)."""


def plan_flows(graph, paths, ip_of):
    """{(dpid, src ip, dst ip): out port} for ``paths`` ({(src mac, dst mac): switch path})."""
    flows = {}
    for (src, dst), path in paths.items():
        if len(path) < 2:
            continue
        src_ip, dst_ip = ip_of[src], ip_of[dst]
        for here, there in zip(path, path[1:]):
            flows[(here, src_ip, dst_ip)] = fabric.port_towards(graph, here, there)
        flows[(path[-1], src_ip, dst_ip)] = fabric.attachment(graph, dst)[1]
    return flows


def sync_messages(datapaths, job, old, new):
    """Messages taking the switches from the job's ``old`` flows to ``new`` (both as from
    `plan_flows`). Flows of switches that are not connected are skipped. A host pair's match is
    built and encoded once for all its switches (ofmsgs.WireMatch)."""
    msgs, matches = [], {}

    def match(src, dst):
        found = matches.get((src, dst))
        if found is None:
            found = matches[(src, dst)] = ofmsgs.ipv4_pair_match(src, dst)
        return found

    for key, port in sorted(new.items()):
        dpid, src, dst = key
        if old.get(key) != port and dpid in datapaths:
            dp = datapaths[dpid]
            msgs.append(ofmsgs.flow_add(dp, job.priority, match(src, dst),
                                        [dp.ofproto_parser.OFPActionOutput(port)], job.cookie))
    for key in sorted(set(old) - set(new)):
        dpid, src, dst = key
        if dpid in datapaths:
            msgs.append(ofmsgs.flow_delete_strict(datapaths[dpid], job.priority, match(src, dst), job.cookie))
    return msgs


def needed_flows(flows, routes, shared=frozenset()):
    """The part of a job's ``flows`` ({(dpid, src, dst): port}) that must be installed: all but
    the hops whose switch's default route for ``dst`` is the single port ``port``. ``routes``:
    {dpid: SwitchRoutes} of the installed default routes ({} elides nothing); ``shared``: keys
    that other jobs route too (never elided)."""
    out = {}
    for key, port in flows.items():
        table = routes.get(key[0])
        if table is None or key in shared or table.flows.get(key[2]) != (port,):
            out[key] = port
    return out


def elision_routes(core):
    """The default routes job flows may be elided against: ``core.routes`` if the controller runs
    with --sdnmpi-elide-default-hops, else none."""
    return core.routes if core.settings.elide_default_hops else {}


def sync_jobs(core, jobs):
    """Messages that bring every job's flows on the switches (``job.installed``) to what it needs
    now (`needed_flows` of ``job.flows()``), jobs in id order; updates ``job.installed``. Call it
    after any change of a job's flows, of the jobs, or of the default routes."""
    routes = elision_routes(core)
    wanted = {job_id: job.flows() for job_id, job in jobs.jobs.items()}
    shared = set()
    if routes and len(wanted) > 1:
        seen = set()
        for flows in wanted.values():
            shared.update(seen.intersection(flows))
            seen.update(flows)
    msgs = []
    for job_id, job in sorted(jobs.jobs.items()):
        need = needed_flows(wanted[job_id], routes, shared)
        msgs += sync_messages(core.datapaths, job, job.installed, need)
        job.installed = need
    return msgs


def reset_messages(dp, job):
    """Messages that put every flow of the job on switch ``dp``, which (re)connected with empty
    tables; nothing elided (the switch has no default routes yet): the next `sync_jobs`, after its
    routes are in, takes out what they make redundant. Updates ``job.installed``."""
    here = {key: port for key, port in job.flows().items() if key[0] == dp.id}
    job.installed = {key: port for key, port in job.installed.items() if key[0] != dp.id}
    job.installed.update(here)
    return sync_messages({dp.id: dp}, job, {}, here)


def tree_match(dp, tree):
    return dp.ofproto_parser.OFPMatch(eth_type=C.ETH_TYPE_IPV4, ip_proto=17, ipv4_src=tree.root,
                                      ipv4_dst=tree.group_ip, udp_dst=tree.udp_port)


def tree_messages(datapaths, job, old, new):
    """Messages taking the switches from TreePlan ``old`` to ``new`` (either may be None) of one
    (communicator, root): per switch an ALL group copying the packet to the tree's ports, and a
    flow sending the group's datagrams into it. Unchanged switches get nothing."""
    old_ports = old.out_ports if old else {}
    new_ports = new.out_ports if new else {}
    msgs = []
    for dpid in sorted(set(old_ports) | set(new_ports)):
        dp = datapaths.get(dpid)
        if dp is None or (old and new and old_ports.get(dpid) == new_ports.get(dpid)
                          and old.group_id == new.group_id):
            continue
        ofp = dp.ofproto
        if dpid in new_ports:
            command = ofp.OFPGC_MODIFY if dpid in old_ports and old.group_id == new.group_id else ofp.OFPGC_ADD
            msgs.append(ofmsgs.group_all(dp, command, new.group_id, new_ports[dpid]))
            msgs.append(ofmsgs.flow_add(dp, C.PRIORITY_JOB_MULTICAST, tree_match(dp, new),
                                        [dp.ofproto_parser.OFPActionGroup(new.group_id)], job.cookie))
        if dpid in old_ports and (dpid not in new_ports or old.group_id != new.group_id):
            if dpid not in new_ports:
                msgs.append(ofmsgs.flow_delete_strict(dp, C.PRIORITY_JOB_MULTICAST, tree_match(dp, old), job.cookie))
            msgs.append(ofmsgs.group_delete(dp, old.group_id))
    return msgs


def release_messages(datapaths, job):
    """Deletes every flow with the job's cookie, on every switch, then the job's groups."""
    msgs = [ofmsgs.flow_delete_cookie(dp, job.cookie) for _dpid, dp in sorted(datapaths.items())]
    for tree in job.trees.values():
        msgs += [ofmsgs.group_delete(datapaths[d], tree.group_id) for d in sorted(tree.out_ports) if d in datapaths]
    return msgs
