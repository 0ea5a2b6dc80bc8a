"""--rotate-routings N: the controller's default routing rotated between blocks of one allreduce job
(N rounds of one block per routing), so that both implementations meet every routing call by call
in the same job; rotate_compare.py then compares sdnmpi with the best routing's Open MPI.

Per placement one allreduce job replaces the per-routing ones. Its repetitions are the blocks
(rotate_compare.block_schedule); before each, coll_bench (--routing-blocks) asks "routing:NAME"
over the --toggle files, and RotatingSwitch answers it:

1. the override flows come off first (RouteSwitch._restore). They copy the default route's
   actions when they are added, so after a routing change they would send Open MPI's packets the
   old routing's way; and the controller's route pass changes the job's own flows too (with
   --sdnmpi-elide-default-hops a hop is installed only where the default route differs), so the
   set of flows to override changes. The next "openmpi" request copies the new default routes.
2. PUT /sdnmpi/routing with the operator token (the controller is started with a token file of the
   run's own, ``operator_token``), then GET /sdnmpi/stats until "routes_pending" is false: the
   controller's route pass is confirmed by every switch's barrier and the jobs' flows re-synced
   (controller/app.py _update_routes), and GET /sdnmpi/routing says NAME.
3. ovs-appctl revalidator/wait (bench_flows.wait_datapath_revalidated), as after every route
   switch: the datapath's cached megaflows still hold the old routing's ports until a revalidator
   pass has seen the new tables.

coll_bench then prints a "routing" line; the samples after it are that block's. Each routing
change is one route recomputation of the controller's, which the job's disruption check expects
(``expected_recomputes``). Every block records its plan's fingerprint (the job's host-pair routes
from /sdnmpi/jobs), which shows that sdnmpi's own paths stay the same under every routing.
"""
import argparse
import hashlib
import json
import os
import shutil
import tempfile
import time
import urllib.request

from bench_common import ROUTINGS, csv_list, now_s, parse_nprocs
from bench_flows import RouteSwitch
from bench_limits import allreduce_job
import benchcore
from rotate_compare import block_schedule

ROUTING_CHANGE_S = 2.0     # the estimate per block: the route pass, its confirmation, revalidation


def operator_token(args):
    """The controller gets ``--sdnmpi-operator-token-file`` in a private temporary directory (the
    controller creates the token there, mode 0600); args.operator_token_file names it. Returns the
    directory, which the caller removes after the run."""
    directory = tempfile.mkdtemp(prefix="bench-operator-")
    args.operator_token_file = os.path.join(directory, "operator-token")
    args.controller_arg = list(args.controller_arg) + ["--sdnmpi-operator-token-file=" + args.operator_token_file]
    return directory


def remove_token(directory):
    if directory:
        shutil.rmtree(directory, ignore_errors=True)


def plan_jobs(args, fab, jobs):
    """``jobs`` with the allreduce ones replaced by one rotation job per placement and p: its blocks
    follow block_schedule(--routings, --rotate-routings); it starts under the first block's routing.
    No 8-byte blocks of their own (put 8 in --allreduce-sizes: its calls then alternate like every size's)."""
    routings = csv_list(args.routings, ROUTINGS)
    schedule = block_schedule(routings, args.rotate_routings)
    blocks = argparse.Namespace(**vars(args))
    blocks.reps, blocks.tiny_reps = len(schedule), 0
    sizes = benchcore.parse_sizes(args.allreduce_sizes)
    out = [j for j in jobs if j["collective"] != "allreduce"]
    for placement, p, hosts in benchcore.placed_hosts(csv_list(args.placements, ("block", "random")),
                                                      parse_nprocs(args.allreduce_nprocs, fab.hosts),
                                                      fab.hosts, args.seed):
        job = allreduce_job(blocks, fab, schedule[0], placement, p, hosts, sizes, [])
        job.update(name="allreduce-rotate-%s-p%d" % (placement, p), rotation=schedule)
        job["work"] += len(schedule) * ROUTING_CHANGE_S
        benchcore.finish_job(job, args.job_timeout)
        job["label"] = "rotate/%s p=%d" % (placement, p)
        out.append(job)
    out.sort(key=lambda job: ROUTINGS.index(job["routing"]))
    return out


