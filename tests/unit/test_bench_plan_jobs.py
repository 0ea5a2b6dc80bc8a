"""bench_limits.plan_jobs (with bench_more's and bench_startup's planners inside it) pinned: for a few
argument sets and fabrics, every planned job serialised (keys in order, floats exact) and hashed, and
the hashes compared with the ones recorded before the planners were split into helpers. A refactor
must leave every line alone; a deliberate change of the plan updates PINNED (print the new lines with
`.venv/bin/python tests/unit/test_bench_plan_jobs.py`) and says why in its commit.
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


PINNED = {
    "quick": """\
init-single-block-p8-1 2bb8a61e5bde
allreduce-single-block-p8 8e1be6aa0545
allreduce-single-random-p8 d2d96dbd5a1d
init-dmodk-block-p8-1 bdb8d1ff8b56
allreduce-dmodk-block-p8 06982e6c58b1
allreduce-dmodk-random-p8 b78fde7055c5
bcast-dmodk-block-p4 e6577dc890d4
bcast-dmodk-block-p8 c7b780ed5897
startup-dmodk-p8-cold1 077ab301166e
startup-dmodk-p8-warm1 d78a38fa5d56
startup-dmodk-p8-warm_noahead1 62cfa210dbed
startup-dmodk-p8-warm_gap1 6377c2c13aec
startup-dmodk-p8-cold2 dd4a61b8bc26
startup-dmodk-p8-warm2 a98f5277c381
startup-dmodk-p8-warm_noahead2 0a0985b1f823
startup-dmodk-p8-warm_gap2 a0462c88b28b
startup-dmodk-p8-cold3 7261bea8bf40
startup-dmodk-p8-warm3 8c3ee53226ad
startup-dmodk-p8-warm_noahead3 23fea1342c3b
startup-dmodk-p8-warm_gap3 1b8577081c55
startup-dmodk-p16-cold1 1c4369062ba8
startup-dmodk-p16-warm1 978c3f7013a2
startup-dmodk-p16-warm_noahead1 f39e07df57cc
startup-dmodk-p16-warm_gap1 b0f08768cdf6
startup-dmodk-p16-cold2 fd9b1c7154a4
startup-dmodk-p16-warm2 bd7c2fb10abc
startup-dmodk-p16-warm_noahead2 66081a3a6d47
startup-dmodk-p16-warm_gap2 ccf9afea9ecc
startup-dmodk-p16-cold3 01781f3537bc
startup-dmodk-p16-warm3 86dd9da801bd
startup-dmodk-p16-warm_noahead3 13ef59b0d43f
startup-dmodk-p16-warm_gap3 a0a777f56136
init-ecmp-block-p8-1 2d3806af48d3
allreduce-ecmp-block-p8 8963d2c58d7a
allreduce-ecmp-random-p8 042139448ab2""",
    "full": """\
