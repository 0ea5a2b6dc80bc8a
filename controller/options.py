"""sdnmpi's command-line options, registered with Ryu's oslo.config (``--sdnmpi-*`` flags).

``ryu-manager`` parses its command line before it loads applications, so sdnmpi/ryu_compat.py
calls `register_cli` as soon as ``ryu.cmd.manager`` is imported. The application calls `settings`,
which registers the same options (as config-file options) if that has not happened, e.g. when the
app runs under another launcher, and returns them as one frozen object.
"""
import dataclasses

from ryu import cfg

from sdnmpi import flows
from sdnmpi.flows.hold import HOLD_MEMORY, HOLD_MIN, HOLD_S, HOLD_SHARE
from sdnmpi.primitives import DEFAULT_ROUTING, PAIR_ROUTERS

from .access import parse_networks
from .auth import DEFAULT_TOKEN_FILE
from . import flowdetect
from .flowcount import DEFAULT_MAX_ENTRIES
from .jobidle import DEFAULT_QUIET_S, DEFAULT_THRESHOLD_BPS


class _Networks:
    """oslo.config type of --sdnmpi-rpc-allow: a bad item is a command-line error (exit 2)."""
    type_name = "comma-separated addresses/CIDR networks"

    def __call__(self, text):
        parse_networks(text.split(","))
        return text

    def __repr__(self):
        return self.type_name

