"""The ACK rule offline (flows/acks.py, bench/flowdetect_acks.py): busy pairs of a counter log split
per poll into data and ACK streams by their payload, against the pattern program's truth, on logs
built here with known labels. Pure Python, no lock."""
import gzip
import json

import numpy as np
import pytest

import bench_setup  # noqa: F401  (puts bench/ on sys.path)
import flowdetect_acks
import test_reroute
from test_flowdetect import Tcp   # data in full frames, one ACK_FRAME per two of them on the reverse pair
from sdnmpi import flows
from sdnmpi.flows import acks, counterlog
from sdnmpi.primitives import fattree

LINK = 5e6          # bytes/s of a host link (the bench's 40 Mbit/s)
IP = [fattree.host_ip(n) for n in range(1, 17)]


A, B, C, D, E, F = IP[0], IP[4], IP[8], IP[12], IP[2], IP[6]
# a -> b at 90 % (b -> a: its ACKs, 2 % of the link); d -> c at 90 % and c -> d at 5 % (a halo pair:
# data plus d -> c's ACKs, 7 % in bytes, under a tenth of d -> c's); e -> f at 90 % (its ACKs f -> e)
SENT = {(A, B): int(0.9 * LINK), (D, C): int(0.9 * LINK), (C, D): int(0.05 * LINK), (E, F): int(0.9 * LINK)}
TRUTH = {(A, B): True, (B, A): False, (C, D): True, (D, C): True, (E, F): True, (F, E): False}


def write(path, polls=3, no_packets=(), steps=None):
    """A version 2 log of ``polls`` intervals of SENT; the switch of the pairs ``no_packets`` keeps
    no packet count."""
    log = flows.CounterLog(str(path), interval_s=1.0, link_rate_Bps=LINK, **({"steps": steps} if steps else {}))
    tcp = Tcp()
    for t in range(polls):
        tcp.send(SENT)
        log.poll(t + 1, dict(tcp.bytes), {}, {}, packets={p: n for p, n in tcp.packets.items() if p not in no_packets})
    log.close()
    return path.read_text().splitlines()


def test_the_payload_rule_and_the_byte_ratio():
    floor = acks.BUSY_SHARE * LINK
    assert acks.carries_data(200_000, 1500, 4_500_000, floor)       # 101 kB of payload (2 % of the link)
    assert not acks.carries_data(200_000, 2300, 4_500_000, floor)   # 48 kB: under 1 % of the link
    assert not acks.carries_data(100_000, 1515, 4_500_000, floor)   # 66-byte frames only: ACKs
    assert acks.carries_data(60_000, None, 500_000, floor)          # no packets: >= a tenth of the reverse
    assert not acks.carries_data(60_000, None, 700_000, floor)


def test_each_poll_splits_its_busy_pairs_and_the_errors_count_both_ways(tmp_path):
    lines = write(tmp_path / "c.jsonl")
    header, pairs, counts, packets = counterlog.read_packets(lines)
    polls = acks.split_polls(pairs, counts, packets, LINK * header["interval_s"])
    assert len(polls) == 3
    for poll in polls:
        assert sorted(poll["data"]) == sorted([(A, B), (C, D), (D, C), (E, F)])
        assert sorted(poll["acks"]) == sorted([(B, A), (F, E)]) and poll["unknown_packets"] == []
    assert acks.compare(polls, TRUTH) == {"busy": 18, "data": 12, "acks": 6, "true_data": 12, "true_acks": 6,
                                          "unknown": 0, "data_as_acks": 0, "acks_as_data": 0, "unknown_packets": 0}
    # the byte ratio takes the halo pair c -> d for ACKs, every poll
    ratio = acks.compare(acks.split_polls(pairs, counts, packets, LINK, "bytes"), TRUTH)
    assert (ratio["data_as_acks"], ratio["acks_as_data"], ratio["unknown_packets"]) == (3, 0, 18)
    # wrong truth is counted as such, and pairs without one as unknown
    wrong = {**TRUTH, (B, A): True, (C, D): False}
    del wrong[(E, F)]
    got = acks.compare(polls, wrong)
    assert (got["data_as_acks"], got["acks_as_data"], got["unknown"]) == (3, 3, 3)
    with pytest.raises(ValueError):
        acks.split_polls(pairs, counts, packets, LINK, "guess")


