"""A big xlsx sheet read on two cores: one forked worker parses some chunks while we parse others.

Why: parsing the sheet XML is ~85% of reading a million-row ledger and it is all Python, one core.
The chunks of :func:`xlsx_sheet.member_chunks` are cut at the same places in every process that
inflates the member, so the worker opens the zip by path, inflates the member itself (cheap: ~0.6 s
per million rows) and parses only the chunks it *claims*; nothing big crosses between processes
but the parsed rows, pickled per chunk (pickle memoizes the shared strings and cached dates of a
chunk, so the message stays small).

Claiming: a shared counter under a lock holds the first unclaimed chunk number. The worker takes
the next one each time it is free; this process, arriving at chunk ``k`` in order, takes ``k``
itself when it is still unclaimed, else receives the worker's answer for it (the worker's answers
come in its claim order, which is chunk order). A consumer that is busy with every row (calc,
pivot) thus automatically leaves more chunks to the worker; the pipe's small buffer keeps the
worker at most one chunk ahead of what was received, so memory stays bounded.

The answers stay those of one process, byte for byte:
- anything the worker cannot or should not decide (a row without ``r=`` at an unknown row
  number, a ``_ParseProblem``, any error) comes back as "parse it yourself", and this process
  parses that chunk with the full state, raising where the single-process reader raises (so the
  openpyxl fallback resumes after the last row given out);
- formulas without a cached value are sent back and replayed in order; merges in the tail too;
  the row number after the chunk (for rows without ``r=``) comes back with the rows.

When: only where ``fork`` is safe and cheap (Linux; on macOS fork is unsafe once system
frameworks are loaded and spawn would re-import and re-read the shared strings, so it stays
single-process there unless ``XLA_XLSX_WORKERS=2``; Windows has no fork), only for a full read
(no ``max_rows``), only for a sheet of at least ``MIN_PARALLEL_BYTES`` of XML, and the worker is
started when the reader reaches the second chunk (a preview of the first rows never forks).
``XLA_XLSX_WORKERS=1`` forces one process. The worker dies with the reader: the generator's
``finally`` (consumer stopped early, error, deadline) and the book's ``close()`` terminate and reap
it; it is a daemon process (multiprocessing's exit handler ends it), and a worker whose parent died
gets a broken pipe at its next send.
"""
import os
import pickle
import sys

from .xlsx_sheet import member_chunks

MIN_PARALLEL_BYTES = 8 << 20        # ~25k rows of a 10-column ledger; below this one core is quicker
LOCK_WAIT = 10.0                    # seconds
QUEUED = 24                         # answers a worker may hold for the reader (~150-400 KB each)
WANTED_BYTES = 1024                 # room for the projected column list (~200 columns)
PIPE_BYTES = 1 << 20                # Linux's default cap for an unprivileged pipe (fs/pipe-max-size)


def workers_wanted(member_size, max_rows):
    """How many processes to read a sheet of ``member_size`` XML bytes with (1 or 2)."""
    setting = os.environ.get("XLA_XLSX_WORKERS", "").strip()
    if setting == "1" or max_rows is not None:
        return 1
    if (os.cpu_count() or 1) < 2 or member_size < MIN_PARALLEL_BYTES:
        return 1
    if sys.platform.startswith("linux") or (setting == "2" and sys.platform == "darwin"):
        try:
            import multiprocessing
            if "fork" in multiprocessing.get_all_start_methods():
                return 2
        except (ImportError, OSError):
            return 1
    return 1


class _Worker(object):
    """The forked worker and the shared claim counter."""

    def __init__(self, path, member, boundary, parser):
        import multiprocessing
        ctx = multiprocessing.get_context("fork")
        self.member = member
        self.lock = ctx.Lock()
        self.counter = ctx.RawValue("q", 0)
        self.wanted = ctx.RawArray("c", WANTED_BYTES)    # the projected columns, "0,1,2,7" (see project)
        self.recv_end, send_end = ctx.Pipe(duplex=False)
        _widen(send_end)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()       # a forked child must not write out our buffered output again
            except (AttributeError, OSError, ValueError):
                pass
        self.proc = ctx.Process(target=_work, args=(path, member, boundary, parser, self.lock, self.counter,
                                                    self.wanted, send_end, self.recv_end), daemon=True)
        self.proc.start()
        send_end.close()
        self.alive = True

    def claim(self, k):
        """True when chunk ``k`` is ours (we take it), False when the worker took it. (A worker
        killed from outside while holding the lock would block us: then we stop using it.)"""
        if not self.lock.acquire(timeout=LOCK_WAIT):
            self.close()
            return True
        try:
            if self.counter.value > k:
                return False
            self.counter.value = k + 1
            return True
        finally:
            self.lock.release()

    def project(self, columns):
        """Tell the worker the consumer needs only ``columns`` (``SheetParser.project``); it
        takes them up at its next claim, under the lock. Too many to write down: it builds all."""
        text = ",".join(str(c) for c in sorted(columns)).encode("ascii")
        if len(text) >= WANTED_BYTES or not self.lock.acquire(timeout=LOCK_WAIT):
            return
        try:
            self.wanted.value = text
        finally:
            self.lock.release()

    def ready(self):
        """Whether the worker's next answer can be received without waiting."""
        try:
            return self.recv_end.poll()
        except (EOFError, OSError):
            return True

    def answer(self, k):
        """The worker's detached parse of chunk ``k`` (see ``SheetParser.detached``), or None
        (parse it here: the worker left it to its turn, or is gone)."""
        try:
            got, done = pickle.loads(self.recv_end.recv_bytes())
        except (EOFError, OSError, pickle.UnpicklingError, ValueError, TypeError):
            self.alive = False
            return None
        if got != k:                 # never expected; be safe and stop using the worker
            self.close()
            return None
        return done

    def close(self):
        self.alive = False
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
            if proc.is_alive():
                proc.kill()
        proc.join(5)
        try:
            self.recv_end.close()
        except OSError:
            pass
        try:
            proc.close()
        except (ValueError, AttributeError):
            pass


