"""The live RPC service under hostile input (issue 12, "Hostile input, measured").

A real ryu-manager (no Mininet) with three fake OpenFlow switches (tests/unit/fake_ofswitch.py:
two leaves and a spine, cabled, eight hosts known by their LLDP frames) is driven by hypothesis-
generated and mutated messages (rpc_fuzz.py; derandomized, so every run sends the same ones):
one connection per script in turn, then 300 connections at once (more than the controller's
limit), then slow-loris connections. Meanwhile the test holds a job of its own whose token the
fuzzer never learns. Afterwards: the controller is alive and logged no traceback, every message
was answered or its connection closed, the test's job is untouched, a normal job registers, plans
and releases (its flows reach the switches and leave them), the operator's REST call needs the
operator's token, and the controller's RSS stayed bounded. The figures are printed (run with -s).

Starts ryu-manager: run it under the machine's lock (COMMON.md).
"""
import concurrent.futures
import json
import os
import select
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from conftest import lldp_host_frame
from fake_ofswitch import FakeSwitch
from rpc_fuzz import Tally, read_reply, run_script, scripts
from rpc_helpers import exchange, request, steps_for
from sdnmpi.controller import constants as C
from sdnmpi.controller import rpc_schema as schema
from sdnmpi.mininet_topos import controller_proc
from sdnmpi.mininet_topos.polling import poll_until

SEQUENTIAL_SCRIPTS = int(os.environ.get("FUZZ_SCRIPTS", 2400))
PARALLEL = 300
MAX_CONNECTIONS = 256
SLOW_CONNECTIONS = 40
FRAME_TIMEOUT = 1.0
IDLE_TIMEOUT = 8.0
SLOW_KINDS = ("silent", "header", "partial", "drip")
CLIENT_TIMEOUT = 30.0        # no answer within this is a failure ("timeout")
RSS_GROWTH_LIMIT = 64 << 20  # bytes
IPS = ["10.0.0.%d" % i for i in range(1, 9)]
MACS = ["02:00:00:00:00:%02x" % i for i in range(1, 9)]
OFPFC_ADD, OFPFC_DELETE = 0, 3


def connect(port):
    return socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT)


def rss(pid):
    with open("/proc/%d/status" % pid) as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("live")
    rpc_port = controller_proc.free_port()
    ctl = controller_proc.start_controller(controller_proc.free_port(), controller_proc.free_port(), log_path=str(tmp / "ryu.log"), extra_args=(
        "--sdnmpi-rpc-host", "127.0.0.1", "--sdnmpi-rpc-port", str(rpc_port), "--sdnmpi-rpc-allow", "127.0.0.1",
        "--sdnmpi-rpc-max-connections", str(MAX_CONNECTIONS), "--sdnmpi-rpc-idle-timeout", str(IDLE_TIMEOUT),
        "--sdnmpi-rpc-frame-timeout", str(FRAME_TIMEOUT), "--sdnmpi-operator-token-file", str(tmp / "token"),
        "--sdnmpi-lldp-interval", "0.5"))
    switches = []
    try:
        ctl.wait_rest_ready(timeout=60)
        switches = [FakeSwitch(dpid, 5, ctl.ofp_port) for dpid in (1, 2, 3)]
        for sw in switches:
            assert sw.main.wait(30), "switch %d: no port description request" % sw.dpid
        leaf1, leaf2, spine = switches
        leaf1.connect(5, spine, 1)
        leaf2.connect(5, spine, 2)
        for i, (mac, ip) in enumerate(zip(MACS, IPS)):
            (leaf1 if i < 4 else leaf2).packet_in(i % 4 + 1, lldp_host_frame(mac, ip, "h%d" % (i + 1), ttl=3600))
        controller_proc.wait_for_topology(ctl, 3, 2, 8, timeout=60)
        ctl.rpc_port, ctl.token_file, ctl.switches = rpc_port, tmp / "token", switches
        yield ctl
    finally:
        for sw in switches:
            sw.close()
        ctl.stop()


def rpc_stats(ctl):
    return ctl.rest("/sdnmpi/stats")["rpc"]


def rest_delete(ctl, path, token=None):
    req = urllib.request.Request(ctl.url(path), method="DELETE")
    if token is not None:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def job_cookie_mods(ctl, job, command):
    return [m for sw in ctl.switches for m in sw.flow_mods() if m[0] == C.COOKIE_JOB | job and m[1] == command]


def last_add(sw, cookie, match):
    """The actions of the last flow-mod adding ``match`` with ``cookie`` to fake switch ``sw``."""
    adds = [m for m in sw.flow_mod_entries() if (m[0], m[1], m[3]) == (cookie, OFPFC_ADD, match)]
    return adds[-1][4] if adds else None


