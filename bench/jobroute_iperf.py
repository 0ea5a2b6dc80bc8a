"""iperf3 controls of the per-flow rate bench (bench/jobroute_rate.py): concurrent TCP streams on
the fabric, and the same with a job's traffic routes installed over the controller's RPC (the
routes SDN_MPI_TRAFFIC would install for the pattern program, without MPI in the hosts).

The RPC client talks from the root namespace: the controller must allow it
(``--sdnmpi-rpc-allow 127.0.0.1``, as a batch system's node would be allowed).
"""
import contextlib
import json
import socket
import struct
import subprocess

import msgpack

from sdnmpi.controller import rpc_schema as schema
import rate_probe_parse as parse

PORT0 = 5401


def iperf_flows(bench, pairs, seconds):
    """TCP streams ``pairs`` [(src host number, dst host number)] at once; receiver Mbit/s each
    (None for a stream whose result could not be read)."""
    return [receiver_mbit(out) for out in iperf_streams(bench, pairs, seconds)]


def iperf_streams(bench, pairs, seconds, on_start=None, client_args=None):
    """TCP streams ``pairs`` [(src host number, dst host number)] at once, ``seconds`` each after
    a 1-s omitted start; the output of each sender's ``iperf3 -J`` (its client), in the order of
    ``pairs``. ``on_start()``, if given, is called once every client has been started;
    ``client_args``, if given, adds its k-th list of options to the k-th client."""
    from sdnmpi.mininet_topos import procs
    from sdnmpi.mininet_topos.demo import _wait_listening
    net, ips = bench.fabric, bench.fabric.host_ips()
    servers, clients, got = [], [], []
    try:
        for k, (_src, dst) in enumerate(pairs):
            host = net.host("h%d" % dst)
            servers.append(procs.popen_in_host(host, ["iperf3", "-s", "-1", "-p", PORT0 + k]))
            _wait_listening(host, PORT0 + k)
        for k, (src, dst) in enumerate(pairs):
            argv = procs.in_host(net.host("h%d" % src), ["iperf3", "-c", ips["h%d" % dst], "-p", PORT0 + k,
                                                         "-t", seconds, "-O", 1, "-J",
                                                         *(client_args[k] if client_args else ())])
            clients.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, universal_newlines=True,
                                            start_new_session=True))
        if on_start is not None:
            on_start()
        for client in clients:
            out, _ = client.communicate(timeout=seconds + 30)
            got.append(out)
    finally:
        procs.terminate(clients + servers, timeout=2)
    return got


def receiver_mbit(output):
    """The receiver's Mbit/s from ``iperf3 -J``'s output, or None."""
    try:
        return json.loads(output)["end"]["sum_received"]["bits_per_second"] / 1e6
    except (ValueError, KeyError, TypeError):
        return None


def pattern_pairs(placement, shift=None, perm=None):
    """The host pairs [(src host number, dst host number)] of the pattern program's ``shift`` or
    ``perm`` (jobroute_report.pattern_perm's list) with rank r on host placement[r]; fixed points of
    the permutation send nothing."""
    n = len(placement)
    if shift is not None:
        dest = [(r + shift) % n for r in range(n)]
    else:
        dest = list(perm)
    return [(placement[r], placement[d]) for r, d in enumerate(dest) if d != r]


class RpcClient:
    """One RPC connection to the controller (docs/rpc.md), from the root namespace."""

    def __init__(self, host, port, timeout=60):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.replies = self.sock.makefile("rb")
        self.next_id = 0

    def call(self, op, **fields):
        self.next_id += 1
        self.sock.sendall(schema.frame(msgpack.packb(dict(v=schema.VERSION, id=self.next_id, op=op, **fields))))
        header = self.replies.read(4)
        if len(header) != 4:
            raise ConnectionError("the controller closed the RPC connection")
        reply = msgpack.unpackb(self.replies.read(struct.unpack("!I", header)[0]))
        if reply.get("status") != "ok":
            raise RuntimeError("RPC %s: %s" % (op, reply.get("error")))
        return reply

    def close(self):
        self.replies.close()
        self.sock.close()


@contextlib.contextmanager
def job_routes(bench, pairs, planner, rpc_port):
    """A job that holds ``planner``'s traffic routes for exactly ``pairs`` while the block runs (a
    phase-0 `traffic` op: installed before it returns, the switches confirmed); yields the
    `traffic` reply's planner fields. The job is released at the end."""
    ips = bench.fabric.host_ips()
    hosts = sorted({h for pair in pairs for h in pair})
    client = RpcClient("127.0.0.1", rpc_port)
    try:
        reg = client.call("register", hosts=[ips["h%d" % h] for h in hosts])
        demand = [[ips["h%d" % s], ips["h%d" % d], 1 << 20] for s, d in pairs]
        reply = client.call("traffic", job=reg["job"], token=reg["token"], phase=0, pairs=demand, planner=planner)
        try:
            yield {k: reply.get(k) for k in ("flows", "max_load", "node_load", "stored")}
        finally:
            client.call("release", job=reg["job"], token=reg["token"])
    finally:
        client.close()


def iperf_with_routes(bench, pairs, seconds, planner, rpc_port):
    """iperf3 streams on ``pairs`` while a job holds ``planner``'s traffic routes for exactly those
    pairs (job_routes; planner None: the controller's default routes, no job). Returns
    ([{"mbit", "retransmits", ...} per pair: rate_probe_parse.iperf_stream, {} if unreadable],
    the `traffic` reply's planner fields or None)."""
    if not planner:
        return [parse.iperf_stream(out) for out in iperf_streams(bench, pairs, seconds)], None
    with job_routes(bench, pairs, planner, rpc_port) as plan:
        return [parse.iperf_stream(out) for out in iperf_streams(bench, pairs, seconds)], plan
