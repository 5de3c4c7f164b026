"""calc_table's grouping pass over a big csv on two cores: this process groups the first part of
the file, a second process the rest, and the second's groups are merged into ours.

Why: a million-row csv export takes ~3.5 s in one process, nearly all of it Python per row
(reading, the 合计 rule of ``Table.data_rows``, the grouping); pandas takes 1.5 s. The rows
themselves never cross between the processes, only the worker's groups (a few hundred
accumulators), so two cores give nearly twice the speed.

The answer is the one-process answer, exactly:
- the split point ``S`` is right after a ``\\n`` byte (between characters in UTF-8 and GB18030;
  other encodings, UTF-16 for one, read in one piece) past the middle, where the ``"`` count before
  it is even; our part is read with a sentinel line after its end (``PartEnd.check``), so a part
  that ended inside a quoted field (a cell with a line break straddling ``S``) is noticed before
  its broken last row is counted, and the file is then read in one piece (:class:`Restart`);
- the worker numbers its rows from 1 at ``S``; every row number it sends back (skip examples,
  合计 rows, ``stopped_at``) is shifted by our part's record count (blank lines included);
- sums merge exactly (Decimal plus whole cents), averages from sum and count, counts add, max/min
  keep the earlier value on a tie, distinct sets unite, groups new to us are appended in the
  worker's first-seen order, which is the one-process order; the 200,000-group cap is checked on
  the merged groups;
- a 合计 or footer summary row pending where our part ends (``Table.open_footer``), a header
  sample reaching past ``S``, or any failure in the worker: :class:`Restart`.

Processes: ``multiprocessing`` with the spawn start method on every platform (what Windows has;
nothing is inherited but the job), a daemon process ended in ``finally`` and by multiprocessing's
exit handler. It also watches a pipe whose other end only we hold, so when we are killed (the
host's timeout) it exits at once instead of finishing its part. It works to our deadline
(``job["budget"]``); when its answer is late we stop at ``S`` with ``complete: false``, like a
one-process pass that ran out of time there. ``XLA_CSV_WORKERS=1`` forces one process, ``=2`` splits
a csv of any size (tests of the split); ``XLA_DEBUG=1`` notes the cut and any restart on stderr.
"""
import itertools
import os
import pickle
import threading
import time

from ..errors import Deadline
from . import group_pass
from .aggregate import RowCount, make_metric
from .formats.delimited import PartEnd, SplitInsideQuotes

MIN_SPLIT_BYTES = 8 << 20       # ~100k ledger rows: below this, starting a process costs more than it saves
SHARE = 0.54                    # of the bytes read here: the worker starts ~0.2 s later (interpreter, imports)
SEEK = 1 << 20                  # bytes searched past the middle for a line end with an even quote count
# encodings where the bytes 0x0A and 0x22 are always "\n" and '"', never part of another character
SPLIT_ENCODINGS = frozenset(["utf-8", "utf-8-sig", "gb18030", "gbk", "gb2312", "cp936", "big5", "cp950", "ascii",
                             "latin-1", "iso-8859-1", "cp1252"])
MARGIN = 0.5                    # seconds the worker keeps free before our deadline to send its groups


class Restart(Exception):
    """The two-part pass cannot give the one-process answer: group the file in one pass."""


def split_point(book):
    """Byte offset to split a csv book at, or None (one process)."""
    if getattr(book, "kind", None) != "csv" or not hasattr(book, "byte_rows"):
        return None
    setting = os.environ.get("XLA_CSV_WORKERS", "").strip()
    if setting == "1" or (os.cpu_count() or 1) < 2:
        return None
    if str(book.encoding).lower() not in SPLIT_ENCODINGS:
        return None
    try:
        size = os.path.getsize(book.path)
        if size < (MIN_SPLIT_BYTES if setting != "2" else 1):    # 2: any size (tests of the split itself)
            return None
        with open(book.path, "rb") as fh:
            mid = int(size * SHARE)
            quotes = 0
            left = mid
            while left > 0:                    # the quote count before the middle (C-speed count)
                piece = fh.read(min(left, 1 << 22))
                if not piece:
                    return None
                quotes += piece.count(b'"')
                left -= len(piece)
            window = fh.read(SEEK)
    except OSError:
        return None
    pos = 0
    while True:
        nl = window.find(b"\n", pos)
        if nl < 0:
            return None
        quotes += window.count(b'"', pos, nl + 1)
        if not quotes % 2:
            cut = mid + nl + 1
            return cut if cut < size else None
        pos = nl + 1