def test_a_pair_without_packet_counts_is_judged_by_the_byte_ratio(tmp_path):
    lines = write(tmp_path / "c.jsonl", no_packets={(C, D)})
    header, pairs, counts, packets = counterlog.read_packets(lines)
    assert np.isnan(packets[pairs.index((C, D))]).all()
    polls = acks.split_polls(pairs, counts, packets, LINK)
    assert all(p["unknown_packets"] == [(C, D)] and (C, D) in p["acks"] for p in polls)
    assert acks.compare(polls, TRUTH)["data_as_acks"] == 3


def test_the_truth_of_the_bench_patterns():
    assert flowdetect_acks.dims_create(16, 3) == [4, 2, 2] and flowdetect_acks.dims_create(16, 2) == [4, 4]
    assert flowdetect_acks.dims_create(12, 3) == [3, 2, 2]
    # perm 7: 14 pairs send (2 fixed points); their reverse pairs only carry ACKs unless they send
    perm = flowdetect_acks.truth(["perm", "7", "4194304"])
    assert sum(perm.values()) == 14 and (IP[0], IP[13]) in perm and perm[IP[0], IP[13]]
    assert perm[IP[13], IP[0]] is False
    # shift 4: r -> r + 4 data, r + 4 -> r ACKs; shift 8: both ways data
    shift = flowdetect_acks.truth(["shift", "4", "1"])
    assert shift[IP[0], IP[4]] and shift[IP[4], IP[0]] is False and len(shift) == 32
    assert set(flowdetect_acks.truth(["shift", "8", "1"]).values()) == {True}
    # halo3d: every neighbour pair data both ways; the pairs across edge switches are the 48 of
    # the controller's view (test_reroute.halo3d)
    halo = flowdetect_acks.truth(["halo3d", "1"])
    assert set(halo.values()) == {True}
    mac = {fattree.host_mac(n): fattree.host_ip(n) for n in range(1, 17)}
    across = {(mac[f.src], mac[f.dst]) for f in test_reroute.halo3d()}
    assert across <= set(halo) and len(halo) == 16 * 4    # 4 x 2 x 2: x gives 2 neighbours, y and z 1 each
    # the bench's two phases: no pair changes roles between them, so each keeps its phase's truth
    both = flowdetect_acks.truth(["shift", "4", "1", "pause", "3000", "perm", "7", "1"])
    assert not {p for p in shift if p in perm and shift[p] != perm[p]} and both == {**shift, **perm}
    # a pair that sends in one step and only carries ACKs in another has no truth: shift 12 sends
    # on every reverse pair of shift 4
    assert flowdetect_acks.truth(["shift", "4", "1", "shift", "12", "1"]) == {}
    assert len(flowdetect_acks.truth(["shift", "4", "1", "shift", "4", "1"])) == 32
    with pytest.raises(ValueError):
        flowdetect_acks.step_pairs(["spin", "1"])


