"""Traffic-aware job routing on the Mininet fabric (issue 15, docs/rpc.md `traffic` and `phase`).

The 8-host leaf-spine (2 spines, 4 leaves, full bisection). Two jobs talk RPC from the root
namespace (the controller allows 127.0.0.1 like a batch system's node, --sdnmpi-rpc-allow):
job B declares a whole-run (phase 0) shift, installed at once; job A declares a phase-1 shift,
stored until a rank enters phase 1. The flows dumped from Open vSwitch, walked switch by switch
(the job's flows where a hop is installed, the default routes where it is elided:
tests/integration/ovs_routes.py), are exactly the planner's paths (sdn-optimal, A planned with
B's load), their reverse pairs' the same paths reversed (--sdnmpi-traffic-reverse-routes), and
carry A's packets;
leaving the phase removes A's flows while B's stay; malformed and oversized matrices get clear
errors and leave the job on the default routes. Dynamic phase detection is off here (its
threshold 0); it is tested on the RPC service (tests/unit/test_rpc_traffic.py).

The last test is the whole path through the C library: the pattern program profiled once with
libsdnmpi_prof.so, then rerun under the preload library with SDN_MPI_TRAFFIC=<its trace>; while
it runs, the way Open vSwitch forwards the job's pairs is the planner's paths for the trace's heavy
host pairs.
"""
import os
import random
import socket
import struct
import threading

import msgpack
import pytest

from sdnmpi.controller import constants as C
from sdnmpi.controller import rpc_schema as schema
from sdnmpi.mininet_topos import controller_proc
from sdnmpi import traces
from sdnmpi.primitives import PAIR_ROUTERS, pairs, reverse
from sdnmpi.simulator import job as simjob

import ofdump
from conftest import running_fabric
from fabric_helpers import HPL, LEAVES, N, SPINES, ip, make_topo, wait_for, wait_for_routes
from ovs_routes import carried, check_job, job_doc, switches, topology

IPS = [ip(n) for n in range(1, N + 1)]
LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "libsdnmpi")
PATTERNS = os.path.join(LIB, "tests", "traffic_patterns")


@pytest.fixture(scope="module")
def fabric(tmp_path_factory):
    args = ("--sdnmpi-rpc-allow", "127.0.0.1", "--sdnmpi-idle-threshold", "0")
    with running_fabric(make_topo(), "dmodk", tmp_path_factory.mktemp("jobtraffic"), extra_args=args) as (ctl, fab):
        controller_proc.wait_for_topology(ctl, switches=SPINES + LEAVES, links=SPINES * LEAVES, hosts=N, timeout=90)
        wait_for_routes(fab, N)
        yield ctl, fab


class Client:
    """One RPC connection from the root namespace."""

    def __init__(self, ctl):
        self.sock = socket.create_connection(("127.0.0.1", ctl.rpc_port), timeout=30)
        self.replies = self.sock.makefile("rb")
        self.next_id = 0

    def send(self, body):
        self.sock.sendall(schema.frame(body))
        header = self.replies.read(4)
        assert len(header) == 4, "the controller closed the connection"
        return msgpack.unpackb(self.replies.read(struct.unpack("!I", header)[0]))

    def call(self, op, **fields):
        self.next_id += 1
        return self.send(msgpack.packb(dict(v=1, id=self.next_id, op=op, **fields)))

    def close(self):
        self.replies.close()
        self.sock.close()


def shift(by):
    return [[IPS[i], IPS[(i + by) % N], 1 << 20] for i in range(N)]


def job_flows(fab, job):
    """{(dpid int, src ip, dst ip): (out port, packets)} of the job's cookie, from OVS."""
    out = {}
    for sw in fab.net.switches:
        for f in ofdump.flows(sw.name):
            if f["cookie"] == C.COOKIE_JOB | job:
                port = int(f["actions"].split(":")[1])
                out[(int(sw.dpid, 16), f["match"]["nw_src"], f["match"]["nw_dst"])] = (port, f["packets"])
    return out


