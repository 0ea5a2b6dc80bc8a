"""Text renderings of the controller's JSON answers (tables, rates). Pure functions: JSON in,
lines out. They take answers of the shapes in ctl/shapes.py (sdnmpi-ctl checks each answer
before it renders it), so whatever they raise is a bug of their own."""
import logging

LOG = logging.getLogger(__name__)

def table(headers, rows):
    """Lines of a left-aligned table (numbers right-aligned)."""
    rows = [["-" if v is None else str(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    numeric = [all(_is_number(r[i]) for r in rows) and bool(rows) for i in range(len(headers))]

    def line(cells, head=False):
        return "  ".join((c.rjust(w) if numeric[i] and not head else c.ljust(w))
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [line(headers, head=True)] + [line(r) for r in rows]


def _is_number(text):
    words = text.split()
    try:
        float(words[0] if words else "x")   # a cell of spaces (a name " ") is no number
    except ValueError:
        return text == "-"
    return True


def rate(bps):
    """A bit rate, human readable."""
    for unit, scale in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= scale:
            return "%.1f %s" % (bps / scale, unit)
    return "%.0f bit/s" % bps


def percent(ratio):
    return None if ratio is None else "%.1f%%" % (100 * ratio)


def end(e):
    return e["host"] if "host" in e else "%s:%s" % (e["dpid"], e["port"])


def link_rows(links):
    return [[end(l["a"]), end(l["b"]), rate(l["bps"][0]), rate(l["bps"][1]), percent(l["utilization"])]
            for l in links]


LINK_HEADERS = ["A", "B", "A->B", "B->A", "UTIL"]


def busiest(links, top):
    return sorted(links, key=lambda l: (-max(l["bps"]), l["id"]))[:top]


def topology(view):
    switches, hosts = view["switches"], view["hosts"]
    fabric_links = [l for l in view["links"] if l["kind"] == "fabric"]
    lines = ["Switches (%d)" % len(switches)]
    lines += table(["DPID", "TIER", "PORTS", "FLOWS", "GROUPS"],
                   [[s["dpid"], s["tier"], len(s["ports"]), s["flows"], s["groups"]] for s in switches])
    lines += ["", "Links (%d)" % len(fabric_links)]
    lines += table(LINK_HEADERS, link_rows(fabric_links))
    lines += ["", "Hosts (%d)" % len(hosts)]
    lines += table(["NAME", "IP", "MAC", "SWITCH", "PORT", "SOURCE"],
                   [[h["name"], h["ip"], h["mac"], h["dpid"], h["port"], h["source"]] for h in hosts])
    return lines


def _ranks(hosts):
    ranks = {}
    for rank, ip in enumerate(hosts):
        ranks.setdefault(ip, []).append(rank)
    return ranks


def _rank_list(ranks):
    return ",".join(str(r) for r in ranks)


def jobs(job_list):
    rows = [[j["job"], len(j["hosts"]), len(set(j["hosts"])), len(j["comms"]), len(j["trees"]), len(j["routes"]),
             "%g s" % j["lease_s"]] for j in job_list]
    return ["Jobs (%d)" % len(job_list)] + table(["JOB", "RANKS", "HOSTS", "PLANS", "TREES", "FLOWS", "LEASE"], rows)


def job(detail):
    lines = ["Job %d: %d ranks on %d hosts, lease %g s" % (detail["job"], len(detail["hosts"]),
                                                           len(set(detail["hosts"])), detail["lease_s"])]
    lines += table(["HOST", "RANKS"], [[ip, _rank_list(r)] for ip, r in sorted(_ranks(detail["hosts"]).items())])
    lines += ["", "Allreduce plans (%d)" % len(detail["comms"])]
    lines += table(["COMM", "PLANNER", "STEPS", "FLOWS", "MAX LOAD/STEP", "LOWER BOUND"],
                   [[c, p["planner"], len(p.get("steps", [])), p["flows"], _loads(p["max_load"]),
                     _loads(p["lower_bound"])] for c, p in sorted(detail["comms"].items(), key=lambda kv: int(kv[0]))])
    lines += ["", "Bcast trees (%d)" % len(detail["trees"])]
    lines += table(["COMM", "ROOT", "GROUP", "TOP", "SWITCHES"],
                   [[t["comm"], t["root"], "%s:%d" % (t["group"], t["port"]), t["top"], len(t["switches"])]
                    for t in detail["trees"]])
    per_switch = {}
    for r in detail["routes"]:
        per_switch.setdefault(r["dpid"], []).append("%s -> %s  output:%d" % (r["src"], r["dst"], r["port"]))
    for t in detail["trees"]:
        for dpid, ports in t["switches"].items():
            per_switch.setdefault(dpid, []).append("udp %s -> %s:%d  group:%d (ALL) output:%s" % (
                t["root"], t["group"], t["port"], t["group_id"], ",".join(str(p) for p in ports)))
    total = sum(len(flows) for flows in per_switch.values())
    lines += ["", "Flows per switch (%d flows on %d switches)" % (total, len(per_switch))]
    for dpid in sorted(per_switch):
        lines.append("%s  %d flows" % (dpid, len(per_switch[dpid])))
        lines += ["    " + flow for flow in per_switch[dpid]]
    return lines


def _loads(values):
    return " ".join(str(v) for v in values) or None


def routing(answer):
    return ["default routing: %s (policies: %s)" % (answer["routing"], ", ".join(answer["policies"]))]


def watch(view, top=5):
    c = view["counters"]
    fabric_links = [l for l in view["links"] if l["kind"] == "fabric"]
    lines = ["sdnmpi  routing %s   switches %d  links %d  hosts %d  jobs %d" % (
        view["routing"], len(view["switches"]), len(fabric_links), len(view["hosts"]), len(view["jobs"])),
        "packet-ins %d  RPC requests %d (errors %d)  OpenFlow errors %d  route recomputes %d" % (
            c["packet_in"]["total"], c["rpc"]["requests"], c["rpc"]["errors"], c["switch_errors"],
            c["route_recomputes"]), ""]
    lines += ["Busiest links"] + table(LINK_HEADERS, link_rows(busiest(view["links"], top)))
    lines += ["", "Jobs (%d)" % len(view["jobs"])]
    lines += table(["JOB", "RANKS", "HOSTS", "PLANS", "TREES", "FLOWS"],
                   [[j["job"], len(j["hosts"]), len(j["ranks"]), len(j["comms"]), j["trees"], j["flows"]]
                    for j in view["jobs"]])
    return lines
