"""MPI jobs known to the controller: their hosts, lease, token, owner connection, and routes.

Plain state; the RPC service (controller/rpc.py) drives it and the core installs the flows. A job's
flows carry the cookie ``COOKIE_JOB | job id`` and a priority of its own in the job band (its
slot), so two jobs routing the same host pair never overwrite or delete each other's flows.

Job ids are random (1 .. 2^24-1, the cookie's id bits), so they tell nothing about other jobs;
what authorises a request on a job is its token: 128 random bits that only the registering client
learns. Tokens are never logged in full (a 4-character prefix at most).
"""
import dataclasses
import hmac
import logging
import secrets

from . import constants as C
from .jobtraffic import JobTraffic
from .pending import InFlight

LOG = logging.getLogger(__name__)
JOB_PRIORITY_SLOTS = 1000
MAX_JOBS = JOB_PRIORITY_SLOTS      # one priority slot each
MAX_JOB_ID = (1 << C.COOKIE_KIND_SHIFT) - 1
TOKEN_BYTES = 16                   # 128 bits, sent as 32 hex characters
TOKEN_LOGGED = 4                   # characters of a token that may appear in a log


@dataclasses.dataclass
class CommPlan:
    steps: list
    planner: str
    flows: dict          # (dpid, src ip, dst ip) -> out port
    max_load: tuple
    lower_bound: tuple


@dataclasses.dataclass
class TreePlan:
    """A Bcast multicast tree of one (communicator, root)."""
    root: str            # root host IP
    members: list        # member host IPs (sorted, root included)
    group_ip: str        # the IPv4 multicast address the root sends to
    udp_port: int
    group_id: int        # OpenFlow group id (the same on every switch of the tree)
    top: int             # the spine/core the tree crosses (None: root's leaf only)
    out_ports: dict      # dpid -> tuple of output ports
    index: int = 0       # this tree's number in the set of (communicator, root) (controller/rpc_bcast.py)
    wanted: int = 1      # the trees the client asked for

    def to_json(self):
        return {"root": self.root, "members": self.members, "group": self.group_ip, "port": self.udp_port,
                "group_id": self.group_id, "tree": self.index, "top": None if self.top is None else "%016x" % self.top,
                "switches": {"%016x" % d: list(p) for d, p in sorted(self.out_ports.items())}}


@dataclasses.dataclass
class Job:
    id: int
    hosts: list
    owner: object
    lease_s: float
    expires: float
    token: str = dataclasses.field(default="", repr=False)
    slot: int = 0                  # priority slot, unique among the live jobs
    plans: dict = dataclasses.field(default_factory=dict)   # comm -> CommPlan
    trees: dict = dataclasses.field(default_factory=dict)   # (comm, root ip[, i >= 1]) -> TreePlan
    traffic: JobTraffic = dataclasses.field(default_factory=JobTraffic)   # phases (jobtraffic.py)
    # the part of flows() the switches hold (jobroutes.sync_jobs): (dpid, src, dst) -> port
    installed: dict = dataclasses.field(default_factory=dict, repr=False)
    # its ops waiting for the switches (controller/pending.py)
    in_flight: InFlight = dataclasses.field(default_factory=InFlight, repr=False, compare=False)

    @property
    def cookie(self):
        return C.COOKIE_JOB | self.id

    @property
    def priority(self):
        return C.PRIORITY_JOB_ROUTE + self.slot

    @property
    def token_hint(self):
        """What a log may show of the token."""
        return self.token[:TOKEN_LOGGED] + "..."

    def renew(self, now):
        self.expires = now + self.lease_s

    def flows(self):
        """Every flow the job should have: {(dpid, src, dst): port}; later comms win a clash, and
        comms win over the traffic routes of the job's phases."""
        out = self.traffic.flows(self.hosts)
        for comm in sorted(self.plans):
            out.update(self.plans[comm].flows)
        return out

    def to_json(self):
        return {"job": self.id, "hosts": self.hosts, "lease_s": self.lease_s,
                "comms": {str(c): {"planner": p.planner, "max_load": list(p.max_load),
                                   "lower_bound": list(p.lower_bound), "flows": len(p.flows)}
                          for c, p in sorted(self.plans.items())},
                "routes": [{"dpid": "%016x" % d, "src": s, "dst": t, "port": port,
                            "installed": self.installed.get((d, s, t)) == port}
                           for (d, s, t), port in sorted(self.flows().items())],
                "trees": [dict(comm=key[0], **t.to_json()) for key, t in sorted(self.trees.items())],
                "traffic": self.traffic.to_json()}


class UnknownJob(KeyError):
    pass


class BadToken(PermissionError):
    pass


class JobTable:
    def __init__(self):
        self.jobs = {}

    def register(self, hosts, lease_s, owner, now):
        """A new Job with a random id and token; RuntimeError if MAX_JOBS are live."""
        used = {job.slot for job in self.jobs.values()}
        slot = next((s for s in range(JOB_PRIORITY_SLOTS) if s not in used), None)
        if slot is None:
            raise RuntimeError("too many jobs (%d)" % MAX_JOBS)
        job_id = secrets.randbelow(MAX_JOB_ID) + 1
        while job_id in self.jobs:
            job_id = secrets.randbelow(MAX_JOB_ID) + 1
        job = Job(id=job_id, hosts=list(hosts), owner=owner, lease_s=lease_s, expires=now + lease_s,
                  token=secrets.token_hex(TOKEN_BYTES), slot=slot)
        self.jobs[job_id] = job
        LOG.info("job %d registered (token %s): %d ranks on %d hosts", job_id, job.token_hint, len(hosts),
                 len(set(hosts)))
        return job

    def get(self, job_id, token, now=None):
        """The job, if ``token`` is its token (renewing its lease); UnknownJob or BadToken."""
        job = self.jobs.get(job_id)
        if job is None:
            raise UnknownJob("unknown job %d" % job_id)
        if not isinstance(token, str) or not hmac.compare_digest(token.encode(), job.token.encode()):
            raise BadToken("bad token for job %d" % job_id)
        if now is not None:
            job.renew(now)
        return job

    def remove(self, job_id, why):
        job = self.jobs.pop(job_id, None)
        if job is not None:
            LOG.info("job %d released: %s", job_id, why)
        return job

    def owned_by(self, owner):
        return [j for j in self.jobs.values() if j.owner is owner]

    def expired(self, now):
        return [j for j in self.jobs.values() if j.expires < now]
