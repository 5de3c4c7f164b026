"""Progress of long work, as one documented line form on stderr (rules.md section 2).

Why stderr lines: a tool is a plain process whose stdout is its one JSON answer; stderr is free
until the end, where the error goes. A line ``[xla-progress] {"done": 5000, "total": 20000,
"note": "..."}`` is cheap to write, and a host that does not know it just sees a log line. Our
host (:mod:`xlakit.host`) reads these lines live, turns them into MCP ``notifications/progress``
or a terminal bar, and keeps them out of the error text, so the 2,000-character error cut always
keeps the real error (printed last).

Bottom layer: domain modules (tables, documents, filetools) call :func:`report` directly, the way
they raise ToolError; tools see it as ``rt.progress``. How often lines appear is decided here,
by count, never by the clock (runs stay reproducible): with a known ``total`` one line per 5 %
step (at most 21), without one every call (callers call every N units of work)."""
import json
import sys

PREFIX = "[xla-progress] "
STEPS = 20                   # lines for a known total: one per 5 %

_last = {"step": None, "done": None}


def line(done, total=None, note=""):
    """The stderr line for one report (without the newline)."""
    body = {"done": done, "total": total, "note": str(note or "")}
    return PREFIX + json.dumps(body, ensure_ascii=False, separators=(", ", ": "))


def report(done, total=None, note=""):
    """Say ``done`` of ``total`` (None when unknown) units are done; ``note`` is a short Chinese
    phrase ("已读 5000 行"). Lines for a known total are thinned to 5 % steps."""
    try:
        done = int(done)
        total = int(total) if total else None
    except (TypeError, ValueError):
        return
    if total and done > total:           # a declared size that was wrong (an xlsx dimension): count on
        total = None
    if total:
        step = min(STEPS, done * STEPS // total)
        if step == _last["step"] and done < total:
            return
        _last["step"] = step
    if done == _last["done"]:
        return
    _last["done"] = done
    try:
        stream = sys.__stderr__ or sys.stderr
        stream.write(line(done, total, note) + "\n")
        stream.flush()
    except (OSError, ValueError, UnicodeError, AttributeError):
        pass


def parse(text):
    """``(done, total, note)`` of a progress line, None for any other line."""
    if not text.startswith(PREFIX):
        return None
    try:
        body = json.loads(text[len(PREFIX):])
        done = body["done"]
        total = body.get("total")
        if not isinstance(done, (int, float)) or isinstance(done, bool):
            return None
        if total is not None and (not isinstance(total, (int, float)) or isinstance(total, bool)):
            total = None
        return done, total, str(body.get("note") or "")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def strip(text):
    """``text`` (a tool's stderr) without its progress lines: what may become the error."""
    if PREFIX not in text:
        return text
    return "\n".join(ln for ln in text.splitlines() if not ln.startswith(PREFIX))


def bar_text(done, total=None, note="", width=24):
    """One terminal line for ``xla.py run``: ``[#####-----]  45%  note`` (a count without a total)."""
    if total:
        filled = max(0, min(width, int(width * done / total)))
        head = "[%s%s] %3d%%" % ("#" * filled, "-" * (width - filled), min(100, int(100 * done / total)))
    else:
        head = "[%s] %d" % ("~" * width, done)
    return ("%s  %s" % (head, note)).rstrip()[:100]
