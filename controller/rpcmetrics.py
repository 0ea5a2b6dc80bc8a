"""The RPC service with Prometheus instrumentation: requests and errors per op and reason, request
and planning latency, plan cache hits, job releases and expiries (controller/metrics.py names).

`MeteredRpcService` only observes; the service's behaviour is controller/rpc.py's. A client
connection sends one request at a time, so the request in flight is tracked per client (the
connection's `rpc.Client`).
"""
import logging
import re

from . import rpc
from . import rpc_schema as schema

LOG = logging.getLogger(__name__)
INVALID_OP = "invalid"
PLAN_OPS = {"plan_allreduce", "plan_bcast"}
# Why a job was released (controller/rpc.py, controller/rest.py) -> the label of the count.
RELEASE_REASONS = {"released by client": "client", "its client disconnected": "disconnected",
                   "released by the operator": "operator"}
EXPIRED_WHY = "lease expired"

# Error replies by reason (a label must have few values; the reply itself says more).
REASONS = (
    ("unknown_job", re.compile(r"^unknown job ")),
    ("bad_token", re.compile(r"^bad token for job ")),
    ("unknown_host", re.compile(r" is not in the topology$")),
    ("not_allowed", re.compile(r"^client .* is not on one of the job's hosts|^client address unknown")),
    ("not_confirmed", re.compile(r"^switches did not confirm")),
    ("no_resources", re.compile(r"^no free |^too many jobs")),
)


def error_reason(message):
    """The reason label of an error reply's message ('refused' for any other refusal)."""
    for reason, pattern in REASONS:
        if pattern.search(message):
            return reason
    return "refused"


class MeteredRpcService(rpc.RpcService):
    def __init__(self, core, confirm, metrics, *args, **kwargs):
        super().__init__(core, confirm, *args, **kwargs)
        self.metrics = metrics
        self._op_of = {}   # client -> op of its request being answered (None: not decoded yet)
        metrics.attach_rpc(self)

    def reply_for(self, body, client, *args, **kwargs):
        t0 = self.clock()
        self._op_of[client] = None
        try:
            reply = super().reply_for(body, client, *args, **kwargs)
        finally:
            op = self._op_of.pop(client, None)
        if op is None:  # refused before handle(): the request did not decode or validate
            op = INVALID_OP
            self.metrics.rpc_requests.labels(op=op).inc()
            self.metrics.rpc_errors.labels(op=op, reason="invalid_request").inc()
        self.metrics.rpc_seconds.labels(op=op).observe(self.clock() - t0)
        return reply

    def handle(self, req, client, *args, **kwargs):
        m = self.metrics
        self._op_of[client] = req.op
        m.rpc_requests.labels(op=req.op).inc()
        try:
            fields, timings = super().handle(req, client, *args, **kwargs)
        except schema.RpcError as err:
            m.rpc_errors.labels(op=req.op, reason=error_reason(str(err))).inc()
            raise
        except Exception:
            m.rpc_errors.labels(op=req.op, reason="internal").inc()
            raise
        if req.op in PLAN_OPS:
            if fields.get("cached"):
                m.plan_cache_hits.labels(op=req.op).inc()
            else:
                m.plan_cache_misses.labels(op=req.op).inc()
                planner = req.args["planner"] if req.op == "plan_allreduce" else "bcast"
                if "plan_s" in timings:
                    m.plan_seconds.labels(planner=planner).observe(timings["plan_s"])
                if "install_s" in timings:
                    m.install_seconds.labels(op=req.op).observe(timings["install_s"])
        return fields, timings

    def release(self, job, why, *args, **kwargs):
        known = job.id in self.jobs.jobs
        super().release(job, why, *args, **kwargs)
        if not known:
            return
        if why == EXPIRED_WHY:
            self.metrics.jobs_expired.inc()
        else:
            self.metrics.jobs_released.labels(reason=RELEASE_REASONS.get(why, "other")).inc()
