"""Dynamic phase detection without hints (issue 15): a job whose hosts stop sending is computing,
so its traffic routes (controller/jobtraffic.py) go; they come back at its next phase entry or
`traffic` op (jobtraffic: the job is *dormant* until then).

`IdleWatch.poll` reads the port counters the stats poller keeps (controller/portstats.py): the
bytes per second that the job's hosts send into their access ports (the switch port's rx rate).
When their sum stays under ``threshold_bps`` for ``quiet_s`` seconds, the job is idle. A host with
no sample yet counts as busy, so a job is never declared idle on missing data.
"""
import logging

from . import jobtraffic

LOG = logging.getLogger(__name__)

DEFAULT_THRESHOLD_BPS = 1e6        # the job's hosts together send less than 1 Mbit/s ...
DEFAULT_QUIET_S = 5.0              # ... for 5 s: the job computes


class IdleWatch:
    def __init__(self, threshold_bps=DEFAULT_THRESHOLD_BPS, quiet_s=DEFAULT_QUIET_S):
        if threshold_bps < 0 or quiet_s < 0:
            raise ValueError("idle threshold and quiet time must be >= 0")
        self.threshold_bps, self.quiet_s = threshold_bps, quiet_s
        self.quiet_since = {}      # job id -> when its traffic fell under the threshold

    def send_rate(self, core, job):
        """Bits per second the job's hosts send into the fabric, or None if a host has no sample."""
        total = 0.0
        for ip in sorted(set(job.hosts)):
            host = core.topology.host_by_ip(ip)
            sample = None if host is None else core.port_stats.samples.get((host.dpid, host.port))
            if sample is None:
                return None
            total += sample.rx_bps
        return total

    def poll(self, core, jobs, now):
        """Messages removing the routes of every job with traffic routes that has been quiet for
        ``quiet_s`` seconds (jobtraffic.idle); call it after each stats poll."""
        msgs = []
        for job_id in [j for j in self.quiet_since if j not in jobs.jobs]:
            del self.quiet_since[job_id]
        for job_id, job in sorted(jobs.jobs.items()):
            rate = self.send_rate(core, job) if job.traffic.routes else None
            if rate is None or rate >= self.threshold_bps:
                self.quiet_since.pop(job_id, None)
                continue
            since = self.quiet_since.setdefault(job_id, now)
            if now - since >= self.quiet_s:
                LOG.info("job %d: %.0f bit/s for %.1f s, idle: its traffic routes go", job_id, rate, now - since)
                msgs += jobtraffic.idle(core, jobs, job)
                del self.quiet_since[job_id]
        return msgs
