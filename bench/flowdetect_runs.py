"""bench_flowdetect's run loop and its failures: a failed or stalled run is recorded and the
schedule goes on; MAX_CONSECUTIVE_FAILURES failures in a row stop it (the fabric is probably
broken). At a stall (--timeout passed, mpirun still running) `capture_stall` writes, before mpirun
is killed, each host's `ss -tni`, every switch's OpenFlow 1.3 flows and port counters and the
controller's recent log lines to the run's log folder; `failures_md` renders the failures for
results.md.
"""
import subprocess
import threading
import time

MAX_CONSECUTIVE_FAILURES = 3     # --max-consecutive-failures: this many failed runs in a row stop the bench
TAIL_CHARS = 1500                # the output's tail kept in results.json per failed run
OUTPUT_MAX_BYTES = 256 << 10     # a failed run's whole output (its first part cut beyond this), logs/
DIAG_GRACE_S = 30                # mpirun is killed this long after --timeout; the diagnostics run meanwhile
DIAG_BUDGET_S = 20               # no diagnostic command starts past this (from the stall's start)
DIAG_CMD_TIMEOUT_S = 5           # per command
DIAG_CMD_MAX_BYTES = 64 << 10    # per command's output (its end cut)
CONTROLLER_LINES = 300           # the controller log's last lines


class RunFailed(RuntimeError):
    """A run without a result: ``reason`` (one line), the output's ``tail``, and the files written
    about it (``files``: the whole output, the stall diagnostics)."""

    def __init__(self, reason, tail="", files=()):
        super().__init__(reason)
        self.reason, self.tail, self.files = reason, tail, list(files)


def _run_cmd(argv, timeout):
    """(exit status or a note, output) of ``argv``; never raises for a failing or hanging command."""
    try:
        res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             universal_newlines=True, errors="replace", timeout=timeout, check=False)
        return res.returncode, res.stdout or ""
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return "timed out after %g s" % timeout, out
    except OSError as exc:
        return "not run: %s" % exc, ""


def _cut(text, limit):
    return text if len(text) <= limit else text[:limit] + "\n[cut: %d more characters]\n" % (len(text) - limit)


def capture_stall(out_stem, commands, controller_text, budget_s=DIAG_BUDGET_S, clock=time.monotonic):
    """Writes OUT_STEM-ss.txt and OUT_STEM-ovs.txt (``commands``: {"ss"|"ovs": [(title, argv), ...]},
    each run with DIAG_CMD_TIMEOUT_S and its output cut at DIAG_CMD_MAX_BYTES; none starts once
    ``budget_s`` has passed, and the file says which were left out) and OUT_STEM-controller.log (the
    last CONTROLLER_LINES lines of ``controller_text``). Returns the paths written."""
    start, written = clock(), []
    for kind in ("ss", "ovs"):
        items = commands.get(kind, [])
        if not items:
            continue
        path = "%s-%s.txt" % (out_stem, kind)
        with open(path, "w", encoding="utf-8") as f:
            for n, (title, argv) in enumerate(items):
                if clock() - start >= budget_s:
                    f.write("## left out (diagnostics budget of %g s spent): %s\n" % (
                        budget_s, ", ".join(t for t, _ in items[n:])))
                    break
                status, out = _run_cmd(argv, DIAG_CMD_TIMEOUT_S)
                f.write("## %s: %s (exit %s)\n%s\n" % (title, " ".join(argv), status, _cut(out, DIAG_CMD_MAX_BYTES)))
        written.append(path)
    if controller_text is not None:
        path = out_stem + "-controller.log"
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(controller_text.splitlines(True)[-CONTROLLER_LINES:])
        written.append(path)
    return written


def stall_commands(host_argv, host_names, bridges):
    """The diagnostics' commands: ``ss -tni`` in each host (``host_argv(name, argv)``: argv run in
    that host's namespaces), each bridge's OpenFlow 1.3 flows and port counters."""
    return {"ss": [(h, host_argv(h, ["ss", "-tni"])) for h in host_names],
            "ovs": [("%s %s" % (br, what), ["ovs-ofctl", "-O", "OpenFlow13", what, br])
                    for br in bridges for what in ("dump-flows", "dump-ports")]}


class StallWatch:
    """Calls ``on_stall()`` once if the ``with`` body is still running ``after_s`` seconds in (from a
    timer thread, so the body, mpirun, is still alive); ``fired``, ``files`` (what it returned) and
    ``error`` (what it raised, as text) afterwards."""

    def __init__(self, after_s, on_stall):
        self.after_s, self.on_stall = after_s, on_stall
        self.fired, self.files, self.error = False, [], None
        self._timer = None

    def _fire(self):
        self.fired = True
        try:
            self.files = list(self.on_stall())
        except Exception as exc:       # noqa: BLE001 -- a diagnostic that fails must not hide the run's result
            self.error = "%s: %s" % (type(exc).__name__, exc)

    def __enter__(self):
        self._timer = threading.Timer(self.after_s, self._fire)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc):
        self._timer.cancel()
        self._timer.join()            # a capture under way finishes before the run is judged
        return False


class SocketSampler:
    """While the ``with`` body runs, every ``every_s`` seconds (0: never) appends the output of
    ``commands`` ([(title, argv)], e.g. each host's ``ss -tni``) to ``path``, each under a line
    ``## t=UNIX_TIME TITLE``, from a thread; ``path`` is in ``files`` once written."""

    def __init__(self, path, commands, every_s):
        self.path, self.commands, self.every_s = path, list(commands), float(every_s)
        self.files = []
        self._stop, self._thread = threading.Event(), None

    def _loop(self):
        with open(self.path, "a", encoding="utf-8") as f:
            while not self._stop.wait(self.every_s):
                for title, argv in self.commands:
                    now = time.time()
                    status, out = _run_cmd(argv, DIAG_CMD_TIMEOUT_S)
                    f.write("## t=%.3f %s (exit %s)\n%s\n" % (now, title, status, _cut(out, DIAG_CMD_MAX_BYTES)))
                f.flush()

    def __enter__(self):
        if self.every_s > 0 and self.commands:
            self.files = [self.path]
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return False


