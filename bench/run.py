"""`make bench`: Open MPI's collectives against sdnmpi's on an emulated fat-tree, in one run.

    .venv/bin/python bench/run.py [--quick] [--spines 2 --leaves 4 --hosts-per-leaf 2
        --host-bw 30 --fabric-bw 15] [--routings single,dmodk,ecmp] [--placements block,random]
        [--reps N] [...]   (--help lists every option)

One Mininet fabric (userspace Open vSwitch, bandwidth-limited links, lldpd on every host) stays up
for the whole run; for every default routing policy the controller is (re)started with
``--sdnmpi-default-routing POLICY`` and the run waits until it has discovered the fabric and
installed its routes. Then one mpirun per configuration (routing x placement x p) runs
bench/coll_bench, which alternates Open MPI's and sdnmpi's implementation call by call and prints
JSON lines that this script collects. While a job runs, this script overrides the job's sdnmpi
host-pair routes with the default routes for Open MPI's calls and removes the overrides for
sdnmpi's (see --no-hide-job-flows and bench/README.md), samples the CPU and the links' load, and
counts the bytes each spine forwards for each implementation.

Outputs: bench/results/<timestamp>/ (results.json, results.md, PNG plots, logs/) and the symlink
bench/results/latest. See bench/README.md for the method and the limit model.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# The modules by concern: see bench/README.md. What follows main is the API that
# mininet_topos/demo.py uses (it loads this file as a module: bench/ is not a package).
import benchcore  # noqa: E402
import report  # noqa: E402
from bench_cli import main, parse_args  # noqa: E402
from bench_common import Progress, build_programs, fmt_duration, free_port  # noqa: E402
from bench_fabric import Bench  # noqa: E402
from bench_jobs import run_job_with_retries, sdn_env  # noqa: E402
from bench_limits import bcast_roots, plan_jobs  # noqa: E402

__all__ = ["main", "benchcore", "report", "parse_args", "Progress", "build_programs", "fmt_duration",
           "free_port", "Bench", "run_job_with_retries", "sdn_env", "bcast_roots", "plan_jobs"]

if __name__ == "__main__":
    sys.exit(main())