def grouped(table, params, groups, metrics, where, include_totals, deadline):
    """``group_pass.aggregate``'s answer for the table, on two processes when the file is a big
    csv (see the module docstring); raises :class:`Restart` when the split must be undone."""
    cut = split_point(table.book)
    if cut is None:
        return group_pass.aggregate(table, groups, metrics, where, include_totals, deadline)
    _debug("two processes, cut at byte %d" % cut)
    budget = deadline.remaining() - MARGIN if deadline is not None else 3600.0
    job = {"path": table.book.path, "start": cut, "book": table.book.part_state(), "names": table.names,
           "params": {k: params.get(k) for k in ("group_by", "metrics", "where")},
           "include_totals": include_totals, "budget": budget}
    try:
        worker = _Worker(job)
    except (OSError, ValueError, ImportError, RuntimeError) as exc:   # no second process here: one pass
        _debug("no worker: %s" % exc)
        return group_pass.aggregate(table, groups, metrics, where, include_totals, deadline)
    try:
        end = PartEnd(check=True)
        seen = table.sample_end
        close = getattr(table._rows, "close", None)     # the whole-file reader the header was found with
        if close is not None:
            close()
        table._rows = itertools.dropwhile(lambda item: item[0] <= seen, table.book.byte_rows(0, cut, end))
        try:
            mine = group_pass.aggregate(table, groups, metrics, where, include_totals, deadline)
        except SplitInsideQuotes:
            raise _restart("our part ended inside a quoted field")
        buckets, used, filtered, skips, specs, stopped_at = mine
        if stopped_at is not None:          # our own part ran out of time: the rows before it, as always
            table.book.read_warnings(end.bad)
            return mine
        if table.open_footer or end.records is None or end.records < seen:
            raise _restart("a totals/footer row pending at the cut" if table.open_footer else "header past the cut")
        waited = time.monotonic()
        theirs = worker.result(deadline)
        _debug("our part done, waited %.2f s for the worker's" % (time.monotonic() - waited))
        if theirs is None:                  # late: the rows after the cut are not counted, and the answer says so
            table.book.read_warnings(end.bad)
            return buckets, used, filtered, skips, specs, end.records + 1
        if theirs[0] != "ok":
            raise _restart("worker: %s" % theirs[1])
        part = theirs[1]
        stopped_at = merge(table, where, mine, part, end.records)
        table.book.read_warnings(end.bad + part["bad"])
        return buckets, used + part["used"], filtered + part["filtered"], skips, specs, stopped_at
    finally:
        worker.close()


def _debug(note):
    if os.environ.get("XLA_DEBUG") == "1":
        import sys
        sys.stderr.write("split_pass: %s\n" % note)


def _restart(reason):
    _debug("restart in one process: " + reason)
    return Restart(reason)


def merge(table, where, mine, part, shift):
    """Fold the worker's groups and counters (rows numbered from 1 at the cut) into ours;
    returns the merged ``stopped_at``."""
    buckets, _used, _filtered, skips, specs, _stopped = mine
    plan = part["plan"]
    for key, theirs in part["buckets"].items():
        accs = buckets.get(key)
        if accs is None:
            if len(buckets) >= group_pass.MAX_GROUPS:
                raise group_pass.too_many_groups()
            accs = [RowCount() if idx < 0 else make_metric(func, skips[i]) for i, (idx, func) in enumerate(plan)]
            buckets[key] = accs
        for acc, other in zip(accs, theirs):
            acc.merge(other, shift)
    for skip, other in zip(skips, part["skips"]):
        skip.merge(other, shift)
    bucketers = [b for _i, b in specs if b is not None]
    for bucketer, other in zip(bucketers, part["bucketers"]):
        bucketer.merge(other, shift)
    if part["where"] is not None:
        where.uncomparable = [a + b for a, b in zip(where.uncomparable, part["where"])]
    table.totals_count += part["totals_count"]
    table.totals_rows = (table.totals_rows + [r + shift for r in part["totals_rows"]])[:1000]
    table.summary_rows = (table.summary_rows + [r + shift for r in part["summary_rows"]])[:1000]
    table.note_rows = table.note_rows + [r + shift for r in part["note_rows"]]
    return part["stopped_at"] + shift if part["stopped_at"] is not None else None


