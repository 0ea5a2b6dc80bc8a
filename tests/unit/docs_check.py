"""Checking the docs against the repository, for tests/unit/test_docs_true.py.

- Links: a relative link must name a file or directory git tracks (`git ls-files`), so that a fresh
  clone has it (bench/results is gitignored: a run a doc cites must have been added with `git add -f`).
- Commands: a quoted command line that runs one of the project's Python CLIs (a script by path,
  `python -m sdnmpi.X`, a console script of setup.py) must parse with that CLI's argument parser,
  got without running anything: the module's `build_parser()` (or `parser()`, `_parser()`), or its
  `parse_args(argv)` when it has one (that one also runs the script's own checks). Options must be
  spelled out (an abbreviation argparse would accept is reported). A quote that is not a whole
  command (a synopsis with [optional] parts or placeholders such as N, OUT, $(ARGS), <dir>, ..., or
  a fragment naming one option without the rest) is checked for its option names only and counted.
- Runs: every bench/results/RUN a doc names anywhere (or $R/RUN, R=bench/results) must be tracked.
- Controller flags: every --sdnmpi-X (--nosdnmpi-X) must be an option (a boolean one) of controller/options.py.
- Options named alone (a code span `--x` or `--x VALUE`): some program of the project (or FOREIGN) defines --x.
- make: every target a doc names must exist in the top Makefile (or in the doc's own directory's);
  `make T VAR="..."` checks "..." against the CLI whose recipe line of T passes $(VAR).
"""
import argparse
import contextlib
import importlib
import importlib.util
import io
import os
import re
import subprocess
from dataclasses import dataclass

import docs_scan
from bench_setup import ROOT   # also puts bench/ on sys.path: its scripts import as modules

# CLIs whose unknown options go to another CLI's parser (bench_release.py forwards its rest to the
# job routing bench's parse_args, rate_probe_loads.py to bench/run.py's).
FORWARDS = {"bench/bench_release.py": "bench/bench_jobroute_mininet.py", "bench/rate_probe_loads.py": "bench/run.py"}
FACTORIES = ("build_parser", "parser", "_parser")
FRAGMENT = re.compile(r"the following arguments are required|expected (?:one|at least one) argument")


@dataclass
class Finding:
    """One command's verdict: 'parsed' (every variant parses), 'names' (not a whole command; its
    option names exist) or 'error' (message says what is wrong)."""
    command: docs_scan.Command
    status: str
    message: str = ""

    def __str__(self):
        return "%s: %s: %s" % (self.command.where, self.command.text, self.message)


def docs():
    """The docs the check covers, relative to the repository."""
    names = ["README.md", "bench/README.md", "libsdnmpi/README.md"]
    names += sorted("docs/" + n for n in os.listdir(os.path.join(ROOT, "docs")) if n.endswith(".md"))
    return [n for n in names if os.path.exists(os.path.join(ROOT, n))]


def read(doc):
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        return f.read()


