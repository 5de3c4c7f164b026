"""One safe way to change a user's file, for every writer.

A user's file must survive whatever happens mid-write (a crash, a full disk, the 60 s kill, a second
tool writing the same file), so every writer goes through :func:`atomic_write`:

1. the per-file lock (:func:`locked`), so two tools changing one file take turns; a writer that
   reads, changes and writes back (append, replace one sheet) holds it around the whole cycle;
2. the check for a document open in Office, WPS or LibreOffice (their ``~$name`` / ``.~lock.name#``
   owner files): Windows would refuse the replace anyway, and elsewhere the office program would
   later save its stale copy over ours;
3. a backup of the old file into ``~/.xla/backup/`` with **retention**: the newest
   :data:`KEEP_PER_FILE` copies per file and at most :data:`MAX_BACKUP_BYTES` in all, the oldest
   pruned first;
4. a temp file in the same folder (same file system, so the replace is atomic), flushed and
   fsynced, the old file's permission bits copied, then ``os.replace``; on any error the temp file
   goes and the old file is untouched.

Deleting goes to the trash instead (:func:`move_to_trash`), kept :data:`TRASH_DAYS` days.
The deny list is not applied here but in ``paths.resolve_write``, which every writer calls first;
:func:`atomic_write` checks it again so no caller can skip it.
"""
import datetime
import errno
import hashlib
import json
import os
import shutil
import tempfile
import time

from . import paths
from .errors import ToolError
from .lock import FileLock

KEEP_PER_FILE = 5                      # newest backups kept per original file
MAX_BACKUP_BYTES = 500 * 1024 * 1024   # all backups together
TRASH_DAYS = 30                        # deleted files stay restorable this long
LOCK_TIMEOUT = 30                      # seconds a writer waits for another writer of the same file
OWNER_FILE_FRESH = 24 * 3600           # an owner file older than this is a leftover of a crash