def test_the_script_reports_the_rule_on_a_folder_of_logs(tmp_path, capsys):
    folder = tmp_path / "flowdetect-x" / "counters"
    folder.mkdir(parents=True)
    # the bench's shift 4 from host 1 (a -> b: 10.0.0.1 -> 10.0.0.5) and a pair it does not name
    lines = write(tmp_path / "plain.jsonl", steps=["shift", "4", "1"])
    with gzip.open(folder / "shift-threshold-1.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    assert flowdetect_acks.main([str(tmp_path / "flowdetect-x"), "--json", "--polls"]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out[out.index("{"):])
    got = doc["flowdetect-x/shift-threshold-1.jsonl.gz"]["payload"]
    # shift 4 names a -> b (data), b -> a (ACKs), e -> f? 10.0.0.3 -> 10.0.0.7: data, its reverse
    # ACKs; c -> d (9 -> 13) data, d -> c: ACKs by the pattern, though it sends here: an error
    assert (got["busy"], got["true_acks"], got["true_data"], got["unknown"]) == (18, 9, 9, 0)
    assert (got["data_as_acks"], got["acks_as_data"]) == (0, 3)
    assert "poll 0: data " in out and "13>9!" in out
    assert flowdetect_acks.main([str(folder)]) == 0
    assert "| total | 18 | 9 | 9 | 0 | 0 | 3 | 0 | 3 | 3 |" in capsys.readouterr().out
    (folder / "bad.jsonl").write_text(lines[0] + "\n{oops\n")
    assert flowdetect_acks.main([str(folder)]) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl: line 2: not JSON" in err and err.count("\n") == 1


def test_a_log_whose_steps_it_does_not_know_is_one_line_naming_it(tmp_path, capsys):
    """The pattern program's steps are read with the log (counterlog.from_file): a step it does not
    know is a CounterLogError like a bad line, named by the file, and the script's one line."""
    lines = write(tmp_path / "spin.jsonl", steps=["spin", "1"])
    with pytest.raises(counterlog.CounterLogError, match="unknown step 'spin'"):
        flowdetect_acks.check(lines)
    with pytest.raises(counterlog.CounterLogError, match="invalid literal"):
        flowdetect_acks.check(write(tmp_path / "x.jsonl", steps=["shift", "x", "1"]))
    (tmp_path / "x.jsonl").unlink()
    assert flowdetect_acks.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err == f"flowdetect_acks: {tmp_path / 'spin.jsonl'}: unknown step 'spin'\n"


def test_a_data_interval_just_over_the_busy_floor_needs_a_lower_payload_floor():
    """A pair at 1.03 % of the link in full frames has 0.98 % of it in payload: under the busy floor,
    so a payload floor at the busy one calls it ACKs; the controller's, half the busy one
    (PAYLOAD_SHARE), calls it data (an ACK stream's payload stays about 0)."""
    frames = int(0.0103 * LINK) // 1514             # 34 frames: 1.03 % of the link, 0.98 % payload
    counts = np.array([[frames * 1514.0], [0.02 * LINK]])
    packets = np.array([[frames], [-(-0.02 * LINK // acks.ACK_FRAME)]])
    pairs = [(A, B), (C, D)]
    assert acks.split_polls(pairs, counts, packets, LINK, payload_share=acks.BUSY_SHARE)[0]["acks"] == pairs
    assert acks.PAYLOAD_SHARE == acks.BUSY_SHARE / 2
    half = acks.split_polls(pairs, counts, packets, LINK)[0]
    assert half["data"] == [(A, B)] and half["acks"] == [(C, D)]


@pytest.mark.parametrize("frame", [66, 78, 86, 94])
def test_ack_streams_with_sack_blocks_carry_no_data(frame):
    """Pure ACKs after a loss or a route change carry SACK blocks (up to 40 bytes of TCP options):
    an ACK stream of such frames at 1-3 % of the link is no data pair, at any frame size a pure ACK
    can have (the 5 Mbit/s runs' misread streams: 151 frames of 86.8 bytes on average)."""
    link = 625000.0
    for share in (0.01, 0.02, 0.03):
        packets = int(share * link // frame)
        assert not acks.carries_data(packets * frame, packets, 0.9 * link, acks.PAYLOAD_SHARE * link)


def test_data_pairs_just_over_the_busy_line_still_carry_data():
    """Full 1514-byte frames at the busy line (1 % of the link), and a halo pair at 5 % with its
    reverse's ACKs mixed in (2.2 % of the link in bare ACKs): both carry data."""
    link = 625000.0
    full = -(-int(acks.BUSY_SHARE * link) // 1514)
    assert acks.carries_data(full * 1514, full, 0, acks.PAYLOAD_SHARE * link)
    halo, ack_frames = int(0.05 * link) // 1514, int(0.022 * link) // 66
    assert acks.carries_data(halo * 1514 + ack_frames * 66, halo + ack_frames, 0.9 * link, acks.PAYLOAD_SHARE * link)