OPTS = [
    cfg.StrOpt("sdnmpi-default-routing", default="dmodk", choices=sorted(DEFAULT_ROUTING),
               help="default IPv4 routing policy: dmodk (destination mod uplinks), ecmp "
                    "(OpenFlow SELECT groups over equal-cost uplinks) or single (one path)"),
    cfg.FloatOpt("sdnmpi-lldp-interval", default=1.0, min=0.1,
                 help="seconds between the controller's LLDP probes on every switch port"),
    cfg.FloatOpt("sdnmpi-link-timeout", default=10.0, min=0.3,
                 help="a switch link not confirmed by LLDP for this many seconds is removed (a port "
                      "going down removes its links at once)"),
    cfg.FloatOpt("sdnmpi-host-hold", default=30.0, min=0.0,
                 help="an LLDP-learned host is kept at least this many seconds after its last frame, "
                      "even if its TTL is shorter (a TTL-0 frame, its port going down or a move act at once)"),
    cfg.FloatOpt("sdnmpi-stats-interval", default=2.0, min=0.2,
                 help="seconds between port-statistics polls (REST counters and throughput)"),
    cfg.FloatOpt("sdnmpi-route-delay", default=0.2, min=0.0,
                 help="seconds to gather topology changes before routes are recomputed"),
    cfg.StrOpt("sdnmpi-rpc-host", default="0.0.0.0",
               help="address of the RPC service for MPI jobs (the management network)"),
    cfg.IntOpt("sdnmpi-rpc-port", default=6700, min=0, max=65535,
               help="TCP port of the RPC service for MPI jobs (0: no RPC service)"),
    cfg.Opt("sdnmpi-rpc-allow", type=_Networks(), default="",
            help="comma-separated addresses or CIDR networks of RPC clients that may register MPI jobs "
                 "for any hosts (default: none; a client must be on one of the job's hosts, docs/rpc.md)"),
    cfg.IntOpt("sdnmpi-rpc-max-connections", default=256, min=1,
               help="RPC connections open at once; more are answered with an error and closed"),
    cfg.FloatOpt("sdnmpi-rpc-idle-timeout", default=30.0, min=0.1,
                 help="seconds an RPC connection that holds no job may stay silent before it is closed"),
    cfg.FloatOpt("sdnmpi-rpc-frame-timeout", default=10.0, min=0.1,
                 help="seconds for a begun RPC request to arrive in full (and a reply to be taken)"),
    cfg.StrOpt("sdnmpi-operator-token-file", default=DEFAULT_TOKEN_FILE,
               help="file with the operator's bearer token for mutating REST calls (created 0600 with a "
                    "random token if missing)"),
    cfg.FloatOpt("sdnmpi-barrier-timeout", default=5.0, min=0.1,
                 help="seconds to wait for switches to confirm a job's routes"),
    cfg.FloatOpt("sdnmpi-link-capacity", default=0.0, min=0.0,
                 help="bit/s of every switch port, for link utilisation in /metrics and the web view "
                      "(0: each port's speed as the switch reports it)"),
    cfg.FloatOpt("sdnmpi-idle-threshold", default=DEFAULT_THRESHOLD_BPS, min=0.0,
                 help="bit/s: a job whose hosts together send less than this into the fabric for "
                      "--sdnmpi-idle-time seconds loses its traffic routes until its next phase entry or "
                      "traffic op (0: never)"),
    cfg.FloatOpt("sdnmpi-idle-time", default=DEFAULT_QUIET_S, min=0.0,
                 help="seconds a job's traffic must stay under --sdnmpi-idle-threshold to count as idle"),
    cfg.StrOpt("sdnmpi-flow-detection", default=flowdetect.DEFAULT_MODE, choices=flowdetect.MODES,
               help="how elephant flows of jobs that sent no profile or hints are found: none, threshold "
                    "(bytes over a window) or learned (the model file); detected pairs get job routes "
                    "(docs/flows.md)"),
    cfg.FloatOpt("sdnmpi-flow-interval", default=flowdetect.DEFAULT_INTERVAL, min=0.1,
                 help="seconds between polls of the job host pairs' byte counters (flow detection)"),
    cfg.FloatOpt("sdnmpi-flow-span", default=flowdetect.DEFAULT_SPAN, min=0.0,
                 help="seconds each interval the classifiers judge spans, a whole multiple of "
                      "--sdnmpi-flow-interval: at every poll they see each pair's windows of this span ending "
                      "then (sliding windows; e.g. 0.5 s polls, 1 s span: the 1 s model's inputs, a window "
                      "ending at every poll); 0: the interval (no sliding)"),
    cfg.IntOpt("sdnmpi-flow-window", default=flows.DEFAULT_WINDOW, min=1, max=1000,
               help="threshold detection: intervals summed (of --sdnmpi-flow-span, else of the poll interval)"),
    cfg.FloatOpt("sdnmpi-flow-fraction", default=flows.DEFAULT_FRACTION, min=0.001, max=1.0,
                 help="threshold detection: an elephant sends more than this fraction of the host link's "
                      "bytes over the window (the link: --sdnmpi-link-capacity, else 1 Gbit/s)"),
    cfg.StrOpt("sdnmpi-flow-model", default="",
               help="learned detection: the model file (JSON; default: the shipped sdnmpi/flows/model.json); "
                    "an unusable file is logged and the threshold is used"),
    cfg.StrOpt("sdnmpi-flow-router", default=flowdetect.DEFAULT_ROUTER, choices=sorted(PAIR_ROUTERS),
               help="pair router for detected elephants"),
    cfg.IntOpt("sdnmpi-flow-max-pairs", default=DEFAULT_MAX_ENTRIES, min=1,
               help="counting entries (job host pairs) fabric-wide at most; pairs beyond are not counted"),
    cfg.FloatOpt("sdnmpi-flow-hold-share", default=HOLD_SHARE, min=0.0, max=1.0,
                 help="flow detection: a job whose flagged pairs were still busy %g s after their flag "
                      "(flows.hold: HOLD_S) in under this share of its last flags (%d, at least %d judged) is left to "
                      "the default routes until more of them last (short flows such as an all-to-all's); 0: never"
                      % (HOLD_S, HOLD_MEMORY, HOLD_MIN)),
    cfg.BoolOpt("sdnmpi-flow-seed", default=True,
                help="flow detection: plan detected pairs from where they run (their installed or reverse route, "
                     "else their default path under dmodk or single; not ecmp, whose switch hash the controller "
                     "does not know), keeping each there wherever the plan's busiest link allows "
                     "(primitives/seeding.py); --nosdnmpi-flow-seed plans their first routes from scratch"),
    cfg.StrOpt("sdnmpi-flow-log", default="",
               help="flow detection: append every poll's byte counters to this file (JSON lines, for "
                    "sdnmpi-sim train-flows --counter-logs; empty: no log)"),
    cfg.BoolOpt("sdnmpi-elide-default-hops", default=True,
                help="install no job flow for a hop that the switch's default route already forwards to the "
                     "same single port (never against an ECMP group, on a switch without default routes, or "
                     "for a pair another job routes too; controller/jobroutes.py): fewer flow-mods per plan, "
                     "the same paths. Applies to every per-job host-pair route: plan_allreduce plans (Allreduce, "
                     "Allgather, Alltoall, plan-ahead) and traffic routes (traffic/phase ops, detected "
                     "elephants); never to Bcast multicast trees or counting entries. On by default; "
                     "--nosdnmpi-elide-default-hops installs every hop"),
    cfg.BoolOpt("sdnmpi-traffic-reverse-routes", default=True,
                help="route the reverse of every pair a job's traffic plan routes (its TCP ACKs) along the "
                     "reverse of the pair's path, and give a 2-cycle of the demand mutually reverse paths "
                     "where that loads no link more (primitives/reverse.py): on a contention-free plan every "
                     "link then carries at most one flow's data and one flow's ACKs. On by default; "
                     "--nosdnmpi-traffic-reverse-routes leaves reverse pairs to the default routes"),
    cfg.StrOpt("sdnmpi-probe-mac", default="02:5d:4d:50:49:01",
               help="source MAC of the controller's ARP probes for unknown hosts"),
]