def check_routes_sent(ctl, job, routes):
    """The job's planned hops (GET /sdnmpi/jobs `routes`) reached the switches: an installed hop as
    the job's flow for its pair out of its port; an elided one (--sdnmpi-elide-default-hops, the
    default) as no job flow, the switch's default route for the destination being that same port."""
    by_dpid = {"%016x" % sw.dpid: sw for sw in ctl.switches}
    for r in routes:
        sw, want = by_dpid[r["dpid"]], (("output", r["port"]),)
        pair = {"eth_type": C.ETH_TYPE_IPV4, "ipv4_src": r["src"], "ipv4_dst": r["dst"]}
        if r["installed"]:
            assert last_add(sw, C.COOKIE_JOB | job, pair) == want, r
        else:
            assert last_add(sw, C.COOKIE_JOB | job, pair) is None, r
            assert last_add(sw, C.COOKIE_ROUTE, {"eth_type": C.ETH_TYPE_IPV4, "ipv4_dst": r["dst"]}) == want, r


def run_parallel(ctl, chosen, tally):
    """Opens len(chosen) connections at once, waits until the controller holds its maximum and has
    refused the rest, then runs the scripts on the accepted ones concurrently."""
    before = rpc_stats(ctl)
    socks = [connect(ctl.rpc_port) for _ in chosen]
    expect_refused = len(chosen) - (MAX_CONNECTIONS - before["open_connections"])
    def settled():
        stats = rpc_stats(ctl)
        return (stats["open_connections"] == MAX_CONNECTIONS
                and stats["connections_refused"] - before["connections_refused"] == expect_refused)
    poll_until(settled, 60, "the controller to hold %d connections" % MAX_CONNECTIONS, interval=0.1)

    def one(sock, script):
        mine = Tally()
        if select.select([sock], [], [], 0)[0]:       # the refusal is waiting: nothing to send
            reply = read_reply(sock)
            sock.close()
            assert reply not in (None, "garbled") and reply["error"] == "too many connections", reply
            mine["refused"] += 1
        else:
            run_script(sock, script, mine)
        return mine

    with concurrent.futures.ThreadPoolExecutor(len(chosen)) as pool:
        for mine in pool.map(one, socks, chosen):
            tally.update(mine)
    return expect_refused


def slow_loris(port, specs, tally):
    """Connections that stall (silent; part of a header; a header and part of the body; one byte of
    a frame every 0.2 s). Returns how long each took to be closed after its last byte, by kind."""
    frame = schema.frame(request("hello"))
    closed = {}
    stalled = [threading.Event() for _ in specs]   # set once a connection has sent its first bytes

    def one(i, kind, cut):
        sock = connect(port)
        with sock:
            if kind == "silent":
                stalled[i].set()
            if kind == "header":
                sock.sendall(frame[:1 + cut % 3])
                stalled[i].set()
            elif kind == "partial":
                sock.sendall(frame[:4 + cut % (len(frame) - 4)])
                stalled[i].set()
            elif kind == "drip":
                for byte in frame:
                    try:
                        sock.sendall(bytes([byte]))
                    except OSError:
                        break
                    stalled[i].set()
                    if select.select([sock], [], [], 0.2)[0]:
                        break
            last = time.monotonic()
            try:
                data = sock.recv(1)
            except ConnectionResetError:
                data = b""
            closed[i] = (kind, data, time.monotonic() - last)

    threads = [threading.Thread(target=one, args=(i, kind, cut)) for i, (kind, cut) in enumerate(specs)]
    for t in threads:
        t.start()
    # every one connected and stalled (not a sleep that a loaded machine outruns): the service still
    # answers others at once
    assert all(event.wait(CLIENT_TIMEOUT) for event in stalled)
    with connect(port) as sock:
        t0 = time.monotonic()
        assert exchange(sock, request("hello"))["status"] == "ok"
        hello_s = time.monotonic() - t0
    for t in threads:
        t.join(CLIENT_TIMEOUT + IDLE_TIMEOUT)
    assert len(closed) == len(specs)
    for kind, data, _took in closed.values():
        assert data == b"", kind          # closed, nothing sent: the stream cannot be resynchronised
        tally.update(["messages", "closed", "kind:slow_" + kind])
    return closed, hello_s


