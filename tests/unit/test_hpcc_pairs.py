"""bench/hpcc_pairs.py: rank-pair bytes from `ss -tinpH` output (pure, canned text)."""
import gzip
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "bench"))
import hpcc_pairs  # noqa: E402

# rank 0 (pid 10) connected to rank 1 (pid 11) and rank 2 (pid 12), both accepted on rank 0's
# listener 127.0.0.1:1024 (one local address for two sockets); an orted (pid 99) socket too.
SS = """\
0      0      127.0.0.1:1024 127.0.0.1:40001 users:(("hpcc",pid=10,fd=20))
\t bbr wscale:9,9 rto:200 bytes_sent:500 bytes_acked:501 bytes_received:7001 segs_out:3
0      0      127.0.0.1:40001 127.0.0.1:1024 users:(("hpcc",pid=11,fd=21))
\t bbr wscale:9,9 rto:200 bytes_sent:7000 bytes_acked:7001 bytes_received:501
0      0      127.0.0.1:1024 127.0.0.1:40002 users:(("hpcc",pid=10,fd=22))
\t bbr rto:200 bytes_acked:31 bytes_received:9
0      0      127.0.0.1:40002 127.0.0.1:1024 users:(("hpcc",pid=12,fd=23))
\t bbr rto:200 bytes_acked:9
0      0      127.0.0.1:5000 127.0.0.1:40003 users:(("orted",pid=99,fd=5))
\t bbr rto:200 bytes_acked:1234
0      0      127.0.0.1:40003 127.0.0.1:5000 users:(("hpcc",pid=12,fd=24))
\t bbr rto:200 bytes_acked:4321
"""


def test_pair_bytes_follows_both_ends_of_each_connection_and_skips_non_ranks():
    rank = {10: 0, 11: 1, 12: 2}.get
    assert hpcc_pairs.pair_bytes(SS, rank) == {(0, 1): 501, (1, 0): 7001, (0, 2): 31, (2, 0): 9}
    assert hpcc_pairs.pair_bytes("", rank) == {}


def test_pair_bytes_of_four_processes_over_loopback():
    """`ss -tinpH state established` of four processes (tests/data/ss/tinpH-ranks.txt.gz): each sent
    to every lower one; rank 0 answered rank 1, rank 2 answered rank 3, the others only received.
    A receiving end that sent nothing (no bytes_acked) still names the rank its peer sent to."""
    with gzip.open(os.path.join(os.path.dirname(__file__), os.pardir, "data", "ss", "tinpH-ranks.txt.gz"), "rt") as f:
        text = f.read()
    rank = {28091: 0, 28133: 1, 28134: 2, 28135: 3}.get
    assert hpcc_pairs.pair_bytes(text, rank) == {(1, 0): 1002, (2, 0): 2002, (2, 1): 2003, (3, 0): 3002,
                                                 (3, 1): 3003, (3, 2): 3004, (0, 1): 777, (2, 3): 52}
    assert hpcc_pairs.pair_bytes(text, {28091: 0, 28133: 1}.get) == {(0, 1): 777, (1, 0): 1002}
