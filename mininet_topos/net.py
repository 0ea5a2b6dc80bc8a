"""FabricNet: builds, runs and tears down an emulated sdnmpi fabric in Mininet.

The switches are Open vSwitch bridges on the userspace datapath (the CI kernel has no OVS module),
speaking OpenFlow 1.3 to a remote controller in ``secure`` fail mode: nothing is forwarded until
the controller installs flows. ARP tables are not pre-populated (the controller answers ARP).
Optionally a management network (:mod:`.mgmt`) joins the hosts to the root namespace.

Typical use::

    with FabricNet(LeafSpineTopo(prefix="t1"), controller_port=6653) as fabric:
        fabric.start_lldpd("/work/main/lldpd/sdnmpi-lldpd")
        fabric.net.pingAll()
        rc, out = fabric.mpirun(["h1", "h2"], ["./hello"])

``stop()`` (also run by the context manager) removes everything this instance created: lldpd and
MPI processes, the Mininet hosts, the OVS bridges and their interfaces, the management network
and the private temporary directory. It never touches other networks' bridges or processes.
"""
import functools
import logging
import os
import shlex
import shutil
import subprocess
import tempfile
import time

from mininet.link import TCLink
from mininet.net import Mininet
from mininet.node import Host, OVSSwitch, RemoteController

from . import procs
from .fattree import FABRIC_SUBNET
from .mgmt import DEFAULT_SUBNET, MgmtNetwork, link_names, run_cmd
from .polling import poll_until

LOG = logging.getLogger(__name__)

OVS_CTL = "/usr/share/openvswitch/scripts/ovs-ctl"


