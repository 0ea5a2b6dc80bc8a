"""The bench hosts' TCP congestion control (an emulation choice, like bench/emulation.py's).

Mininet's hosts are network namespaces. A namespace other than the first may only choose an
algorithm listed in ``net.ipv4.tcp_allowed_congestion_control`` (a machine-wide list; this machine's
is "reno bbr", its default bbr), so cubic, Linux's default and what a cluster's hosts would run,
needs a place on that list first. `AllowedCongestion` adds it for the bench's lifetime and puts
the list back at teardown; the list only says what unprivileged sockets and namespaces may pick, it
changes no running socket.
"""
ALLOWED = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
AVAILABLE = "/proc/sys/net/ipv4/tcp_available_congestion_control"
CHOICES = ("reno", "cubic", "bbr")


def _read(path):
    with open(path, encoding="ascii") as f:
        return f.read().split()


def _write(path, names):
    with open(path, "w", encoding="ascii") as f:
        f.write(" ".join(names) + "\n")


class AllowedCongestion:
    """``name`` on the allowed list while the bench runs: allow() then restore() (once)."""

    def __init__(self, name, allowed=ALLOWED, available=AVAILABLE):
        self.name, self.allowed, self.available = name, allowed, available
        self.old = None                       # the list before allow(), when allow() changed it

    def allow(self):
        """Adds ``name`` when missing; a name the kernel does not have is a clear error."""
        if self.name not in _read(self.available):
            raise RuntimeError("TCP congestion control %r is not available on this machine (%s: %s)"
                               % (self.name, self.available, " ".join(_read(self.available))))
        names = _read(self.allowed)
        if self.name not in names:
            _write(self.allowed, names + [self.name])
            self.old = names
        return self

    def restore(self):
        old, self.old = self.old, None
        if old is not None:
            _write(self.allowed, old)