def planned(topo, demand, load=None):
    """sdn-optimal's switch paths {(src ip, dst ip): [dpid, ...]} on the controller's graph, its
    2-cycles turned as the controller turns them (primitives/reverse.py); their load; and the ways
    the controller routes: the pairs that cross leaves, with their reverse pairs' ACK routes
    (--sdnmpi-traffic-reverse-routes)."""
    graph = topo.graph()
    mac = {h.ip: h.mac for h in topo.hosts.values()}
    flows = pairs.merge(pairs.Flow(mac[s], mac[d], b) for s, d, b in demand)
    paths = reverse.symmetric(graph, flows, PAIR_ROUTERS["sdn-optimal"](graph, flows, load=load), load=load)
    ip_of = {m: i for i, m in mac.items()}
    ways = {(ip_of[s], ip_of[d]): p[1:-1] for (s, d), p in list(paths.items()) + list(
        reverse.reverse_paths(graph, paths).items()) if len(p) > 3}
    return {(ip_of[s], ip_of[d]): p[1:-1] for (s, d), p in paths.items()}, pairs.link_load(graph, flows, paths), ways


def test_phase_routes_follow_the_plan_and_leave_with_the_phase_while_the_other_job_stays(fabric):
    ctl, fab = fabric
    a_conn, b_conn = Client(ctl), Client(ctl)
    try:
        ra, rb = a_conn.call("register", hosts=IPS), b_conn.call("register", hosts=IPS)
        assert ra["status"] == rb["status"] == "ok", (ra, rb)
        a, b = ra["job"], rb["job"]
        topo = topology(ctl)

        # B: the whole run (phase 0), installed at once on sdn-optimal's contention-free paths.
        demand_b = shift(HPL * 2)                  # every host two leaves on
        r = b_conn.call("traffic", job=b, token=rb["token"], phase=0, pairs=demand_b, planner="sdn-optimal")
        assert r["status"] == "ok" and not r["stored"] and r["node_load"] == 1 and r["max_load"] == 1, r
        flows_b = job_flows(fab, b)
        assert len(flows_b) == r["flows"]            # the installed hops (the rest: default routes)
        paths_b, load_b, ways_b = planned(topo, demand_b)
        assert switches(check_job(ctl, fab, b, topo)) == ways_b

        # A: phase 1 is stored; nothing of A's is on the switches.
        demand_a = shift(HPL)                      # every host one leaf on
        r = a_conn.call("traffic", job=a, token=ra["token"], phase=1, pairs=demand_a, planner="sdn-optimal")
        assert r["status"] == "ok" and r["stored"] and r["flows"] == 0 and r["max_load"] == -1, r
        assert job_flows(fab, a) == {}

        # A rank enters phase 1: A's flows, planned with B's load, carry A's packets.
        r = a_conn.call("phase", job=a, token=ra["token"], rank=0, phase=1)
        assert r["status"] == "ok" and r["installed"], r
        flows_a = job_flows(fab, a)
        assert len(flows_a) == r["flows"]
        paths_a, _load, ways_a = planned(topo, demand_a, load=load_b)
        assert switches(check_job(ctl, fab, a, topo)) == ways_a
        assert len(ways_a) == 2 * len(paths_a)      # a shift by 2 of 8: no 2-cycle, every reverse pair routed
        h1 = fab.net.get("h1")
        before = carried(fab, topo, IPS[0], IPS[HPL])
        assert [d for d, _n in before] == paths_a[IPS[0], IPS[HPL]]
        assert ", 0% packet loss" in h1.cmd("ping -c 3 -i 0.2 -W 2 %s" % IPS[HPL])
        # the pings counted on every flow of A's path, hop by hop (a job flow where installed, the
        # default route where elided); OVS's userspace datapath pushes flow counters up with a delay
        wait_for(lambda: all(n - n0 >= 3 for (_d, n), (_d0, n0) in zip(carried(fab, topo, IPS[0], IPS[HPL]), before)),
                 10, "the pings on A's path in the counters")

        r = a_conn.call("phase", job=a, token=ra["token"], rank=5, phase=1)     # already in place
        assert r["installed"] and r["flows"] == 0
        assert a_conn.call("phase", job=a, token=ra["token"], rank=0, phase=0)["status"] == "ok"
        assert set(job_flows(fab, a)) == set(flows_a)                          # rank 5 is still inside
        r = a_conn.call("phase", job=a, token=ra["token"], rank=5, phase=0)
        assert r["status"] == "ok" and not r["installed"]
        assert job_flows(fab, a) == {} and job_doc(ctl, a)["routes"] == []
        assert {k: v[0] for k, v in job_flows(fab, b).items()} == {k: v[0] for k, v in flows_b.items()}

        assert b_conn.call("release", job=b, token=rb["token"])["status"] == "ok"
        assert job_flows(fab, b) == {}
    finally:
        a_conn.close()
        b_conn.close()


