"""The RPC service MPI jobs talk to (docs/rpc.md): validated requests in, replies out.

`RpcService` is the logic (register, plan, release, expiry) and is testable without sockets or
switches: installing flows goes through ``confirm(msgs)``, which the app implements by sending the
messages plus barriers and waiting for the barrier replies. `serve_connection` runs one client
connection over a socket-like object; any failure of one request or connection is logged and
never reaches the others.

Access (controller/access.py): `register` is checked against the client's address; every other
request naming a job must carry the job's token. Resources: at most `Limits.max_connections`
connections; a frame, once begun, must arrive within `Limits.frame_timeout` (slow senders are
cut off), and a connection that holds no job (registered it, or used its token) is closed after
`Limits.idle_timeout` idle seconds. A frame is at most 1 MiB and msgpack's limits bound what
decoding it may allocate, so a connection costs at most about 1 MiB.
"""
import collections
import dataclasses
import logging
import socket
import time

from sdnmpi import __version__
from sdnmpi.primitives import ALLREDUCE_PLANNERS
from sdnmpi.primitives.allreduce import PlanError

from . import jobroutes, jobtraffic, rpc_bcast, rpc_traffic
from . import rpc_schema as schema
from .access import RegisterAccess, peer_address
from .jobroutes import ConfirmError
from .jobs import BadToken, CommPlan, JobTable, UnknownJob

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Limits:
    max_connections: int = 256
    idle_timeout: float = 30.0     # seconds a connection without a job may stay silent
    frame_timeout: float = 10.0    # seconds for a begun frame to arrive, and for a reply to leave


@dataclasses.dataclass(eq=False)
class Client:
    """One RPC connection: the peer's address (an ipaddress object, None if unknown) and the
    jobs it registered or presented a valid token for."""
    peer: object = None
    jobs: set = dataclasses.field(default_factory=set)


