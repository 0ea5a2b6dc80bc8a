"""bench/emulation.py: the bench fabric's emulation choices (ovs-vswitchd's send buffer, the ACK
class), their options, tc commands, metadata and undo, on fake interfaces and a fake
ovs-vswitchd (no Mininet, no Open vSwitch)."""
import argparse
import types

import pytest

import bench_setup  # noqa: F401  (bench/ on sys.path)
import bench_fabric  # noqa: E402
import bench_jobroute_mininet  # noqa: E402
import emulation  # noqa: E402
import jobroute_rate  # noqa: E402
import jobroute_rate_md  # noqa: E402


class FakeIntf:
    def __init__(self, name, bw, node="s", fail=None):
        self.name, self.params, self.node, self.fail = name, {"bw": bw} if bw else {}, node, fail
        self.commands = []

    def cmd(self, text):
        self.commands.append(text)
        if self.fail and self.fail in text:
            return "Error: Cannot find device \"%s\"\n" % self.name
        return "Warning: sch_htb: quantum of class 50001 is big. Consider r2q change.\n" + emulation.MARK + "\n"


class FakeOvs:
    """ovs_sendbuf's calls on a fake ovs-vswitchd whose send socket appears after ``missing`` reads."""

    def __init__(self, pid=41, fd=47, size=212992, missing=0):
        self.pid, self.fd, self.size, self.missing = pid, fd, size, missing
        self.calls = []

    def ovs_pid(self):
        return self.pid

    def read_send_socket(self, pid):
        assert pid == self.pid
        if self.missing:
            self.missing -= 1
            return None, {}
        return self.fd, {"t": 0, "tb": self.size}

    def set_send_buffer(self, pid, fd, nbytes):
        self.calls.append((pid, fd, nbytes))
        old, self.size = self.size, nbytes
        return old, self.size


def parser():
    p = argparse.ArgumentParser()
    emulation.add_arguments(p)
    return p


def test_options_default_on_and_parse():
    assert emulation.choices(parser().parse_args([])) == {"ovs_sndbuf": 4 << 20, "ack_class": True}
    got = parser().parse_args(["--ovs-sndbuf", "0", "--ack-class", "off"])
    assert emulation.choices(got) == {"ovs_sndbuf": 0, "ack_class": False}
    assert emulation.choices(parser().parse_args(["--ovs-sndbuf", "65536"]))["ovs_sndbuf"] == 65536
    # a hand-made Namespace (RouteBench's) without the options gets the defaults; a bool is kept
    assert emulation.choices(argparse.Namespace()) == {"ovs_sndbuf": 4 << 20, "ack_class": True}
    assert emulation.choices(argparse.Namespace(ovs_sndbuf=0, ack_class=False))["ack_class"] is False


@pytest.mark.parametrize("bad", [["--ovs-sndbuf", "100"], ["--ovs-sndbuf", "4m"], ["--ovs-sndbuf", "-1"],
                                 ["--ovs-sndbuf", str(2 << 30)], ["--ack-class", "yes"]])
