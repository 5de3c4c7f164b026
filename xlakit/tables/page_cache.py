"""A sheet's rows kept on disk for paging, so read_spreadsheet's page k costs about what page 1 does.

Why: the model pages a big sheet with ``next_offset``, one tool process per page. Without this,
every call re-reads the workbook from its first row (a 55,745-row sheet: 41 calls, 146 s), and
every call also reads to the end to count the rows. The first call already streams every row (it
counts them), so it writes them here as it goes; later calls for the same file find the entry,
take ``total_rows`` from it and decode only the chunk lines the page needs.

Layout: ``~/.xla/cache/pages/<key>.rows`` (one JSON list of ``[row_number, cells]`` pairs per
CHUNK_ROWS rows, one line each) and ``<key>.json`` (row count, byte offset of every chunk line,
merges, the reader's notes), written last, so an entry without it is incomplete and unused. The
key hashes the file's real path, size and mtime (a saved file gets a new entry), the sheet and
the readers' own code (a fixed reader never serves old cells). Cells are JSON with dates tagged
(``{"d": "2024-01-05"}``); a sheet holding anything else (elapsed ``Duration`` s among them) is
simply not cached.

Bounds: an entry stops being written past MAX_ENTRY bytes (the sheet is then paged the old way);
entries not used for MAX_AGE seconds and the oldest ones beyond MAX_TOTAL bytes are removed
whenever a new entry is written. Small sheets (read in one page) are not cached at all. Nothing
here is ever an error for the user: an unreadable cache is a miss.
"""
import datetime
import glob
import hashlib
import json
import os
import time

from ..fs import paths
from .values import Duration

VERSION = 1
CHUNK_ROWS = 256
MAX_ENTRY = 64 * 1024 * 1024
MAX_TOTAL = 256 * 1024 * 1024
MAX_AGE = 3 * 86400

_FORMATS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "formats")


def cache_dir():
    return paths.xla_dir("cache", "pages")


def _code_stamp():
    """The newest mtime among the reader modules: a changed reader makes new keys."""
    stamp = 0
    for name in glob.glob(os.path.join(_FORMATS, "*.py")) + [os.path.abspath(__file__)]:
        try:
            stamp = max(stamp, os.stat(name).st_mtime_ns)
        except OSError:
            pass
    return stamp


def entry_key(path, info):
    """Hex key for one sheet of one version of a file, or None when the file cannot be stat'ed."""
    try:
        st = os.stat(path)
        real = os.path.realpath(path)
    except OSError:
        return None
    text = "\0".join(str(x) for x in (VERSION, real, st.st_size, st.st_mtime_ns, info.index, info.name,
                                      _code_stamp()))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:40]


# ---------------------------------------------------------------------------------------------
# Cells <-> JSON

class _Uncacheable(Exception):
    pass


def _tag(value):
    """``json.dumps`` hook for what JSON has no type for (the C encoder handles the rest)."""
    cls = value.__class__
    if cls is datetime.date:
        return {"d": value.isoformat()}
    if cls is datetime.datetime and value.tzinfo is None:
        return {"t": value.isoformat()}
    if cls is datetime.time and value.tzinfo is None:
        return {"h": value.isoformat()}
    raise _Uncacheable(cls.__name__)


def _decode_cell(obj):
    if "d" in obj:
        return datetime.date.fromisoformat(obj["d"])
    if "t" in obj:
        return datetime.datetime.fromisoformat(obj["t"])
    return datetime.time.fromisoformat(obj["h"])


def _decode(values):
    if any(v.__class__ is dict for v in values):
        return [_decode_cell(v) if v.__class__ is dict else v for v in values]
    return values


# ---------------------------------------------------------------------------------------------
# Reading an entry

class Entry(object):
    """A complete cache entry: ``count`` rows, ``merges``, ``notes`` and ``formula_without_value``
    as the reader gave them, and ``rows(start)`` from the ``start``-th row on."""

    def __init__(self, base, meta):
        self._base = base
        self.count = meta["count"]
        self.merges = [tuple(m) for m in meta["merges"]]
        self.notes = list(meta["notes"])
        self.formula_without_value = meta.get("formula_without_value")
        self._offsets = meta["offsets"]

    def rows(self, start=0):
        """``(row_number, values)`` from the ``start``-th (0-based) row to the end."""
        chunk = max(0, start) // CHUNK_ROWS
        if chunk >= len(self._offsets):
            return
        skip = max(0, start) - chunk * CHUNK_ROWS
        try:
            with open(self._base + ".rows", "rb") as fh:
                fh.seek(self._offsets[chunk])
                for line in fh:
                    for rownum, values in json.loads(line.decode("utf-8", "surrogatepass"))[skip:]:
                        yield rownum, _decode(values)
                    skip = 0
        except (OSError, ValueError, TypeError, KeyError) as exc:
            self.discard()
            raise CacheError(str(exc))

    def discard(self):
        _remove(self._base + ".json")
        _remove(self._base + ".rows")


class CacheError(Exception):
    """An entry turned out unreadable while its rows were read (it is removed): read afresh."""