class _Worker(object):
    """The second process (spawn), its answer pipe and the pipe that ends it when we die."""

    def __init__(self, job):
        import multiprocessing
        ctx = multiprocessing.get_context("spawn")
        self.answers, send = ctx.Pipe(duplex=False)
        life, self.lifeline = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=work, args=(job, send, life), daemon=True)
        _start_without_main(self.proc)
        send.close()
        life.close()

    def result(self, deadline):
        """``("ok", part)`` / ``("error", text)``, or None when it is not there in time."""
        try:
            wait = deadline.remaining() if deadline is not None else None
            if not self.answers.poll(wait):
                return None
            return pickle.loads(self.answers.recv_bytes())
        except (EOFError, OSError, pickle.UnpicklingError, ValueError, TypeError, AttributeError):
            return ("error", "no answer")

    def close(self):
        proc, self.proc = self.proc, None
        if proc is None:
            return
        try:
            self.lifeline.close()           # the worker's watcher sees the end and exits
        except OSError:
            pass
        if proc.is_alive():
            proc.terminate()
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join(5)
        for conn in (self.answers,):
            try:
                conn.close()
            except OSError:
                pass
        try:
            proc.close()
        except (ValueError, AttributeError):
            pass


def _start_without_main(proc):
    """Start a spawn process without it running our ``__main__`` script first. multiprocessing
    re-runs the main module (by ``__spec__`` name or ``__file__``) in a spawned child so that
    functions defined there can be found; ``work`` lives here, so that only costs start-up time
    (the tool's imports) and breaks callers whose script lacks the ``if __name__ == "__main__"``
    guard (the child would run the whole tool again, or print multiprocessing's bootstrapping
    error). With neither attribute the child imports only what the job needs."""
    import sys
    main = sys.modules.get("__main__")
    saved = {}
    for name in ("__file__", "__spec__"):
        if main is not None and name in main.__dict__:
            saved[name] = main.__dict__[name]
    try:
        if main is not None:
            main.__dict__.pop("__file__", None)
            main.__dict__["__spec__"] = None
        proc.start()
    finally:
        if main is not None:
            main.__dict__.update(saved)
            if "__spec__" not in saved:
                main.__dict__.pop("__spec__", None)


def _watch(life):
    """In the worker: exit as soon as the parent's end of ``life`` closes (it died or is done)."""
    try:
        life.recv_bytes()
    except BaseException:   # noqa: BLE001 - EOF (parent gone) or anything else: stop at once
        pass
    os._exit(0)


def work(job, send, life):
    """The worker: group rows ``[start, end)`` of the csv with the tool's own parameters and send
    the groups back (pickled). Never prints: every failure is an ``("error", …)`` answer."""
    threading.Thread(target=_watch, args=(life,), daemon=True).start()
    try:
        from .. import progress
        progress.report = lambda *args, **kwargs: None      # only the parent reports progress
        from .book import Table
        from .formats.delimited import part_book
        book = part_book(job["path"], job["book"])
        end = PartEnd()
        size = os.path.getsize(job["path"])
        table = Table.detached(book, job["names"], book.byte_rows(job["start"], size, end))
        groups, metrics, where = group_pass.plan(table, job["params"])
        deadline = Deadline(job["budget"])
        buckets, used, filtered, skips, specs, stopped_at = group_pass.aggregate(
            table, groups, metrics, where, job["include_totals"], deadline)
        part = {"buckets": buckets, "used": used, "filtered": filtered, "skips": skips, "stopped_at": stopped_at,
                "plan": [(m[0].index if m[0] is not None else -1, m[1]) for m in metrics],
                "bucketers": [_Bad(b) for _i, b in specs if b is not None],
                "where": list(where.uncomparable) if where.conditions else None,
                "totals_count": table.totals_count, "totals_rows": table.totals_rows,
                "summary_rows": table.summary_rows, "note_rows": table.note_rows, "bad": end.bad}
        data = pickle.dumps(("ok", part), pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:   # noqa: BLE001 - the parent reads the file in one piece instead
        data = pickle.dumps(("error", type(exc).__name__), pickle.HIGHEST_PROTOCOL)
    try:
        send.send_bytes(data)
        send.close()
    except (OSError, ValueError):
        pass


class _Bad(object):
    """A bucketer's bad-cell count and examples (its value cache stays behind)."""

    def __init__(self, bucketer):
        self.bad = bucketer.bad
        self.bad_examples = bucketer.bad_examples
