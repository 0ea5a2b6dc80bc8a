"""MPI jobs known to the controller: their hosts, lease, owner connection, and installed routes.

Plain state; the RPC service (controller/rpc.py) drives it and the core installs the flows. A job's
flows carry the cookie ``COOKIE_JOB | job id`` and a priority of its own in the job band, so two
jobs routing the same host pair never overwrite or delete each other's flows.
"""
import dataclasses
import logging

from . import constants as C
from .jobtraffic import JobTraffic

LOG = logging.getLogger(__name__)
JOB_PRIORITY_SLOTS = 1000
MAX_JOB_ID = (1 << C.COOKIE_KIND_SHIFT) - 1


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

    def to_json(self):
        return {"root": self.root, "members": self.members, "group": self.group_ip, "port": self.udp_port,
                "group_id": self.group_id, "top": None if self.top is None else "%016x" % self.top,
                "switches": {"%016x" % d: list(p) for d, p in sorted(self.out_ports.items())}}


@dataclasses.dataclass
class Job:
    id: int
    hosts: list
    owner: object
    lease_s: float
    expires: float
    plans: dict = dataclasses.field(default_factory=dict)   # comm -> CommPlan
    trees: dict = dataclasses.field(default_factory=dict)   # (comm, root ip) -> TreePlan
    traffic: JobTraffic = dataclasses.field(default_factory=JobTraffic)   # phases (jobtraffic.py)

    @property
    def cookie(self):
        return C.COOKIE_JOB | self.id

    @property
    def priority(self):
        return C.PRIORITY_JOB_ROUTE + self.id % JOB_PRIORITY_SLOTS

    def renew(self, now):
        self.expires = now + self.lease_s

    def flows(self):
        """Every flow the job should have: {(dpid, src, dst): port}; later comms win a clash, and
        comms win over the traffic routes of the job's phases."""
        out = self.traffic.flows()
        for comm in sorted(self.plans):
            out.update(self.plans[comm].flows)
        return out

    def to_json(self):
        return {"job": self.id, "hosts": self.hosts, "lease_s": self.lease_s,
                "comms": {str(c): {"planner": p.planner, "max_load": list(p.max_load),
                                   "lower_bound": list(p.lower_bound), "flows": len(p.flows)}
                          for c, p in sorted(self.plans.items())},
                "routes": [{"dpid": "%016x" % d, "src": s, "dst": t, "port": port}
                           for (d, s, t), port in sorted(self.flows().items())],
                "trees": [dict(comm=c, **t.to_json()) for (c, _r), t in sorted(self.trees.items())],
                "traffic": self.traffic.to_json()}


class UnknownJob(KeyError):
    pass


class JobTable:
    def __init__(self):
        self.jobs = {}
        self._next_id = 1

    def register(self, hosts, lease_s, owner, now):
        for _ in range(MAX_JOB_ID):
            job_id, self._next_id = self._next_id, self._next_id % MAX_JOB_ID + 1
            if job_id not in self.jobs:
                break
        else:
            raise RuntimeError("no free job id")
        job = Job(id=job_id, hosts=list(hosts), owner=owner, lease_s=lease_s, expires=now + lease_s)
        self.jobs[job_id] = job
        LOG.info("job %d registered: %d ranks on %d hosts", job_id, len(hosts), len(set(hosts)))
        return job

    def get(self, job_id, now=None):
        job = self.jobs.get(job_id)
        if job is None:
            raise UnknownJob("unknown job %d" % job_id)
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