def test_malformed_and_oversized_matrices_get_clear_errors_and_default_routes(fabric):
    ctl, fab = fabric
    conn = Client(ctl)
    try:
        r = conn.call("register", hosts=IPS[:4])
        job, token = r["job"], r["token"]
        cases = [
            ({"pairs": [[IPS[0], IPS[5], 100]]}, "host %s is not one of the job's hosts" % IPS[5]),
            ({"pairs": [[IPS[0], IPS[2], 0]]}, "must be an integer >= 1"),
            ({"pairs": [[IPS[0], "10.0.0.300", 5]]}, "is not an IPv4 address"),
            ({"pairs": [[IPS[0], IPS[2]]]}, "a pair must be [src_ip, dst_ip, bytes]"),
            ({"phase": 65}, "phase must be an integer in 0..64"),
            ({"planner": "fastest"}, "unknown planner 'fastest'"),
        ]
        for fields, reason in cases:
            args = dict(job=job, token=token, phase=0, pairs=[[IPS[0], IPS[2], 100]])
            args.update(fields)
            r = conn.call("traffic", **args)
            assert r["status"] == "error" and reason in r["error"], (fields, r)
        # Over 1 MiB (65537 pairs): the frame's length is refused and that connection closed (the
        # controller answers after the 4-byte header, so only the header is sent), nothing else.
        body = msgpack.packb(dict(v=1, id=1, op="traffic", job=job, token=token, phase=0,
                                  pairs=[[IPS[0], IPS[2], 1]] * 65537))
        assert len(body) > schema.MAX_FRAME
        other = Client(ctl)
        try:
            other.sock.sendall(schema.HEADER.pack(len(body)))
            length = struct.unpack("!I", other.replies.read(4))[0]
            r = msgpack.unpackb(other.replies.read(length))
            assert r["status"] == "error" and r["error"] == "oversized request", r
            assert other.replies.read(1) == b""                 # closed
        finally:
            other.close()
        jobs = {j["job"]: j for j in ctl.rest("/sdnmpi/jobs")}
        assert jobs[job]["traffic"]["phases"] == {} and jobs[job]["routes"] == []
        assert job_flows(fab, job) == {}
        h1 = fab.net.get("h1")
        assert ", 0% packet loss" in h1.cmd("ping -c 2 -i 0.2 -W 2 %s" % IPS[2])   # default routes carry it
        assert conn.call("release", job=job, token=token)["status"] == "ok"
    finally:
        conn.close()


def trace_demand(path, rank_ips, min_share=1):
    """The heavy host pairs SDN_MPI_TRAFFIC sends for a trace without phases: PFSim's fold
    (simulator.job.host_demand), then pairs with >= min_share % of the heaviest's bytes."""
    trace = traces.load(path)
    phase = trace.phases[0]
    demand, _ = simjob.host_demand(phase.traffic_matrix(), phase.tx_messages > 0, rank_ips, trace.file_order)
    top = max(f.bytes for f in demand)
    return [(f.src, f.dst, f.bytes) for f in demand if f.bytes * 100 >= top * min_share]


