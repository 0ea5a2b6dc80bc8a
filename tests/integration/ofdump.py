"""Reads what a (userspace) OVS bridge really has installed: flows, groups, port counters."""
import re
import subprocess

FLOW_RE = re.compile(r"cookie=(?P<cookie>0x[0-9a-f]+), .*?n_packets=(?P<packets>\d+), n_bytes=(?P<bytes>\d+), .*?priority=(?P<priority>\d+)"
                     r"(?:,(?P<match>\S*))? actions=(?P<actions>\S+)")


def _ofctl(*args):
    return subprocess.run(["ovs-ofctl", "-O", "OpenFlow13", *args], check=True, capture_output=True,
                          text=True).stdout


def flows(bridge):
    """[{cookie, priority, match: {field: value}, actions: str, packets, bytes}] of table 0."""
    out = []
    for line in _ofctl("dump-flows", bridge).splitlines():
        m = FLOW_RE.search(line)
        if not m:
            continue
        match = {}
        for part in (m.group("match") or "").split(","):
            if part:
                key, _, value = part.partition("=")
                match[key] = value
        out.append({"cookie": int(m.group("cookie"), 16), "priority": int(m.group("priority")), "match": match, "actions": m.group("actions"),
                    "packets": int(m.group("packets")), "bytes": int(m.group("bytes"))})
    return out


def routes(bridge, priority):
    """{dst ip: actions} of the IPv4 destination routes at ``priority``."""
    return {f["match"]["nw_dst"]: f["actions"] for f in flows(bridge)
            if f["priority"] == priority and "nw_dst" in f["match"] and "nw_src" not in f["match"]}


def groups(bridge):
    """{group id: (type, [output port, ...])}."""
    out = {}
    for line in _ofctl("dump-groups", bridge).splitlines():
        m = re.search(r"group_id=(\d+),type=(\w+)", line)
        if m:
            out[int(m.group(1))] = (m.group(2), [int(p) for p in re.findall(r"actions=output:(\d+)", line)])
    return out


def port_tx_bytes(bridge):
    """{port number: tx bytes}."""
    text = _ofctl("dump-ports", bridge)
    return {int(port): int(tx) for port, tx in
            re.findall(r"port\s+(\d+): rx pkts=\d+, bytes=\d+.*?\n\s+tx pkts=\d+, bytes=(\d+)", text)}
