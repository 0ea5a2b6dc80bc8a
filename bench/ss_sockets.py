"""The one reader of `ss -ti` texts for the bench tools (bench/rate_probe_parse.py's ss_tcp,
bench/flowdetect_stalls.py's socket samples, bench/hpcc_pairs.py's rank pairs): each socket of
the text as a record. Reads the forms the tools run: with or without -n, -p, -H and the State
column (``ss -ti state established`` prints none). Pure functions, text in, dicts out."""
import re

UNITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
RATES = ("bbr_bw", "delivery_rate", "pacing_rate")        # bit/s, '4.6M'-style without -n
INFO = {"rtt_ms": re.compile(r"\brtt:([\d.]+)/"), "cwnd": re.compile(r"\bcwnd:(\d+)"),
        "retrans_total": re.compile(r"\bretrans:\d+/(\d+)"), "unacked": re.compile(r"\bunacked:(\d+)"),
        "bbr_bw": re.compile(r"\bbbr:\(bw:([\d.]+[KMG]?)bps"), "bbr_mrtt_ms": re.compile(r"\bmrtt:([\d.]+)"),
        "delivery_rate": re.compile(r"\bdelivery_rate ([\d.]+[KMG]?)bps"),
        "bytes_acked": re.compile(r"\bbytes_acked:(\d+)"), "minrtt": re.compile(r"\bminrtt:([\d.]+)"),
        "pacing_rate": re.compile(r"\bpacing_rate ([\d.]+[KMG]?)bps")}
USERS = re.compile(r"\busers:\(\(\"(?P<process>[^\"]*)\",pid=(?P<pid>\d+),")


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
    users = USERS.search(line)
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
