"""The RPC ops `traffic` and `phase` (docs/rpc.md, issue 15): a job's demand per phase and its
ranks' phase changes, on controller/jobtraffic.py, installed through the service's ``confirm``.

Either op changes nothing if it is refused: jobtraffic checks everything first, and if the
switches do not confirm the change (or anything else fails) the op's own change is undone and the
job's flows resynchronised (controller/pending.py: what other ops of the job, in flight or
confirmed meanwhile, changed stays).
"""
import logging

from . import jobtraffic
from .jobroutes import ConfirmError
from . import rpc_schema as schema

LOG = logging.getLogger(__name__)


def traffic(service, job, args):
    """Reply fields of `traffic`: flows installed now, NL_D, the plan's max load, stored."""
    phase = args["phase"]
    result = install(service, job, lambda: jobtraffic.declare(
        service.core, service.jobs, job, phase, args["pairs"], add=args["add"], router=args["planner"]),
        writes=[("demand", phase), ("dormant",)])
    service.counters["traffic_ops"] += 1
    routes = job.traffic.routes.get(phase)
    demand = job.traffic.demands.get(phase, [])
    LOG.info("job %d: traffic phase %d, %d pairs (%s), %s", job.id, phase, len(demand), args["planner"],
             "installed, %d flow entries" % result if routes else "stored")
    return {"flows": result, "node_load": jobtraffic.node_load(demand),
            "max_load": routes.max_flows if routes else -1, "stored": routes is None}


def phase(service, job, args):
    """Reply fields of `phase`: whether phase k's routes are in place, entries installed."""
    result = install(service, job, lambda: jobtraffic.move(service.core, service.jobs, job, args["rank"],
                                                          args["phase"]),
                     writes=[("rank", args["rank"])] + ([("dormant",)] if args["phase"] else []))
    service.counters["phase_ops"] += 1
    return {"installed": args["phase"] in job.traffic.routes, "flows": result}


def idle(service, now):
    """Releases the traffic routes of the jobs ``service.idle_watch`` finds quiet (after a stats poll).
    ``idle_releases`` counts the jobs released, also those whose routes were all elided
    (--sdnmpi-elide-default-hops), whose release sends no message."""
    if service.idle_watch is None:
        return
    awake = [job for _id, job in sorted(service.jobs.jobs.items()) if not job.traffic.dormant]
    msgs = service.idle_watch.poll(service.core, service.jobs, now)
    service.counters["idle_releases"] += sum(1 for job in awake if job.traffic.dormant)
    if msgs:
        try:
            service.confirm(msgs)
        except ConfirmError as err:
            LOG.warning("removing idle jobs' traffic routes was not confirmed: %s", err)


def install(service, job, change, writes=()):
    """Runs ``change`` (a jobtraffic call returning messages, writing the jobtraffic.entries keys
    ``writes``) and confirms its messages; the number of flow entries it installed. Raises
    schema.RpcError (one line), having undone the change: the job as it was, except for what other
    connections changed meanwhile (this op waits for the switches, and other ops may run in
    between: controller/pending.py)."""
    before = job.traffic.copy()
    installed = dict(job.installed)
    try:
        msgs = change()
    except jobtraffic.TrafficError as err:
        job.traffic = before
        raise schema.RpcError(str(err)) from None
    except Exception as err:  # pylint: disable=broad-except
        job.traffic = before
        raise _internal(job, err) from None
    op = job.in_flight.begin(jobtraffic.entries(before), jobtraffic.entries(job.traffic), writes)
    try:
        if msgs:
            service.confirm(msgs)
    except Exception as err:  # pylint: disable=broad-except
        put_back = job.in_flight.failed(op, jobtraffic.entries(job.traffic))
        try:
            jobtraffic.undo(service.core, service.jobs, job, put_back)
        except Exception:  # pylint: disable=broad-except
            LOG.exception("job %d: undoing a failed traffic change failed: default routes", job.id)
            job.traffic.routes = {}
        service.resync(job)
        if isinstance(err, ConfirmError):
            raise schema.RpcError("switches did not confirm the routes: %s" % err) from None
        raise _internal(job, err) from None
    finally:
        job.in_flight.done(op)
    return sum(1 for key, port in job.installed.items()
               if installed.get(key) != port and key[0] in service.core.datapaths)


def _internal(job, err):
    """The RpcError for a failure that is the controller's own (logged with its traceback)."""
    LOG.error("job %d: traffic change failed, undone", job.id, exc_info=err)
    return schema.RpcError("internal error (%s), nothing changed" % type(err).__name__)
