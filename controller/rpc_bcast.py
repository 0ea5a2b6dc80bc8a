"""The RPC op `plan_bcast` (docs/rpc.md): a set of multicast trees per (job, communicator, root).

A client asks for up to ``trees`` trees (default 1); primitives/bcast.trees plans as many as the
root's leaf has uplinks towards distinct top switches (issue 17: the message is split over them).
Tree i of a set is stored in ``job.trees`` under (comm, root) for i = 0 and (comm, root, i) for
i >= 1, so everything that walks ``job.trees`` (install, release, switch reset, the web views)
sees every tree. Each tree has its own multicast group, UDP port and OpenFlow group (a slot),
kept when the set is planned again.
"""
import logging

from sdnmpi.primitives import bcast

from . import constants as C
from . import jobroutes, jobtraffic
from . import rpc_schema as schema
from .jobroutes import ConfirmError
from .jobs import TreePlan

LOG = logging.getLogger(__name__)

MULTICAST_BASE = (239 << 24) | (77 << 16)   # Bcast groups: 239.77.0.1 - 239.77.255.254
MULTICAST_SLOTS = 65534
BCAST_UDP_PORT_BASE = 47000
BCAST_UDP_PORTS = 1000


def tree_key(comm, root, index):
    return (comm, root) if index == 0 else (comm, root, index)


def tree_set(job, comm, root):
    """The trees of (comm, root), in order (empty if none)."""
    out = []
    while tree_key(comm, root, len(out)) in job.trees:
        out.append(job.trees[tree_key(comm, root, len(out))])
    return out


def plan_bcast(service, job, args):
    """(reply fields, timings) of `plan_bcast`; raises schema.RpcError."""
    comm, root, wanted = args["comm"], args["root"], args["trees"]
    old = tree_set(job, comm, root)
    key = ("trees", comm, root)
    if (old and old[0].members == args["members"] and old[0].wanted == wanted
            and not job.in_flight.unconfirmed(key, tuple(old))):
        return reply_fields(old, cached=True), {}
    t0 = service.clock()
    new = compute(service, job, root, args["members"], wanted, [t.group_id - C.GROUP_JOB_BASE for t in old],
                  old)
    timings = {"plan_s": service.clock() - t0}
    _store(job, comm, root, old, new)
    op = job.in_flight.begin({key: tuple(old)}, {key: tuple(new)}, writes=[key])
    t1 = service.clock()
    try:
        service.confirm(_messages(service, job, old, new))
    except ConfirmError as err:
        # the set as the ops that did not fail left it (controller/pending.py)
        put_back = job.in_flight.failed(op, {key: tuple(tree_set(job, comm, root))})
        if key in put_back:
            _store(job, comm, root, tree_set(job, comm, root), put_back[key])
        held = {id(t) for t in job.trees.values()}
        service.resync(job, gone=[t for t in new if id(t) not in held])
        raise schema.RpcError("switches did not confirm the tree: %s" % err) from None
    finally:
        job.in_flight.done(op)
    timings["install_s"] = service.clock() - t1
    service.counters["bcast_trees"] += len(new)
    for t in new:
        LOG.info("job %d comm %d root %s: bcast tree %d/%d %s:%d over %d switches (top %s)", job.id, comm,
                 t.root, t.index + 1, len(new), t.group_ip, t.udp_port, len(t.out_ports),
                 "-" if t.top is None else "%016x" % t.top)
    return reply_fields(new, cached=False), timings


def compute(service, job, root, members, wanted, slots, exclude=()):
    """TreePlans on the current topology (``members``: ``job``'s hosts), the top switches chosen by
    load (other trees than ``exclude``); tree i keeps ``slots[i]`` if there is one, else takes a
    free slot. RpcError."""
    hosts = {}
    for ip in members:
        host = service.core.topology.host_by_ip(ip)
        if host is None:
            raise schema.RpcError("host %s is not in the topology" % ip)
        hosts[ip] = host.mac
    refusal = jobtraffic.foreign_host(set(job.hosts), hosts)
    if refusal is not None:
        raise schema.RpcError(refusal)
    skip = {id(t) for t in exclude}
    load = {}
    for other in service.jobs.jobs.values():
        for tree in other.trees.values():
            if id(tree) not in skip and tree.top is not None:
                load[tree.top] = load.get(tree.top, 0) + 1
    try:
        planned = bcast.trees(service.core.topology.graph(), hosts[root], list(hosts.values()), wanted, load)
    except bcast.TreeError as err:
        raise schema.RpcError(str(err)) from None
    slots = list(slots[:len(planned)])
    while len(slots) < len(planned):
        slots.append(_free_slot(service, set(slots)))
    out = []
    for index, (t, slot) in enumerate(zip(planned, slots)):
        address = MULTICAST_BASE + slot
        out.append(TreePlan(root=root, members=list(members), udp_port=BCAST_UDP_PORT_BASE + slot % BCAST_UDP_PORTS,
                            group_ip="%d.%d.%d.%d" % (address >> 24, (address >> 16) & 255, (address >> 8) & 255,
                                                      address & 255),
                            group_id=C.GROUP_JOB_BASE + slot, top=t.top, out_ports=t.out_ports,
                            index=index, wanted=wanted))
    return out


def replan(service, job):
    """After a topology change: every tree set of ``job`` planned again; the messages that install
    the difference. A set that no longer fits is dropped (logged)."""
    msgs = []
    for key in sorted(k for k in job.trees if len(k) == 2):
        comm, root = key
        old = tree_set(job, comm, root)
        try:
            new = compute(service, job, root, old[0].members, old[0].wanted,
                          [t.group_id - C.GROUP_JOB_BASE for t in old], old)
        except Exception as err:  # pylint: disable=broad-except
            LOG.warning("job %d comm %d: bcast tree dropped after a topology change: %s", job.id, comm, err,
                        exc_info=not isinstance(err, schema.RpcError))
            new = []
        _store(job, comm, root, old, new)
        msgs += _messages(service, job, old, new)
    return msgs


def reply_fields(trees, cached):
    """Tree 0's fields (what single-tree clients read) and ``trees``: every tree's."""
    each = [{"group": t.group_ip, "port": t.udp_port, "switches": len(t.out_ports),
             "top": "" if t.top is None else "%016x" % t.top} for t in trees]
    return dict(each[0], cached=cached, trees=each)


def _store(job, comm, root, old, new):
    for i in range(len(old)):
        job.trees.pop(tree_key(comm, root, i), None)
    for i, t in enumerate(new):
        job.trees[tree_key(comm, root, i)] = t


def _messages(service, job, old, new):
    msgs = []
    for i in range(max(len(old), len(new))):
        msgs += jobroutes.tree_messages(service.core.datapaths, job, old[i] if i < len(old) else None,
                                        new[i] if i < len(new) else None)
    return msgs


def _free_slot(service, taken):
    used = {t.group_id - C.GROUP_JOB_BASE for j in service.jobs.jobs.values() for t in j.trees.values()} | taken
    for slot in range(1, MULTICAST_SLOTS + 1):
        if slot not in used:
            return slot
    raise schema.RpcError("no free multicast group")
