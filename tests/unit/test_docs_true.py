"""The docs stay true (README.md, bench/README.md, libsdnmpi/README.md, docs/*.md): their relative links
and the bench runs they cite name files git tracks (a fresh clone has them), the command lines they
quote parse with the CLIs' current argument parsers, the make targets, the controller's --sdnmpi-*
flags and the options they name alone in a code span exist. How: tests/unit/docs_check.py."""
import functools

import pytest

import docs_check
import docs_scan

DOCS = docs_check.docs()
# A quote that is not a whole command (a synopsis, placeholders, a fragment naming one option) is
# checked for its option names only. So that the check cannot quietly shrink to nothing: at least
# MIN_PARSED commands parse whole, at most MAX_NAMES_ONLY are names-only (on 2026-11-29: 189 and 50;
# README.md's share 60 and 9, so a shorter README still passes). No quote is skipped unchecked.
MIN_PARSED = 110
MAX_NAMES_ONLY = 60


@functools.lru_cache(maxsize=None)
def findings(doc):
    return tuple(docs_check.check(c) for c in docs_check.quoted_commands(doc, docs_check.read(doc)))


@functools.lru_cache(maxsize=None)
def tracked():
    return frozenset(docs_check.tracked())


@pytest.mark.parametrize("doc", DOCS)
def test_relative_links_name_tracked_files(doc):
    dead = docs_check.dead_links(doc, docs_check.read(doc), tracked())
    assert not dead, "dead links (a run a doc cites needs `git add -f` of its results):\n" + "\n".join(dead)


@pytest.mark.parametrize("doc", DOCS)
def test_cited_runs_are_tracked(doc):
    bad = docs_check.untracked_runs(doc, docs_check.read(doc), tracked())
    assert not bad, "runs cited but not in git (`git add -f` their results.json and results.md):\n" + "\n".join(bad)


@pytest.mark.parametrize("doc", DOCS)
def test_controller_flags_exist(doc):
    bad = docs_check.unknown_controller_flags(doc, docs_check.read(doc))
    assert not bad, "--sdnmpi-* flags controller/options.py does not register:\n" + "\n".join(bad)


@functools.lru_cache(maxsize=None)
def known_options():
    return frozenset(docs_check.known_options(tracked()))


@pytest.mark.parametrize("doc", DOCS)
def test_options_named_alone_exist(doc):
    bad = docs_check.unknown_option_spans(doc, docs_check.read(doc), known_options())
    assert not bad, "options no program of the project defines (renamed? another program's: " \
                    "docs_check.FOREIGN):\n" + "\n".join(bad)


@pytest.mark.parametrize("doc", DOCS)
def test_quoted_commands_parse(doc):
    bad = [str(f) for f in findings(doc) if f.status == "error"]
    assert not bad, "stale command lines:\n" + "\n".join(bad)


def test_the_check_covers_the_docs():
    every = [f for doc in DOCS for f in findings(doc)]
    parsed = [f for f in every if f.status == "parsed"]
    names = [f for f in every if f.status == "names"]
    assert {"README.md", "bench/README.md", "docs/flows.md"} <= set(DOCS)
    assert len(parsed) >= MIN_PARSED, "only %d quoted commands parse whole" % len(parsed)
    assert len(names) <= MAX_NAMES_ONLY, "%d quotes checked for option names only:\n%s" % (
        len(names), "\n".join(map(str, names)))
    assert {f.command.head for f in parsed} >= {"python", "make", "sdnmpi-sim", "sdnmpi-prof"}


# ---------------------------------------------------------------------------------------------
# The checker finds what it should, on made-up docs.
SYNTHETIC = """# A doc

See [the run](../bench/results/no-such-run/results.md), [the top](../README.md),
[a heading](../README.md#no-such-heading) and [here](#a-doc).

    flock /tmp/sdnmpi-mininet.lock timeout -s INT 60 .venv/bin/python bench/run.py --no-such-option 3 \\
        --leaves 4

Also `.venv/bin/python bench/bench_flowdetect.py --repeats two`, `make bench-nowhere`,
`sdnmpi-sim job --topology kary:k=4 --trace t.tar.gz
--routre dmodk`, `make bench ARGS="--leaves x"`, `.venv/bin/python bench/run.py --quic`
and a true one: `R=bench/results; .venv/bin/python bench/bench_flowdetect.py --report $R/x`.
"""


def synthetic_findings():
    """{command text: Finding} of SYNTHETIC's commands."""
    return {f.command.text: f for f in map(docs_check.check, docs_check.quoted_commands("docs/x.md", SYNTHETIC))}


def test_checker_reports_dead_links_with_doc_and_line():
    dead = docs_check.dead_links("docs/x.md", SYNTHETIC, tracked())
    assert dead == ["docs/x.md:3: ../bench/results/no-such-run/results.md (missing)",
                    "docs/x.md:4: ../README.md#no-such-heading (no heading #no-such-heading in README.md)"]
    # a file on disk that git does not track (a run never added with `git add -f`) is dead too
    assert docs_check.dead_links("docs/x.md", "[run](../bench/run.py)", {"README.md"}) == [
        "docs/x.md:1: ../bench/run.py (on disk, not tracked by git)"]


def test_checker_reports_runs_cited_in_prose_and_commands():
    text = "Run bench/results/20991231-000000 and\n`R=bench/results; python x.py $R/flowdetect-x/counters " \
           "bench/results/flowdetect-*/counters bench/results/latest`; see bench/results/ok."
    assert docs_check.untracked_runs("d.md", text, {"bench/results/ok"}) == [
        "d.md:1: bench/results/20991231-000000 (missing)", "d.md:2: bench/results/flowdetect-x (missing)"]


