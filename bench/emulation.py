"""The bench fabric's emulation choices (issue 15; docs/jobroute-rate.md, "Per-flow rate: the slow
pair" and "Per-flow rate with the emulation choices").

Two settings of the EMULATION, not of the product, that every bench building a fabric applies by
default (bench_fabric.Bench.start_fabric), records in its results (``emulation``) and undoes:

- ``ovs_sndbuf``: the send buffer of ovs-vswitchd's one AF_PACKET socket. The userspace datapath
  sends every packet of every veth port through it (bench/ovs_sendbuf.py); with the default
  212992 bytes the packets waiting in all the fabric's HTB queues share about 90 frames, and a
  full buffer drops packets that no counter shows (TCP retransmits with 0 drops anywhere). A real
  switch has a buffer per port, and the kernel datapath has no such socket. Default 4 MiB (0
  retransmits in the probe's runs); put back to its old size when the bench tears its fabric
  down (ovs-vswitchd is shared with the tests and other benches).
- ``ack_class``: on every rate-limited interface (hosts' links and switch ports) an HTB class of
  its own for TCP packets under ACK_MAX_IP_BYTES bytes (pure ACKs), served first within the link's
  rate. In the emulation, one ACK stream behind another flow's standing queue keeps that flow's
  BBR window small (46-79 % of the link without any loss); a real switch port is a FIFO too, but
  its queues drain at line rate with CPUs to spare, so the choice removes an artefact of the
  slow userspace switch. It changes who waits in a queue, not the link's rate.

Both are OFF for ``make demo`` (it attaches to its own fabric) and in the test suite (its fixtures
build FabricNet directly). ``--ovs-sndbuf 0 --ack-class off`` gives the bench Mininet's and OVS's
defaults.
"""
import argparse
import time

import ovs_sendbuf

DEFAULT_SNDBUF = 4 << 20
MIN_SNDBUF, MAX_SNDBUF = 4096, 1 << 30
ACK_MAX_IP_BYTES = 128          # the filter's u16 mask 0xff80 on the IP total length
MARK = "emulation-tc-ok"
WHAT = ("emulation settings, not product behaviour: ovs_sndbuf = the send buffer of ovs-vswitchd's shared "
        "packet socket (userspace datapath), put back at teardown; ack_class = TCP packets under %d bytes "
        "(pure ACKs) served before data on every rate-limited interface" % ACK_MAX_IP_BYTES)


def sndbuf_bytes(text):
    """argparse type of --ovs-sndbuf: 0 (leave OVS's buffer) or MIN_SNDBUF..MAX_SNDBUF bytes."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("--ovs-sndbuf wants bytes, got %r" % text) from None
    if value != 0 and not MIN_SNDBUF <= value <= MAX_SNDBUF:
        raise argparse.ArgumentTypeError("--ovs-sndbuf must be 0 or %d..%d bytes" % (MIN_SNDBUF, MAX_SNDBUF))
    return value


def add_arguments(parser):
    """The emulation options of a bench that builds a fabric (defaults: both on)."""
    g = parser.add_argument_group("emulation choices (bench/emulation.py; recorded in the results)")
    g.add_argument("--ovs-sndbuf", type=sndbuf_bytes, default=DEFAULT_SNDBUF, metavar="BYTES",
                   help="ovs-vswitchd's shared send socket's buffer while the fabric is up (put back at "
                        "teardown); 0: OVS's own")
    g.add_argument("--ack-class", choices=("on", "off"), default="on",
                   help="pure TCP ACKs served first on every rate-limited interface")
    return g


def choices(args):
    """{"ovs_sndbuf": bytes or 0, "ack_class": bool} from parsed options; an args without them
    (e.g. a hand-made Namespace) gets the defaults."""
    ack = getattr(args, "ack_class", "on")
    return {"ovs_sndbuf": getattr(args, "ovs_sndbuf", DEFAULT_SNDBUF),
            "ack_class": ack if isinstance(ack, bool) else ack == "on"}


def ack_class_commands(dev, rate):
    """tc commands that give ``dev``'s TCP packets under 128 bytes (pure ACKs) their own HTB class,
    served before the rest (prio 0) within the link's ``rate`` Mbit/s, and the commands that put
    back Mininet's TCLink setup (one class 5:1 at the rate)."""
    apply = ["tc qdisc del dev %s root" % dev, "tc qdisc add dev %s root handle 5: htb default 11" % dev,
             "tc class add dev %s parent 5: classid 5:1 htb rate %gMbit burst 15k" % (dev, rate),
             "tc class add dev %s parent 5:1 classid 5:11 htb rate %gMbit ceil %gMbit burst 15k prio 1"
             % (dev, 0.9 * rate, rate),
             "tc class add dev %s parent 5:1 classid 5:12 htb rate %gMbit ceil %gMbit burst 15k prio 0"
             % (dev, 0.1 * rate, rate),
             "tc filter add dev %s parent 5: protocol ip prio 1 u32 match ip protocol 6 0xff "
             "match u16 0x0000 0xff80 at 2 flowid 5:12" % dev]
    revert = ["tc qdisc del dev %s root" % dev, "tc qdisc add dev %s root handle 5: htb default 1" % dev,
              "tc class add dev %s parent 5: classid 5:1 htb rate %gMbit burst 15k" % (dev, rate)]
    return apply, revert


