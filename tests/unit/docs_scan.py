"""Reading markdown for tests/unit/test_docs_true.py: the code a doc quotes, its relative links, and
the command lines in that code (wrappers such as flock, timeout, nice, cd and sh -c taken off).

Pure functions over text; docs_check.py holds what reads the repository (git, Makefiles, parsers)."""
import re
import shlex
from dataclasses import dataclass, field

FENCE = re.compile(r"^\s*(```+|~~~+)")
SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
# [text](target) and ![alt](target); the text may hold one level of brackets and span lines
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
PYTHON = re.compile(r"^(?:\S*/)?python(?:3(?:\.\d+)?)?$")
SEPARATORS = {";", "&&", "||", "|", "&"}
# a token that stands for something: $VAR, $(MAKEVAR), <dir>, ..., an all-capitals word (N, OUT, ARGS)
PLACEHOLDER = re.compile(r"\$|<[^>]*>|\.\.\.|\u2026|^[A-Z][A-Z0-9_]*(?:\.\.\.)?$")


@dataclass
class Command:
    """One quoted command line: doc and line, the program it runs (`head`: 'python' with `target`
    a script path relative to the repository or '-m module', a console script's name, or 'make'),
    its argv variants (one per choice of each a|b alternative) and what made it incomplete."""
    doc: str
    line: int
    head: str
    target: str
    argvs: list
    synopsis: bool = False          # [optional] parts or a dropped [placeholder] group
    placeholders: list = field(default_factory=list)

    @property
    def where(self):
        return "%s:%d" % (self.doc, self.line)

    @property
    def text(self):
        return " ".join([self.target] + self.argvs[0])


def scan(text):
    """-> (code, paragraphs): code = [(line, logical line)] of fenced blocks and of indented blocks
    (4+ spaces after a blank line; a trailing backslash joins the next line; # comments removed);
    paragraphs = [(first line, text)] of the text outside fences (indented lines too: a list item's
    paragraph may be indented), for code spans and links."""
    code, paragraphs, para, fence, pending, indented = [], [], [], None, None, False
    for no, line in enumerate(text.split("\n"), 1):
        if fence:
            if line.strip().startswith(fence):
                fence = None
            else:
                pending = _code_line(code, pending, no, line)
            continue
        m = FENCE.match(line)
        if m:
            fence = m.group(1)
            _flush(paragraphs, para)
            para = []
            continue
        if not line.strip():
            _flush(paragraphs, para)
            para = []
            continue
        indented = pending is not None or (line.startswith(("    ", "\t")) and (indented or not para))
        if indented:
            pending = _code_line(code, pending, no, line)
        para.append((no, line))
    _flush(paragraphs, para)
    return code, paragraphs


def _code_line(code, pending, no, line):
    """Adds a code line (joining backslash continuations); returns the unfinished (line, text) or None."""
    body = re.sub(r"(^|\s)#.*$", "", line).rstrip()
    if pending:
        start, body = pending[0], pending[1] + " " + body.strip()
    else:
        start, body = no, body.strip()
    if body.endswith("\\"):
        return (start, body[:-1].rstrip())
    if body:
        code.append((start, body))
    return None


def _flush(paragraphs, para):
    if para:
        paragraphs.append((para[0][0], "\n".join(t for _, t in para)))


def spans(paragraphs):
    """-> [(line, content)] of the code spans (a span may cross line ends; they become spaces)."""
    out = []
    for start, text in paragraphs:
        for m in SPAN.finditer(text):
            out.append((start + text[:m.start()].count("\n"), " ".join(m.group(2).split())))
    return out


def links(paragraphs):
    """-> [(line, target)] of the markdown links outside code spans."""
    out = []
    for start, text in paragraphs:
        bare = SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
        for m in LINK.finditer(bare):
            out.append((start + bare[:m.start()].count("\n"), m.group(1)))
    return out


def relative_target(target):
    """-> (repository path part or '' for this doc, anchor or '') of a link target; None for a web link."""
    if SCHEME.match(target):
        return None
    path, _, anchor = target.partition("#")
    return re.sub(r"%20", " ", path.split("?", 1)[0]), anchor


def anchors(text):
    """The anchors GitHub gives the headings of a markdown text (lower case, punctuation dropped,
    each space a hyphen, -1, -2, ... on repeats) and the explicit <a name=...> / id=... ones."""
    seen, out, fence = {}, set(), None
    for line in text.split("\n"):
        m = FENCE.match(line)
        if fence or m:
            fence = None if fence and line.strip().startswith(fence) else (fence or m.group(1))
            continue
        h = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if h:
            title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", h.group(1))
            slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            out.add(slug if n == 0 else "%s-%d" % (slug, n))
        out.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line))
    return out