def test_bad_options_exit_2(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        parser().parse_args(bad)
    assert exc.value.code == 2
    assert "--ovs-sndbuf" in capsys.readouterr().err or bad[0] == "--ack-class"


def test_every_fabric_bench_takes_the_options():
    for parse in (jobroute_rate.parse_args, bench_jobroute_mininet.parse_args):
        assert emulation.choices(parse([])) == {"ovs_sndbuf": 4 << 20, "ack_class": True}
        assert emulation.choices(parse(["--ack-class", "off", "--ovs-sndbuf", "0"])) == {"ovs_sndbuf": 0,
                                                                                        "ack_class": False}
    import bench_cli  # pylint: disable=import-outside-toplevel
    assert bench_cli.parse_args(["--ack-class", "off"]).ack_class == "off"


def test_rate_commands_follow_the_ack_classes():
    assert emulation.rate_commands("s1-eth1", 2.0, False) == [
        "tc class change dev s1-eth1 parent 5:0 classid 5:1 htb rate 2Mbit burst 15k"]
    got = emulation.rate_commands("s1-eth1", 10.0, True)
    assert got[1] == "tc class change dev s1-eth1 parent 5:1 classid 5:11 htb rate 9Mbit ceil 10Mbit burst 15k prio 1"
    assert got[2] == "tc class change dev s1-eth1 parent 5:1 classid 5:12 htb rate 1Mbit ceil 10Mbit burst 15k prio 0"
    apply, _revert = emulation.ack_class_commands("s1-eth1", 10.0)
    # the classes the change commands address are those the apply commands make, under the same parents
    for c in got[1:]:
        assert c.replace(" change ", " add ").split(" htb ")[0] in "\n".join(apply)


def test_rate_limited_lists_limited_ends_only():
    h, s = FakeIntf("h1-eth0", 5, node="h1"), FakeIntf("e1-eth1", 5)
    free = (FakeIntf("m1-eth0", None, node="h1"), FakeIntf("mg-eth1", None))
    links = [types.SimpleNamespace(intf1=h, intf2=s), types.SimpleNamespace(intf1=free[0], intf2=free[1])]
    assert emulation.rate_limited(links, lambda node: node.startswith("h")) == [(h, 5.0, True), (s, 5.0, False)]


def test_emulation_applies_records_and_puts_back():
    ovs = FakeOvs(missing=2)
    emu = emulation.Emulation(4 << 20, True, sendbuf=emulation.SendBuffer(4 << 20, ovs=ovs, poll_s=0))
    h, s = FakeIntf("h1-eth0", 5, node="h1"), FakeIntf("e1-eth1", 5)
    rec = emu.apply([(h, 5.0, True), (s, 5.0, False)])
    assert ovs.calls == [(41, 47, 4 << 20)]
    assert rec["ovs_sndbuf"] == {"requested": 4 << 20, "pid": 41, "fd": 47, "old": 212992, "set": 4 << 20}
    assert rec["ack_class"] == {"on": True, "switch_ports": True, "max_ip_bytes": 128, "interfaces": 2}
    assert "not product behaviour" in rec["what"]
    assert h.commands[0].startswith("tc qdisc del dev h1-eth0 root && ") and "flowid 5:12" in h.commands[0]
    assert emu.has_ack_class(s) and not emu.has_ack_class(FakeIntf("e1-eth1", 5))
    h.params["bw"] = 2.0                     # jobroute_rate.set_rate changed the link's rate
    assert emu.restore(tc=True) is rec and rec["ovs_sndbuf"]["restored"] == 212992
    assert ovs.calls[-1] == (41, 47, 212992) and ovs.size == 212992
    assert h.commands[-1].endswith("htb rate 2Mbit burst 15k && echo " + emulation.MARK)
    assert s.commands[-1].endswith("htb rate 5Mbit burst 15k && echo " + emulation.MARK)
    emu.restore()                            # twice: nothing more happens
    assert len(ovs.calls) == 2 and len(h.commands) == 2


def test_restore_without_tc_leaves_the_interfaces_alone():
    ovs = FakeOvs()
    emu = emulation.Emulation(1 << 20, True, sendbuf=emulation.SendBuffer(1 << 20, ovs=ovs))
    s = FakeIntf("e1-eth1", 5)
    emu.apply([(s, 5.0, False)])
    emu.restore(tc=False)
    assert len(s.commands) == 1 and ovs.size == 212992


def test_hosts_only_and_off():
    ovs = FakeOvs()
    h, s = FakeIntf("h1-eth0", 5, node="h1"), FakeIntf("e1-eth1", 5)
    emu = emulation.Emulation(0, True, switch_ports=False, sendbuf=emulation.SendBuffer(1, ovs=ovs))
    rec = emu.apply([(h, 5.0, True), (s, 5.0, False)])
    assert len(h.commands) == 1 and not s.commands and ovs.calls == []
    assert rec["ovs_sndbuf"] == {"requested": 0} and rec["ack_class"]["switch_ports"] is False
    off = emulation.Emulation(0, False)
    assert off.apply([(s, 5.0, False)])["ack_class"]["interfaces"] == 0 and not s.commands
    assert off.restore() == off.record


def test_tc_failure_raises_with_the_interface():
    emu = emulation.Emulation(0, True)
    with pytest.raises(RuntimeError, match="tc on e9-eth1 failed: Error: Cannot find device"):
        emu.apply([(FakeIntf("e9-eth1", 5, fail="filter"), 5.0, False)])


def test_send_buffer_waits_for_the_socket_then_gives_up():
    buf = emulation.SendBuffer(1 << 20, ovs=FakeOvs(missing=10 ** 6), wait_s=0.05, poll_s=0.01)
    with pytest.raises(RuntimeError, match="no send socket of ovs-vswitchd"):
        buf.set()
    assert buf.restore() == {"requested": 1 << 20}      # nothing was set: nothing to put back


def test_send_buffer_restore_records_a_restarted_ovs():
    ovs = FakeOvs()
    buf = emulation.SendBuffer(1 << 20, ovs=ovs)
    buf.set()
    ovs.pid = 99
    rec = buf.restore()
    assert rec["restored"] is None and "restarted" in rec["restore_error"]
    assert ovs.calls == [(41, 47, 1 << 20)]


def test_bench_stop_fabric_puts_the_buffer_back():
    ovs = FakeOvs()
    bench = bench_fabric.Bench.__new__(bench_fabric.Bench)
    bench.fabric, bench._mn_log = None, None
    bench.emulation = emulation.Emulation(1 << 20, False, sendbuf=emulation.SendBuffer(1 << 20, ovs=ovs))
    bench.emulation.apply([])
    bench.stop_fabric()
    assert ovs.calls[-1] == (41, 47, 212992) and bench.emulation.record["ovs_sndbuf"]["restored"] == 212992


def test_route_bench_carries_the_choices():
    args = bench_jobroute_mininet.parse_args(["--ack-class", "off"])
    spec = bench_jobroute_mininet.fabric_spec("k4", args)
    bench = bench_jobroute_mininet.RouteBench(spec, args, "/nonexistent")
    try:
        assert emulation.choices(bench.args) == {"ovs_sndbuf": 4 << 20, "ack_class": False}
    finally:
        bench.stop_controller()        # removes its token directory


def test_markdown_names_the_choices_and_the_median_streams():
    rec = {"ovs_sndbuf": {"requested": 4 << 20, "old": 212992, "set": 4 << 20, "restored": 212992},
           "ack_class": {"on": True, "interfaces": 96}}
    results = {"rates": {"5.0": [{"iperf3-dmodk": {"shift": 0.5, "shift_median": 0.9, "perm": 0.4,
                                                   "perm_median": 0.6, "cpu_busy": 0.5,
                                                   "retransmits": {"shift": [0, 3, None], "perm": [2]}}}]},
               "seconds": 4, "emulation": rec}
    text = jobroute_rate_md.markdown(results)
    assert "| 5.0 | iperf3-dmodk | 50% (50%) | 40% (40%) |" in text
    assert "| iperf3-dmodk | 5.0 | 90% (90%) | 60% (60%) | 3/2 |" in text
    assert "Emulation choices: ovs-vswitchd send buffer" in text and "'interfaces': 96" in text



def test_jobroute_rate_passes_extra_mca_to_the_route_bench():
    args = jobroute_rate.parse_args(["--ompi-mca", "btl_tcp_eager_limit=4194304"])
    assert args.mca == [("btl_tcp_eager_limit", "4194304")]
    for bad in (["--ompi-mca", "btl=self"], ["--ompi-mca", "novalue"]):
        with pytest.raises(SystemExit) as exc:
            jobroute_rate.parse_args(bad)
        assert exc.value.code == 2
    ns = argparse.Namespace(prefix="zz", mgmt_subnet="172.28.0.0/16", k4_bw=5.0, seed=7, mca=args.mca,
                            mpi_transport="default")
    bench = bench_jobroute_mininet.RouteBench(bench_jobroute_mininet.fabric_spec("k4", ns), ns, "/nonexistent")
    try:
        assert bench.mca == [("btl_tcp_eager_limit", "4194304")]
    finally:
        bench.stop_controller()


def test_queue_commands_replace_the_fifo_under_mininets_rate_class():
    """bench_flowdetect --queue-packets: the FIFO goes under the class Mininet's TCLink makes for
    the rate (Mininet's own commands, not a copy of them), with the limit asked for."""
    from mininet.link import TCIntf
    made, _parent = TCIntf.bwCmds(types.SimpleNamespace(bwParamMax=TCIntf.bwParamMax), bw=5)
    (cmd,) = emulation.queue_commands("e1-eth3", 50)
    parent = cmd.split(" parent ")[1].split()[0]
    assert any("classid %s " % parent in c for c in made)
    assert cmd.startswith("tc qdisc replace dev e1-eth3 ") and cmd.endswith(" pfifo limit 50")