def save_output(path, out):
    """A failed run's whole output to ``path`` (its end kept within OUTPUT_MAX_BYTES); the path."""
    out = out or ""
    if len(out) > OUTPUT_MAX_BYTES:
        out = "[cut: the first %d characters]\n" % (len(out) - OUTPUT_MAX_BYTES) + out[-OUTPUT_MAX_BYTES:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(out)
    return path


def run_blocks(blocks, setup_of, start_fabric, run_one, elapsed, past_stop, max_failures=MAX_CONSECUTIVE_FAILURES,
               log=print):
    """Runs ``blocks`` (`bench_flowdetect.schedule`): ``start_fabric(i, detection)`` -> a fabric with
    close(); ``run_one(fabric, rep, pattern, mode)`` -> the run's record (dict), or raises
    RunFailed (or RuntimeError/OSError) for a run without a result; ``setup_of[mode]``: the
    detection set-up whose fabric runs the mode. A block's fabrics start together and close at its
    end, the last started first (each one's emulation restores what it found: ovs-vswitchd's send
    buffer is one for all of them); no run starts once ``past_stop()``; each record gets its "rep"
    and "started_s" (``elapsed()``).

    Returns (results {pattern: {mode: [record, ...]}}, failed [record, ...], runs skipped, the error
    that stopped it or None, runs not run after that stop). A failed run is recorded (pattern,
    mode, rep, reason, output tail, files) and the next one runs; ``max_failures`` failures in a
    row (0: no bound) or a fabric that does not start stop everything, keeping what ran."""
    results, failed, skipped, error, done = {}, [], 0, None, 0
    total = sum(len(runs) for _d, runs in blocks)
    in_a_row = 0
    try:
        for detections, runs in blocks:
            fabrics = {}
            try:
                for i, detection in enumerate(detections):
                    if past_stop():
                        break
                    fabrics[detection] = start_fabric(i, detection)
                for rep, p, mode in runs:
                    fabric = fabrics.get(setup_of[mode])
                    if fabric is None or past_stop():
                        skipped += 1
                        continue
                    done += 1
                    at = round(elapsed(), 1)
                    try:
                        record = run_one(fabric, rep, p, mode)
                    except (RuntimeError, OSError) as exc:
                        in_a_row += 1
                        rec = {"pattern": p, "mode": mode, "rep": rep, "started_s": at,
                               "reason": getattr(exc, "reason", "%s: %s" % (type(exc).__name__, exc)),
                               "tail": getattr(exc, "tail", ""), "files": getattr(exc, "files", [])}
                        failed.append(rec)
                        log("%s %s #%d: FAILED: %s" % (p, mode, rep, rec["reason"]))
                        if max_failures and in_a_row >= max_failures:
                            raise _Stop("%d runs in a row failed (--max-consecutive-failures %d): the fabric "
                                        "is probably broken, so the bench stopped" % (in_a_row, max_failures))
                        continue
                    in_a_row = 0
                    record.update(rep=rep, started_s=at)
                    results.setdefault(p, {}).setdefault(mode, []).append(record)
            finally:        # last started, first closed: each fabric's emulation puts back what it found
                for fabric in reversed(list(fabrics.values())):
                    fabric.close()
    except _Stop as exc:
        error = str(exc)
    except (RuntimeError, OSError, KeyboardInterrupt) as exc:     # a fabric's start, or ^C
        error = "%s: %s" % (type(exc).__name__, str(exc)[-300:])
    if error:
        log("bench_flowdetect: stopped: %s" % error)
    return results, failed, skipped, error, total - done - skipped


class _Stop(Exception):
    """The consecutive-failure bound was reached."""


def failures_md(failed, skipped=0, stop_after=0, error=None, not_run=0):
    """results.md's lines after the table: each failed run (reason, files), the runs skipped, the
    stop; "" when all ran."""
    lines = []
    if failed:
        lines.append("Failed runs: %d (no time; the medians above are over the runs that finished; "
                     "output tails in results.json, `failed_runs`):" % len(failed))
        for r in failed:
            files = ", ".join(r.get("files", []))
            lines.append("- %s %s #%d%s: %s%s" % (
                r["pattern"], r["mode"], r["rep"], " (at %g s)" % r["started_s"] if "started_s" in r else "",
                r["reason"], "; files: " + files if files else ""))
    if skipped:
        lines.append("%d runs skipped (--stop-after %g s, or a fabric that did not start)" % (skipped, stop_after))
    if error:
        lines.append("stopped early: %s%s" % (error, "; %d runs not run" % not_run if not_run else ""))
    return "\n".join(lines)


def late_md(results):
    """results.md's lines on the runs that went past --timeout and ended before the kill (counted
    in the table; their stall diagnostics kept); "" when none did."""
    late = [(p, mode, r) for p, by_mode in results.items() for mode, runs in by_mode.items() for r in runs
            if r.get("past_timeout_files")]
    if not late:
        return ""
    return "\n".join(["Runs past --timeout that ended before the kill: %d (counted above):" % len(late)] + [
        "- %s %s #%s: %.2f s; files: %s" % (p, mode, r.get("rep", "?"), r["seconds"],
                                             ", ".join(r["past_timeout_files"]))
        for p, mode, r in late])
