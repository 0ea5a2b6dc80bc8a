"""sdnmpi-sim job on bad GraphML and bandwidths (audit 44): capacities, ports and dpids that are not
numbers, zero, negative or NaN are one TopologyError line (exit 2) instead of a traceback, a
negative or infinite completion time, or a time model that never returns."""
import json
import math
import signal

import numpy as np
import pytest

from sdnmpi.simulator import cli, timemodel, topology

GRAPHML = """<?xml version="1.0" encoding="UTF-8"?>
<graphml xmlns="http://graphml.graphdrawing.org/xmlns">
  <key id="typ" for="node" attr.name="typ" attr.type="string"/>
  <key id="cap" for="node" attr.name="capacity" attr.type="string"/>
  <key id="dpid" for="node" attr.name="dpid" attr.type="string"/>
  <key id="ecap" for="edge" attr.name="capacity" attr.type="string"/>
  <key id="port" for="edge" attr.name="port" attr.type="string"/>
  <graph id="G" edgedefault="directed">
    <node id="s1"><data key="typ">switch</data><data key="dpid">DPID</data></node>
    <node id="h1"><data key="typ">host</data><data key="cap">HOSTCAP</data></node>
    <node id="h2"><data key="typ">host</data><data key="cap">1</data></node>
    <edge source="h1" target="s1"><data key="ecap">EDGECAP</data></edge>
    <edge source="s1" target="h1"><data key="ecap">EDGECAP</data><data key="port">PORT</data></edge>
    <edge source="h2" target="s1"><data key="ecap">1</data></edge>
  </graph>
</graphml>
"""


def graphml(tmp_path, hostcap="1", edgecap="1", port="1", dpid="1"):
    path = tmp_path / "g.graphml"
    path.write_text(GRAPHML.replace("HOSTCAP", hostcap).replace("EDGECAP", edgecap).replace("PORT", port)
                    .replace("DPID", dpid))
    return str(path)


def trace(tmp_path):
    """A 2-rank trace, each rank sending 100 bytes to the other."""
    folder = tmp_path / "tr"
    folder.mkdir(exist_ok=True)
    for r in range(2):
        record = {"n_procs": 2, "rank": r, "tx_bytes": [0, 100] if r == 0 else [100, 0], "rx_bytes": [0, 0],
                  "tx_messages": [0, 1] if r == 0 else [1, 0], "rx_messages": [0, 0]}
        (folder / f"oxton-result{r}.json").write_text(json.dumps(record))
    return str(folder)


class Hung(Exception):
    pass


def returns(call, *args):
    """call(*args), failing the test (not hanging it) if it does not return in 20 s."""
    def hung(signum, frame):
        raise Hung(f"{call.__name__} did not return")
    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        return call(*args)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def completes(*args):
    return returns(timemodel.completion, *args)


EDGE_CAP = "'h1': capacity must be a positive finite number"
HOST_CAP = "host 'h1': capacity must be an integer of at least 1"
BAD = ([("edgecap", v, EDGE_CAP) for v in ("nan", "inf", "0", "-1")]
       + [("hostcap", v, HOST_CAP) for v in ("0", "-1", "1.5", "nan")]
       + [("edgecap", "abc", "'h1': capacity 'abc' is not a number"),
          ("hostcap", "abc", "host 'h1': capacity 'abc' is not a number"),
          ("port", "x", "'h1': port 'x' is not a number"), ("port", "0", "'h1': port must be an integer of at least 1"),
          ("dpid", "abc", "switch 's1': dpid 'abc' is not a number")])


@pytest.mark.parametrize("key, value, words", BAD, ids=[f"{k}={v}" for k, v, _ in BAD])
def test_bad_graphml_attributes_are_one_topology_error_line(tmp_path, key, value, words):
    with pytest.raises(topology.TopologyError) as err:
        topology.from_graphml(graphml(tmp_path, **{key: value}))
    assert str(err.value).startswith("g.graphml: ") and words in str(err.value) and "\n" not in str(err.value)


def test_good_attributes_still_read(tmp_path):
    g = topology.from_graphml(graphml(tmp_path, hostcap="8.0", edgecap="2.5", port="3",
                                      dpid="18446744073709551615"))
    assert [d["pes"] for _, d in g.nodes(data=True) if d["kind"] == "host"] == [8, 1]
    assert 18446744073709551615 in g and g.edges[18446744073709551615, "00:00:00:00:00:01"]["capacity"] == 2.5
    assert g.edges[18446744073709551615, "00:00:00:00:00:01"]["ports"][18446744073709551615] == 3


@pytest.mark.parametrize("edgecap", ["nan", "0", "-1", "abc"])
def test_the_job_cli_is_one_line_exit_2(tmp_path, capsys, edgecap):
    assert returns(cli.main, ["job", "--topology", graphml(tmp_path, edgecap=edgecap), "--trace", trace(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sdnmpi-sim: error: g.graphml: edge") and err.count("\n") == 1


@pytest.mark.parametrize("argv, words", [
    (["--link-bw", "nan"], "argument --link-bw: must be a positive finite number, got 'nan'"),
    (["--link-bw", "inf"], "argument --link-bw: must be a positive finite number, got 'inf'"),
    (["--link-bw", "abc"], "argument --link-bw: 'abc' is not a number"),
])
def test_a_non_finite_link_bandwidth_is_refused(tmp_path, capsys, argv, words):
    with pytest.raises(SystemExit) as exit_:
        returns(cli.main, ["job", "--topology", graphml(tmp_path), "--trace", trace(tmp_path), *argv])
    assert exit_.value.code == 2 and words in capsys.readouterr().err


@pytest.mark.parametrize("spec", ["leafspine:host_bw=nan", "leafspine:fabric_bw=inf"])
def test_a_non_finite_spec_bandwidth_is_one_line(spec):
    with pytest.raises(topology.TopologyError, match=r"bw \(Mbit/s\) must be a positive finite number"):
        topology.from_spec(spec)


@pytest.mark.parametrize("bandwidth", [math.nan, math.inf, 0.0, -1.0])
def test_the_time_model_refuses_bandwidths_it_cannot_finish_on(bandwidth):
    with pytest.raises(ValueError, match="link bandwidths must be positive and finite"):
        completes([100.0, 100.0], [0, 1], [0, 0], np.array([bandwidth, 1.0]))


def test_the_time_model_refuses_non_finite_sizes_and_still_times_good_flows():
    with pytest.raises(ValueError, match="flow sizes must be finite"):
        completes([math.nan], [0], [0], np.array([1.0]))
    assert completes([100.0, 100.0], [0, 1], [0, 0], np.array([10.0, 5.0, math.nan])).tolist() == [20.0, 20.0]


def test_a_round_that_finishes_no_flow_is_an_error_not_a_loop(monkeypatch):
    monkeypatch.setattr(timemodel, "_fill", lambda entry_flow, entry_link, n, bw, active: np.full(n, np.nan))
    with pytest.raises(ValueError, match="flows cannot finish"):
        completes([100.0], [0], [0], np.array([1.0]))