init-single-block-p8-1 2bb8a61e5bde
init-single-block-p8-2 8694ec6881b0
allreduce-single-block-p8 a87648877e7c
allreduce-single-random-p8 dbd47d184e17
bcast-single-block-p2 65375ffb7685
bcast-single-block-p4 e2e33d09529e
bcast-single-block-p8 c86f6d16a81a
init-dmodk-block-p8-1 bdb8d1ff8b56
init-dmodk-block-p8-2 cb7b9606a095
allreduce-dmodk-block-p8 2a8e5d2d46bd
allreduce-dmodk-random-p8 b1323906441d
bcast-dmodk-block-p2 ba0bcd30d5ac
bcast-dmodk-block-p4 370ddd5e36bd
bcast-dmodk-block-p8 ef6a95545bba
startup-dmodk-p8-cold1 c1311f01ae0e
startup-dmodk-p8-warm1 b6299dd72000
startup-dmodk-p8-warm_noahead1 5824a696236f
startup-dmodk-p8-warm_gap1 973e21d87d94
startup-dmodk-p8-cold2 199576a78cad
startup-dmodk-p8-warm2 0da4f0080bc1
startup-dmodk-p8-warm_noahead2 29d8c05b7413
startup-dmodk-p8-warm_gap2 3153cb911d18
startup-dmodk-p8-cold3 02401209e385
startup-dmodk-p8-warm3 622af8ee56ff
startup-dmodk-p8-warm_noahead3 a5beeb706716
startup-dmodk-p8-warm_gap3 523fedcfc27a
startup-dmodk-p8-cold4 3c5f052102e9
startup-dmodk-p8-warm4 3a38b6888cd8
startup-dmodk-p8-warm_noahead4 46cf21c659ec
startup-dmodk-p8-warm_gap4 ed54df3136c1
startup-dmodk-p8-cold5 5c1ed3b98d14
startup-dmodk-p8-warm5 47b86d907022
startup-dmodk-p8-warm_noahead5 1feed6b403b7
startup-dmodk-p8-warm_gap5 0677d407a721
startup-dmodk-p8-cold6 b092243582d3
startup-dmodk-p8-warm6 3ae9acae794a
startup-dmodk-p8-warm_noahead6 a4b0d0521849
startup-dmodk-p8-warm_gap6 1cd246334318
startup-dmodk-p8-cold7 231aef664328
startup-dmodk-p8-warm7 cd9a61d43bf4
startup-dmodk-p8-warm_noahead7 83bc5cc5229f
startup-dmodk-p8-warm_gap7 fe498b6a09bc
startup-dmodk-p16-cold1 bd4fb70a2f96
startup-dmodk-p16-warm1 bce4dd845c31
startup-dmodk-p16-warm_noahead1 732b67400653
startup-dmodk-p16-warm_gap1 dbfb93d13004
startup-dmodk-p16-cold2 8e954c14ebb9
startup-dmodk-p16-warm2 658d42f7865d
startup-dmodk-p16-warm_noahead2 311e6054825b
startup-dmodk-p16-warm_gap2 d1557d28d230
startup-dmodk-p16-cold3 4d915b3db44f
startup-dmodk-p16-warm3 e22be977f5e0
startup-dmodk-p16-warm_noahead3 a7b30e87264f
startup-dmodk-p16-warm_gap3 d3360f4ad610
startup-dmodk-p16-cold4 2cc3cf91c20b
startup-dmodk-p16-warm4 439ae6f7cdff
startup-dmodk-p16-warm_noahead4 6efc94b4f43b
startup-dmodk-p16-warm_gap4 76e26843abaf
startup-dmodk-p16-cold5 eb4a09604e5d
startup-dmodk-p16-warm5 5752f6678e7b
startup-dmodk-p16-warm_noahead5 308d762d769f
startup-dmodk-p16-warm_gap5 fdcc37297fe6
startup-dmodk-p16-cold6 70b7efd9035b
startup-dmodk-p16-warm6 f9d2bd43bc38
startup-dmodk-p16-warm_noahead6 28b18f6a1dac
startup-dmodk-p16-warm_gap6 0417080e2e90
startup-dmodk-p16-cold7 6c7fb604b305
startup-dmodk-p16-warm7 bff1d18f27ab
startup-dmodk-p16-warm_noahead7 f602b79636bc
startup-dmodk-p16-warm_gap7 123cc8342c35
init-ecmp-block-p8-1 2d3806af48d3
init-ecmp-block-p8-2 e1999faaf821
allreduce-ecmp-block-p8 a56015c24567
allreduce-ecmp-random-p8 6ab8f9639762
bcast-ecmp-block-p2 59ad4734b9dd
bcast-ecmp-block-p4 6ac9a99477b3
bcast-ecmp-block-p8 f64a5ff4a06b""",
    "everything": """\
