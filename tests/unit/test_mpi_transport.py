"""bench/mpi_transport.py (the job-routing benches' Open MPI transport settings) and
bench/jobroute_rate.py's --mca-variant runs; no Mininet, no MPI (the MPI run is faked)."""
import types

import pytest

import bench_setup  # noqa: F401  (bench/ on sys.path)
import jobroute_rate  # noqa: E402
import jobroute_rate_md  # noqa: E402
import mpi_transport  # noqa: E402


def test_parse_variant_gives_the_name_and_its_parameters():
    assert mpi_transport.parse_variant("frag:btl_tcp_rdma_pipeline_frag_size=32768,btl_tcp_sndbuf=65536") == (
        "frag", [("btl_tcp_rdma_pipeline_frag_size", "32768"), ("btl_tcp_sndbuf", "65536")])
    assert mpi_transport.parse_variant("default:") == ("default", [])


@pytest.mark.parametrize("text", ["nocolon", ":btl_tcp_sndbuf=1", "Upper:btl_tcp_sndbuf=1", "a+b:x=1",
                                  "ok:btl=self", "ok:novalue", "ok:btl_tcp_if_include=10.0.0.0/8"])
def test_parse_variant_rejects_bad_names_and_reserved_or_malformed_parameters(text):
    with pytest.raises(ValueError):
        mpi_transport.parse_variant(text)


def test_parse_variants_defaults_to_one_unnamed_run_and_rejects_repeats():
    assert mpi_transport.parse_variants([]) == [("", [])]
    assert [n for n, _m in mpi_transport.parse_variants(["a:", "b:btl_tcp_sndbuf=1"])] == ["a", "b"]
    for items, base in ((["a:", "a:x=1"], ()), (["a:x=1,x=2"], ()), (["a:x=1"], [("x", "2")])):
        with pytest.raises(ValueError):
            mpi_transport.parse_variants(items, base)


def test_jobroute_rate_options_and_run_keys():
    args = jobroute_rate.parse_args(["--mca-variant", "default:", "--mca-variant", "buf:btl_tcp_sndbuf=65536"])
    assert args.variants == [("default", []), ("buf", [("btl_tcp_sndbuf", "65536")])]
    for bad in (["--mca-variant", "x"], ["--ompi-mca", "btl_tcp_sndbuf=1", "--mca-variant", "a:btl_tcp_sndbuf=2"]):
        with pytest.raises(SystemExit) as exc:
            jobroute_rate.parse_args(bad)
        assert exc.value.code == 2
    assert jobroute_rate.run_key("mpi-sdn-optimal", "spin") == "mpi-sdn-optimal"
    assert jobroute_rate.run_key("mpi-sdn-optimal", "sleep", "buf") == "mpi-sdn-optimal+sleep+buf"
    assert jobroute_rate.run_key("mpi-dmodk", "spin", "buf") == "mpi-dmodk+buf"


class FakeBench:
    def __init__(self):
        self.spec = {"hosts": 16, "name": "k4", "shift": 9, "perm": 12}
        self.fabric = types.SimpleNamespace(mgmt=types.SimpleNamespace(root_ip="172.31.0.1"))
        self.ports = {"rpc": 1}
        self.mca = [("pml", "ob1")]


def test_measure_runs_every_kind_once_per_variant_with_its_parameters(monkeypatch):
    seen = []

    def fake_run(bench, hosts, argv, env, lib, options=(), mca=None):
        assert bench.mca == [("pml", "ob1")]              # passed down, never swapped in
        seen.append(list(mca))
        secs = 4.0 if ("btl_tcp_sndbuf", "65536") in mca else 8.0
        out = "".join("traffic_patterns: pattern=%s bytes=2500000 reps=2 ranks=16 seconds=%.1f\n" % (p, secs)
                      for p in ("shift", "perm")) + "traffic_patterns: ranks=16 ok seconds=9.0\n"
        return 0, out, 9.5

    monkeypatch.setattr(jobroute_rate, "pattern_run", fake_run)
    args = jobroute_rate.parse_args(["--rates", "5", "--seconds", "8", "--kinds", "mpi-sdn-optimal,mpi-dmodk",
                                     "--mca-variant", "default:", "--mca-variant", "buf:btl_tcp_sndbuf=65536"])
    bench = FakeBench()
    out = jobroute_rate.measure(bench, 5.0, {"bench": "t.tar.gz"}, args)
    assert sorted(out) == ["mpi-dmodk+buf", "mpi-dmodk+default", "mpi-sdn-optimal+buf", "mpi-sdn-optimal+default"]
    assert seen == [[("pml", "ob1")], [("pml", "ob1"), ("btl_tcp_sndbuf", "65536")]] * 2
    assert bench.mca == [("pml", "ob1")]                  # the bench's own settings are never changed
    assert out["mpi-sdn-optimal+buf"]["variant_mca"] == {"btl_tcp_sndbuf": "65536"}
    assert out["mpi-sdn-optimal+buf"]["shift"] == pytest.approx(2500000 * 2 * 8 / 4.0 / 1e6 / 5.0)
    assert out["mpi-sdn-optimal+default"]["perm"] == pytest.approx(2500000 * 2 * 8 / 8.0 / 1e6 / 5.0)