def rate_commands(dev, rate, ack_class):
    """tc commands that change ``dev``'s link rate to ``rate`` Mbit/s in place: Mininet's class
    5:1, and with ``ack_class`` its two classes too (their shares and ceilings follow the rate)."""
    out = ["tc class change dev %s parent 5:0 classid 5:1 htb rate %gMbit burst 15k" % (dev, rate)]
    if ack_class:
        out += ["tc class change dev %s parent 5:1 classid 5:11 htb rate %gMbit ceil %gMbit burst 15k prio 1"
                % (dev, 0.9 * rate, rate),
                "tc class change dev %s parent 5:1 classid 5:12 htb rate %gMbit ceil %gMbit burst 15k prio 0"
                % (dev, 0.1 * rate, rate)]
    return out


def queue_commands(dev, packets):
    """tc commands that give ``dev``'s Mininet rate class (5:1) a FIFO of ``packets`` packets in
    place of the kernel's default one (as long as the interface's txqueuelen, 1000 on a veth:
    2.4 s of queue at 5 Mbit/s)."""
    return ["tc qdisc replace dev %s parent 5:1 handle 10: pfifo limit %d" % (dev, packets)]


def rate_limited(links, is_host):
    """[(interface, Mbit/s, on a host)] of every rate-limited end of ``links`` (Mininet links:
    .intf1/.intf2 with .params["bw"], .name, .node, .cmd); ``is_host(node)``."""
    out = []
    for link in links:
        for intf in (link.intf1, link.intf2):
            bw = intf.params.get("bw")
            if bw:
                out.append((intf, float(bw), bool(is_host(intf.node))))
    return out


def run_tc(intf, commands):
    """``commands`` in ``intf``'s node (its namespace), stopping at the first that fails; tc's
    warnings (e.g. 'sch_htb: quantum ... is big') are harmless. RuntimeError on a failure."""
    out = intf.cmd(" && ".join(commands) + " && echo " + MARK)
    if MARK not in out:
        raise RuntimeError("tc on %s failed: %s" % (intf.name, " ".join(out.split())))


