"""One timed TCP transfer, for bench/sim_validate.py (run inside Mininet hosts).

    tcp_transfer.py recv PORT [RCVBUF] -> prints {"bytes": N, "first": T, "eof": T} and exits
    tcp_transfer.py send IP PORT BYTES START_AT

The sender waits until ``time.monotonic() == START_AT`` (CLOCK_MONOTONIC is one clock for all
network namespaces of the machine), connects and writes BYTES; the receiver reads until end of
stream and reports when the last byte arrived. Unlike iperf3, whose server stops counting when the
client's end-of-test message overtakes data still queued on the path, the end here is the last
byte delivered. RCVBUF (bytes) caps the receive window: the emulated links queue up to 1000
packets, and a window that fills such a queue ends in a burst of losses that costs a short
transfer seconds of recovery; a capped window keeps the queue short and the link busy.
"""
import json
import socket
import sys
import time

CHUNK = 1 << 16


def recv(port, rcvbuf=None):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as srv:
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if rcvbuf:  # before listen(): accepted sockets inherit it, and the window scale with it
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        srv.bind(("0.0.0.0", port))
        srv.listen(1)
        conn, _ = srv.accept()
        total, first = 0, None
        with conn:
            while True:
                data = conn.recv(CHUNK)
                if not data:
                    break
                if first is None:
                    first = time.monotonic()
                total += len(data)
            eof = time.monotonic()
    print(json.dumps({"bytes": total, "first": first, "eof": eof}), flush=True)


def send(ip, port, nbytes, start_at):
    delay = start_at - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    block = b"\0" * CHUNK
    with socket.create_connection((ip, port), timeout=60) as conn:
        left = nbytes
        while left > 0:
            conn.sendall(block[:min(left, CHUNK)])
            left -= min(left, CHUNK)
        conn.shutdown(socket.SHUT_WR)
        conn.recv(1)  # the receiver closes once it has read everything


def main(argv):
    if len(argv) in (2, 3) and argv[0] == "recv":
        recv(int(argv[1]), int(argv[2]) if len(argv) == 3 else None)
    elif len(argv) == 5 and argv[0] == "send":
        send(argv[1], int(argv[2]), int(argv[3]), float(argv[4]))
    else:
        print(__doc__.splitlines()[2:4], file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
