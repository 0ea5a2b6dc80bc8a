"""RPC access: job tokens, who may register, opaque ids, and the per-connection limits."""
import ipaddress
import logging
import re
import socket
import struct
import threading

import msgpack
import pytest

from sdnmpi.controller import access, jobs, rpc
from sdnmpi.controller import constants as C

from rpc_helpers import GRAPH, IPS, FakeCore, Switches, call, client_of, exchange, request, steps_for


def make_service(allow=(), peer=IPS[0]):
    switches = Switches()
    svc = rpc.RpcService(FakeCore(GRAPH), switches.confirm, access=access.RegisterAccess(access.parse_networks(allow)))
    svc.switches = switches
    svc.test_clients = {"conn": rpc.Client(peer=access.peer_address((peer, 40000)))}
    return svc


def registered(svc, hosts=IPS, client="conn"):
    r = call(svc, "register", hosts=hosts, client=client)
    assert r["status"] == "ok", r
    return r["job"], r["token"]


# ---------------------------------------------------------------------------------------------
# tokens
def test_register_returns_a_128_bit_token_and_an_opaque_id():
    svc = make_service()
    ids, tokens = set(), set()
    for _ in range(40):
        job, token = registered(svc)
        assert re.fullmatch("[0-9a-f]{32}", token)
        assert 0 < job <= jobs.MAX_JOB_ID
        ids.add(job)
        tokens.add(token)
    assert len(ids) == len(tokens) == 40
    assert sorted(ids) != list(range(min(ids), min(ids) + 40))     # not a sequence
    slots = [j.slot for j in svc.jobs.jobs.values()]
    assert sorted(slots) == list(range(40))                        # priorities never clash
    assert "token" not in str(svc.jobs_json())


@pytest.mark.parametrize("op,fields", [
    ("release", {}),
    ("locate", {"hosts": IPS}),
    ("plan_allreduce", {"comm": 1, "steps": steps_for(IPS[:4])}),
    ("plan_bcast", {"comm": 1, "root": IPS[0], "members": IPS}),
])
@pytest.mark.parametrize("token", [None, "", "0" * 32, "x" * 128])
def test_a_wrong_or_missing_token_is_refused_and_changes_nothing(op, fields, token):
    now = [100.0]
    svc = make_service()
    svc.clock = lambda: now[0]
    job, good = registered(svc)
    assert call(svc, "plan_allreduce", job=job, token=good, comm=0, steps=steps_for(IPS))["status"] == "ok"
    before = (svc.switches.job_flows(C.COOKIE_JOB | job), dict(svc.jobs.jobs[job].plans),
              dict(svc.jobs.jobs[job].trees), svc.jobs.jobs[job].expires, len(svc.switches.batches))
    now[0] += 50
    r = call(svc, op, **dict(fields, job=job, token=token))   # token None: sent as nil
    assert r["status"] == "error" and r["error"] == "bad token for job %d" % job
    assert job in svc.jobs.jobs
    after = (svc.switches.job_flows(C.COOKIE_JOB | job), dict(svc.jobs.jobs[job].plans),
             dict(svc.jobs.jobs[job].trees), svc.jobs.jobs[job].expires, len(svc.switches.batches))
    assert after == before                       # not even the lease was renewed
    assert svc.stats_json()["bad_tokens"] == 1


def test_another_connection_with_the_token_may_use_the_job():
    svc = make_service()
    job, token = registered(svc)
    other = client_of(svc, "leader of a sub-communicator")
    assert call(svc, "plan_allreduce", job=job, token=token, comm=3, steps=steps_for(IPS[:4]),
                client="leader of a sub-communicator")["status"] == "ok"
    assert svc.holds_a_job(other)
    assert call(svc, "release", job=job, token=token)["status"] == "ok"
    assert not svc.holds_a_job(other)


def test_the_token_is_never_logged(caplog):
    caplog.set_level(logging.DEBUG)
    svc = make_service()
    job, token = registered(svc)
    call(svc, "plan_allreduce", job=job, token=token, comm=0, steps=steps_for(IPS))
    call(svc, "plan_bcast", job=job, token=token, comm=0, root=IPS[0], members=IPS)
    call(svc, "release", job=job, token="0" * 32)
    call(svc, "release", job=job, token=token)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "job %d registered (token %s...)" % (job, token[:4]) in text
    assert token[:8] not in text


# ---------------------------------------------------------------------------------------------
# who may register
def test_only_hosts_in_the_topology():
    svc = make_service(allow=["0.0.0.0/0"])
    r = call(svc, "register", hosts=IPS[:3] + ["10.99.0.1"])
    assert r["status"] == "error" and r["error"] == "host 10.99.0.1 is not in the topology"
    assert svc.jobs.jobs == {} and svc.stats_json()["registers_refused"] == 1


