"""A small per-file JSON cache under ``~/.xla/cache/<name>/``, shared by ``page_offsets`` (where
each PDF page starts in the text) and ``ocr_cache`` (what OCR read on each page).

Why one module: both key an entry by the file *and* the code that made it (real path, size,
mtime, the first 64 KB, the newest mtime of the listed source files), so an edited file or a
changed reader never reuses old results; both write whole entries atomically (temp + replace)
because the host may kill the process at any moment; both stay bounded (the least recently used
entries go first). Nothing here is ever an error for the user: an unreadable or unwritable cache
is a miss."""
import hashlib
import json
import os
import tempfile

from ..fs import paths

_HERE = os.path.dirname(os.path.abspath(__file__))


def folder(name):
    return paths.xla_dir("cache", name)


def key(path, version, code):
    """The entry key of ``path`` for results made by this package's files ``code``; None when
    the file cannot be read."""
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            head = fh.read(65536)
        stamp = max(os.stat(os.path.join(_HERE, name)).st_mtime_ns for name in code
                    if os.path.exists(os.path.join(_HERE, name)))
    except (OSError, ValueError):
        return None
    digest = hashlib.sha256()
    for part in (version, os.path.realpath(path), st.st_size, st.st_mtime_ns, stamp):
        digest.update(str(part).encode("utf-8", "surrogatepass") + b"\0")
    digest.update(head)
    return digest.hexdigest()[:40]


def load(name, entry):
    """The JSON stored for ``entry`` in cache ``name`` (marked recently used), or None."""
    where = os.path.join(folder(name), entry + ".json")
    try:
        with open(where, "r", encoding="utf-8") as fh:
            data = json.load(fh)
        os.utime(where)
        return data
    except (OSError, ValueError):
        return None


def store(name, entry, data, max_entries):
    """Write ``data`` as ``entry`` of cache ``name`` in one step, then keep at most ``max_entries``."""
    where = folder(name)
    try:
        os.makedirs(where, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".entry-", dir=where)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, ensure_ascii=False)
            os.replace(tmp, os.path.join(where, entry + ".json"))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        _prune(where, max_entries)
    except OSError:
        pass


def _prune(where, max_entries):
    try:
        names = [n for n in os.listdir(where) if n.endswith(".json")]
        if len(names) <= max_entries:
            return
        dated = sorted((os.stat(os.path.join(where, n)).st_mtime, n) for n in names)
        for _mtime, name in dated[:len(names) - max_entries]:
            os.unlink(os.path.join(where, name))
    except OSError:
        pass
