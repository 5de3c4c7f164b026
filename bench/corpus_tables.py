"""Score the table readers on other people's files: a public test corpus, side by side with calamine.

    python3 bench/corpus_tables.py [--no-tool] FOLDER [FOLDER...]

FOLDER holds spreadsheets from a public corpus (for example the ``tests/`` folder of calamine,
xlrd or SheetJS ``test_files``, brought here with the search tool's fetch), or the committed
fixtures (``tests/fixtures/xlsb``, ``tests/fixtures/xls_old``; old xls files count as ``xls2-4``
and ``xls5``). At the end it prints, per format
by content, how many files agree cell for cell with calamine, disagree, fail only with us
(we-fail), fail only with calamine (peer-fails) or with both. For each file it prints what our
reader made of it (ok with its sheets and cells, or the Chinese error) and what python-calamine
made of it, then whether the two agree cell by cell. It also runs the real ``read_spreadsheet``
tool through the host on every file, so a traceback, a timeout or a cut answer shows up as a
contract failure. Nothing here is a test: the corpus is not committed (licences differ per
file); surprises found with it become small committed fixtures with their source noted.

``--no-tool`` skips the per-file tool run (SheetJS keeps thousands of CSV baselines beside its test
files: the readers are compared on all of them, the host spawn would add ~0.25 s each). Files over
20 MB are skipped (counted as such).
"""
import datetime
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [ROOT, os.path.join(ROOT, "tools", "pydeps")]

from xlakit.tables import formats as tf  # noqa: E402
from xlakit import host  # noqa: E402

EXTS = (".xlsx", ".xlsm", ".xls", ".csv", ".ods", ".xlsb")