def _key(path):
    real = os.path.realpath(os.path.abspath(path))
    if os.name == "nt":  # pragma: no cover
        real = real.lower()
    return hashlib.sha1(real.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def locked(path, timeout=LOCK_TIMEOUT):
    """A cross-process lock for one target file (a context manager). The lock file lives in
    ``~/.xla/locks``, never beside the user's file."""
    return FileLock(paths.xla_dir("locks", "write-%s.lock" % _key(path)), timeout=timeout)


def owner_file(path):
    """The office owner/lock file of ``path`` when a program seems to have it open, else None."""
    folder, name = os.path.split(os.path.abspath(path))
    candidates = ["~$" + name, ".~lock.%s#" % name]
    if len(name) > 2:
        candidates += ["~$" + name[1:], "~$" + name[2:]]    # Word cuts one or two leading characters
    now = time.time()
    for cand in candidates:
        full = os.path.join(folder, cand)
        try:
            st = os.stat(full)
        except OSError:
            continue
        if now - st.st_mtime < OWNER_FILE_FRESH:
            return full
    return None


def check_not_open(path):
    owner = owner_file(path)
    if owner and os.path.exists(path):
        raise ToolError("「%s」好像正在被 Excel / WPS / Word 等程序打开（发现了它的占用文件 %s）。请先在那个程序里"
                        "保存并关闭它，再重试；如果确定没有打开，可以删掉这个占用文件。原文件没有改动" % (
                            os.path.basename(path), os.path.basename(owner)))


def unique_path(path):
    """``path`` if free, else ``name_2.ext``, ``name_3.ext``...: default outputs never overwrite."""
    if not os.path.exists(path):
        return path
    stem, ext = os.path.splitext(path)
    n = 2
    while os.path.exists("%s_%d%s" % (stem, n, ext)):
        n += 1
    return "%s_%d%s" % (stem, n, ext)


# ---------------------------------------------------------------------------------------------
# Backups with retention

def backup_file(path):
    """Copy an existing file into ``~/.xla/backup/`` before it changes; returns the copy's path.

    Names are ``YYYYmmdd-HHMMSS-micro_<key>_<name>`` so the copies of one file group by ``key`` and
    sort by time; after each copy the folder is pruned (see :func:`prune_backups`)."""
    if not os.path.isfile(path):
        return None
    folder = paths.backup_dir(create=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    target = unique_path(os.path.join(folder, "%s_%s_%s" % (stamp, _key(path), os.path.basename(path))))
    shutil.copy2(path, target)
    # copy2 keeps the original's mtime; the copy's own age must be when it was made
    now = time.time()
    try:
        os.utime(target, (now, now))
    except OSError:
        pass
    prune_backups(keep=target)
    return target


def _backups(folder):
    out = []
    try:
        names = os.listdir(folder)
    except OSError:
        return out
    for name in names:
        full = os.path.join(folder, name)
        try:
            st = os.stat(full)
        except OSError:
            continue
        if not os.path.isfile(full):
            continue
        parts = name.split("_", 2)
        key = parts[1] if len(parts) == 3 and len(parts[1]) == 12 else name   # old-style names group alone
        out.append((st.st_mtime, name, full, st.st_size, key))
    out.sort(reverse=True)          # newest first
    return out


def prune_backups(keep=None, per_file=None, max_bytes=None):
    """Keep the newest ``per_file`` copies of each file and at most ``max_bytes`` in all; the copy
    just made (``keep``) always stays. Returns how many copies were removed."""
    per_file = KEEP_PER_FILE if per_file is None else per_file
    max_bytes = MAX_BACKUP_BYTES if max_bytes is None else max_bytes
    seen, total, removed = {}, 0, 0
    for _mtime, _name, full, size, key in _backups(paths.backup_dir()):
        seen[key] = seen.get(key, 0) + 1
        if full != keep and (seen[key] > per_file or total + size > max_bytes):
            try:
                os.remove(full)
                removed += 1
            except OSError:
                pass
            continue
        total += size
    return removed


# ---------------------------------------------------------------------------------------------
# The safe replace

def _fsync_dir(folder):
    if os.name == "nt":  # pragma: no cover - directories cannot be opened on Windows
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _permission_message(path, exc):
    return ("没有权限写入 %s（%s）。请确认文件没有被 Excel / WPS 等程序打开、不是只读文件，"
            "或换一个位置保存（例如只写文件名，保存到工作空间）。原文件没有改动" % (path, exc.strerror or exc))


def atomic_write(path, write, backup=True, lock=True):
    """Write through ``write(tmp_path)`` into a temp file beside ``path``, then replace ``path``.

    A crash or error leaves the old file untouched. Returns the backup path (or None). Pass
    ``lock=False`` when the caller already holds :func:`locked` for this path."""
    path = os.path.abspath(path)
    paths.check_write_allowed(path)
    if lock:
        with locked(path):
            return _atomic_write(path, write, backup)
    return _atomic_write(path, write, backup)


def _atomic_write(path, write, backup):
    folder = os.path.dirname(path)
    check_not_open(path)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".xla-", suffix=os.path.splitext(path)[1] + ".tmp", dir=folder)
    except PermissionError as exc:
        raise ToolError(_permission_message(path, exc))
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        saved = backup_file(path) if backup else None
        if os.path.exists(path):
            try:
                shutil.copymode(path, tmp)
            except OSError:
                pass
        try:
            os.replace(tmp, path)
        except PermissionError as exc:
            raise ToolError(_permission_message(path, exc))
        _fsync_dir(folder)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return saved


def write_bytes(path, data, backup=True, lock=True):
    def _write(tmp):
        with open(tmp, "wb") as fh:
            fh.write(data)
    return atomic_write(path, _write, backup=backup, lock=lock)


def write_text(path, text, encoding="utf-8", newline=None, backup=True, lock=True):
    """Text through :func:`atomic_write`; characters the encoding cannot hold are a Chinese error."""
    try:
        data = text.encode(encoding) if newline is None else text.replace("\n", newline).encode(encoding)
    except UnicodeEncodeError as exc:
        raise ToolError("有字符「%s」无法用编码 %s 保存。请改用 utf-8，或去掉这些字符" % (
            exc.object[exc.start:exc.end], encoding))
    except LookupError:
        raise ToolError("不认识的编码 %r。可用 utf-8、utf-8-sig（带 BOM，Excel 打开不乱码）、gbk、gb18030" % encoding)
    return write_bytes(path, data, backup=backup, lock=lock)


# ---------------------------------------------------------------------------------------------
# Trash

def _prune_trash(now=None):
    folder = paths.trash_dir()
    now = now or time.time()
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    for name in entries:
        full = os.path.join(folder, name)
        try:
            if now - os.stat(full).st_mtime > TRASH_DAYS * 86400:
                shutil.rmtree(full, ignore_errors=True) if os.path.isdir(full) else os.remove(full)
        except OSError:
            pass


def move_to_trash(path):
    """Move a file into ``~/.xla/trash/<stamp>-<key>/`` with a note of where it came from.

    Returns ``{"trash_path", "original", "restore", "kept_days"}``. Moving within one file system
    is a rename; across file systems it is a copy then delete (the copy is complete first)."""
    path = os.path.abspath(path)
    _prune_trash()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    slot = os.path.join(paths.trash_dir(create=True), "%s-%s" % (stamp, _key(path)))
    n = 2
    base = slot
    while os.path.exists(slot):
        slot, n = "%s-%d" % (base, n), n + 1
    os.makedirs(slot)
    target = os.path.join(slot, os.path.basename(path))
    try:
        os.rename(path, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            shutil.rmtree(slot, ignore_errors=True)
            if isinstance(exc, PermissionError):
                raise ToolError("没有权限删除 %s（%s）。请确认文件没有被其他程序打开" % (path, exc.strerror or exc))
            raise
        shutil.copy2(path, target)
        os.remove(path)
    info = {"original": path, "deleted_at": datetime.datetime.now().isoformat(timespec="seconds")}
    try:
        with open(os.path.join(slot, ".xla-trash.json"), "w", encoding="utf-8") as fh:
            json.dump(info, fh, ensure_ascii=False)
    except OSError:
        pass
    return {"trash_path": target, "original": path, "kept_days": TRASH_DAYS,
            "restore": "把 %s 移回 %s 即可恢复（回收站保留 %d 天）" % (target, path, TRASH_DAYS)}