def tokens(text):
    """Shell words of one command text; ; && || | & are their own words. Unbalanced quotes: split on spaces."""
    try:
        lex = shlex.shlex(text, posix=True, punctuation_chars=";&")
        lex.whitespace_split = True
        lex.commenters = ""
        return list(lex)
    except ValueError:
        return text.replace(";", " ; ").split()


def commands(doc, line, text, cwd=""):
    """The commands of one code text (a span or a logical code line) that start a program:
    [Command], the head being 'python', 'make' or the first word otherwise (the caller keeps the
    programs it knows). `cwd` is the directory the text runs in, relative to the repository."""
    out, variables, segment = [], {}, []
    for tok in tokens(text) + [";"]:
        if tok not in SEPARATORS:
            segment.append(tok)
            continue
        cwd = _segment(doc, line, segment, variables, cwd, out)
        segment = []
    return out


def _segment(doc, line, words, variables, cwd, out):
    """Takes one simple command apart; returns the working directory after it."""
    words = list(words)
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        name, _, value = words.pop(0).partition("=")
        variables[name] = value
    words = _unwrap(words)
    if not words:
        return cwd
    if words[0] == "cd" and len(words) == 2:
        return _join(cwd, words[1])
    if words[0] in ("sh", "bash") and len(words) >= 3 and words[1] == "-c":
        for cmd in commands(doc, line, words[2], cwd):
            out.append(cmd)
        return cwd
    words = [_substitute(w, variables) for w in words]
    head, rest = words[0], words[1:]
    if head.endswith(".py") and rest:                    # bench/X.py ARGS: the script run by python
        rest = [head] + rest
        head = "python"
    if PYTHON.match(head) or head == "$(PYTHON)" or head == "python":
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            rest = rest[2:] if rest[0] in ("-X", "-W") else rest[1:]
        if len(rest) >= 2 and rest[0] == "-m":
            target, rest = "-m " + rest[1], rest[2:]
        elif rest and rest[0].endswith(".py"):
            target, rest = _join(cwd, rest[0]), rest[1:]
        else:
            return cwd
        head = "python"
    else:
        target = head.rsplit("/", 1)[-1] if head.startswith(".venv/") else head
        head = "make" if target == "make" else target
    argvs, synopsis = _expand(rest)
    holders = sorted({w for argv in argvs for w in argv if PLACEHOLDER.search(w)})
    out.append(Command(doc, line, head, target, argvs, synopsis, holders))
    return cwd


def _unwrap(words):
    """Drops the programs that run another one: flock LOCK, timeout [-s SIG] [-k D] N, nice [-n N],
    env [VAR=V], sudo, time, exec."""
    while words:
        w = words[0]
        if w == "flock":
            rest = words[1:]
            while rest and rest[0].startswith("-"):
                rest = rest[2:] if rest[0] in ("-w", "-E", "--timeout") else rest[1:]
            words = rest[1:]
        elif w == "timeout":
            rest = words[1:]
            while rest and rest[0].startswith("-"):
                rest = rest[2:] if rest[0] in ("-s", "-k") else rest[1:]
            words = rest[1:]
        elif w == "nice":
            rest = words[1:]
            if rest and rest[0] == "-n":
                rest = rest[2:]
            elif rest and re.match(r"^-\d+$", rest[0]):
                rest = rest[1:]
            words = rest
        elif w == "env":
            words = words[1:]
            while words and "=" in words[0] and not words[0].startswith("-"):
                words = words[1:]
        elif w in ("sudo", "time", "exec", "command"):
            words = words[1:]
        else:
            return words
    return words


def _join(cwd, path):
    parts = [p for p in (cwd + "/" + path).split("/") if p and p != "."]
    out = []
    for p in parts:
        if p == "..":
            if out:
                out.pop()
        else:
            out.append(p)
    return "/".join(out)


def _substitute(word, variables):
    def value(m):
        name = m.group(1) or m.group(2)
        return variables.get(name, m.group(0))
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", value, word)


def _expand(words):
    """[optional] groups of a synopsis: kept without brackets when they hold an option, dropped when
    not ([options], [...]); a|b alternatives: one argv per alternative of each such word (the others
    at their first). -> (argvs, synopsis)"""
    flat, synopsis, group, depth = [], False, [], 0
    for w in words:
        if depth == 0 and not w.startswith("["):
            flat.append(w)
            continue
        synopsis = True
        depth += len(w) - len(w.lstrip("[")) - (len(w) - len(w.rstrip("]")))
        group.append(w.strip("[]"))
        if depth <= 0:
            if any(g.startswith("-") for g in group):
                flat.extend(g for g in group if g)
            group, depth = [], 0
    flat.extend(g for g in group if g)
    alts = [i for i, w in enumerate(flat) if "|" in w and not w.startswith("|")]
    first = [w.split("|")[0] if i in alts else w for i, w in enumerate(flat)]
    argvs = [first]
    for i in alts:
        for alt in flat[i].split("|")[1:]:
            argvs.append(first[:i] + [alt] + first[i + 1:])
    return argvs, synopsis