class RoutingControl:
    """Makes a routing the controller's default over REST (the module's steps 2); a callable
    ``(routing) -> {"changed": bool, "pass_s": seconds}``, raising if the controller refuses,
    never confirms the route pass within ``timeout`` or ends on another routing."""

    def __init__(self, ctl, token_file, timeout=30.0):
        self.ctl = ctl
        self.token_file = token_file
        self.timeout = timeout

    def __call__(self, routing):
        with open(self.token_file) as src:
            token = src.read().strip()
        t0 = now_s()
        req = urllib.request.Request(self.ctl.url("/sdnmpi/routing"), method="PUT",
                                     data=json.dumps({"routing": routing}).encode(),
                                     headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            answer = json.loads(resp.read().decode("utf-8"))
        while self.ctl.rest("/sdnmpi/stats").get("routes_pending"):
            if now_s() - t0 > self.timeout:
                raise TimeoutError("the controller's route pass for %s was not confirmed in %.0f s"
                                   % (routing, self.timeout))
            time.sleep(0.05)
        now = self.ctl.rest("/sdnmpi/routing").get("routing")
        if now != routing:
            raise RuntimeError("the controller's routing is %s, not %s" % (now, routing))
        return {"changed": bool(answer.get("changed")), "pass_s": now_s() - t0}


def plan_fingerprint(jobs):
    """What a block records of /sdnmpi/jobs: the job's host-pair routes (a digest of every
    (switch, src, dst, port): the same under every routing if sdnmpi's paths do not follow it),
    how many there are and how many are installed (the rest elided: the default route goes there)."""
    routes = sorted((r.get("dpid"), r.get("src"), r.get("dst"), r.get("port"))
                    for j in jobs for r in j.get("routes") or [])
    return {"routes": len(routes),
            "installed": sum(1 for j in jobs for r in j.get("routes") or [] if r.get("installed")),
            "digest": hashlib.sha1(repr(routes).encode()).hexdigest()[:12]}


class RotatingSwitch(RouteSwitch):
    """RouteSwitch that also answers "routing:NAME" (the module's steps 1-3) with ``control``
    (a RoutingControl); ``read_jobs`` () -> /sdnmpi/jobs, for each block's plan_fingerprint.
    A block whose change failed is recorded with its error, and its samples are dropped."""

    def __init__(self, directory, bridges, spine_ports, control, read_jobs=None, **kwargs):
        super().__init__(directory, bridges, spine_ports, **kwargs)
        self.control = control
        self.read_jobs = read_jobs
        self.blocks = []

    def handle(self, what):
        if not what.startswith("routing:"):
            super().handle(what)
            return
        routing = what.split(":", 1)[1]
        block = {"block": len(self.blocks), "routing": routing}
        self.blocks.append(block)
        t0 = now_s()
        try:
            restored = 0
            if self.hidden:
                self._account("sdnmpi")
                restored = self._restore()
                self.state = "sdnmpi"
            block.update(self.control(routing))
            if restored or block["changed"]:
                self._wait()
            if self.read_jobs is not None:
                block["plan"] = plan_fingerprint(self.read_jobs())
        except Exception as exc:  # pylint: disable=broad-except
            block["error"] = str(exc)
            raise
        finally:
            block["s"] = now_s() - t0

    def summary(self):
        out = super().summary()
        out["rotation"] = self.blocks
        return out


def expected_recomputes(rotation):
    """The route recomputations a rotation job's own routing changes caused (one each)."""
    return sum(1 for block in rotation or [] if block.get("changed"))


def records(events, job, blocks, limit_fn):
    """A rotation job's records: one per (collective, impl, bytes, root) and routing, samples in
    order, "rotation_blocks" the block of each; "settle" calls as in benchcore.aggregate_samples.
    Samples of a block whose routing change failed (``blocks``: RotatingSwitch's), or before the
    first block, are left out."""
    failed = {b["block"] for b in blocks if b.get("error")}
    groups, current = {}, None
    for ev in events:
        kind = ev.get("bench")
        if kind == "routing":
            current = None if ev.get("block") in failed else (ev.get("routing"), ev.get("block"))
            continue
        if current is None:
            continue
        if kind == "settle" and ev.get("t_s") is not None:
            impl = ("first:" if not ev.get("call") else "settle%d:" % ev["call"]) + ev["impl"]
        elif kind == "sample":
            impl = ev["impl"]
        else:
            continue
        root = ev.get("root")
        root = None if root is None or root < 0 else root
        times, where = groups.setdefault((ev["collective"], current[0], ev["bytes"], root, impl), ([], []))
        times.append(ev["t_s"])
        where.append(current[1])
    out = []
    order = {r: k for k, r in enumerate(ROUTINGS)}
    for (coll, routing, nbytes, root, impl), (times, where) in sorted(
            groups.items(), key=lambda kv: (kv[0][0], order.get(kv[0][1], 9), kv[0][2], kv[0][3] or 0, kv[0][4])):
        out.append(benchcore.make_record(coll, impl, routing, job["placement"], job["nprocs"], nbytes, root, times,
                                         limit_fn(coll, nbytes, root), rotation_blocks=where))
    return out