def test_checker_reports_stale_commands():
    found = synthetic_findings()
    verdicts = {text: (f.command.where, f.status) for text, f in found.items()}
    assert verdicts == {
        "bench/run.py --no-such-option 3 --leaves 4": ("docs/x.md:6", "error"),
        "bench/bench_flowdetect.py --repeats two": ("docs/x.md:9", "error"),
        "make bench-nowhere": ("docs/x.md:9", "error"),
        "sdnmpi-sim job --topology kary:k=4 --trace t.tar.gz --routre dmodk": ("docs/x.md:10", "error"),
        "make bench ARGS=--leaves x": ("docs/x.md:11", "error"),
        "bench/run.py --quic": ("docs/x.md:11", "error"),   # argparse would take the abbreviation; docs spell out
        "bench/bench_flowdetect.py --report bench/results/x": ("docs/x.md:12", "parsed"),
    }
    assert "--no-such-option" in found["bench/run.py --no-such-option 3 --leaves 4"].message
    assert "'two'" in found["bench/bench_flowdetect.py --repeats two"].message
    assert "bench-nowhere" in found["make bench-nowhere"].message
    assert "--routre" in found["sdnmpi-sim job --topology kary:k=4 --trace t.tar.gz --routre dmodk"].message
    assert "ARGS=" in found["make bench ARGS=--leaves x"].message
    assert "--quic" in found["bench/run.py --quic"].message


def test_checker_reports_unknown_controller_flags():
    text = "`ryu-manager --sdnmpi-lldp-interval 2 --nosdnmpi-traffic-reverse-routes`\n" \
           "--sdnmpi-no-such-flag, --nosdnmpi-lldp-interval (not boolean), --sdnmpi-* (a glob)"
    assert docs_check.unknown_controller_flags("d.md", text) == [
        "d.md:2: --sdnmpi-no-such-flag", "d.md:2: --nosdnmpi-lldp-interval"]


def test_checker_reports_options_no_program_defines():
    text = "Use `--settle-calls 2`, `--idle-ms`, `--warm` (coll_bench.c), `--nosdnmpi-elide-default-hops`\n" \
           "and `--mca` but not `--settle-call 2` or `--no-such-thing`; `-x` and `run.py --y` are no option spans."
    assert docs_check.unknown_option_spans("d.md", text, known_options()) == [
        "d.md:2: `--settle-call 2`", "d.md:2: `--no-such-thing`"]


def test_placeholders_downgrade_to_a_names_check_but_unknown_names_still_fail():
    def one(text):
        (cmd,) = docs_check.quoted_commands("d.md", text)
        return docs_check.check(cmd)
    assert one("`.venv/bin/python bench/run.py --reps N`").status == "names"
    assert one("`.venv/bin/python bench/run.py [--quick] $(ARGS)`").status == "names"
    assert one("`sdnmpi-sim train-flows --counter-logs`").status == "names"      # a fragment
    assert one("`.venv/bin/python bench/run.py --repz N`").status == "error"
    assert one("`bench/flowdetect_acks.py DIR --pollz`").status == "error"      # a script named without python
    # alltoall_probe.py imports bench_cli's parse_args, but its own build_parser() is its command line
    assert one("`python bench/alltoall_probe.py --variant x --schedule xor`").status == "parsed"
    assert one("`python bench/report.py bench/results/x`").status == "names"   # no argparse: words only
    assert one("`python bench/report.py --json`").status == "error"
    assert one("`sdnmpi-prof show|plot x.tar.gz --top 3`").status == "error"      # plot has no --top
    assert one("`sdnmpi-prof show|plot x.tar.gz --phase 1 -o a.png`").status == "error"   # show has no -o


def test_scan_joins_continuations_spans_and_unwraps_commands():
    text = "```\ncd bench && nice -n 19 ../.venv/bin/python planner_scale.py --quick  # quick\n```\n" \
           "Run `sh -c 'timeout 9 sdnmpi-sim scenario a.yml\n-j 2'` now."
    code, paragraphs = docs_scan.scan(text)
    assert code == [(2, "cd bench && nice -n 19 ../.venv/bin/python planner_scale.py --quick")]
    assert docs_scan.spans(paragraphs) == [(4, "sh -c 'timeout 9 sdnmpi-sim scenario a.yml -j 2'")]
    (py,) = docs_scan.commands("d.md", 2, code[0][1])
    assert (py.head, py.target, py.argvs) == ("python", "bench/planner_scale.py", [["--quick"]])
    (sim,) = docs_scan.commands("d.md", 4, docs_scan.spans(paragraphs)[0][1])
    assert (sim.head, sim.argvs) == ("sdnmpi-sim", [["scenario", "a.yml", "-j", "2"]])
    # an indented line right under a paragraph's is its continuation, not code; after a blank line it is code
    assert docs_scan.scan("Text\n    make the plan\n\n    make bench\n    make test\nText")[0] == [
        (4, "make bench"), (5, "make test")]
    (syn,) = docs_scan.commands("d.md", 1, "sdnmpi-ctl [--url URL] job ID [--json] [options]")
    assert syn.synopsis and syn.argvs == [["--url", "URL", "job", "ID", "--json"]] and "URL" in syn.placeholders


def test_anchors_follow_githubs_slugs():
    text = "# The 90 % line: `a.py`\n## Twice\n## Twice\n```\n# not a heading\n```\n"
    assert docs_scan.anchors(text) == {"the-90--line-apy", "twice", "twice-1"}
