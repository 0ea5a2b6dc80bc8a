"""Who may register an MPI job for which hosts (docs/rpc.md, "Access").

A job names the fabric IPv4 addresses of its ranks' hosts. The controller accepts the `register`
only if every one of them is a host in the discovered topology, and the client's address (the
peer of its RPC connection) is

1. inside an operator allow-list (``--sdnmpi-rpc-allow CIDR,...``: e.g. a batch system's node), or
2. the fabric address of one of the job's hosts (a client that reaches the controller over the
   fabric), or
3. an IPv4 management address that one of the job's hosts advertises in its LLDP frames (our
   lldpd advertises the addresses of every interface of the host, so a host's management-network
   address is known from the frames its fabric port carries).

Rule 3 is sound because the controller attributes an LLDP frame to a host only at the host's own
switch port, and never lets a frame from another port move a host or take its IP
(controller/topology.py). It assumes what every cluster's management network gives: a node cannot
use another node's management address (unprivileged users cannot anyway).

Every later request naming the job must carry its token (controller/jobs.py).
"""
import ipaddress
import logging

LOG = logging.getLogger(__name__)


def parse_networks(items):
    """A tuple of IPv4/IPv6 networks from CIDR strings (a bare address is a /32 or /128);
    ValueError names the bad item."""
    networks = []
    for item in items:
        text = item.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError("%r is not an address or CIDR network" % text) from None
    return tuple(networks)


def peer_address(addr):
    """The IP address (an ipaddress object) of a socket peer ``(host, port, ...)`` or None;
    an IPv4-mapped IPv6 address is returned as IPv4."""
    try:
        ip = ipaddress.ip_address(addr[0])
    except (TypeError, ValueError, IndexError):
        return None
    if ip.version == 6 and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


class RegisterAccess:
    """The rules above; ``allow``: networks from `parse_networks`."""

    def __init__(self, allow=()):
        self.allow = tuple(allow)

    def refusal(self, peer, hosts, topology):
        """None if ``peer`` (an ipaddress object, or None if unknown) may register a job on
        ``hosts`` (IPv4 strings) in ``topology``; otherwise the reason, for the error reply."""
        known = {}
        for ip in hosts:
            if ip not in known:
                known[ip] = topology.host_by_ip(ip)
                if known[ip] is None:
                    return "host %s is not in the topology" % ip
        if peer is None:
            return "client address unknown"
        if any(peer in net for net in self.allow if net.version == peer.version):
            return None
        text = str(peer)
        if text in known or any(text in host.advertised for host in known.values()):
            return None
        return ("client %s is not on one of the job's hosts (neither their fabric address nor a management "
                "address they advertise by LLDP) and not in --sdnmpi-rpc-allow" % text)