class RpcService:
    def __init__(self, core, confirm, clock=time.monotonic, access=None, idle_watch=None):
        self.core = core
        self.idle_watch = idle_watch       # jobidle.IdleWatch, or None: no dynamic phase detection
        self.jobs = JobTable()
        self.confirm = confirm
        self.clock = clock
        self.access = access or RegisterAccess()
        self.counters = collections.Counter()
        self.open_connections = 0

    def holds_a_job(self, client):
        """True if the client registered, or presented the token of, a job that is still live."""
        client.jobs.intersection_update(self.jobs.jobs)
        return bool(client.jobs)

    def handle(self, req, client):
        """(reply fields, timings) for a validated request; raises schema.RpcError to refuse it."""
        now = self.clock()
        if req.op == "hello":
            return {"server": _server_name()}, {}
        if req.op == "register":
            return self._register(req.args, client, now), {}
        job = self._job(req.args, now)
        client.jobs.add(job.id)
        if req.op == "release":
            self.release(job, "released by client")
            return {}, {}
        if req.op == "locate":
            return {"locality": self.locality(req.args["hosts"])}, {}
        if req.op == "plan_bcast":
            return rpc_bcast.plan_bcast(self, job, req.args)
        if req.op == "traffic":
            return rpc_traffic.traffic(self, job, req.args), {}
        if req.op == "phase":
            return rpc_traffic.phase(self, job, req.args), {}
        return self._plan_allreduce(job, req.args)

    def _register(self, args, client, now):
        refusal = self.access.refusal(client.peer, args["hosts"], self.core.topology)
        if refusal is not None:
            self.counters["registers_refused"] += 1
            LOG.warning("register from %s refused: %s", client.peer, refusal)
            raise schema.RpcError(refusal)
        try:
            job = self.jobs.register(args["hosts"], args["lease_s"], client, now)
        except RuntimeError as err:
            raise schema.RpcError(str(err)) from None
        client.jobs.add(job.id)
        self.counters["jobs_registered"] += 1
        # server and locality save the client a hello and a locate (issue 17: start-up cost)
        return {"job": job.id, "token": job.token, "server": _server_name(),
                "locality": self.locality(args["hosts"])}

    def _job(self, args, now):
        try:
            return self.jobs.get(args["job"], args["token"], now)
        except UnknownJob as err:
            raise schema.RpcError(err.args[0]) from None
        except BadToken as err:
            self.counters["bad_tokens"] += 1
            raise schema.RpcError(err.args[0]) from None

    def _plan_allreduce(self, job, args):
        timings = {}
        old = job.plans.get(args["comm"])
        key = ("plan", args["comm"])
        if (old is not None and old.steps == args["steps"] and old.planner == args["planner"]
                and not job.in_flight.unconfirmed(key, old)):
            return _plan_fields(old, cached=True), timings
        t0 = self.clock()
        plan = self._compute(job, args["steps"], args["planner"])
        timings["plan_s"] = self.clock() - t0
        job.plans[args["comm"]] = plan
        op = job.in_flight.begin({key: old}, {key: plan}, writes=[key])
        t1 = self.clock()
        try:
            self.confirm(jobroutes.sync_jobs(self.core, self.jobs))
        except ConfirmError as err:
            # the plan as the ops that did not fail left it (controller/pending.py)
            put_back = job.in_flight.failed(op, {key: job.plans.get(args["comm"])})
            if key in put_back:
                job.plans.pop(args["comm"], None)
                if put_back[key] is not None:
                    job.plans[args["comm"]] = put_back[key]
            self.resync(job)
            raise schema.RpcError("switches did not confirm the routes: %s" % err) from None
        finally:
            job.in_flight.done(op)
        timings["install_s"] = self.clock() - t1
        self.counters["allreduce_plans"] += 1
        LOG.info("job %d comm %d: %s plan, %d flows (%d installed, the rest the default routes'), max load per "
                 "step %s (lower bound %s)", job.id, args["comm"], plan.planner, len(plan.flows),
                 sum(1 for key, port in plan.flows.items() if job.installed.get(key) == port),
                 list(plan.max_load), list(plan.lower_bound))
        return _plan_fields(plan, cached=False), timings

    def locality(self, ips):
        """Per IP: the dpid of the switch its host is attached to (its leaf, or edge switch), or
        -1 if the host is not in the topology. Ranks with equal values share a leaf."""
        hosts = [self.core.topology.host_by_ip(ip) for ip in ips]
        return [-1 if host is None else host.dpid for host in hosts]

    def _compute(self, job, steps, planner):
        """A CommPlan for ``steps`` (of IP pairs, ``job``'s hosts) on the current topology; raises
        schema.RpcError."""
        graph = self.core.topology.graph()
        macs, ip_of = {}, {}
        for step in steps:
            for (src, dst), _count in step:
                for ip in (src, dst):
                    if ip not in macs:
                        host = self.core.topology.host_by_ip(ip)
                        if host is None:
                            raise schema.RpcError("host %s is not in the topology" % ip)
                        macs[ip], ip_of[host.mac] = host.mac, ip
        refusal = jobtraffic.foreign_host(set(job.hosts), macs)
        if refusal is not None:
            raise schema.RpcError(refusal)
        host_steps = [[((macs[s], macs[d]), c) for (s, d), c in step] for step in steps]
        try:
            plan = ALLREDUCE_PLANNERS[planner](graph, host_steps)
        except PlanError as err:
            raise schema.RpcError(str(err)) from None
        return CommPlan(steps=steps, planner=planner, flows=jobroutes.plan_flows(graph, plan.paths, ip_of),
                        max_load=plan.max_load, lower_bound=plan.lower_bound)

    def replan(self):
        """After a topology change: plans every job's communicators and installed traffic phases
        again on the new topology (jobs in id order, each job's phases seeing the ones before) and
        installs the difference. A plan that no longer fits (a host is gone, a leaf cut off) is
        dropped, so its pairs use the default routes. Nothing changes where the topology change did
        not matter (with elided hops, a change of the default routes alone may add or remove job
        flows). Whatever fails for one job is logged with its id and never stops the others."""
        msgs = []
        for _job_id, job in sorted(self.jobs.jobs.items()):
            try:
                jobtraffic.replan_job(self.core, self.jobs, job)
            except Exception:  # pylint: disable=broad-except
                LOG.exception("job %d: traffic phases not re-planned after a topology change: default routes", job.id)
                job.traffic.routes = {}
            for comm, plan in list(job.plans.items()):
                try:
                    job.plans[comm] = self._compute(job, plan.steps, plan.planner)
                except Exception as err:  # pylint: disable=broad-except
                    LOG.warning("job %d comm %d: plan dropped after a topology change: %s", job.id, comm, err,
                                exc_info=not isinstance(err, schema.RpcError))
                    del job.plans[comm]
            msgs += rpc_bcast.replan(self, job)
        msgs = jobroutes.sync_jobs(self.core, self.jobs) + msgs
        if msgs:
            LOG.info("%d job route changes after a topology change", len(msgs))
            try:
                self.confirm(msgs)
            except ConfirmError as err:
                LOG.warning("re-planned job routes not confirmed: %s", err)
                for _job_id, job in sorted(self.jobs.jobs.items()):
                    self.resync(job)

    def watch_idle(self, now):
        """After a stats poll: dynamic phase detection (controller/jobidle.py), if enabled."""
        rpc_traffic.idle(self, now)

    def resync(self, job, gone=()):
        """After a failed install, the switches may hold part of it: start the job over clean (its
        host-pair flows and its Bcast trees, which releasing the job's flows deletes too). ``gone``:
        TreePlans of the failed install the job no longer holds (their groups are deleted)."""
        msgs = jobroutes.release_messages(self.core.datapaths, job)
        for tree in gone:
            msgs += jobroutes.tree_messages(self.core.datapaths, job, tree, None)
        job.installed = {}
        msgs += jobroutes.sync_jobs(self.core, self.jobs)
        for _key, tree in sorted(job.trees.items()):
            msgs += jobroutes.tree_messages(self.core.datapaths, job, None, tree)
        try:
            self.confirm(msgs)
        except ConfirmError as err:
            LOG.warning("job %d: could not resynchronise its routes: %s", job.id, err)

    def release(self, job, why):
        if self.jobs.remove(job.id, why) is None:
            return
        try:
            self.confirm(jobroutes.release_messages(self.core.datapaths, job))
        except ConfirmError as err:
            LOG.warning("job %d: removing its routes was not confirmed: %s", job.id, err)

    def connection_closed(self, owner):
        for job in self.jobs.owned_by(owner):
            self.release(job, "its client disconnected")

    def expire(self):
        for job in self.jobs.expired(self.clock()):
            self.release(job, "lease expired")

    def switch_reset(self, dpid):
        """Messages that restore every job's routes and trees on a switch that (re)connected with
        empty tables."""
        if dpid not in self.core.datapaths:
            return []
        only = {dpid: self.core.datapaths[dpid]}
        msgs = []
        for _job_id, job in sorted(self.jobs.jobs.items()):
            msgs += jobroutes.reset_messages(only[dpid], job)
            for _key, tree in sorted(job.trees.items()):
                msgs += jobroutes.tree_messages(only, job, None, tree)
        return msgs

    def stats_json(self):
        return dict({name: self.counters[name] for name in
                     ("requests", "errors", "jobs_registered", "allreduce_plans", "bcast_trees", "traffic_ops",
                      "phase_ops", "idle_releases", "connections",
                      "registers_refused", "bad_tokens", "connections_refused", "idle_closed", "slow_closed")},
                    open_connections=self.open_connections)

    def jobs_json(self):
        return [job.to_json() for _id, job in sorted(self.jobs.jobs.items())]

    def reply_for(self, body, client):
        """The framed reply to one request body. Never raises for bad input."""
        t0 = self.clock()
        self.counters["requests"] += 1
        try:
            req = schema.decode_request(body)
        except schema.RpcError as err:
            self.counters["errors"] += 1
            return schema.encode_reply(err.req_id, error=str(err), timings={"total_s": self.clock() - t0})
        try:
            fields, timings = self.handle(req, client)
        except schema.RpcError as err:
            self.counters["errors"] += 1
            return schema.encode_reply(req.id, error=str(err), timings={"total_s": self.clock() - t0})
        except Exception:  # pylint: disable=broad-except
            self.counters["errors"] += 1
            LOG.exception("RPC %s failed", req.op)
            return schema.encode_reply(req.id, error="internal error", timings={"total_s": self.clock() - t0})
        timings["total_s"] = self.clock() - t0
        return schema.encode_reply(req.id, timings=timings, **fields)