def tracked():
    """Paths git tracks, and every directory above them."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    paths = set()
    for path in out.decode().split("\0"):
        while path:
            paths.add(path)
            path = path.rpartition("/")[0]
    return paths


def dead_links(doc, text, paths):
    """['doc:line: target (why)'] of the relative links of `text` (a doc at `doc`) that name no path in
    `paths` (see tracked()), or a heading anchor the markdown file lacks."""
    _, paragraphs = docs_scan.scan(text)
    bad = []
    for line, target in docs_scan.links(paragraphs):
        parts = docs_scan.relative_target(target)
        if parts is None:
            continue
        rel, anchor = parts
        path = os.path.normpath(os.path.join(os.path.dirname(doc), rel or os.path.basename(doc))).replace(os.sep, "/")
        if path.startswith("../") or path == "..":
            why = "outside the repository"
        elif rel and path.rstrip("/") not in paths and path != ".":
            why = "on disk, not tracked by git" if os.path.exists(os.path.join(ROOT, path)) else "missing"
        elif anchor and path.endswith(".md") and anchor not in docs_scan.anchors(text if path == doc else read(path)):
            why = "no heading #%s in %s" % (anchor, path)
        else:
            continue
        bad.append("%s:%d: %s (%s)" % (doc, line, target, why))
    return bad


RUN = re.compile(r"(?:\bbench/results|\$R)/([A-Za-z0-9_.-]*[A-Za-z0-9_-])")


def untracked_runs(doc, text, paths):
    """['doc:line: bench/results/RUN (why)'] of the run directories `text` names anywhere (a link, a
    command, prose; as bench/results/RUN or $R/RUN) that git does not track; 'latest' (a symlink a
    run makes) and globs are not runs."""
    bad = []
    for no, line in enumerate(text.split("\n"), 1):
        for m in RUN.finditer(line):
            run, rest = m.group(1), line[m.end():m.end() + 1]
            if run == "latest" or rest in ("*", "?", "<") or "bench/results/" + run in paths:
                continue
            on_disk = os.path.isdir(os.path.join(ROOT, "bench", "results", run))
            bad.append("%s:%d: bench/results/%s (%s)" % (doc, no, run, "on disk, not tracked by git" if on_disk
                                                          else "missing"))
    return bad


CONTROLLER_FLAG = re.compile(r"(?<![\w-])--(no)?(sdnmpi-[a-z0-9-]*[a-z0-9])(?![\w*-])")


def unknown_controller_flags(doc, text):
    """['doc:line: --flag'] of the controller's --sdnmpi-* flags `text` names anywhere that
    controller/options.py does not register (--nosdnmpi-X: X must be a boolean option)."""
    from ryu import cfg
    from sdnmpi.controller import options
    names = {o.name: isinstance(o, cfg.BoolOpt) for o in options.OPTS}
    bad = []
    for no, line in enumerate(text.split("\n"), 1):
        for m in CONTROLLER_FLAG.finditer(line):
            if names.get(m.group(2)) is None or (m.group(1) and not names[m.group(2)]):
                bad.append("%s:%d: %s" % (doc, no, m.group(0)))
    return bad


def quoted_commands(doc, text):
    """The commands `text` quotes (code lines and code spans) that run a project CLI or make."""
    code, paragraphs = docs_scan.scan(text)
    out = []
    for line, body in code + docs_scan.spans(paragraphs):
        out.extend(c for c in docs_scan.commands(doc, line, body) if _ours(c))
    return sorted(out, key=lambda c: c.line)


def console_scripts():
    """{name: module} from setup.py's CONSOLE_SCRIPTS."""
    with open(os.path.join(ROOT, "setup.py")) as f:
        return dict(re.findall(r'"([\w-]+) = ([\w.]+):main"', f.read()))


def _ours(cmd):
    if cmd.head == "make":
        return True
    if cmd.head == "python":
        return cmd.target.startswith("-m sdnmpi") or os.path.isfile(os.path.join(ROOT, cmd.target))
    return cmd.head in console_scripts()


def check(cmd):
    """-> Finding for one quoted command."""
    if cmd.head == "make":
        return _check_make(cmd)
    if cmd.head == "python" and not cmd.target.startswith("-m "):
        with open(os.path.join(ROOT, cmd.target)) as f:
            source = f.read()
        if "argparse" not in source and "parse_args" not in source:    # reads sys.argv itself
            return _no_parser(cmd)
    module = _module_for(cmd)
    try:
        mod = importlib.import_module(module)
    except Exception as exc:  # noqa: BLE001  (any import failure is the finding)
        return Finding(cmd, "error", "cannot import %s: %r" % (module, exc))
    return _check_argvs(cmd, mod, cmd.argvs)


def _module_for(cmd):
    if cmd.head == "python" and cmd.target.startswith("-m "):
        return cmd.target[3:]
    if cmd.head == "python":
        return _script_module(cmd.target)
    return console_scripts()[cmd.head]


def _script_module(path):
    """bench/X.py -> X (bench/ is on sys.path: its scripts are not a package); a/b.py -> a.b."""
    if path.startswith("bench/"):
        return os.path.basename(path)[:-3]
    return path[:-3].replace("/", ".")


def _no_parser(cmd):
    opts = [w for w in cmd.argvs[0] if w.startswith("-") and w != "-"]
    if opts:
        return Finding(cmd, "error", "%s takes no options (no argparse parser), given %s" % (cmd.target, opts))
    return Finding(cmd, "names", "positional arguments only (no argparse parser)")


def _entry(mod):
    """-> parse(argv) for a module, or None when it has no parser function. Such a function counts
    where it comes from the module of the script's main() (run.py hands on bench_cli's main and
    parse_args; alltoall_probe.py's own main() does not use the bench_cli.parse_args it imports)."""
    home = getattr(getattr(mod, "main", None), "__module__", None) or mod.__name__

    def own(name):
        fn = getattr(mod, name, None)
        return fn if callable(fn) and getattr(fn, "__module__", None) == home else None
    if own("parse_args"):
        return mod.parse_args
    for name in FACTORIES:
        factory = own(name)
        if factory:
            return lambda argv: factory().parse_args(argv)
    sub = mod.__name__ + ".cli"
    if hasattr(mod, "__path__") and importlib.util.find_spec(sub):
        return _entry(importlib.import_module(sub))
    return None


