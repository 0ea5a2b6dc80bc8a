"""Per-port counters from periodic OFPPortStatsRequest polls, with throughput between polls."""
import dataclasses

from ryu.lib import dpid as dpid_lib

COUNTERS = ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_dropped", "tx_dropped",
            "rx_errors", "tx_errors")


@dataclasses.dataclass
class PortSample:
    time: float
    counters: dict
    rx_bps: float = 0.0
    tx_bps: float = 0.0


class PortStats:
    def __init__(self):
        self.samples = {}  # (dpid, port) -> PortSample

    def update(self, dpid, stats, now):
        """``stats``: OFPPortStats entries of one reply (objects with the COUNTERS attributes)."""
        for stat in stats:
            key = (dpid, stat.port_no)
            counters = {name: getattr(stat, name) for name in COUNTERS}
            sample = PortSample(now, counters)
            old = self.samples.get(key)
            if old is not None and now > old.time:
                span = now - old.time
                sample.rx_bps = max(0, counters["rx_bytes"] - old.counters["rx_bytes"]) * 8 / span
                sample.tx_bps = max(0, counters["tx_bytes"] - old.counters["tx_bytes"]) * 8 / span
            self.samples[key] = sample

    def forget_switch(self, dpid):
        for key in [k for k in self.samples if k[0] == dpid]:
            del self.samples[key]

    def to_json(self):
        return [dict(dpid=dpid_lib.dpid_to_str(d), port=p, rx_bps=round(s.rx_bps, 1), tx_bps=round(s.tx_bps, 1),
                     **s.counters)
                for (d, p), s in sorted(self.samples.items())]