class SendBuffer:
    """ovs-vswitchd's send socket's buffer set to ``nbytes`` and put back (``ovs`` gives the
    low-level calls: bench/ovs_sendbuf.py's read_send_socket, set_send_buffer and ovs_pid)."""

    def __init__(self, nbytes, ovs=ovs_sendbuf, wait_s=30.0, poll_s=0.2):
        self.nbytes, self.ovs, self.wait_s, self.poll_s = nbytes, ovs, wait_s, poll_s
        self.pid = self.fd = None
        self.record = {"requested": nbytes}

    def set(self):
        """Sets it; the socket is made at ovs-vswitchd's first send, so this waits up to wait_s for
        it (the fabric's LLDP makes one). Returns the record: pid, fd, old and set sizes."""
        pid = self.ovs.ovs_pid()
        deadline = time.monotonic() + self.wait_s
        fd, _mem = self.ovs.read_send_socket(pid)
        while fd is None:
            if time.monotonic() > deadline:
                raise RuntimeError("no send socket of ovs-vswitchd (pid %d) after %.0f s (ss -0 -p)"
                                   % (pid, self.wait_s))
            time.sleep(self.poll_s)          # polls the condition (ss), bounded by wait_s
            fd, _mem = self.ovs.read_send_socket(pid)
        old, new = self.ovs.set_send_buffer(pid, fd, self.nbytes)
        self.pid, self.fd = pid, fd
        self.record.update(pid=pid, fd=fd, old=old, set=new)
        return self.record

    def restore(self):
        """Puts the old size back (once); a vanished ovs-vswitchd is recorded, not raised."""
        if self.fd is None:
            return self.record
        pid, fd, self.fd = self.pid, self.fd, None
        try:
            if self.ovs.ovs_pid() != pid:
                raise OSError("ovs-vswitchd was restarted (pid %d is gone)" % pid)
            self.record["restored"] = self.ovs.set_send_buffer(pid, fd, self.record["old"])[1]
        except OSError as exc:
            self.record["restored"] = None
            self.record["restore_error"] = str(exc)
        return self.record


class Emulation:
    """The choices applied to a started fabric: apply(interfaces) then restore(); ``record`` is the
    results' metadata (one dict, updated in place, so a results dict holding it sees the restore).
    ``switch_ports=False`` puts the ACK class on the hosts' links only (rate_probe's ``ackclass``)."""

    def __init__(self, ovs_sndbuf=DEFAULT_SNDBUF, ack_class=True, switch_ports=True, sendbuf=None):
        self.ack_class, self.switch_ports = ack_class, switch_ports
        self.sendbuf = (sendbuf or SendBuffer(ovs_sndbuf)) if ovs_sndbuf else None
        self.classed = []                  # [(interface, rate)] that got the ACK class
        self.record = {"ovs_sndbuf": {"requested": 0} if not ovs_sndbuf else self.sendbuf.record,
                       "ack_class": {"on": bool(ack_class), "switch_ports": bool(ack_class and switch_ports),
                                     "max_ip_bytes": ACK_MAX_IP_BYTES, "interfaces": 0},
                       "what": WHAT}

    @classmethod
    def from_args(cls, args):
        c = choices(args)
        return cls(c["ovs_sndbuf"], c["ack_class"])

    def apply(self, interfaces):
        """``interfaces``: rate_limited()'s list. Sets the send buffer, then the ACK class."""
        if self.sendbuf is not None:
            self.sendbuf.set()
        if self.ack_class:
            for intf, rate, on_host in interfaces:
                if on_host or self.switch_ports:
                    run_tc(intf, ack_class_commands(intf.name, rate)[0])
                    self.classed.append((intf, rate))
                    self.record["ack_class"]["interfaces"] = len(self.classed)
        return self.record

    def has_ack_class(self, intf):
        return any(i is intf for i, _rate in self.classed)

    def restore(self, tc=True):
        """The send buffer put back; with ``tc`` the ACK classes replaced by Mininet's class (not
        needed when the fabric is being stopped: its interfaces go with it)."""
        if self.sendbuf is not None:
            self.sendbuf.restore()
        classed, self.classed = self.classed, []
        if tc:
            for intf, rate in classed:
                run_tc(intf, ack_class_commands(intf.name, intf.params.get("bw") or rate)[1])
        return self.record