def _widen(conn):
    """A pipe buffer that holds a whole chunk's answer (~300 KB; Linux default 64 KB): the worker
    then hands it over in one write instead of a dozen turns of the two processes, which on a
    loaded machine each wait for the scheduler."""
    try:
        import fcntl
        fcntl.fcntl(conn.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError, ValueError):
        pass


def _work(path, member, boundary, parser, lock, counter, wanted, conn, parent_end):
    """The worker: inflate the member, parse the chunks it claims, send each answer in order.
    Answers wait in a bounded queue (``QUEUED`` chunks) for a sender thread, so the worker keeps
    parsing while the reader is busy elsewhere (e.g. its scan for merges before the first row)."""
    import queue
    import threading
    import zipfile
    parent_end.close()
    zf = None
    out = queue.Queue(QUEUED)

    def send():
        while True:
            data = out.get()
            if data is None:
                return
            try:
                conn.send_bytes(data)
            except (OSError, EOFError, ValueError):
                os._exit(0)             # the reader went away (broken pipe): nothing left to do

    sender = threading.Thread(target=send, daemon=True)
    sender.start()

    def claim():
        with lock:
            k = counter.value
            counter.value = k + 1
            if parser.wanted is None and wanted.value:
                parser.project(int(c) for c in wanted.value.split(b","))
            return k

    want = claim()
    k = -1
    try:
        zf = zipfile.ZipFile(path)
        for k, chunk in enumerate(member_chunks(zf, member, boundary)):
            if k < want:
                continue
            out.put(pickle.dumps((k, parser.detached(chunk, k)), pickle.HIGHEST_PROTOCOL))
            del chunk
            want = claim()
    except Exception:  # noqa: BLE001 - opening or inflating failed: the parent meets the same error
        # itself, or (file gone, memory) simply parses the chunks the worker leaves unanswered;
        # never a traceback from here onto the tool's stderr
        if want == k:
            out.put(pickle.dumps((k, None), pickle.HIGHEST_PROTOCOL))
    finally:
        out.put(None)
        sender.join()
        conn.close()
        if zf is not None:
            zf.close()


def start_worker(book, path, member, boundary, parser):
    """A worker for the sheet, started now (it claims chunks from the first one on); None when
    no process can be started here (then this process reads alone, as on Windows)."""
    try:
        worker = _Worker(path, member, boundary, parser)
    except (OSError, ValueError, AssertionError, ImportError) as exc:   # (a daemon process cannot fork one)
        if os.environ.get("XLA_DEBUG") == "1":
            sys.stderr.write("xlsx worker not started: %s\n" % exc)
        return None
    book._workers.append(worker)
    return worker


def parallel_rows(book, path, member, boundary, parser, worker=None):
    """``(row number, values)`` of the sheet in order, chunks parsed by this process and a worker.
    ``parser`` is this process's parser (its ``note`` records into the book); the worker gets a
    copy at fork time, with the shared strings already loaded.

    While the worker's answer for chunk ``k`` is not there yet, this process does not wait idle:
    it takes chunk ``k + 1`` (when unclaimed) and parses it detached (like the worker would), to
    give out right after ``k``. At most one such chunk is held, so memory stays bounded.
    ``worker``: one started earlier for this sheet with a fresh copy of ``parser`` (see
    ``XlsxBook.merges``); else one is started at the second chunk."""
    chunks = enumerate(member_chunks(book._zip, member, boundary))
    ahead = None                  # (k, chunk bytes, ours?, detached result)
    try:
        while True:
            if ahead is not None:
                k, chunk, mine, done = ahead
                ahead = None
            else:
                try:
                    k, chunk = next(chunks)
                except StopIteration:
                    break
                if k == 1 and worker is None:
                    worker = start_worker(book, path, member, boundary, parser)
                mine = worker is None or not worker.alive or worker.claim(k)
                done = None
                if not mine and not worker.ready():
                    ahead = _take_ahead(chunks, worker, parser)
            if not mine:
                done = worker.answer(k)
            if done is not None:
                rows, notes, merges, next_row = done
                del done
                parser.replay(notes, merges, next_row)
                yield from rows
                continue
            # ours, or a chunk the worker (or a parse ahead) left to its turn: parse it in order
            yield from parser.rows(chunk, k)
    finally:
        if worker is not None:
            worker.close()
            if worker in book._workers:
                book._workers.remove(worker)


def _take_ahead(chunks, worker, parser):
    """The next chunk, parsed here (detached) when we can claim it (see ``parallel_rows``)."""
    try:
        k, chunk = next(chunks)
    except StopIteration:
        return None
    if not worker.claim(k):
        return (k, chunk, False, None)
    return (k, chunk, True, parser.detached(chunk, k))
