"""SDN_MPI_Allgather, SDN_MPI_Reduce and SDN_MPI_Alltoall on the Mininet fabric with the real
controller: an unmodified binary (libsdnmpi/tests/plain_coll.c, which checks its own results) runs
8 ranks on 8 hosts in random placement under LD_PRELOAD; all three collectives take the SDN path,
the controller plans the alltoall's pairwise exchange step by step with the sdn-optimal planner
(every step a permutation: at most one flow per switch link, the per-step lower bound), and the
release removes every flow of the job."""
import os
import random
import re
import tempfile
import threading

import pytest

from sdnmpi.controller import constants as C

import ofdump
from conftest import LIBSDNMPI
from fabric_helpers import N, leaf_spine_fabric, wait_for

INTS = 32768   # 128 KiB per block: 1 MiB per rank for Allgather and Alltoall with 8 ranks


@pytest.fixture(scope="module")
def plain_coll():
    """The unmodified program, built by the session fixture (libsdnmpi's `check` target)."""
    return os.path.join(LIBSDNMPI, "tests", "plain_coll")


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    with leaf_spine_fabric("dmodk", tmp_path_factory.mktemp("collectives")) as (ctl, fab):
        yield ctl, fab


def test_unmodified_binary_gets_sdn_collectives_and_per_step_routes(fabric, plain_coll):
    ctl, fab = fabric
    hosts = ["h%d" % n for n in range(1, N + 1)]
    random.Random(11).shuffle(hosts)
    plans_before = ctl.rest("/sdnmpi/stats")["rpc"]["allreduce_plans"]
    env = {"SDN_MPI_CONTROLLER": "%s:%d" % (fab.mgmt.root_ip, ctl.rpc_port), "SDN_MPI_FABRIC_SUBNET": "10.0.0.0/8",
           "SDN_MPI_MIN_BYTES": "65536",
           "SDN_MPI_VERBOSE": "1", "LD_PRELOAD": os.path.join(LIBSDNMPI, "libsdnmpi-preload.so")}
    rc, out = fab.mpirun(hosts, [plain_coll, INTS], env=env, timeout=300)
    assert rc == 0 and "plain_coll: ok" in out, out[-4000:]
    # 1 MiB: above SDN_MPI_ALLGATHER_CYCLES_MIN's default (256 KiB), the two cycles
    assert re.search(r"sdnmpi\[0\]: allgather comm=0 block=%d bytes=%d: two cycles" % (4 * INTS, 4 * INTS * N), out)
    # 128 KiB: above SDN_MPI_REDUCE_CHAIN_MIN's default (64 KiB), the two chains, on the cycles'
    # routes (one request for Reduce and Allgather)
    assert re.search(r"sdnmpi\[\d\]: reduce comm=0 count=%d bytes=%d root=%d: two chains"
                     % (INTS, 4 * INTS, N - 1), out), out[-4000:]
    assert len(re.findall(r"sdnmpi\[\d+\]: cycles plan comm=\d+ ranks=%d steps=1 pairs=\d+ planner=sdn-optimal: ok"
                          % N, out)) == 1, out[-4000:]
    assert re.search(r"sdnmpi\[0\]: alltoall comm=\d+ block=%d bytes=%d: pairwise exchange" % (4 * INTS, 4 * INTS * N), out)
    plan = re.search(r"sdnmpi\[\d+\]: alltoall plan comm=(\d+) ranks=%d steps=%d pairs=(\d+) planner=sdn-optimal: ok "
                     r"flows=(\d+)" % (N, N - 1), out)
    assert plan and int(plan.group(2)) == N * (N - 1) and int(plan.group(3)) > 0, out[-4000:]
    # the allreduce plan and the exchange's plan
    assert ctl.rest("/sdnmpi/stats")["rpc"]["allreduce_plans"] >= plans_before + 2
    wait_for(lambda: ctl.rest("/sdnmpi/jobs") == [], 10, "the job's release")
    for sw in fab.net.switches:
        assert not [f for f in ofdump.flows(sw.name) if f["cookie"] & C.COOKIE_KIND_MASK == C.COOKIE_JOB]


def test_exchange_plan_is_contention_free_while_the_job_holds_it(fabric, plain_coll):
    """A job that stops after its collectives (hold file): the controller's record of the exchange's
    plan has max_load == lower_bound (at most one flow per link) in every step."""
    ctl, fab = fabric
    hosts = ["h%d" % n for n in range(1, N + 1)]
    random.Random(3).shuffle(hosts)
    hold = tempfile.mkdtemp(prefix="sdnmpi-hold-")
    env = {"SDN_MPI_CONTROLLER": "%s:%d" % (fab.mgmt.root_ip, ctl.rpc_port), "SDN_MPI_FABRIC_SUBNET": "10.0.0.0/8",
           "SDN_MPI_MIN_BYTES": "65536",
           "LD_PRELOAD": os.path.join(LIBSDNMPI, "libsdnmpi-preload.so"), "PLAIN_COLL_HOLD": hold}
    result = {}

    def run():
        result["rc"], result["out"] = fab.mpirun(hosts, [plain_coll, 4096], env=env, timeout=300)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        wait_for(lambda: os.path.exists(os.path.join(hold, "ready")) or not thread.is_alive(), 240, "the job")
        assert thread.is_alive(), result.get("out")
        jobs = ctl.rest("/sdnmpi/jobs")
        assert len(jobs) == 1, jobs
        comms = jobs[0]["comms"]
        exchange = [c for c in comms.values() if c["planner"] == "sdn-optimal"]
        assert len(exchange) == 1, comms
        assert len(exchange[0]["max_load"]) == N - 1
        # ranks ordered leaf by leaf: XOR partner 1 shares the leaf (no switch link), the others cross
        assert list(exchange[0]["max_load"]) == list(exchange[0]["lower_bound"])
        assert max(exchange[0]["max_load"]) == 1
    finally:
        open(os.path.join(hold, "go"), "w").close()
        thread.join(300)
    assert result["rc"] == 0 and "plain_coll: ok" in result["out"], result["out"][-3000:]