def norm(value):
    """A comparable form: numbers as rounded floats, dates as ISO text, empty as None."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return round(float(value), 9)
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return round(value.total_seconds() / 86400.0, 9)
    return str(value).strip()


def grid(rows, numbered=False):
    """Rows as lists of comparable cells. Our readers yield ``(row_number, cells)`` and skip empty
    rows; those are put back so both sides line up by row number."""
    out = []
    for row in rows:
        if numbered:
            number, row = row
            while len(out) < number - 1:
                out.append([])
        cells = [norm(v) for v in row]
        while cells and cells[-1] is None:
            cells.pop()
        out.append(cells)
    while out and not out[-1]:
        out.pop()
    return out


def ours(path):
    book = tf.open_book(path)
    sheets = {}
    for info in book.sheets:
        sheets[info.name] = grid(book.rows(info.name), numbered=True)
    return sheets


def _calamine_here(path):
    from python_calamine import CalamineWorkbook
    wb = CalamineWorkbook.from_path(path)
    return {name: grid(wb.get_sheet_by_name(name).to_python()) for name in wb.sheet_names}


def calamine(path, limit_bytes=2 << 30, timeout=120):
    """calamine's reading, in a forked child where there is fork: a few fuzzed files make it
    allocate without bound (ExcelDataReader's Test_git_issue_382_oom.xls) or abort, which took
    the whole run down. The child gets 2 GB of address space; a crash is calamine failing."""
    if not hasattr(os, "fork"):
        return _calamine_here(path)
    import pickle
    import resource
    import select
    import signal
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # the child: read, send, leave without cleanup
        os.close(rfd)
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
            try:
                payload = ("ok", _calamine_here(path))
            except BaseException as exc:  # noqa: BLE001 - Rust panics are BaseException
                payload = ("err", "%s" % str(exc)[:200])
            data = pickle.dumps(payload)
            with os.fdopen(wfd, "wb") as fh:
                fh.write(data)
        finally:
            os._exit(0)
    os.close(wfd)
    chunks, deadline = [], time.time() + timeout
    with os.fdopen(rfd, "rb") as fh:
        while True:
            ready, _, _ = select.select([fh], [], [], max(0.0, deadline - time.time()))
            if not ready:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise RuntimeError("timed out")
            chunk = os.read(fh.fileno(), 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        raise RuntimeError("crashed (status %d)" % status)
    kind, value = pickle.loads(b"".join(chunks))
    if kind != "ok":
        raise RuntimeError(value)
    return value


def trim_left(rows):
    """Drop leading columns empty in every row: calamine's range starts at the first used cell."""
    lead = min((next((i for i, v in enumerate(r) if v is not None), len(r)) for r in rows if r), default=0)
    return [r[lead:] for r in rows]


def compare(a, b):
    """(agreeing cells, differing cells, first difference)."""
    same = diff = 0
    first = None
    for name in a:
        if name not in b:
            continue
        ra, rb = a[name], b[name]
        # calamine starts at the first used cell; align by dropping leading empty rows
        while ra and not ra[0]:
            ra = ra[1:]
        while rb and not rb[0]:
            rb = rb[1:]
        ra, rb = trim_left(ra), trim_left(rb)
        for i in range(max(len(ra), len(rb))):
            x = ra[i] if i < len(ra) else []
            y = rb[i] if i < len(rb) else []
            for j in range(max(len(x), len(y))):
                u = x[j] if j < len(x) else None
                v = y[j] if j < len(y) else None
                if u == v:
                    same += 1
                else:
                    diff += 1
                    if first is None:
                        first = "%s!R%dC%d ours=%r calamine=%r" % (name, i + 1, j + 1, u, v)
    return same, diff, first


MAX_BYTES = 20 * 1024 * 1024


def main(folders, tool=True):
    files = []
    folders = [os.path.abspath(f) for f in folders]     # the tool runs in tools/: relative paths would miss
    for folder in folders:
        for base, _dirs, names in os.walk(folder):
            files += [os.path.join(base, n) for n in sorted(names) if n.lower().endswith(EXTS)]
    totals = {"files": 0, "ours_ok": 0, "cal_ok": 0, "agree": 0, "contract_ok": 0, "warned": 0}
    # per format: agree / disagree (both read it, cells differ) / we-fail (calamine reads it, we do
    # not) / peer-fails (we read it, calamine does not) / both-fail
    scores = {}
    home = os.path.join("/tmp", "xla-corpus-home")
    os.makedirs(home, exist_ok=True)
    skipped = 0
    for path in files:
        if os.path.getsize(path) > MAX_BYTES:
            skipped += 1
            continue
        totals["files"] += 1
        name = os.path.relpath(path, folders[0])
        try:
            t = time.perf_counter()
            a = ours(path)
            ta = time.perf_counter() - t
            totals["ours_ok"] += 1
            ours_txt = "ok %d sheets %.3fs" % (len(a), ta)
        except Exception as exc:  # noqa: BLE001
            a, ours_txt = None, "ERR %s: %s" % (type(exc).__name__, str(exc)[:90])
        try:
            b = calamine(path)
            totals["cal_ok"] += 1
            cal_txt = "ok"
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - calamine's Rust panics are BaseException
            b, cal_txt = None, "ERR %s" % str(exc)[:60]
        verdict = ""
        score = scores.setdefault(fmt_of(path), dict.fromkeys(SCORE_KEYS, 0))
        if a is not None and b is not None:
            same, diff, first = compare(a, b)
            if diff == 0:
                totals["agree"] += 1
                score["agree"] += 1
                verdict = "agree (%d cells)" % same
            else:
                score["disagree"] += 1
                verdict = "DIFF %d/%d: %s" % (diff, same + diff, first)
        elif a is None and b is not None:
            score["we-fail"] += 1
        elif a is not None:
            score["peer-fails"] += 1
        else:
            score["both-fail"] += 1
        contract = True
        if tool:
            res = host.run_tool("read_spreadsheet", {"path": path, "limit": 50}, home=home, log=False)
            contract = (not res.timed_out and "Traceback" not in res.stdout + res.stderr and
                        len(res.stdout) <= 20000 and isinstance(res.data, dict))
            totals["contract_ok"] += contract
            if a is not None and isinstance(res.data, dict) and res.data.get("warnings"):
                totals["warned"] += 1
        print("%-48s ours: %-34s calamine: %-10s %s%s" % (name[:48], ours_txt[:34], cal_txt[:10], verdict[:160],
                                                           "" if contract else "  CONTRACT BROKEN: " + res.stderr[-200:]),
              flush=True)
    print("\n%(files)d files: our reader read %(ours_ok)d, calamine %(cal_ok)d; cell-for-cell agreement on "
          "%(agree)d; tool contract held on %(contract_ok)d; answers with warnings (damage recovered, "
          "code page guessed…) %(warned)d" % totals + ("" if tool else " (tool not run: --no-tool)") +
          ("; %d files over 20 MB skipped" % skipped if skipped else ""))
    print("\n%-8s %6s " % ("format", "files") + " ".join("%10s" % k for k in SCORE_KEYS) + "   (beside calamine)")
    for fmt in sorted(scores):
        sc = scores[fmt]
        print("%-8s %6d " % (fmt, sum(sc.values())) + " ".join("%10d" % sc[k] for k in SCORE_KEYS))


SCORE_KEYS = ("agree", "disagree", "we-fail", "peer-fails", "both-fail")


def fmt_of(path):
    """The format by content where we can tell it (a renamed file counts as what it is); old xls
    files get their own rows: ``xls2-4`` (Excel 2.x-4.0, no OLE) and ``xls5`` (Excel 5.0/95)."""
    try:
        kind = tf.sniff(path)
    except Exception:  # noqa: BLE001 - unreadable: by its suffix
        return os.path.splitext(path)[1].lower().lstrip(".") or "?"
    if kind == "xls":
        with open(path, "rb") as fh:
            head = fh.read(8)
        if head[:4] in (b"\x09\x04\x06\x00", b"\x09\x02\x06\x00", b"\x09\x00\x04\x00"):
            return "xls2-4"
        try:
            import xlrd
            if xlrd.open_workbook(path, on_demand=True, logfile=open(os.devnull, "w")).biff_version < 80:
                return "xls5"
        except Exception:  # noqa: BLE001 - damaged: counted as xls
            pass
    return kind


if __name__ == "__main__":
    args = sys.argv[1:]
    no_tool = "--no-tool" in args
    args = [a for a in args if a != "--no-tool"]
    main(args or [os.path.join(HERE, "data", "corpus")], tool=not no_tool)