def lookup(path, info):
    """The Entry for this sheet of this file, or None."""
    key = entry_key(path, info)
    if key is None:
        return None
    base = os.path.join(cache_dir(), key)
    try:
        with open(base + ".json", "rb") as fh:
            meta = json.loads(fh.read().decode("utf-8"))
        if meta.get("version") != VERSION or not os.path.isfile(base + ".rows"):
            return None
        if os.path.getsize(base + ".rows") != meta["size"]:
            return None
        entry = Entry(base, meta)
        now = time.time()
        os.utime(base + ".json", (now, now))        # used: kept longer than unused entries
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return entry


# ---------------------------------------------------------------------------------------------
# Writing an entry while the rows stream past

class Recorder(object):
    """Wraps a row stream, writing it to a new entry; ``finish()`` keeps the entry, anything else
    (an uncacheable cell, the size cap, an early stop) drops it."""

    def __init__(self, path, info):
        self._key = entry_key(path, info)
        self._path = path
        self._info = info
        self._fh = None
        self._buf = []
        self._offsets = []
        self._size = 0
        self.count = 0
        self.alive = self._key is not None
        self._durations = Duration.made

    def _open(self):
        """The temporary file, made when the first chunk is full (a small sheet never gets one
        unless it is kept)."""
        import tempfile         # only when an entry is written (most calls just look one up)
        folder = cache_dir()
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, self._tmp = tempfile.mkstemp(prefix=".rows-", dir=folder)
        self._fh = os.fdopen(fd, "wb")

    def wrap(self, rows):
        for item in rows:
            if self.alive:
                self.add(item[0], item[1])
            yield item

    def add(self, rownum, values):
        self._buf.append([rownum, list(values)])   # a copy: the reader's caller may fill it in place
        self.count += 1
        if len(self._buf) >= CHUNK_ROWS:
            self._flush()

    def _flush(self):
        if not self._buf or not self.alive:
            return
        if Duration.made != self._durations:
            # an elapsed-time cell is a float to JSON: cached, it would come back without its
            # 255:10:10 display, so such a sheet is paged the old way
            self.abandon()
            return
        try:
            line = json.dumps(self._buf, ensure_ascii=False, separators=(",", ":"), default=_tag).encode(
                "utf-8", "surrogatepass") + b"\n"
        except (_Uncacheable, TypeError, ValueError):
            self.abandon()
            return
        self._buf = []
        self._offsets.append(self._size)
        self._size += len(line)
        if self._size > MAX_ENTRY:
            self.abandon()
            return
        try:
            if self._fh is None:
                self._open()
            self._fh.write(line)
        except OSError:
            self.abandon()

    def abandon(self):
        self.alive = False
        self._buf = []
        if self._fh is not None:
            try:
                self._fh.close()
                os.unlink(self._tmp)
            except OSError:
                pass
            self._fh = None

    def finish(self, merges, notes, formula_without_value=None):
        """Keep the entry (call only after the whole sheet was read) unless the file changed
        meanwhile."""
        if not self.alive:
            return False
        self._flush()
        if not self.alive or self._fh is None:
            return False
        try:
            self._fh.close()
            self._fh = None
            if self._key != entry_key(self._path, self._info):
                raise OSError("changed while read")
            base = os.path.join(cache_dir(), self._key)
            os.replace(self._tmp, base + ".rows")
            meta = {"version": VERSION, "count": self.count, "offsets": self._offsets, "size": self._size,
                    "merges": [list(m) for m in merges], "notes": list(notes),
                    "formula_without_value": formula_without_value}
            import tempfile
            fd, tmp = tempfile.mkstemp(prefix=".meta-", dir=cache_dir())
            with os.fdopen(fd, "wb") as fh:
                fh.write(json.dumps(meta, ensure_ascii=False).encode("utf-8"))
            os.replace(tmp, base + ".json")
        except (OSError, TypeError, ValueError):
            self.abandon()
            return False
        self.alive = False
        prune()
        return True


def prune(now=None):
    """Remove entries unused for MAX_AGE, then the least recently used beyond MAX_TOTAL, and
    temporary files left by a process that was killed."""
    now = now or time.time()
    folder = cache_dir()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    entries = []
    for name in names:
        full = os.path.join(folder, name)
        try:
            st = os.stat(full)
        except OSError:
            continue
        if name.startswith("."):
            if now - st.st_mtime > 3600:
                _remove(full)
            continue
        if name.endswith(".json"):
            base = full[:-5]
            try:
                size = st.st_size + os.stat(base + ".rows").st_size
            except OSError:
                size = st.st_size
            entries.append((st.st_mtime, size, base))
        elif name.endswith(".rows") and not os.path.exists(full[:-5] + ".json") and now - st.st_mtime > 3600:
            _remove(full)
    entries.sort(reverse=True)
    total = 0
    for mtime, size, base in entries:
        total += size
        if now - mtime > MAX_AGE or total > MAX_TOTAL:
            _remove(base + ".json")
            _remove(base + ".rows")


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass
