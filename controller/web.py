"""The operator surface on the controller's web port (next to the REST API of controller/rest.py):

GET /                    the live web view (controller/web/index.html; assets under /web/)
GET /web/FILE            the view's static files (served from the package, no CDN)
GET /metrics             Prometheus metrics (controller/metrics.py)
GET /sdnmpi/view[?job=ID]  the web view's state in one answer: switches in tiers, hosts, link load,
                         jobs, routing policy, counters, and job ID's details (controller/views.py)
GET /sdnmpi/linkload     each link once with its rate per direction and utilisation
GET /sdnmpi/jobs/ID      one job: hosts, ranks, plans with per-step hops, trees, flows per switch
GET /sdnmpi/routing      {"routing": the default policy, "policies": [every policy]}
PUT /sdnmpi/routing      body {"routing": NAME}: makes NAME the default policy (operator only:
                         ``Authorization: Bearer <token>``, controller/auth.py); the routes follow
                         within --sdnmpi-route-delay
"""
import json
import logging
import mimetypes
import os
import re

from ryu.app.wsgi import ControllerBase, Response, route

from sdnmpi.primitives import DEFAULT_ROUTING

from . import metrics, views
from .auth import operator_only
from .rest import JOB_ID

LOG = logging.getLogger(__name__)
STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "web")
CORE_KEY = "sdnmpi_core"
RPC_KEY = "sdnmpi_rpc"
METRICS_KEY = "sdnmpi_metrics"
AUTH_KEY = "sdnmpi_auth"
MAX_BODY = 4096
STATIC_TYPES = {".html": "text/html", ".js": "application/javascript", ".css": "text/css", ".svg": "image/svg+xml",
                ".png": "image/png", ".ico": "image/x-icon"}


def _json(body, status=200):
    return Response(status=status, content_type="application/json", charset="utf-8",
                    body=json.dumps(body).encode())


def _static(name):
    """The file ``name`` from the web directory (a plain file name, nothing else), or a 404."""
    path = os.path.join(STATIC_DIR, name)
    ext = os.path.splitext(name)[1]
    if "/" in name or name.startswith(".") or ext not in STATIC_TYPES or not os.path.isfile(path):
        return Response(status=404, content_type="text/plain", charset="utf-8", body=b"not found\n")
    with open(path, "rb") as f:
        body = f.read()
    ctype = STATIC_TYPES.get(ext) or mimetypes.guess_type(name)[0]
    resp = Response(content_type=ctype, body=body)
    if ctype.startswith("text/") or ctype == "application/javascript":
        resp.charset = "utf-8"
    resp.cache_control = "no-cache"
    return resp


class OperatorApi(ControllerBase):
    def __init__(self, req, link, data, **config):
        super().__init__(req, link, data, **config)
        self.core = data[CORE_KEY]
        self.rpc = data[RPC_KEY]
        self.metrics = data[METRICS_KEY]
        self.auth = data[AUTH_KEY]

    @route("sdnmpi_web", "/", methods=["GET"])
    def index(self, _req, **_kwargs):
        return _static("index.html")

    @route("sdnmpi_web", "/web/{name}", methods=["GET"], requirements={"name": r"[A-Za-z0-9_.-]+"})
    def static(self, _req, name, **_kwargs):
        return _static(name)

    @route("sdnmpi_web", "/metrics", methods=["GET"])
    def prometheus(self, _req, **_kwargs):
        return Response(body=self.metrics.exposition(), headerlist=[("Content-Type", metrics.CONTENT_TYPE)])

    @route("sdnmpi_web", "/sdnmpi/view", methods=["GET"])
    def view(self, req, **_kwargs):
        job = req.GET.get("job", "")
        return _json(views.view_json(self.core, self.rpc, int(job) if re.fullmatch(JOB_ID, job) else None))

    @route("sdnmpi_web", "/sdnmpi/linkload", methods=["GET"])
    def linkload(self, _req, **_kwargs):
        return _json(views.link_loads(self.core))

    @route("sdnmpi_web", "/sdnmpi/jobs/{job_id}", methods=["GET"], requirements={"job_id": JOB_ID})
    def job(self, _req, job_id, **_kwargs):
        job = self.rpc.jobs.jobs.get(int(job_id))
        if job is None:
            return _json({"error": "unknown job %s" % job_id}, status=404)
        return _json(views.job_detail(self.core, job))


    @route("sdnmpi_web", "/sdnmpi/routing", methods=["GET"])
    def routing(self, _req, **_kwargs):
        return _json({"routing": self.core.routing, "policies": sorted(DEFAULT_ROUTING)})

    @route("sdnmpi_web", "/sdnmpi/routing", methods=["PUT"])
    @operator_only
    def set_routing(self, req, **_kwargs):
        if (req.content_length or 0) > MAX_BODY:
            return _json({"error": "request body over %d bytes" % MAX_BODY}, status=413)
        try:
            name = json.loads(req.body.decode("utf-8"))["routing"]
            if not isinstance(name, str):
                raise TypeError
        except (ValueError, KeyError, TypeError, RecursionError):  # RecursionError: deeply nested arrays
            return _json({"error": 'the body must be JSON {"routing": NAME}'}, status=400)
        old = self.core.routing
        try:
            changed = self.core.set_routing(name)
        except ValueError as err:
            return _json({"error": str(err)}, status=400)
        LOG.info("REST: default routing set to %s by the operator (was %s)", name, old)
        return _json({"routing": name, "previous": old, "changed": changed})


def register(wsgi, core, rpc_service, meter, auth):
    wsgi.register(OperatorApi, {CORE_KEY: core, RPC_KEY: rpc_service, METRICS_KEY: meter, AUTH_KEY: auth})