@contextlib.contextmanager
def _recording():
    """Records the parsers parse_known_args runs on (parse_args goes through it), first the top one."""
    seen, original = [], argparse.ArgumentParser.parse_known_args

    def record(self, *args, **kwargs):
        seen.append(self)
        return original(self, *args, **kwargs)
    argparse.ArgumentParser.parse_known_args = record
    try:
        yield seen
    finally:
        argparse.ArgumentParser.parse_known_args = original


def parse(entry, argv):
    """-> (error message or None, the top parser or None), running entry(argv) quietly."""
    err = io.StringIO()
    with _recording() as seen, contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            entry(list(argv))
            message = None
        except SystemExit as exc:
            message = None if exc.code in (0, None) else (err.getvalue().strip().splitlines() or ["exit %s" % exc.code])[-1]
        except Exception as exc:  # noqa: BLE001  (a parser's own error type, e.g. sdnmpi-ctl's UsageError)
            message = str(exc)
    return message, (seen[0] if seen else None)


def _check_argvs(cmd, mod, argvs):
    entry = _entry(mod)
    if entry is None and hasattr(mod, "argparse"):
        return Finding(cmd, "error", "%s builds its parser inside main(): give it a build_parser()" % cmd.target)
    if entry is None:
        return _no_parser(cmd)
    failures, parser = [], None
    for argv in argvs:
        message, top = parse(entry, argv)
        parser = parser or top
        if message:
            failures.append((argv, message))
    if parser is None:
        return Finding(cmd, "error", failures[0][1] if failures else "no argparse parser ran")
    extra = [parse(_entry(importlib.import_module(_script_module(FORWARDS[cmd.target]))), ["--help"])[1]] \
        if cmd.target in FORWARDS else []
    unknown = sorted({u for argv in argvs for u in unknown_options(parser, argv, extra)})
    if unknown:
        return Finding(cmd, "error", "unknown option(s) %s (spelled out in full)" % ", ".join(unknown))
    if not failures:
        return Finding(cmd, "parsed")
    argv, message = failures[0]
    fragment = FRAGMENT.search(message) and ("required" in message or argv and argv[-1].startswith("-"))
    if cmd.synopsis or cmd.placeholders or fragment:
        return Finding(cmd, "names", message)
    return Finding(cmd, "error", message)