def test_hostile_rpc_input_at_volume(live):
    t_start = time.monotonic()
    port = live.rpc_port
    stats0 = rpc_stats(live)
    victim = connect(port)
    reg = exchange(victim, request("register", hosts=IPS))
    assert reg["status"] == "ok", reg
    job, token = reg["job"], reg["token"]
    planned = exchange(victim, request("plan_allreduce", job=job, token=token, comm=0, steps=steps_for(IPS)))
    assert planned["status"] == "ok" and planned["flows"] > 0, planned
    victim_json = [j for j in live.rest("/sdnmpi/jobs") if j["job"] == job]
    rss_before = rss(live.pid)
    tally, corpus = Tally(), []

    @settings(max_examples=SEQUENTIAL_SCRIPTS, derandomize=True, database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(scripts(IPS, job))
    def sequential(script):
        corpus.append(script)
        run_script(connect(port), script, tally)

    sequential()
    t_sequential = time.monotonic() - t_start
    chosen = [corpus[i * len(corpus) // PARALLEL] for i in range(PARALLEL)]
    refused = run_parallel(live, chosen, tally)

    closed, hello_s = slow_loris(port, [(SLOW_KINDS[i % 4], 37 * i) for i in range(SLOW_CONNECTIONS)], tally)
    fuzz_s = time.monotonic() - t_start

    # The controller is alive, answered everything, and cleaned up after every fuzz connection.
    assert live.running()
    assert tally.failures() == {}, tally
    assert tally["messages"] >= 10000, tally
    assert tally["refused"] == refused > 0
    poll_until(lambda: rpc_stats(live)["open_connections"] == 1, 60, "fuzz connections closed", interval=0.1)
    stats = rpc_stats(live)
    kinds = [kind for kind, _data, _took in closed.values()]
    assert stats["slow_closed"] - stats0["slow_closed"] == len(kinds) - kinds.count("silent")
    assert stats["idle_closed"] - stats0["idle_closed"] == kinds.count("silent")
    assert stats["connections_refused"] - stats0["connections_refused"] == refused
    assert [j for j in live.rest("/sdnmpi/jobs")] == victim_json  # fuzz jobs released, ours untouched
    assert exchange(victim, request("plan_allreduce", job=job, token=token, comm=0,
                                    steps=steps_for(IPS)))["cached"]

    # A normal job registers, plans and releases; its flows reach the switches and leave them.
    with connect(port) as sock:
        reg = exchange(sock, request("register", hosts=IPS))
        assert reg["status"] == "ok", reg
        fields = {"job": reg["job"], "token": reg["token"]}
        assert exchange(sock, request("locate", hosts=IPS, **fields))["locality"] == [1] * 4 + [2] * 4
        plan = exchange(sock, request("plan_allreduce", comm=0, steps=steps_for(IPS), **fields))
        assert plan["status"] == "ok" and plan["flows"] > 0 and plan["max_load"] == plan["lower_bound"], plan
        routes = next(j for j in live.rest("/sdnmpi/jobs") if j["job"] == reg["job"])["routes"]
        assert len(routes) == plan["flows"]
        assert len(job_cookie_mods(live, reg["job"], OFPFC_ADD)) >= sum(r["installed"] for r in routes)
        check_routes_sent(live, reg["job"], routes)
        tree = exchange(sock, request("plan_bcast", comm=1, root=IPS[0], members=IPS, **fields))
        assert tree["status"] == "ok" and tree["switches"] == 3, tree
        assert exchange(sock, request("release", **fields))["status"] == "ok"
        assert job_cookie_mods(live, reg["job"], OFPFC_DELETE)
        assert exchange(sock, request("release", **fields))["error"] == "unknown job %d" % reg["job"]

    # Releasing a job over REST needs the operator's token.
    operator = live.token_file.read_text().strip()
    assert oct(os.stat(live.token_file).st_mode & 0o777) == "0o600"
    assert rest_delete(live, "/sdnmpi/jobs/%d" % job)[0] == 401
    assert rest_delete(live, "/sdnmpi/jobs/%d" % job, "x" * 64)[0] == 401
    assert [j["job"] for j in live.rest("/sdnmpi/jobs")] == [job]
    assert rest_delete(live, "/sdnmpi/jobs/%d" % job, operator) == (200, {"released": job})
    assert live.rest("/sdnmpi/jobs") == []
    assert exchange(victim, request("release", job=job, token=token))["error"] == "unknown job %d" % job
    victim.close()

    rss_after = rss(live.pid)
    assert rss_after - rss_before < RSS_GROWTH_LIMIT
    assert live.running() and "Traceback" not in live.log_text()
    kinds = {k[5:]: v for k, v in sorted(tally.items()) if k.startswith("kind:")}
    print("\nRPC fuzz: %d messages (%d sequential scripts, %d parallel connections, %d slow-loris) in %.1f s "
          "(sequential part %.1f s); outcomes ok=%d error=%d closed=%d refused=%d; failures %s; crashes 0; "
          "RSS %.1f -> %.1f MiB; hello during slow-loris %.3f s\nby kind: %s"
          % (tally["messages"], len(corpus), PARALLEL, SLOW_CONNECTIONS, fuzz_s, t_sequential, tally["ok"],
             tally["error"], tally["closed"], tally["refused"], tally.failures(), rss_before / 2 ** 20,
             rss_after / 2 ** 20, hello_s, kinds))
