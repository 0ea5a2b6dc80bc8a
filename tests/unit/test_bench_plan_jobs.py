"""bench_limits.plan_jobs (with bench_more's and bench_startup's planners inside it) pinned: for a few
argument sets and fabrics, every planned job serialised (keys in order, floats exact) and hashed, and
the hashes' digest compared with the one recorded before the planners were split into helpers. A
refactor must leave it alone; a deliberate change of the plan updates PINNED (print the new entries
with `.venv/bin/python tests/unit/test_bench_plan_jobs.py`) and says why in its commit. To see which
jobs changed, diff the `--jobs` output of the two versions (one line a job).
Pure: no Mininet, no MPI."""
import hashlib
import json
import sys

import pytest

import bench_setup  # noqa: F401  (bench/ on sys.path)

import bench_cli
import bench_limits
import benchcore

# every collective and option of the planners at once, on QUICK's sizes: init jobs (2 per routing), forced
# SDN algorithms, settle calls, idle gaps, listed bcast roots, one call per point, a fixed job timeout, the
# startup baseline, and routings without dmodk (the startup jobs take the first one)
EVERYTHING = ["--quick", "--collectives", "init,startup,allreduce,bcast,allgather,reduce,alltoall",
              "--routings", "ecmp,single", "--bcast-routings", "single,dmodk", "--sdn-algs", "rd,hier-d2",
              "--settle-calls", "2", "--idle-ms", "3", "--tiny-idle-ms", "2", "--bcast-roots", "0,3",
              "--init-reps", "2", "--point-seconds", "0", "--job-timeout", "100", "--more-sizes", "64k,1m",
              "--more-nprocs", "4,all", "--startup-reps", "1", "--startup-baseline", "/bin/sh"]

# name -> (bench_cli arguments, fabric, have_sdn_bcast)
CASES = {
    "quick": (["--quick"], benchcore.Fabric(), True),
    "full": ([], benchcore.Fabric(), True),
    "everything": (EVERYTHING, benchcore.Fabric(), True),
    "16 hosts, no SDN bcast": (["--quick", "--leaves", "4", "--hosts-per-leaf", "4", "--bcast-nprocs", "pow2",
                                "--collectives", "allreduce,bcast,alltoall", "--placements", "random"],
                               benchcore.Fabric(2, 4, 4), False),
    "unlimited links": (["--quick", "--collectives", "allreduce,bcast,reduce", "--routings", "dmodk",
                         "--host-bw", "0", "--fabric-bw", "0"], benchcore.Fabric(2, 4, 2, 0, 0), True),
}


def plan_lines(case):
    """One line per planned job, in run order: its name and the first 12 hex digits of the sha256 of
    its JSON (keys in the planner's order, floats as repr gives them)."""
    argv, fab, have_sdn_bcast = CASES[case]
    jobs = bench_limits.plan_jobs(bench_cli.parse_args(argv), fab, have_sdn_bcast)
    return ["%s %s" % (job["name"], hashlib.sha256(json.dumps(job).encode()).hexdigest()[:12]) for job in jobs]


def plan_digest(lines):
    """(jobs, the sha256 of plan_lines' lines): what PINNED holds of a case."""
    return len(lines), hashlib.sha256("\n".join(lines).encode()).hexdigest()


# case -> plan_digest of its plan_lines before the planners were split
PINNED = {
    "quick": (35, "d21aad8d6498ecc3321048c2f7c4db5056615cae07849b16a517252527d9ac6b"),
    "full": (77, "09a8c6e67a648163ce09e865a80467ab0c00c153143079ae2ef01b0c322a39ff"),
    "everything": (50, "aee9942b46648248fb21af2c10a90e4afbda2265b733a4b25ddce9ce5efedc80"),
    "16 hosts, no SDN bcast": (10, "e4c320e21add2dd4a85447e75cdf76fde54699ad68f9322eadb035f66e55743c"),
    "unlimited links": (6, "60b1ee9f6ef043c4da0e17868bd1ae6c8de07346785f80f5d30b545bb3c3e65f"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_plan_jobs_unchanged(case):
    lines = plan_lines(case)
    assert plan_digest(lines) == PINNED[case], "the plan now:\n" + "\n".join(lines)


if __name__ == "__main__":   # PINNED's entries as the planners give them now; with --jobs, plan_lines
    for name in CASES:
        if "--jobs" in sys.argv:
            print("%s:\n%s" % (name, "\n".join(plan_lines(name))))
        else:
            print('    "%s": (%d, "%s"),' % ((name,) + plan_digest(plan_lines(name))))