init-single-block-p8-1 3a5d30177b5d
init-single-block-p8-2 a4299644978d
allreduce-single-block-p8 f770f83f9b65
allreduce-single-random-p8 816ec640cbbe
bcast-single-block-p4 948e9ccd786a
bcast-single-block-p8 e2597b9bb200
allgather-single-block-p4 4d59ff0289b7
allgather-single-block-p8 4f5ae0aa6f5f
allgather-single-random-p4 90ffac8b1abd
allgather-single-random-p8 05d09a875de1
reduce-single-block-p4 00cade92f48b
reduce-single-block-p8 f08b32b00919
reduce-single-random-p4 de62156722cc
reduce-single-random-p8 4cdc1c5b8ed2
alltoall-single-block-p4 6cc6ad4b5bd6
alltoall-single-block-p8 aaa7824706da
alltoall-single-random-p4 83ab164de15b
alltoall-single-random-p8 49c08de534b6
bcast-dmodk-block-p4 15bbbe206f66
bcast-dmodk-block-p8 6034b1d392b8
init-ecmp-block-p8-1 c20420867df0
init-ecmp-block-p8-2 e8396149ad8b
allreduce-ecmp-block-p8 7136dfc514f4
allreduce-ecmp-random-p8 8edcd4d214dc
allgather-ecmp-block-p4 9e0846b69d75
allgather-ecmp-block-p8 56dcf5adefb6
allgather-ecmp-random-p4 724039d96da4
allgather-ecmp-random-p8 6a6fdbbaaf77
reduce-ecmp-block-p4 67a1e49e7eb8
reduce-ecmp-block-p8 434649d1fca5
reduce-ecmp-random-p4 326596a968f8
reduce-ecmp-random-p8 cf87982fb350
alltoall-ecmp-block-p4 b3044fdc316f
alltoall-ecmp-block-p8 c688e22c87c4
alltoall-ecmp-random-p4 4ace6b1f401d
alltoall-ecmp-random-p8 f777f704de55
startup-ecmp-p8-cold1 3bf28b2d639e
startup-ecmp-p8-warm1 8696036ec8d1
startup-ecmp-p8-warm_noahead1 265c83562c83
startup-ecmp-p8-warm_gap1 312ee965425e
startup-ecmp-p8-base1 46925a5559f1
startup-ecmp-p8-warm_base1 5a9422dbac37
startup-ecmp-p8-warm_gap_base1 87825e8d7c11
startup-ecmp-p16-cold1 2ea9215eafe2
startup-ecmp-p16-warm1 701df6fab39a
startup-ecmp-p16-warm_noahead1 f16634bad747
startup-ecmp-p16-warm_gap1 e448468409ff
startup-ecmp-p16-base1 d155159caa48
startup-ecmp-p16-warm_base1 a7d59ddbd4f7
startup-ecmp-p16-warm_gap_base1 bc2be7e81f41""",
    "16 hosts, no SDN bcast": """\
allreduce-single-random-p16 e572972f23b9
alltoall-single-random-p16 4515feb0b611
allreduce-dmodk-random-p16 39e6f415f882
bcast-dmodk-block-p2 6c0c0770affa
bcast-dmodk-block-p4 f1d0122de90f
bcast-dmodk-block-p8 ccb96b6ad68c
bcast-dmodk-block-p16 81a632b8891a
alltoall-dmodk-random-p16 e18c1a8ae8f5
allreduce-ecmp-random-p16 1ff9d40e551e
alltoall-ecmp-random-p16 ca574a4c0085""",
    "unlimited links": """\
allreduce-dmodk-block-p8 ce6c3ee9ef8e
allreduce-dmodk-random-p8 d69f60b63f20
bcast-dmodk-block-p4 cf5ec333459e
bcast-dmodk-block-p8 8e7fde5399d9
reduce-dmodk-block-p8 61c36868b57e
reduce-dmodk-random-p8 4d142d90b54c""",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_plan_jobs_unchanged(case):
    assert plan_lines(case) == PINNED[case].split("\n")


if __name__ == "__main__":   # prints PINNED's entries as the planners give them now
    for name in (sys.argv[1:] or CASES):
        print('    "%s": """\\\n%s""",' % (name, "\n".join(plan_lines(name))))