def _server_name():
    return "sdnmpi %s" % __version__


def _plan_fields(plan, cached):
    return {"flows": len(plan.flows), "max_load": list(plan.max_load), "lower_bound": list(plan.lower_bound),
            "cached": cached}


class _Timeout(Exception):
    """A deadline of serve_connection passed (the counter to bump is its argument)."""


def _recv_exactly(sock, n, deadline, counter):
    """n bytes, or None at the end of the stream; raises _Timeout(counter) after ``deadline``
    (time.monotonic; None: wait for ever)."""
    buf = bytearray()
    while len(buf) < n:
        if deadline is None:
            sock.settimeout(None)
        else:
            left = deadline - time.monotonic()
            if left <= 0:
                raise _Timeout(counter)
            sock.settimeout(left)
        try:
            chunk = sock.recv(min(n - len(buf), 65536))
        except socket.timeout:
            raise _Timeout(counter) from None
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _send(sock, data, limits):
    sock.settimeout(limits.frame_timeout)
    try:
        sock.sendall(data)
    except socket.timeout:
        raise _Timeout("slow_closed") from None


def serve_connection(service, sock, addr, limits=Limits()):
    """Serves one client (``addr``: its socket peer address) until it closes, sends an unusable
    frame length, errs, or exceeds a limit."""
    client = Client(peer=peer_address(addr))
    name = "%s:%s" % tuple(addr[:2]) if isinstance(addr, tuple) and len(addr) >= 2 else str(addr)
    service.counters["connections"] += 1
    if service.open_connections >= limits.max_connections:
        service.counters["connections_refused"] += 1
        LOG.warning("RPC client %s refused: %d connections open", name, service.open_connections)
        try:
            _send(sock, schema.encode_reply(-1, error="too many connections"), limits)
        except (OSError, _Timeout):
            pass
        _close(sock)
        return
    service.open_connections += 1
    LOG.info("RPC client %s connected", name)
    try:
        while True:
            now = time.monotonic()
            idle = None if service.holds_a_job(client) else now + limits.idle_timeout
            first = _recv_exactly(sock, 1, idle, "idle_closed")
            if first is None:
                break
            rest = _recv_exactly(sock, schema.HEADER.size - 1, time.monotonic() + limits.frame_timeout,
                                 "slow_closed")
            if rest is None:
                break
            try:
                length = schema.frame_length(first + rest)
            except schema.RpcError as err:
                _send(sock, schema.encode_reply(-1, error=str(err)), limits)
                break
            body = _recv_exactly(sock, length, time.monotonic() + limits.frame_timeout, "slow_closed")
            if body is None:
                break
            _send(sock, service.reply_for(body, client), limits)
    except _Timeout as why:
        service.counters[why.args[0]] += 1
        LOG.info("RPC client %s closed: %s", name, "idle" if why.args[0] == "idle_closed" else "too slow")
    except OSError as err:
        LOG.info("RPC client %s: %s", name, err)
    except Exception:  # pylint: disable=broad-except
        LOG.exception("RPC client %s: connection failed", name)
    finally:
        _close(sock)
        service.open_connections -= 1
        service.connection_closed(client)
        LOG.info("RPC client %s disconnected", name)


def _close(sock):
    try:
        sock.close()
    except OSError:
        pass
