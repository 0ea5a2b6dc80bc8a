"""REST API (Ryu WSGI, JSON). Every endpoint is listed in docs/operator.md. Reading is open; every call
that changes something is wrapped with auth.operator_only (the operator's bearer token).

GET /sdnmpi/topology   {"switches": [...], "links": [...], "hosts": [...]}
GET /sdnmpi/switches   the "switches" part      GET /sdnmpi/links   the "links" part
GET /sdnmpi/hosts      the "hosts" part
GET /sdnmpi/ports      per-port counters and rx/tx throughput (bit/s) from port-stats polling
GET /sdnmpi/routes     installed default routes: {dpid: {dst ip: [ports]}}
GET /sdnmpi/stats      controller counters (packet-ins by kind, ARP replies, RPC, ...) and the policy
GET /sdnmpi/jobs       MPI jobs: hosts, per-communicator plans and their installed routes
DELETE /sdnmpi/jobs/<id>  (operator) releases a job: its routes and trees are removed
"""
import json
import logging

from ryu.app.wsgi import ControllerBase, Response, route

from .auth import operator_only

LOG = logging.getLogger(__name__)
CORE_KEY = "sdnmpi_core"
RPC_KEY = "sdnmpi_rpc"
AUTH_KEY = "sdnmpi_auth"
# A job id in a path or a query: ASCII digits only ("²".isdigit() is true), short enough for int().
JOB_ID = r"[0-9]{1,9}"


def _json(body, status=200):
    return Response(status=status, content_type="application/json", charset="utf-8",
                    body=json.dumps(body).encode())


class RestApi(ControllerBase):
    def __init__(self, req, link, data, **config):
        super().__init__(req, link, data, **config)
        self.core = data[CORE_KEY]
        self.rpc = data[RPC_KEY]
        self.auth = data[AUTH_KEY]

    @route("sdnmpi", "/sdnmpi/topology", methods=["GET"])
    def topology(self, _req, **_kwargs):
        return _json(self.core.topology.to_json())

    @route("sdnmpi", "/sdnmpi/switches", methods=["GET"])
    def switches(self, _req, **_kwargs):
        return _json(self.core.topology.to_json()["switches"])

    @route("sdnmpi", "/sdnmpi/links", methods=["GET"])
    def links(self, _req, **_kwargs):
        return _json(self.core.topology.to_json()["links"])

    @route("sdnmpi", "/sdnmpi/hosts", methods=["GET"])
    def hosts(self, _req, **_kwargs):
        return _json(self.core.topology.to_json()["hosts"])

    @route("sdnmpi", "/sdnmpi/ports", methods=["GET"])
    def ports(self, _req, **_kwargs):
        return _json(self.core.port_stats.to_json())

    @route("sdnmpi", "/sdnmpi/routes", methods=["GET"])
    def routes(self, _req, **_kwargs):
        return _json(self.core.routes_json())

    @route("sdnmpi", "/sdnmpi/stats", methods=["GET"])
    def stats(self, _req, **_kwargs):
        return _json(dict(self.core.stats_json(), rpc=self.rpc.stats_json()))

    @route("sdnmpi", "/sdnmpi/jobs", methods=["GET"])
    def jobs(self, _req, **_kwargs):
        return _json(self.rpc.jobs_json())

    @route("sdnmpi", "/sdnmpi/jobs/{job}", methods=["DELETE"], requirements={"job": JOB_ID})
    @operator_only
    def release_job(self, _req, job, **_kwargs):
        found = self.rpc.jobs.jobs.get(int(job))
        if found is None:
            return _json({"error": "unknown job %s" % job}, status=404)
        self.rpc.release(found, "released by the operator")
        return _json({"released": found.id})


def register(wsgi, core, rpc_service, auth):
    wsgi.register(RestApi, {CORE_KEY: core, RPC_KEY: rpc_service, AUTH_KEY: auth})
