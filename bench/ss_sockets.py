"""The one reader of `ss` texts for the bench tools: `sockets` reads `ss -ti` (bench/rate_probe_parse.py's
ss_tcp, bench/flowdetect_stalls.py's socket samples, bench/hpcc_pairs.py's rank pairs), each socket of
the text as a record, in the forms the tools run: with or without -n, -p, -H and the State column
(``ss -ti state established`` prints none); `packet_sockets` reads `ss -0 -m -p` (the packet sockets
of bench/rate_probe_parse.py's drops and bench/ovs_sendbuf.py's send socket). Pure functions, text in,
dicts out."""
import re

UNITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
RATES = ("bbr_bw", "delivery_rate", "pacing_rate")        # bit/s, '4.6M'-style without -n
INFO = {"rtt_ms": re.compile(r"\brtt:([\d.]+)/"), "cwnd": re.compile(r"\bcwnd:(\d+)"),
        "retrans_total": re.compile(r"\bretrans:\d+/(\d+)"), "unacked": re.compile(r"\bunacked:(\d+)"),
        "bbr_bw": re.compile(r"\bbbr:\(bw:([\d.]+[KMG]?)bps"), "bbr_mrtt_ms": re.compile(r"\bmrtt:([\d.]+)"),
        "delivery_rate": re.compile(r"\bdelivery_rate ([\d.]+[KMG]?)bps"),
        "bytes_acked": re.compile(r"\bbytes_acked:(\d+)"), "minrtt": re.compile(r"\bminrtt:([\d.]+)"),
        "pacing_rate": re.compile(r"\bpacing_rate ([\d.]+[KMG]?)bps")}
USER = re.compile(r"\(\"(?P<process>[^\"]*)\",pid=(?P<pid>\d+),fd=(?P<fd>\d+)\)")
PACKET = re.compile(r"^(?P<netid>p_\S+)\s+\d+\s+\d+\s+(?P<local>\S+)\s+(?P<peer>\S+)\s+(?:users:\((?P<users>.*?)\)\s+)?"
                    r"skmem:\((?P<mem>[^)]*)\)", re.M)


def rate_value(text):
    """'4.5M'-style numbers of ss ('4.5Mbps' without its 'bps') in units."""
    return float(text[:-1]) * UNITS[text[-1]] if text[-1] in UNITS else float(text)


def _head(line):
    """The socket a line of ss starts ({state, recv_q, send_q, local, peer, process, pid}: state
    None without a State column, process and pid None without -p), or None (a header line)."""
    words = line.split()
    state = words.pop(0) if words and not words[0].isdigit() else None
    if len(words) < 4 or not words[0].isdigit() or not words[1].isdigit():
        return None
    users = USER.search(line)            # -p: users:(("process",pid=P,fd=F),...), the first
    return {"state": state, "recv_q": float(words[0]), "send_q": float(words[1]), "local": words[2],
            "peer": words[3], "process": users["process"] if users else None,
            "pid": int(users["pid"]) if users else None}


def info_fields(info):
    """{field: number} of INFO found in a socket's information text (-i): rtt_ms (smoothed),
    cwnd, retrans_total, unacked, bbr_bw, bbr_mrtt_ms, delivery_rate, bytes_acked, minrtt (ms),
    pacing_rate; the rates in bit/s."""
    out = {}
    for name, rx in INFO.items():
        m = rx.search(info)
        if m:
            out[name] = rate_value(m.group(1)) if name in RATES else float(m.group(1))
    return out


def sockets(text):
    """[record] of each socket in an ``ss -ti`` text, in order: `_head`'s fields, "info" (its
    indented lines' text, "" without -i), "cc" (the congestion control: the information's first
    word, None without one) and `info_fields`. Lines that start no socket (headers, other text)
    end the socket before them."""
    out, sock, info = [], None, []

    def close():
        if sock is not None:
            text_ = " ".join(info)
            words = text_.split()
            out.append(dict(sock, info=text_, cc=words[0] if words else None, **info_fields(text_)))

    for line in text.splitlines():
        if line[:1].isspace():
            if sock is not None:
                info.append(line.strip())
            continue
        close()
        sock, info = _head(line), []
    close()
    return out


def packet_sockets(text):
    """[{netid, local, peer, users: [(process, pid, fd)], skmem: {field: number}}] of each packet
    socket with its memory in an ``ss -0 -m [-p]`` text, in order: local is "*:DEV" for a socket
    bound to interface DEV, "[0]:*" for one bound to none; skmem's d counts the packets it dropped,
    t the bytes charged to its send buffer, tb that buffer's size."""
    return [{"netid": m["netid"], "local": m["local"], "peer": m["peer"],
             "users": [(u["process"], int(u["pid"]), int(u["fd"])) for u in USER.finditer(m["users"] or "")],
             "skmem": {k: int(v) for k, v in re.findall(r"([a-z]+)(\d+)", m["mem"])}} for m in PACKET.finditer(text)]