def test_a_profiled_program_rerun_with_its_trace_gets_the_planners_routes(fabric, tmp_path):
    ctl, fab = fabric
    hosts = ["h%d" % n for n in range(1, N + 1)]
    random.Random(7).shuffle(hosts)                      # a placement where the shift crosses leaves
    rank_ips = [fab.host_ips()[h] for h in hosts]
    # the shift; the rerun then holds (sleeping) until the test has looked at the switches while the
    # job still has its routes (the profiled run needs no hold: it adds no traffic to the trace)
    shift = [PATTERNS, "shift", "1", str(1 << 20)]
    go = tmp_path / "checked"
    program = shift + ["hold", str(go)]
    env = {"SDN_MPI_CONTROLLER": "%s:%d" % (fab.mgmt.root_ip, ctl.rpc_port), "SDN_MPI_FABRIC_SUBNET": "10.0.0.0/8",
           "SDN_MPI_VERBOSE": "1", "SDN_MPI_MIN_BYTES": "1024g"}    # no allreduce plan: only the trace's routes
    prof_env = {"SDN_MPI_PROF_DIR": str(tmp_path), "SDN_MPI_PROF_JOB": "shift", "SDN_MPI_PROF_SOURCE": "pmpi"}
    rc, out = fab.mpirun(hosts, shift, env=prof_env, timeout=180,
                         extra_args=["-x", "LD_PRELOAD=" + os.path.join(LIB, "libsdnmpi_prof.so")])
    trace = tmp_path / "shift.tar.gz"
    assert rc == 0 and trace.is_file(), out[-3000:]
    demand = trace_demand(str(trace), rank_ips)
    assert sorted((s, d) for s, d, _ in demand) == sorted((rank_ips[r], rank_ips[(r + 1) % N]) for r in range(N))

    result = {}
    env.update(SDN_MPI_TRAFFIC=str(trace), SDN_MPI_TRAFFIC_PLANNER="sdn-optimal")
    run = threading.Thread(target=lambda: result.update(zip(("rc", "out"), fab.mpirun(
        hosts, program, env=env, timeout=180, extra_args=["-x", "LD_PRELOAD=" + os.path.join(LIB, "libsdnmpi-preload.so")]))))
    run.start()
    try:
        def installed():
            jobs = ctl.rest("/sdnmpi/jobs")
            active = jobs[0]["traffic"]["active"].get("0") if jobs else None
            return (jobs[0]["job"], active) if active and active["flows"] > 0 else None
        wait_for(installed, 60, "the job's traffic routes (phase 0, installed at MPI_Init)")
        job, active = installed()
        assert active["router"] == "sdn-optimal" and active["pairs"] == N and active["max_flows"] == 1, active
        topo = topology(ctl)
        paths, _load, ways = planned(topo, demand)
        crossing = {pair: path for pair, path in paths.items() if len(path) > 1}
        assert crossing and len(crossing) < len(paths)       # the placement has a pair inside one leaf too
        assert switches(check_job(ctl, fab, job, topo)) == ways and set(crossing) < set(ways)
        # a pair inside one leaf has one path: the default route carries it, no planned hop
        assert active["flows"] == sum(len(p) for p in crossing.values())
    finally:
        go.touch()
        run.join(timeout=240)
    assert result.get("rc") == 0, result.get("out", "")[-3000:]
    assert "traffic_patterns: ranks=%d ok" % N in result["out"]
    assert "sdnmpi[0]: traffic phase=0 pairs=%d" % N in result["out"]
    wait_for(lambda: job_doc(ctl, job) is None and job_flows(fab, job) == {}, 30, "the job's flows to go with the job")
