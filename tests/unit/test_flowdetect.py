"""controller/flowcount.py and controller/flowdetect.py: counting entries per job host pair,
flow-stats polls, detected elephants routed under the job's cookie, hints winning, release by
idleness, and a bad model file, on a simulated k=4 fat-tree (conftest.FabricSim). Declared routes
released when they load the live traffic worse: test_flowdetect_declared.py."""
import itertools
import json
import logging
import types

import pytest
from ryu.ofproto import ofproto_v1_3 as OFP
from ryu.ofproto import ofproto_v1_3_parser as PARSER

from sdnmpi import flows
from sdnmpi.controller import constants as C
from sdnmpi.controller import flowdetect, jobroutes, jobtraffic, options
from sdnmpi.controller.jobs import JobTable
from sdnmpi.flows import cost
from sdnmpi.primitives import PAIR_ROUTERS, fabric, fattree, pairs, reroute, seeding

import test_reroute

LINK = 125e6       # bytes/s of a host link (1 Gbit/s)
FRAME = 1514       # bytes of a full TCP data frame (1448 payload, ACK_FRAME of headers)


@pytest.fixture
def fab(make_fabric):
    sim = make_fabric(fattree.kary(4))
    sim.discover()
    jobs = JobTable()
    service = types.SimpleNamespace(core=sim.core, jobs=jobs, confirm=sim.run, resync=lambda job: None)
    return sim, jobs, service


def register(sim, jobs, macs):
    return jobs.register([sim.host_ip[m] for m in macs], 60.0, owner=object(), now=0.0)


def threshold():
    return flows.ThresholdClassifier(link_rate=LINK, interval=1.0, window=2, fraction=0.1)


def _ip(value):
    return ".".join(str(value >> s & 255) for s in (24, 16, 8, 0))


