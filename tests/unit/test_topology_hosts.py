"""controller/topology.py's host indexes: the hosts at each (switch, port) (`hosts_at`, which the
MAX_HOSTS_PER_PORT cap asks on every new MAC) and the host of each IP (`host_by_ip`, which ARP,
IPv4 delivery and the RPC's locate ask) are kept in step by every change, never found by a scan."""
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from sdnmpi.controller import topology as T

SWITCHES = (1, 2, 3)
PORTS = (1, 2, 3)
MACS = ["02:00:00:00:00:%02x" % i for i in range(1, 9)]
IPS = [None] + ["10.0.0.%d" % i for i in range(1, 5)]
CAP = 3   # MAX_HOSTS_PER_PORT during the test, so that full ports are common

switch = st.sampled_from(SWITCHES)
end = st.tuples(switch, st.sampled_from(PORTS))
learn = st.tuples(st.just("learn"), st.sampled_from(MACS), st.sampled_from(IPS), end,
                  st.sampled_from([T.SOURCE_LLDP, T.SOURCE_ARP, T.SOURCE_IPV4]), st.sampled_from([None, 1, 5]))
operation = st.one_of(
    learn, learn, learn,                                                 # most frames teach or claim hosts
    st.tuples(st.just("port_down"), end),
    st.tuples(st.just("port_up"), end),
    st.tuples(st.just("switch_leave"), switch),
    st.tuples(st.just("switch_enter"), switch),                         # a reconnect forgets the switch's state
    st.tuples(st.just("link"), end, end),                               # a host port turns out to be a switch link
    st.tuples(st.just("goodbye"), st.sampled_from(MACS)),               # the LLDP agent's TTL 0
    st.tuples(st.just("expire"), st.floats(0, 5)),
)


def apply(topo, op, now):
    kind, args = op[0], op[1:]
    if kind == "learn":
        mac, ip, (dpid, port), source, ttl = args
        topo.learn_host(mac, ip, dpid, port, source, now, ttl=ttl)
    elif kind == "port_down":
        topo.port_down(*args[0])
    elif kind == "port_up":
        topo.port_up(*args[0], "hw")
    elif kind == "switch_leave":
        topo.remove_switch(args[0])
    elif kind == "switch_enter":
        topo.add_switch(args[0], {p: "hw" for p in PORTS})
    elif kind == "link":
        topo.saw_probe(args[0], args[1], now)
    elif kind == "goodbye":
        topo.remove_host(args[0], "LLDP agent shut down")
    else:
        topo.expire(now + args[0], 1000)


def assert_indexes_match_a_scan(topo):
    for dpid in SWITCHES:
        for port in PORTS:
            at = [h for h in topo.hosts.values() if (h.dpid, h.port) == (dpid, port)]
            assert topo.hosts_at(dpid, port) == len(at) <= CAP
    assert sum(topo.hosts_at(d, p) for d in SWITCHES for p in PORTS) == len(topo.hosts)
    for ip in IPS[1:]:
        owners = [h for h in topo.hosts.values() if h.ip == ip]
        assert len(owners) <= 1
        assert topo.host_by_ip(ip) is (owners[0] if owners else None)
    assert topo.host_by_ip(None) is None


@settings(derandomize=True, deadline=None, max_examples=200)
@given(st.lists(operation, max_size=60))
def test_host_indexes_equal_a_scan_after_any_changes(ops):
    with mock.patch.object(T, "MAX_HOSTS_PER_PORT", CAP):
        topo = T.Topology()
        for dpid in SWITCHES:
            topo.add_switch(dpid, {p: "hw" for p in PORTS})
        for i, op in enumerate(ops):
            apply(topo, op, float(i))
            assert_indexes_match_a_scan(topo)


def test_a_removed_host_keeps_its_fields_and_its_ip_is_free():
    topo = T.Topology()
    topo.add_switch(1, {1: "a", 2: "b"})
    topo.learn_host(MACS[0], "10.0.0.1", 1, 1, T.SOURCE_ARP, 1.0)
    host = topo.host_by_ip("10.0.0.1")
    assert topo.port_down(1, 1) is True
    assert (host.ip, host.dpid, host.port) == ("10.0.0.1", 1, 1)   # whoever still holds it reads what it was
    assert topo.host_by_ip("10.0.0.1") is None and topo.hosts_at(1, 1) == 0
    assert topo.learn_host(MACS[1], "10.0.0.1", 1, 2, T.SOURCE_ARP, 2.0) is True
    assert topo.host_by_ip("10.0.0.1").mac == MACS[1] and topo.hosts_at(1, 2) == 1
