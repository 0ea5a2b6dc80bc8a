"""Named OpenFlow constants: table, priorities, cookies and group ids.

Two tables. Table 0 (TABLE_COUNT) counts: flow detection (controller/flowcount.py) puts one
entry per job host pair there on the sender's edge switch; every entry, and the table's miss
entry, goes on to table 1. Everything else sdnmpi installs lives in table 1 (TABLE, routing).
Default routes sit at PRIORITY_ROUTE; per-job routes (Allreduce plans, Bcast trees) go in the band
above it, so they override the defaults for their host pairs and vanish cleanly when the job does.
"""

TABLE_COUNT = 0                    # per host-pair byte counters, then goto TABLE
TABLE = 1                          # routing

# Priorities, lowest first.
PRIORITY_TABLE_MISS = 0            # drop anything not matched below
PRIORITY_IPV4_MISS = 10            # IPv4 to an unknown destination: to the controller (learning)
PRIORITY_DROP_MULTICAST = 20       # broadcast/multicast nobody asked for: dropped at the edge
PRIORITY_ROUTE = 1000              # default per-destination routes (dmodk / ecmp / single)
PRIORITY_JOB_ROUTE = 2000          # per-job host-pair routes (Allreduce plans)
PRIORITY_JOB_MULTICAST = 3000      # per-job multicast trees (Bcast)
PRIORITY_CONTROL = 60000           # LLDP and ARP to the controller
PRIORITY_COUNT = 100               # TABLE_COUNT: a job host pair's counting entry (miss: 0)

# Cookies: the high 32 bits say "sdnmpi", the next 8 the kind, the low 24 an id (e.g. a job).
COOKIE_BASE = 0x5D4D5049 << 32     # "]MPI"
COOKIE_KIND_SHIFT = 24
COOKIE_CONTROL = COOKIE_BASE | (1 << COOKIE_KIND_SHIFT)
COOKIE_ROUTE = COOKIE_BASE | (2 << COOKIE_KIND_SHIFT)
COOKIE_JOB = COOKIE_BASE | (3 << COOKIE_KIND_SHIFT)          # | job id
COOKIE_COUNT = COOKIE_BASE | (4 << COOKIE_KIND_SHIFT)        # | job id: counting entries
COOKIE_KIND_MASK = 0xFFFFFFFF_FF000000
COOKIE_FULL_MASK = 0xFFFFFFFF_FFFFFFFF

# Group ids: ECMP SELECT groups of the default routes, then per-job groups.
GROUP_ECMP_BASE = 0x1000
GROUP_ECMP_MAX = 0xFFFF
GROUP_JOB_BASE = 0x10000

# Ethernet.
ETH_TYPE_IPV4 = 0x0800
ETH_TYPE_ARP = 0x0806
ETH_TYPE_LLDP = 0x88CC
LLDP_MAC_NEAREST_BRIDGE = "01:80:c2:00:00:0e"
MULTICAST_BIT = ("01:00:00:00:00:00", "01:00:00:00:00:00")   # (value, mask) for eth_dst
BROADCAST_MAC = "ff:ff:ff:ff:ff:ff"