def ovs_running():
    """True if ovsdb-server answers ``ovs-vsctl show``."""
    proc = subprocess.run(["ovs-vsctl", "-t", "2", "show"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, check=False)
    return proc.returncode == 0


def ensure_ovs(timeout=30.0):
    """Start ovsdb-server and ovs-vswitchd with ovs-ctl unless they already run (idempotent)."""
    if ovs_running():
        return
    LOG.info("starting Open vSwitch with %s", OVS_CTL)
    # ovs-ctl prints a harmless ulimit error in containers; its exit status is what matters.
    proc = subprocess.run([OVS_CTL, "start", "--system-id=random"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    try:
        poll_until(ovs_running, timeout, "Open vSwitch", interval=0.2)
    except TimeoutError as err:
        raise RuntimeError("Open vSwitch did not start: %s" % proc.stdout) from err


def ovs_bridges():
    """Names of all OVS bridges."""
    return run_cmd(["ovs-vsctl", "list-br"]).stdout.split()


def _format_seconds(value):
    """'1' for 1.0, '0.5' for 0.5: integral intervals are passed as integers."""
    return str(int(value)) if float(value).is_integer() else str(value)


class _Controller(RemoteController):
    """RemoteController without Mininet's start-up probe. The probe runs ``echo A | telnet IP PORT``
    in a shell and decodes what telnet prints as strict UTF-8; when the controller's OpenFlow HELLO
    (random xid bytes) arrives before telnet quits, as it does on a loaded machine, Mininet dies
    with UnicodeDecodeError. Callers wait for the controller themselves (wait_rest_ready)."""

    def checkListening(self):
        pass


class FabricNet:
    """An emulated fabric built from a topology of :mod:`.fattree`; see the module docstring.

    ``standalone=True`` is for tests only: the switches run in OVS ``standalone`` fail mode
    (plain MAC-learning switches) without any controller, so the fabric forwards traffic on
    its own. Learning switches flood, so only use it on topologies without loops (e.g.
    ``LeafSpineTopo(spines=1)``); a looped topology would storm.
    """

    def __init__(self, topo, controller_port=6653, controller_ip="127.0.0.1", mgmt=True,
                 mgmt_prefix=DEFAULT_SUBNET, standalone=False, fabric_subnet=FABRIC_SUBNET):
        self.topo = topo
        self.controller_port = controller_port
        self.controller_ip = controller_ip
        self.use_mgmt = mgmt
        self.mgmt_prefix = mgmt_prefix
        self.standalone = standalone
        self.fabric_subnet = fabric_subnet
        self.net = None
        self.mgmt = None
        self.tmpdir = None
        self._lldpd = []
        self._started = False

    # --- life cycle -------------------------------------------------------------------------

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        """Start OVS if needed, Mininet, and the management network. Cleans up on failure."""
        if self._started:
            return self
        ensure_ovs()
        self._check_names_free()
        self._started = True
        try:
            self.tmpdir = tempfile.mkdtemp(prefix="sdnmpi-fabric-")
            self.net = self._make_mininet()
            self.net.build()      # after the assignment: stop() cleans up a partial build
            self.net.start()
            if self.use_mgmt:
                self.mgmt = self._make_mgmt()
                self.mgmt.start()
        except BaseException:
            self.stop()
            raise
        LOG.info("fabric started: %d switches, %d hosts%s", len(self.net.switches),
                 len(self.net.hosts), " (standalone)" if self.standalone else "")
        return self

    def _check_names_free(self):
        """Refuse to start if a bridge or switch interface of ours exists already.

        Mininet would otherwise fail half-way, or (OVS start-up does ``del-br --if-exists``)
        take over another running network's bridge. Two fabrics that run at the same time need
        different topology ``prefix`` values.
        """
        taken = sorted((set(self.bridge_names()) & set(ovs_bridges()))
                       | (set(self.interface_names()) & link_names()))
        if taken:
            raise RuntimeError("names already in use (another fabric running? give the topology "
                               "a different prefix=): %s" % ", ".join(taken[:8]))

    def _make_mininet(self):
        """The Mininet object (not built yet)."""
        switch = functools.partial(OVSSwitch, datapath="user", protocols="OpenFlow13",
                                   failMode="standalone" if self.standalone else "secure")
        net = Mininet(topo=self.topo, switch=switch, host=Host, link=TCLink, controller=None,
                      autoSetMacs=False, autoStaticArp=False, build=False, listenPort=None)
        if not self.standalone:
            net.addController("ctl", controller=_Controller, ip=self.controller_ip,
                              port=self.controller_port)
        return net

    def _make_mgmt(self):
        """The management network over all hosts, numbered as in their fabric IPs."""
        members = [(self.net[name], self.topo.host_index[name]) for name in self.topo.host_names]
        return MgmtNetwork(members, subnet=self.mgmt_prefix)

    def stop(self):
        """Stop everything this instance started. Safe to call twice and from ``finally``."""
        if not self._started:
            return
        self._started = False
        self.stop_lldpd()
        if self.tmpdir:
            procs.kill_by_environ(self.tmpdir)
        if self.mgmt is not None:
            self._guard(self.mgmt.teardown)
        if self.net is not None:
            self._guard(self.net.stop)
            self._guard(self._reap_nodes)
        self._guard(self._sweep)
        if self.tmpdir:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        LOG.info("fabric stopped")

    @staticmethod
    def _guard(func):
        """Run a clean-up step; log and continue if it fails."""
        try:
            func()
        except Exception:  # pylint: disable=broad-except
            LOG.exception("clean-up step %s failed", getattr(func, "__name__", func))

    def _reap_nodes(self, timeout=5.0):
        """Wait for the shells of Mininet's nodes to exit (so their namespaces are gone)."""
        for ctl in self.net.controllers:
            ctl.terminate()   # RemoteController.stop() leaves its shell running
        deadline = time.monotonic() + timeout
        for node in self.net.hosts + self.net.switches + self.net.controllers:
            shell = getattr(node, "shell", None)
            if shell is None:
                continue
            try:
                shell.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                LOG.warning("%s (pid %d) still running: SIGKILL", node.name, shell.pid)
                shell.kill()
                shell.wait()

    def _sweep(self):
        """Delete bridges and switch interfaces Mininet left behind (e.g. after a failed build)."""
        mine = set(self.bridge_names())
        leftover = [br for br in ovs_bridges() if br in mine]
        if leftover:
            run_cmd(["ovs-vsctl"] + [a for br in leftover for a in ("--", "--if-exists",
                                                                     "del-br", br)])
        present = link_names()
        for name in self.interface_names():
            if name in present:
                run_cmd(["ip", "link", "del", name], check=False)

    # --- faults -----------------------------------------------------------------------------

    def delete_bridge(self, name):
        """``ovs-vsctl del-br`` one of this fabric's switches: its flows, ports and OpenFlow
        connection go; its interfaces stay. :meth:`readd_bridge` brings it back."""
        if name not in self.bridge_names():
            raise ValueError("%s is not a bridge of this fabric" % name)
        run_cmd(["ovs-vsctl", "del-br", name])

    def readd_bridge(self, name):
        """Re-create a deleted bridge as Mininet built it: same dpid, ports (ofport numbers),
        fail mode, protocols and controller; link shaping is re-applied."""
        self.net[name].start(self.net.controllers)

    # --- names and addresses ----------------------------------------------------------------

    def bridge_names(self):
        """Names of this fabric's OVS bridges (= switch names)."""
        return list(self.topo.switch_names)

    def interface_names(self):
        """Root-namespace interfaces of this fabric: bridges' netdevs, switch ports, mgmt veths."""
        names = list(self.bridge_names())
        for node1, node2, info in self.topo.links(sort=True, withInfo=True):
            for node, port in ((node1, info["port1"]), (node2, info["port2"])):
                if self.topo.isSwitch(node):
                    names.append("%s-eth%d" % (node, port))
        if self.mgmt is not None:
            names.extend(self.mgmt.interfaces())
        return names

    @property
    def hosts(self):
        """Mininet host objects, in topology order (h1, h2, ...)."""
        return [self.net[name] for name in self.topo.host_names]

    def host(self, host):
        """A Mininet host from its name (or the host itself)."""
        return self.net[host] if isinstance(host, str) else host

    def host_ips(self):
        """Mapping host name -> fabric IP."""
        return self.topo.host_ips()

    def mgmt_ips(self):
        """Mapping host name -> management IP (empty without a management network)."""
        return self.mgmt.host_ips() if self.mgmt is not None else {}

    def wait_connected(self, timeout=30.0):
        """Wait until every switch is connected to the controller; True on success."""
        return self.net.waitConnected(timeout=timeout)

    # --- lldpd ------------------------------------------------------------------------------

    def start_lldpd(self, binary, interval=1.0, extra_args=(), log_dir=None):
        """Run ``BINARY -f -I <fabric iface> -i INTERVAL`` in every host.

        Output goes to ``<log_dir or private tmp>/lldpd-<host>.log``. Returns the Popen list.
        """
        if not os.access(binary, os.X_OK):
            raise FileNotFoundError("lldpd binary not found or not executable: %s" % binary)
        log_dir = log_dir or self.tmpdir
        for host in self.hosts:
            argv = [os.path.abspath(binary), "-f", "-I", host.defaultIntf().name,
                    "-i", _format_seconds(interval)] + list(extra_args)
            log_path = os.path.join(log_dir, "lldpd-%s.log" % host.name)
            self._lldpd.append(procs.popen_in_host(host, argv, log_path=log_path))
        LOG.info("lldpd started on %d hosts", len(self._lldpd))
        return list(self._lldpd)

    def stop_lldpd(self, timeout=5.0):
        """SIGTERM every lldpd this instance started, SIGKILL after ``timeout``."""
        if self._lldpd:
            procs.terminate(self._lldpd, timeout=timeout)
            LOG.info("lldpd stopped on %d hosts", len(self._lldpd))
        self._lldpd = []

    @property
    def lldpd_processes(self):
        """The lldpd Popen objects currently managed."""
        return list(self._lldpd)

    # --- MPI --------------------------------------------------------------------------------

    def mpirun(self, hosts, prog_args, np=None, mca=(), env=None, timeout=300.0, slots=1,
               extra_args=()):
        """Run Open MPI's ``mpirun`` inside the first of ``hosts`` across all of them.

        ``hosts``: host names or objects; ``slots``: slots per host, an int or a mapping
        name -> int; ``np``: ranks (default: all slots); ``mca``: extra ``(name, value)`` pairs;
        ``env``: variables exported to every rank (``-x NAME``). Data goes over the fabric
        (``btl tcp,self``), Open MPI's out-of-band channel over the management network if
        there is one. Returns ``(returncode, output)``; returncode is None on timeout.
        """
        hosts = [self.host(h) for h in hosts]
        job = MpiJob(self, hosts, slots)
        argv = job.mpirun_argv(prog_args, np=np, mca=mca, env=env, extra_args=extra_args)
        return job.run(argv, env=env, timeout=timeout)


class MpiJob:
    """Files and environment of one mpirun (the ENVIRONMENT.md recipe), in a private directory.

    - hostfile: one fabric IP per host with ``slots=N``;
    - ``agent``: the launcher Open MPI calls as ``AGENT HOST CMD...`` instead of ssh. It enters
      the host's namespaces with ``mnexec -a PID`` and gives every host its own Open MPI session
      directory and PMIx's hash store, since all hosts share one hostname and one /tmp.
    """

    def __init__(self, fabric, hosts, slots=1):
        if not hosts:
            raise ValueError("mpirun needs at least one host")
        self.fabric = fabric
        self.hosts = hosts
        self.slots = {h.name: (slots.get(h.name, 1) if hasattr(slots, "get") else int(slots))
                      for h in hosts}
        self.dir = tempfile.mkdtemp(prefix="mpirun-", dir=fabric.tmpdir)
        self.ips = fabric.host_ips()
        self.hostfile = self._write_hostfile()
        self.agent = self._write_agent()

    def session_dir(self, host):
        """Per-host Open MPI tmpdir base (created)."""
        path = os.path.join(self.dir, "ompi-%s" % host.name)
        os.makedirs(path, exist_ok=True)
        return path

    def _write_hostfile(self):
        """``IP slots=N`` per host."""
        path = os.path.join(self.dir, "hostfile")
        with open(path, "w") as out:
            for host in self.hosts:
                out.write("%s slots=%d\n" % (self.ips[host.name], self.slots[host.name]))
        return path

    def _write_agent(self):
        """The launcher script: maps a fabric IP to the host's PID and session directory."""
        cases = "".join(
            "  %s) pid=%d; dir=%s ;;\n" % (self.ips[h.name], h.pid,
                                           shlex.quote(self.session_dir(h)))
            for h in self.hosts)
        script = ("#!/bin/sh\n"
                  "# Generated by sdnmpi.mininet_topos.net: Open MPI launcher, called as\n"
                  "# AGENT HOST CMD... ; runs CMD inside the Mininet host HOST.\n"
                  "host=\"$1\"; shift\n"
                  "case \"$host\" in\n%s"
                  "  *) echo \"agent: unknown host $host\" >&2; exit 1 ;;\n"
                  "esac\n"
                  "exec mnexec -a \"$pid\" env OMPI_MCA_orte_tmpdir_base=\"$dir\" "
                  "TMPDIR=\"$dir\" PMIX_MCA_gds=hash sh -c \"$*\"\n") % cases
        path = os.path.join(self.dir, "agent")
        with open(path, "w") as out:
            out.write(script)
        os.chmod(path, 0o755)
        return path

    def mpirun_argv(self, prog_args, np=None, mca=(), env=None, extra_args=()):
        """The full mpirun command line."""
        fabric = self.fabric
        oob = fabric.mgmt.subnet if fabric.mgmt is not None else fabric.fabric_subnet
        total = np if np is not None else sum(self.slots.values())
        argv = ["mpirun", "--hostfile", self.hostfile, "-np", str(total),
                "--mca", "plm_rsh_agent", self.agent,
                "--mca", "btl", "tcp,self",
                "--mca", "btl_tcp_if_include", fabric.fabric_subnet,
                "--mca", "oob_tcp_if_include", oob,
                "--mca", "mpi_yield_when_idle", "1",
                # No PMIx fence at the start of MPI_Finalize. Seen in about one full test run in
                # three: every rank had printed its result and sat in MPI_Finalize's fence (lazy
                # wait: nanosleep and progress), every orted and mpirun idle in poll, for 150 s;
                # the fence's release never came (cause inside ORTE/PMIx on hosts that share one
                # hostname, not found). The fence only guards against tearing connections down
                # under messages still in flight, and every program run here completes all its
                # communication before MPI_Finalize.
                "--mca", "async_mpi_finalize", "1"]
        for name, value in mca:
            argv += ["--mca", str(name), str(value)]
        for name in sorted(env or {}):
            argv += ["-x", name]
        return argv + list(extra_args) + [str(a) for a in prog_args]

    def environment(self, env=None):
        """mpirun's environment: root permission, first host's session dir, user variables.

        mpirun gets its session directory through TMPDIR, not OMPI_MCA_orte_tmpdir_base:
        mpirun forwards every MCA parameter set in its environment to the daemons' command
        lines, where it would override the agent's per-host value, and then all daemons share
        the first host's directory (measured: 'mkdir ... File exists' and hwloc segfaults in
        about 1 job in 8). TMPDIR is not forwarded.
        """
        full = dict(os.environ)
        full.pop("OMPI_MCA_orte_tmpdir_base", None)
        full.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                     "TMPDIR": self.session_dir(self.hosts[0]),
                     "PMIX_MCA_gds": "hash"})
        full.update({k: str(v) for k, v in (env or {}).items()})
        return full

    def survivors(self, mpirun_pid):
        """Post-mortem of a hung job: one line per live process (mpirun, the daemons, the ranks),
        with the Mininet host whose network namespace it is in."""
        names = {}
        for host in self.hosts:
            try:
                names[os.readlink("/proc/%d/ns/net" % host.pid)] = host.name
            except OSError:
                continue
        pids = [mpirun_pid] + sorted(set(procs.pids_with_environ(self.dir)) - {mpirun_pid})
        lines = [procs.describe(pid, names) for pid in pids]
        return [line for line in lines if line is not None]

    def run(self, argv, env=None, timeout=300.0):
        """Run mpirun in the first host; kill the whole job on timeout. (returncode, output)."""
        LOG.info("mpirun in %s: %s", self.hosts[0].name, " ".join(argv))
        proc = subprocess.Popen(procs.in_host(self.hosts[0], argv), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=self.environment(env),
                                start_new_session=True, universal_newlines=True)
        try:
            output, _ = proc.communicate(timeout=timeout)
            returncode = proc.returncode
        except subprocess.TimeoutExpired:
            alive = self.survivors(proc.pid)
            LOG.error("mpirun timed out after %.0f s; still running:\n%s", timeout, "\n".join(alive))
            procs.terminate([proc], timeout=2.0)
            # Before reading to EOF: daemons and ranks run in other sessions and may hold
            # mpirun's stdout, so communicate() would block on them forever.
            procs.kill_by_environ(self.dir)
            output, _ = proc.communicate()
            output += "\n[sdnmpi] mpirun timed out after %.0f s; still running were:\n%s\n" % (
                timeout, "\n".join(alive))
            returncode = None
        # Daemons launched through the agent carry this job's directory in their environment.
        procs.kill_by_environ(self.dir)
        shutil.rmtree(self.dir, ignore_errors=True)
        return returncode, output