def test_links_table_names_the_idle_senders():
    ex = {"max_link_flows": 1.04, "links_over_1_2": {}, "host_start_s": [0.0, 0.2], "host_done_s": [4.0, 8.2],
          "idle_senders_s": {"h5": 4.2, "h9": 0.2}}
    quiet = dict(ex, idle_senders_s={"h3": 0.4})
    results = {"rates": {"5.0": [{"mpi-sdn-optimal+buf": {"links": {"exchanges": [quiet, ex]}}}]}}
    text = jobroute_rate_md.links_markdown(results)
    assert "| 5.0 | 1 | mpi-sdn-optimal+buf | perm | 1.04 | - | 0.0-0.2 | 4.0-8.2 | h5 4.2 |" in text
    assert "| 5.0 | 1 | mpi-sdn-optimal+buf | shift | 1.04 | - | 0.0-0.2 | 4.0-8.2 | none |" in text


def test_merged_lets_later_entries_replace_same_named_ones():
    base = [("btl_tcp_flags", "0x139"), ("btl_tcp_sndbuf", "32768")]
    assert mpi_transport.merged(base, [("btl_tcp_sndbuf", "0"), ("pml", "ob1")]) == [
        ("btl_tcp_flags", "0x139"), ("btl_tcp_sndbuf", "0"), ("pml", "ob1")]
    assert mpi_transport.merged(base, []) == base


def test_every_transport_passes_the_harness_rules_and_the_default_is_bounded():
    for name, (mca, why) in mpi_transport.TRANSPORTS.items():
        assert mpi_transport.parse_variant("%s:%s" % (name, ",".join("%s=%s" % kv for kv in mca)))[1] == list(mca)
        assert why
    settings = dict(mpi_transport.TRANSPORTS["bounded"][0])
    assert int(settings["btl_tcp_flags"], 16) & 0x2 == 0          # no PUT: the send/receive pipeline
    assert int(settings["btl_tcp_flags"], 16) | 0x2 == 0x13b      # otherwise Open MPI 4.1's flags
    assert mpi_transport.DEFAULT_TRANSPORT == "bounded"


def test_route_bench_runs_the_chosen_transport_with_extra_mca_over_it():
    import argparse  # pylint: disable=import-outside-toplevel
    import bench_jobroute_mininet  # noqa: E402  pylint: disable=import-outside-toplevel
    args = bench_jobroute_mininet.parse_args(["--fabrics", "k4"])
    assert args.mpi_transport == "bounded"
    rec = mpi_transport.record(args)
    assert rec["name"] == "bounded" and rec["mca"] == dict(mpi_transport.TRANSPORTS["bounded"][0]) and rec["why"]
    with pytest.raises(SystemExit) as exc:
        bench_jobroute_mininet.parse_args(["--mpi-transport", "fast"])
    assert exc.value.code == 2
    ns = argparse.Namespace(prefix="zz", mgmt_subnet="172.28.0.0/16", k4_bw=5.0, seed=7, mpi_transport="bounded",
                            mca=[("btl_tcp_max_send_size", "8192"), ("btl_tcp_sndbuf", "65536")])
    bench = bench_jobroute_mininet.RouteBench(bench_jobroute_mininet.fabric_spec("k4", ns), ns, "/nonexistent")
    try:
        assert dict(bench.mca) == dict(mpi_transport.TRANSPORTS["bounded"][0], btl_tcp_max_send_size="8192",
                                       btl_tcp_sndbuf="65536")
        assert len(bench.mca) == len(mpi_transport.TRANSPORTS["bounded"][0]) + 1
    finally:
        bench.stop_controller()
    assert mpi_transport.transport_mca(argparse.Namespace(mpi_transport="default", mca=[])) == []


def test_jobroute_rate_records_the_transport_and_variants_go_over_it(monkeypatch):
    seen = []
    monkeypatch.setattr(jobroute_rate, "pattern_run",
                        lambda bench, *a, mca=None, **k: (seen.append(list(mca)), (1, "", 1.0))[1])
    args = jobroute_rate.parse_args(["--kinds", "mpi-dmodk", "--mca-variant", "put:btl_tcp_flags=0x13b"])
    assert args.mpi_transport == "bounded"
    bench = FakeBench()
    bench.mca = mpi_transport.transport_mca(args)
    jobroute_rate.measure(bench, 5.0, {}, args)
    assert dict(seen[0])["btl_tcp_flags"] == "0x13b" and len(seen[0]) == len(bench.mca)


def test_reports_name_the_transport_and_the_variants():
    import jobroute_report  # noqa: E402  pylint: disable=import-outside-toplevel
    rec = {"name": "bounded", "mca": {"btl_tcp_max_send_size": "16384", "btl_tcp_flags": "0x139"}}
    text = jobroute_report.markdown({"method": {"mpi_transport": rec}, "fabrics": {}})
    assert "Open MPI transport (bench/mpi_transport.py): bounded, MCA btl_tcp_flags=0x139, btl_tcp_max_send_size=16384." in text
    results = {"rates": {}, "seconds": 8, "mpi_transport": dict(rec, name="default", mca={}),
               "mca_variants": {"put": {"btl_tcp_flags": "0x13b"}, "base": {}}}
    assert ("Open MPI transport: default (MCA none); variants (KIND+NAME, on top of it): base: none; "
            "put: btl_tcp_flags=0x13b.") in jobroute_rate_md.markdown(results)