@dataclasses.dataclass(frozen=True)
class Settings:
    default_routing: str = "dmodk"
    lldp_interval: float = 1.0
    link_timeout: float = 10.0
    host_hold: float = 30.0
    stats_interval: float = 2.0
    route_delay: float = 0.2
    probe_mac: str = "02:5d:4d:50:49:01"
    rpc_host: str = "0.0.0.0"
    rpc_port: int = 6700
    rpc_allow: str = ""
    rpc_max_connections: int = 256
    rpc_idle_timeout: float = 30.0
    rpc_frame_timeout: float = 10.0
    operator_token_file: str = DEFAULT_TOKEN_FILE
    barrier_timeout: float = 5.0
    link_capacity: float = 0.0
    idle_threshold: float = DEFAULT_THRESHOLD_BPS
    idle_time: float = DEFAULT_QUIET_S
    flow_detection: str = flowdetect.DEFAULT_MODE
    flow_interval: float = flowdetect.DEFAULT_INTERVAL
    flow_span: float = flowdetect.DEFAULT_SPAN
    flow_window: int = flows.DEFAULT_WINDOW
    flow_fraction: float = flows.DEFAULT_FRACTION
    flow_model: str = ""
    flow_router: str = flowdetect.DEFAULT_ROUTER
    flow_max_pairs: int = DEFAULT_MAX_ENTRIES
    flow_hold_share: float = HOLD_SHARE
    flow_log: str = ""
    flow_seed: bool = True
    elide_default_hops: bool = True
    traffic_reverse_routes: bool = True


def register_cli(conf=cfg.CONF):
    """Registers the options as command-line flags (before the command line is parsed)."""
    conf.register_cli_opts(OPTS)


def settings(conf=cfg.CONF):
    """The options' current values. Registers them first if nobody has."""
    try:
        conf.register_opts(OPTS)
    except cfg.DuplicateOptError:  # registered as CLI options already
        pass
    return Settings(**{f.name: getattr(conf, "sdnmpi_" + f.name) for f in dataclasses.fields(Settings)})