def unknown_options(parser, argv, extra=()):
    """The option words of argv that `parser` (following its subcommands) and `extra` parsers do not
    define exactly."""
    cur, bad, i = parser, [], 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if word == "--":
            break
        if word.startswith("-") and word != "-" and not re.match(r"^-\d", word):
            name = word.split("=", 1)[0]
            action = _action(cur, name) or next((a for p in extra if p for a in [_action(p, name)] if a), None)
            if action is None:
                bad.append(name)
                continue
            if "=" in word or action.nargs == 0 or (len(name) == 2 and len(word) > 2 and name == word[:2]):
                continue
            takes = 1 if action.nargs in (None, "?") else action.nargs if isinstance(action.nargs, int) else len(argv)
            while takes and i < len(argv) and not argv[i].startswith("-"):
                i, takes = i + 1, takes - 1
            continue
        sub = next((a for a in cur._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub and word in sub.choices:
            cur = sub.choices[word]
    return bad


def _action(parser, name):
    action = parser._option_string_actions.get(name)
    if action is None and not name.startswith("--") and len(name) > 2:
        short = parser._option_string_actions.get(name[:2])     # -j2: a short option with its value
        return short if short is not None and short.nargs != 0 else None
    return action


def makefile_targets(directory):
    """{target: [recipe lines]} of directory/Makefile (empty when it has none)."""
    path = os.path.join(ROOT, directory, "Makefile")
    if not os.path.exists(path):
        return {}
    targets, current = {}, []
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    for line in text.split("\n"):
        if line.startswith("\t"):
            for t in current:
                targets[t].append(line.strip())
            continue
        m = re.match(r"^([^\s:=#][^:=]*?)\s*::?(?!=)(.*)$", line)
        if m and not line.startswith((".PHONY", "export")):
            current = m.group(1).split()
            for t in current:
                targets.setdefault(t, [])
        elif line.strip() and not line.startswith("#"):
            current = []
    return targets


def _check_make(cmd):
    words, directory, targets, assigns = list(cmd.argvs[0]), "", [], []
    while words:
        w = words.pop(0)
        if w == "-C" and words:
            directory = words.pop(0)
        elif re.match(r"^[A-Za-z_]\w*=", w):
            assigns.append(w.split("=", 1))
        elif not w.startswith("-"):
            targets.append(w)
    known = makefile_targets(directory)
    if not directory:
        own = os.path.dirname(cmd.doc)
        known = dict(makefile_targets(own), **known) if own else known
    if any("$" in t for t in targets):
        return Finding(cmd, "names", "a make variable stands for a target")
    missing = [t for t in targets if t not in known and not os.path.exists(os.path.join(ROOT, directory, t))
               and not _pattern_target(known, t)]
    if missing:
        return Finding(cmd, "error", "no make target %s in %s/Makefile" % (", ".join(missing), directory or "."))
    for name, value in assigns:
        for target in targets or ["all"]:
            for recipe in known.get(target, []):
                recipe = re.sub(r"\$\(if\s(?:[^()]|\([^()]*\))*\)", "", recipe)   # $(if $(QUICK),--quick)
                m = re.search(r"\$\(PYTHON\)\s+(\S+\.py)\b.*\$\(%s\)" % re.escape(name), recipe)
                if m:
                    sub = docs_scan.Command(cmd.doc, cmd.line, "python", m.group(1), [docs_scan.tokens(value)])
                    found = check(sub)
                    if found.status == "error":
                        return Finding(cmd, "error", "%s=%r: %s" % (name, value, found.message))
    return Finding(cmd, "parsed")


def _pattern_target(known, target):
    return any("%" in k and re.match("^" + re.escape(k).replace("%", ".+") + "$", target) for k in known)


# Options of other programs that the docs name: ryu-manager's own, ovs-vswitchd's, mpirun's.
FOREIGN = {"--verbose", "--log-file", "--wsapi-host", "--wsapi-port", "--ofp-listen-host", "--ofp-tcp-listen-port",
           "--detach", "--mlockall", "--mca"}
OPTION_SPAN = re.compile(r"^(--[a-z][a-z0-9-]*[a-z0-9])(?:[ =][^`]*)?$")


def known_options(paths):
    """Every --option some program of the project defines: the Python CLIs' parsers (bench scripts,
    console scripts, python -m modules; subcommands too), the controller's flags, the C programs'
    "--x" literals (argv comparisons, getopt tables) in tracked .c files, and FOREIGN."""
    from ryu import cfg
    from sdnmpi.controller import options
    known = set(FOREIGN)
    for o in options.OPTS:
        known.add("--" + o.name)
        if isinstance(o, cfg.BoolOpt):
            known.add("--no" + o.name)
    modules = list(console_scripts().values()) + ["sdnmpi.mininet_topos.demo"]
    for path in sorted(p for p in paths if p.startswith("bench/") and p.endswith(".py") and p.count("/") == 1):
        with open(os.path.join(ROOT, path)) as f:
            if re.search(r"^def (build_parser|parser|_parser|parse_args)\(", f.read(), re.M):
                modules.append(_script_module(path))
    for name in modules:
        entry = _entry(importlib.import_module(name))
        stack = [parse(entry, ["--help"])[1]] if entry else []
        while stack:
            p = stack.pop()
            known.update(o for o in p._option_string_actions if o.startswith("--"))
            stack.extend(a.choices[c] for a in p._actions if isinstance(a, argparse._SubParsersAction)
                         for c in a.choices)
    for path in (p for p in paths if p.endswith(".c")):
        with open(os.path.join(ROOT, path), errors="replace") as f:
            text = f.read()
        known.update(re.findall(r'"(--[a-z][a-z0-9-]+)"', text))
        known.update("--" + n for n in re.findall(r'\{\s*"([a-z][a-z0-9-]+)",\s*(?:no|required|optional)_argument', text))
    return known


def unknown_option_spans(doc, text, known):
    """['doc:line: `--x`'] of the code spans that name one option (`--x`, `--x VALUE`) no program of
    the project defines (see known_options)."""
    _, paragraphs = docs_scan.scan(text)
    bad = []
    for line, span in docs_scan.spans(paragraphs):
        m = OPTION_SPAN.match(span)
        if m and m.group(1) not in known:
            bad.append("%s:%d: `%s`" % (doc, line, span))
    return bad