@pytest.mark.parametrize("peer,allow,ok", [
    (IPS[0], (), True),                       # a job host's fabric address
    (IPS[7], (), True),                       # any of them
    ("10.0.0.200", (), False),                # a fabric address of no job host
    ("172.30.0.1", (), True),                 # the management address host 1 advertises
    ("172.30.0.9", (), False),                # advertised by no job host
    ("127.0.0.1", (), False),                 # the head node itself
    ("127.0.0.1", ("127.0.0.0/8",), True),    # ... unless the operator allows it
    ("192.168.5.5", ("10.1.0.0/16", "192.168.5.5"), True),
    ("::ffff:172.30.0.1", (), True),          # IPv4-mapped peers count as IPv4
    ("fd00::1", ("127.0.0.1",), False),
    (None, (), False),
])
def test_register_needs_a_client_on_a_job_host_or_allowed(peer, allow, ok):
    svc = make_service(allow=allow, peer=peer)
    topo = svc.core.topology
    host = topo.host_by_ip(IPS[1])
    topo.learn_host(host.mac, IPS[1], host.dpid, host.port, "lldp", 1.0, ttl=120,
                    advertised=(IPS[1], "172.30.0.1"))
    hosts = IPS[:4] if peer != IPS[7] else IPS
    r = call(svc, "register", hosts=hosts)
    assert (r["status"] == "ok") == ok, r
    if not ok:
        assert "not on one of the job's hosts" in r["error"] or r["error"] == "client address unknown"


def test_advertised_addresses_of_hosts_outside_the_job_do_not_count():
    svc = make_service(peer="172.30.0.1")
    topo = svc.core.topology
    host = topo.host_by_ip(IPS[1])
    topo.learn_host(host.mac, IPS[1], host.dpid, host.port, "lldp", 1.0, ttl=120, advertised=("172.30.0.1",))
    assert call(svc, "register", hosts=[IPS[0], IPS[2]])["status"] == "error"
    assert call(svc, "register", hosts=[IPS[0], IPS[1]])["status"] == "ok"


@pytest.mark.parametrize("bad", ["10.0.0.0/33", "nope", "10.0.0.1,,x"])
def test_allow_list_parsing(bad):
    with pytest.raises(ValueError):
        access.parse_networks(bad.split(","))
    assert access.parse_networks(["10.0.0.0/8", " 127.0.0.1 ", ""]) == (
        ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("127.0.0.1/32"))


def test_jobs_are_bounded_by_the_priority_slots():
    svc = make_service()
    for _ in range(jobs.MAX_JOBS):
        registered(svc, hosts=IPS[:1])
    r = call(svc, "register", hosts=IPS[:1])
    assert r["status"] == "error" and r["error"] == "too many jobs (%d)" % jobs.MAX_JOBS
    victim = next(iter(svc.jobs.jobs.values()))
    svc.release(victim, "test")
    job, _token = registered(svc, hosts=IPS[:1])
    assert svc.jobs.jobs[job].slot == victim.slot


# ---------------------------------------------------------------------------------------------
# connection limits
def serve(svc, limits, peer=IPS[0]):
    """A client socket whose server end is served in a thread."""
    server, client = socket.socketpair()
    thread = threading.Thread(target=rpc.serve_connection, args=(svc, server, (peer, 40000), limits), daemon=True)
    thread.start()
    return client, thread


def closed_by_server(sock):
    """Reads until the server closes; True if it did (rather than sent more)."""
    sock.settimeout(30)
    return sock.recv(1) == b""


def test_too_many_connections_are_refused_with_an_error():
    svc = make_service()
    limits = rpc.Limits(max_connections=2, idle_timeout=60)
    held = [serve(svc, limits) for _ in range(2)]
    for sock, _thread in held:
        assert exchange(sock, request("hello"))["status"] == "ok"     # both are being served
    extra, thread = serve(svc, limits)
    (length,) = struct.unpack("!I", extra.recv(4))
    assert msgpack.unpackb(extra.recv(length))["error"] == "too many connections"
    assert closed_by_server(extra)
    thread.join(10)
    assert svc.stats_json()["connections_refused"] == 1 and svc.open_connections == 2
    for sock, thread in held:
        sock.close()
        thread.join(10)
    assert svc.open_connections == 0


def test_a_connection_without_a_job_is_closed_when_idle_one_with_a_job_is_not():
    svc = make_service()
    limits = rpc.Limits(idle_timeout=0.3, frame_timeout=5)
    idle, t1 = serve(svc, limits)
    assert exchange(idle, request("hello"))["status"] == "ok"
    assert closed_by_server(idle)
    t1.join(10)
    assert svc.stats_json()["idle_closed"] == 1
    owner, t2 = serve(svc, limits)
    r = exchange(owner, request("register", hosts=IPS))
    owner.settimeout(1.5)       # five idle timeouts: the job's connection stays
    with pytest.raises(socket.timeout):
        owner.recv(1)
    assert t2.is_alive() and svc.stats_json()["idle_closed"] == 1
    assert exchange(owner, request("release", job=r["job"], token=r["token"]))["status"] == "ok"
    assert closed_by_server(owner)       # no job any more: idle rules apply again
    t2.join(10)


@pytest.mark.parametrize("sent", [b"\x00", b"\x00\x00\x00\x10", b"\x00\x00\x00\x10\x81\xa1"])
def test_a_slow_frame_is_cut_off(sent):
    svc = make_service()
    job, token = registered(svc)          # holding a job does not excuse a slow frame
    limits = rpc.Limits(idle_timeout=60, frame_timeout=0.3)
    sock, thread = serve(svc, limits)
    assert exchange(sock, request("locate", job=job, token=token, hosts=IPS))["status"] == "ok"
    sock.sendall(sent)                    # a frame begun, never finished
    assert closed_by_server(sock)
    thread.join(10)
    assert svc.stats_json()["slow_closed"] == 1 and svc.open_connections == 0