def answer(sim, fd, sent_bytes, sent_packets=None):
    """The switches answer the poll's flow-stats requests from their counting tables, with the
    cumulative bytes ``sent_bytes`` {(src ip, dst ip): bytes} (0 for other pairs) and packets
    ``sent_packets`` (same keys; flowcount.UNAVAILABLE: not kept) or else full data frames (bytes /
    FRAME, rounded up); each switch's reply in two parts. True once the poll is complete."""
    done = False
    for dpid, sw in sorted(sim.switches.items()):
        stats = []
        for flow in sw.counting.values():
            if flow.cookie & C.COOKIE_KIND_MASK != C.COOKIE_COUNT:
                continue
            fields = {name: value for name, value, _mask in flow.key}
            src, dst = _ip(fields["ipv4_src"]), _ip(fields["ipv4_dst"])
            stats.append(PARSER.OFPFlowStats(table_id=C.TABLE_COUNT, cookie=flow.cookie, priority=flow.priority,
                                             byte_count=sent_bytes.get((src, dst), 0),
                                             packet_count=(sent_packets or {}).get(
                                                 (src, dst), -(-sent_bytes.get((src, dst), 0) // FRAME)),
                                             match=PARSER.OFPMatch(eth_type=C.ETH_TYPE_IPV4, ipv4_src=src, ipv4_dst=dst)))
        if stats:
            half = len(stats) // 2
            assert not fd.reply(dpid, stats[:half], True)
            done = fd.reply(dpid, stats[half:], False)
    return done


def poll(sim, jobs, service, fd, sent_bytes, sent_packets=None):
    msgs = sim.run(fd.poll(sim.core, jobs))
    requests = [m for m in msgs if isinstance(m, PARSER.OFPFlowStatsRequest)]
    assert answer(sim, fd, sent_bytes, sent_packets) == bool(requests)
    return fd.detect(service), requests


def poll_recorded(sim, jobs, service, fd, recorded):
    """`poll` with the cumulative bytes and packets of one poll line of a recorded counter log
    (flows/counterlog.py: "counts" [[src, dst, job, bytes, packets or null], ...])."""
    counts = recorded["counts"]
    return poll(sim, jobs, service, fd, {(c[0], c[1]): c[3] for c in counts},
                {(c[0], c[1]): c[4] for c in counts if c[4] is not None})


class Tcp:
    """Cumulative counters of TCP traffic as the counting entries see it: `send` adds a pair's data
    in full FRAMEs and, on its reverse pair, their ACKs (one ACK_FRAME per two data frames:
    delayed ACKs, about 2.2 % of the data's bytes)."""

    def __init__(self):
        self.bytes, self.packets = {}, {}

    def _add(self, pair, nbytes, packets):
        self.bytes[pair] = self.bytes.get(pair, 0) + nbytes
        self.packets[pair] = self.packets.get(pair, 0) + packets

    def send(self, data):
        """{(src ip, dst ip): bytes of data frames} sent in one interval."""
        for pair, nbytes in data.items():
            frames = -(-nbytes // FRAME)
            self._add(pair, nbytes, frames)
            self._add(pair[::-1], flowdetect.ACK_FRAME * -(-frames // 2), -(-frames // 2))
        return self


def route_of(sim, src_mac, dst_mac):
    ways = sim.trace(src_mac, sim.host_ip[dst_mac])
    assert len(ways) == 1 and ways[0][0] == ("host", dst_mac), ways
    return [dpid for dpid, _in, _out in ways[0][1]]


def test_counting_entries_follow_the_jobs_and_polls_read_them(fab):
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    hosts = sim.hosts()
    first = register(sim, jobs, hosts)
    second = register(sim, jobs, hosts[:4])       # inside the first: its pairs are counted once
    _, requests = poll(sim, jobs, service, fd, {})
    edge_of = {sim.host_ip[h]: fabric.attachment(sim.graph, h)[0] for h in hosts}
    want = cost.counting_entries([sorted(first.hosts), sorted(second.hosts)], edge_of)
    for dpid, sw in sim.switches.items():
        have = sorted(tuple(_ip(dict((n, v) for n, v, _ in f.key)[k]) for k in ("ipv4_src", "ipv4_dst"))
                      for f in sw.counting.values() if f.priority == C.PRIORITY_COUNT)
        assert have == sorted(want.get(dpid, []))
        for f in sw.counting.values():
            if f.priority == C.PRIORITY_COUNT:   # a pair of both jobs is counted for the smaller id
                pair = tuple(_ip(dict((n, v) for n, v, _ in f.key)[k]) for k in ("ipv4_src", "ipv4_dst"))
                both = set(pair) <= set(second.hosts)
                assert f.cookie == C.COOKIE_COUNT | (min(first.id, second.id) if both else first.id)
    assert fd.counting.entries() == 16 * 14 == sum(len(v) for v in want.values())
    # one request per edge switch, for the counting table's entries only
    assert sorted(r.datapath.id for r in requests) == sorted(want)
    for r in requests:
        assert (r.table_id, r.cookie, r.cookie_mask) == (C.TABLE_COUNT, C.COOKIE_COUNT, C.COOKIE_KIND_MASK)
    # routing is untouched: every packet still goes the default way
    sim.check_tables_consistent()

    jobs.remove(first.id, "test")
    poll(sim, jobs, service, fd, {})
    left = sum(len(sw.counting) - 1 for sw in sim.switches.values())
    edge_small = {sim.host_ip[h]: fabric.attachment(sim.graph, h)[0] for h in hosts[:4]}
    assert left == fd.counting.entries() == sum(len(v) for v in cost.counting_entries([second.hosts], edge_small).values())
    jobs.remove(second.id, "test")
    _, requests = poll(sim, jobs, service, fd, {})
    assert requests == [] and all(len(sw.counting) == 1 for sw in sim.switches.values())


def test_the_cap_bounds_the_counting_entries(fab, caplog):
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold(), max_entries=50)
    register(sim, jobs, sim.hosts())
    with caplog.at_level(logging.WARNING, logger="sdnmpi.controller.flowcount"):
        poll(sim, jobs, service, fd, {})
        poll(sim, jobs, service, fd, {})
    assert fd.counting.entries() == 50 == sum(len(sw.counting) - 1 for sw in sim.switches.values())
    assert [r.getMessage() for r in caplog.records] == [
        "flow detection: 174 job host pairs over the cap of 50 counting entries are not counted "
        "(--sdnmpi-flow-max-pairs)"]


def test_an_elephant_is_routed_by_the_planner_under_the_job_cookie_and_a_mouse_is_not(fab):
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold(), router="sdn-optimal")
    hosts = sim.hosts()
    job = register(sim, jobs, hosts)
    big = (sim.host_ip[hosts[0]], sim.host_ip[hosts[15]])
    mouse = (sim.host_ip[hosts[1]], sim.host_ip[hosts[14]])
    default = {p: route_of(sim, sim.mac_of_ip(p[0]), sim.mac_of_ip(p[1])) for p in (big, mouse)}
    found, _ = poll(sim, jobs, service, fd, {})
    assert found == {}
    sent = {big: 0, mouse: 0}
    found = {}
    for t in range(1, 4):
        sent = {big: sent[big] + int(0.9 * LINK), mouse: sent[mouse] + 10_000}
        found = poll(sim, jobs, service, fd, sent)[0]
        if found:
            break
    assert t == 1 and found == {job.id: [(big[0], big[1], 1)]}     # the first interval that saw it
    assert job.traffic.demands == {0: [(big[0], big[1], sent[big])]} and job.traffic.routers[0] == "sdn-optimal"
    routes = job.traffic.routes[0]
    src, dst = sim.mac_of_ip(big[0]), sim.mac_of_ip(big[1])
    # the planner's path seeded with where it runs (--sdnmpi-flow-seed): alone, it keeps its D-mod-K path
    want = seeding.plan(PAIR_ROUTERS["sdn-optimal"], sim.core.topology.graph(), [pairs.Flow(src, dst, sent[big])],
                        "dmodk", load=pairs.LinkLoad())[(src, dst)]
    assert routes.paths[(src, dst)] == want and route_of(sim, src, dst) == want[1:-1] == default[big]
    # its hops: job flows at the job's priority where installed, the default routes where elided
    assert {dpid for dpid, _s, _d in job.flows()} == set(want[1:-1]) and set(job.flows()) >= set(job.installed)
    sim.check_job_routes(job)
    assert route_of(sim, sim.mac_of_ip(mouse[0]), sim.mac_of_ip(mouse[1])) == default[mouse]
    # flagged once: more bytes change nothing
    sent[big] += int(0.9 * LINK)
    assert poll(sim, jobs, service, fd, sent)[0] == {}
    assert fd.to_json()["recent"] == [{"job": job.id, "src": big[0], "dst": big[1], "delay_polls": 1}]
    sim.check_tables_consistent()


def test_hints_win_over_detection(fab):
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    hosts = sim.hosts()
    job = register(sim, jobs, hosts)
    hinted = [(sim.host_ip[hosts[2]], sim.host_ip[hosts[9]], 1000)]
    sim.run(jobtraffic.declare(sim.core, jobs, job, 0, hinted))
    before = job.flows()
    big = (sim.host_ip[hosts[0]], sim.host_ip[hosts[15]])
    poll(sim, jobs, service, fd, {})
    found, _ = poll(sim, jobs, service, fd, {big: int(LINK)})
    assert found == {job.id: [(big[0], big[1], 1)]}              # seen ...
    assert job.traffic.demands == {0: jobtraffic.merged(hinted)} and job.flows() == before   # ... left alone
    assert fd.counters["left_to_hints"] == 1


def test_detection_then_hints_then_idle_release_and_redetection(fab):
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    hosts = sim.hosts()
    job = register(sim, jobs, hosts)
    a = (sim.host_ip[hosts[0]], sim.host_ip[hosts[8]])
    b = (sim.host_ip[hosts[4]], sim.host_ip[hosts[12]])
    poll(sim, jobs, service, fd, {})
    poll(sim, jobs, service, fd, {a: int(LINK)})
    found, _ = poll(sim, jobs, service, fd, {a: int(LINK), b: int(LINK)})
    assert found == {job.id: [(b[0], b[1], 1)]}
    assert {(s, d) for s, d, _ in job.traffic.demands[0]} == {a, b} and job.traffic.routes[0].flows
    # the job goes quiet: dynamic phase detection removes its routes, detection forgets the pairs
    sim.run(jobtraffic.idle(sim.core, jobs, job))
    assert job.flows() == {} and job.traffic.dormant
    assert poll(sim, jobs, service, fd, {a: int(LINK), b: int(LINK)})[0] == {}
    assert fd.detected[job.id] == {} and job.traffic.dormant
    # the next busy phase: a again (old bytes not counted twice), the job wakes with a only
    found, _ = poll(sim, jobs, service, fd, {a: 2 * int(LINK), b: int(LINK)})
    assert found == {job.id: [(a[0], a[1], 1)]}
    assert not job.traffic.dormant and {(s, d) for s, d, _ in job.traffic.demands[0]} == {a}
    assert job.traffic.routes[0].flows
    sim.check_tables_consistent()


def test_a_pair_of_the_next_job_on_the_same_hosts_is_detected_for_that_job(fab):
    """A job ends and the next one registers on the same hosts before the next poll (found on
    Mininet: tests/integration/test_release_mininet.py): the pair's counting entry moves to the new
    job, and its elephant is flagged and routed for it, not left flagged for the job before."""
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    hosts = sim.hosts()
    first = register(sim, jobs, hosts)
    big = (sim.host_ip[hosts[0]], sim.host_ip[hosts[15]])
    poll(sim, jobs, service, fd, {})
    found, _ = poll(sim, jobs, service, fd, {big: int(LINK)})
    assert found == {first.id: [(big[0], big[1], 1)]} and first.flows()
    sim.run(jobroutes.release_messages(sim.core.datapaths, first))
    jobs.remove(first.id, "released")
    second = register(sim, jobs, hosts)
    assert poll(sim, jobs, service, fd, {big: int(LINK)})[0] == {}     # the same bytes: not counted twice
    found, _ = poll(sim, jobs, service, fd, {big: 2 * int(LINK)})
    assert found == {second.id: [(big[0], big[1], 1)]}
    assert {(s, d) for s, d, _ in second.traffic.demands[0]} == {big} and second.flows()
    assert [(d["job"], d["src"], d["dst"]) for d in fd.to_json()["recent"]] == [(first.id,) + big, (second.id,) + big]
    sim.check_tables_consistent()


def test_a_switch_that_reconnects_gets_its_counting_entries_again(fab):
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold())
    register(sim, jobs, sim.hosts())
    poll(sim, jobs, service, fd, {})
    dpid = next(d for d, e in fd.counting.installed.items() if e)
    n = len(fd.counting.installed[dpid])
    sim.switches[dpid].counting = {}
    fd.switch_reset(dpid)
    msgs = sim.run(fd.poll(sim.core, jobs))
    adds = [m for m in msgs if isinstance(m, PARSER.OFPFlowMod) and m.command == OFP.OFPFC_ADD]
    assert len(adds) == n and {m.datapath.id for m in adds} == {dpid}
    assert len(sim.switches[dpid].counting) == n


def _settings(**kw):
    return options.Settings(**{"flow_detection": "learned", "link_capacity": 50e6, **kw})


@pytest.mark.parametrize("content,why", [
    (None, "No such file"),
    ("{not json", "not a JSON model"),
    (json.dumps({"format": "sdnmpi-flows-model", "version": 1, "scaling": "link-interval", "window": 3,
                 "weights": [1.0, 2.0], "bias": 0.0, "cutoff": 0.5}), "weights must be a list of 3"),
])
def test_an_unusable_model_file_is_one_log_line_and_the_threshold(tmp_path, caplog, content, why):
    path = tmp_path / "model.json"
    if content is not None:
        path.write_text(content)
    with caplog.at_level(logging.INFO, logger="sdnmpi"):
        fd = flowdetect.from_settings(_settings(flow_model=str(path), flow_window=3, flow_fraction=0.2))
    assert isinstance(fd.classifier, flows.ThresholdClassifier) and fd.kind == "threshold"
    assert (fd.classifier.window, fd.classifier.fraction) == (3, 0.2)
    assert (fd.classifier.link_rate, fd.classifier.interval) == (50e6 / 8, 1.0)
    lines = [r for r in caplog.records if r.name.startswith("sdnmpi.flows")]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    assert why.lower() in lines[0].getMessage().lower() and "falling back" in lines[0].getMessage()


def test_the_shipped_model_loads_and_none_means_no_detection(caplog):
    assert flowdetect.from_settings(options.Settings()) is None
    with caplog.at_level(logging.INFO, logger="sdnmpi"):
        fd = flowdetect.from_settings(_settings())
    assert isinstance(fd.classifier, flows.LearnedClassifier) and fd.kind == "learned"
    assert [r.levelno for r in caplog.records] == [logging.INFO]
    assert flowdetect.from_settings(_settings(flow_detection="threshold")).kind == "threshold"


@pytest.mark.parametrize("with_detection", [True, False])
def test_the_rest_view_shows_the_detections(fab, with_detection):
    import threading
    import urllib.request
    import wsgiref.simple_server

    from ryu.app.wsgi import WSGIApplication

    from sdnmpi.controller import rest_flows

    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold()) if with_detection else None
    if fd is not None:
        hosts = sim.hosts()
        job = register(sim, jobs, hosts)
        big = (sim.host_ip[hosts[0]], sim.host_ip[hosts[15]])
        poll(sim, jobs, service, fd, {})
        poll(sim, jobs, service, fd, {big: int(LINK)})
    app = WSGIApplication()
    rest_flows.register(app, fd)
    server = wsgiref.simple_server.make_server("127.0.0.1", 0, app)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/sdnmpi/flowdetect" % server.server_port, timeout=10) as r:
            doc = json.loads(r.read())
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    if fd is None:
        assert doc == {"classifier": "none"}
        return
    assert doc["classifier"] == "threshold" and doc["router"] == "sdn-optimal" and doc["counting_entries"] == 224
    assert doc["counters"]["polls"] == 2 and doc["counters"]["elephants"] == doc["counters"]["routed"] == 1
    assert doc["jobs"] == {str(job.id): 1}
    assert doc["recent"] == [{"job": job.id, "src": big[0], "dst": big[1], "delay_polls": 1}]


def test_the_counter_log_records_every_poll_and_the_flags(fab, tmp_path):
    sim, jobs, service = fab
    path = tmp_path / "counters.jsonl"
    settings = options.Settings(flow_detection="threshold", link_capacity=8 * LINK, flow_log=str(path),
                               flow_interval=1.0, flow_span=0)
    fd = flowdetect.from_settings(settings)
    hosts = sim.hosts()
    job = register(sim, jobs, hosts)
    big = (sim.host_ip[hosts[0]], sim.host_ip[hosts[15]])
    for sent in ({}, {big: int(0.05 * LINK)}, {big: int(0.95 * LINK)}):
        poll(sim, jobs, service, fd, sent)
    lines = path.read_text().splitlines()
    header, pairs, counts = flows.counterlog.read(lines)
    assert (header["classifier"], header["interval_s"], header["link_rate_Bps"]) == ("threshold", 1.0, LINK)
    assert len(lines) == 4 and len(pairs) == fd.counting.entries() == 224
    assert counts[pairs.index(big)].tolist() == [0, 0.05 * LINK, 0.9 * LINK] and counts.sum() == 0.95 * LINK
    polls = [json.loads(x) for x in lines[1:]]
    assert {c[2] for c in polls[0]["counts"]} == {job.id} and all(p["complete"] for p in polls)
    # version 2: the packets the switches reported (`answer`: full frames), per interval
    frames = [-(-int(f * LINK) // FRAME) for f in (0.05, 0.95)]
    assert flows.counterlog.read_packets(lines)[3][pairs.index(big)].tolist() == [0, frames[0], frames[1] - frames[0]]
    assert [p["flagged"] for p in polls] == [[], [], [[big[0], big[1], 2]]]


def _halo_subset(busy, ip, worse):
    """The first 4 pairs of ``busy`` (halo3d) whose SDN-optimal plan (pairs in the order the
    controller declares them: by IP) loads the busiest link more than D-mod-K does (``worse``), or
    no more (not ``worse``)."""
    graph = fattree.kary(4)
    default = PAIR_ROUTERS["dmodk"](graph, busy)
    for subset in itertools.combinations(sorted(busy, key=ip.get), 4):
        score = reroute.busiest(graph, busy, PAIR_ROUTERS["sdn-optimal"](graph, list(subset)), default)
        if (score > reroute.busiest(graph, busy, {}, default)) == worse:
            return list(subset)
    raise AssertionError("no such subset")


@pytest.mark.parametrize("worse", [True, False])
def test_detected_pairs_stay_on_the_default_routes_when_a_plan_would_load_the_job_busier(fab, caplog, worse):
    sim, jobs, service = fab
    fd = flowdetect.FlowDetection(threshold(), router="sdn-optimal")
    job = register(sim, jobs, sim.hosts())
    busy = test_reroute.halo3d()
    ip = {f: (sim.host_ip[f.src], sim.host_ip[f.dst]) for f in busy}
    heavy = _halo_subset(busy, ip, worse)
    default = {f: route_of(sim, f.src, f.dst) for f in busy}
    tcp = Tcp()
    with caplog.at_level(logging.INFO, logger="sdnmpi.controller.flowdetect"):
        for _ in range(3):     # every halo pair busy (5 % of the link), 4 of them elephants
            tcp.send({ip[f]: int((0.9 if f in heavy else 0.05) * LINK) for f in busy})
            found = poll(sim, jobs, service, fd, tcp.bytes, tcp.packets)[0]
            if found:
                break
    assert sorted(found[job.id]) == sorted((*ip[f], 1) for f in heavy)
    assert fd.detected[job.id].keys() == {ip[f] for f in heavy}
    # the 5 % reverse pairs of the 4 elephants carry their ACKs too (7 % of the link, under a
    # tenth of the elephants' bytes), but their payload makes them data: every halo pair counts
    assert {ip[f][::-1] for f in heavy} <= {ip[f] for f in busy}
    assert fd._data_pairs(fd._busy(job.id)) == sorted(ip.values())
    # halo3d is denser than a permutation: a plan that is worse (``worse``) or only as good keeps
    # every pair on its default path, nothing installed
    assert job.traffic.demands == {} and job.flows() == {} and fd.counters["left_to_fabric"] == 4
    assert "routed" not in fd.counters
    assert all(route_of(sim, f.src, f.dst) == default[f] for f in busy)
    assert any("4 detected pairs kept on the default routes" in r.getMessage() for r in caplog.records)
    # every pair an elephant: the plan of all of them only ties D-mod-K's 3 flows, so still nothing
    tcp.send({ip[f]: int(0.9 * LINK) for f in busy})
    with caplog.at_level(logging.INFO, logger="sdnmpi.controller.flowdetect"):
        found = poll(sim, jobs, service, fd, tcp.bytes, tcp.packets)[0]
    assert sorted(found[job.id]) == sorted((*ip[f], 2) for f in busy if f not in heavy)
    assert job.traffic.demands == {} and job.flows() == {} and fd.counters["left_to_fabric"] == 48
    assert any("48 detected pairs kept on the default routes (busiest link: default 3 flows, planned 3 flows)"
               in r.getMessage() for r in caplog.records)
    sim.check_tables_consistent()


def _one_job_two_pairs(fab):
    """Threshold detection, one job on every host, and two of its pairs across the core."""
    sim, jobs, service = fab
    hosts = sim.hosts()
    pair = [(sim.host_ip[hosts[i]], sim.host_ip[hosts[i + 8]]) for i in (0, 4)]
    return flowdetect.FlowDetection(threshold()), register(sim, jobs, hosts), pair[0], pair[1]


def test_a_detected_pair_whose_phase_ended_leaves_the_demand_and_is_detected_again(fab, caplog):
    sim, jobs, service = fab
    fd, job, a, b = _one_job_two_pairs(fab)
    sent = {a: 0, b: 0}

    def step(busy):
        for p in busy:
            sent[p] += int(LINK)
        return poll(sim, jobs, service, fd, dict(sent))[0]

    step([])
    assert step([a, b]) == {job.id: [(a[0], a[1], 1), (b[0], b[1], 1)]}
    assert {(s, d) for s, d, _ in job.traffic.demands[0]} == {a, b}
    # a's phase is over while b runs on: a stays in the demand for stale_polls - 1 quiet polls ...
    for _ in range(fd.stale_polls - 1):
        assert step([b]) == {}
        assert {(s, d) for s, d, _ in job.traffic.demands[0]} == {a, b}
    # ... and leaves it at the stale_polls-th (3rd at 1 s): declared again with b alone, the job still busy
    with caplog.at_level(logging.INFO, logger="sdnmpi.controller.flowdetect"):
        assert step([b]) == {}
    assert {(s, d) for s, d, _ in job.traffic.demands[0]} == {b} and set(fd.detected[job.id]) == {b}
    assert fd.counters["stale_pairs"] == 1 and "quiet for 3 polls (3 s)" in caplog.text
    assert not job.traffic.dormant
    sim.check_job_routes(job)
    # a busy again (a new phase): flagged again and planned with b
    assert step([a, b]) == {job.id: [(a[0], a[1], 1)]}
    assert {(s, d) for s, d, _ in job.traffic.demands[0]} == {a, b}
    # every pair quiet: the demand goes, routes with it, though the job is not (yet) dormant
    for _ in range(fd.stale_polls):
        step([])
    assert fd.detected[job.id] == {} and not job.traffic.demands.get(0) and not job.traffic.routes.get(0)
    sim.check_tables_consistent()


def test_an_incomplete_poll_does_not_age_the_detected_pairs(fab):
    sim, jobs, service = fab
    fd, job, a, _b = _one_job_two_pairs(fab)
    poll(sim, jobs, service, fd, {})
    poll(sim, jobs, service, fd, {a: int(LINK)})
    assert set(fd.detected[job.id]) == {a}
    for _ in range(fd.stale_polls + 1):      # requests sent, no switch answers
        sim.run(fd.poll(sim.core, jobs))
        fd.detect(service)
    assert set(fd.detected[job.id]) == {a} and fd.counters["stale_pairs"] == 0
