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
   pruned first; no second copy when the newest backup already holds the same bytes (a retried
   write must not push the real older versions out). On Windows the kernel is asked first whether
   the file can be replaced at all (:mod:`.winshare`: held open in Excel/WPS is said before any
   backup is taken);
4. the new content in a file of its own in the same folder (same file system, so the replace is
   atomic; hidden on Windows), flushed and fsynced, the old file's permission bits copied, then put
   in place with one rename (on Windows with a short retry of passing sharing violations,
   :func:`winshare.replace`); on any error the new file goes and the old file is untouched.

Where the file goes is found the way the kernel finds it (``resolve.walk`` through
``paths.open_for_write``: every link followed by descriptor, the deny list judging the real
path), and everything after that goes through the descriptor of the folder the walk reached:
the new file is created in it, the old one opened from it (``O_NOFOLLOW``) for the backup, the
rename is relative to it. A name re-pointed after the check changes nothing.

A process killed mid-write cannot remove a file it made. On Linux the new content is therefore
written into an *unnamed* file (``O_TMPFILE`` in the target folder) that gets a name only when it
is complete: ``linkat`` of ``/proc/self/fd/N`` straight to the target's name for a new file,
else to a hidden temp name in ``~/.xla/staging`` that the very next system call renames over the
target (one atomic rename across folders of one file system; a kill in between leaves that name
in the toolbox's own folder, swept there), so a kill at any moment leaves nothing beside the
user's file. Only a target on another file system than ``~/.xla`` (EXDEV: a USB drive) gets the
hidden temp name beside it for that moment. Where ``O_TMPFILE`` is not supported
(macOS, Windows, some file systems) the file is named ``.xla-*.tmp`` from the start (hidden, and
never a name a user's file has), and the next write into the same folder removes those older
than :data:`STALE_TEMP_AGE` (:func:`sweep_stale_temps`). A backup is copied under such a temp
name in ``~/.xla/backup`` and renamed into place only when complete, so a killed copy never poses
as a backup (``tests/faults/`` kills every writer at each of its system calls).

Deleting goes to the trash instead (:func:`move_to_trash`), kept :data:`TRASH_DAYS` days.
The deny list is applied in ``paths.resolve_write``, which every writer calls first, and again by
the walk in :func:`atomic_write` and :func:`move_to_trash`, so no caller can skip it.
"""
import datetime
import errno
import hashlib
import json
import os
import secrets
import shutil
import stat
import sys
import tempfile
import time

from . import paths, resolve, winshare
from ..errors import ToolError, os_error
from .lock import FileLock

KEEP_PER_FILE = 5                      # newest backups kept per original file
MAX_BACKUP_BYTES = 500 * 1024 * 1024   # all backups together
TRASH_DAYS = 30                        # deleted files stay restorable this long
LOCK_TIMEOUT = 30                      # seconds a writer waits for another writer of the same file
OWNER_FILE_FRESH = 24 * 3600           # an owner file older than this is a leftover of a crash
STALE_TEMP_AGE = 15 * 60               # a temp file of ours this old is a killed writer's leftover
TEMP_PREFIX, TEMP_SUFFIX = ".xla-", ".tmp"


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


def same_file(a, b):
    """True when ``a`` and ``b`` name one file: the same path, the same real path through any
    symbolic link (a folder link too), or the same inode (a hard link)."""
    a, b = os.path.abspath(a), os.path.abspath(b)
    if a == b or os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


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

def _short_name(path, stem_chars=40):
    """The original's name, bounded: a 244-character name plus the stamp and key would pass the
    255-byte limit of most file systems, and the backup (so the write) would fail. The key in the
    name already identifies the file; the stem only helps a person find it."""
    stem, ext = os.path.splitext(os.path.basename(path))
    if len(ext) > 16:
        stem, ext = stem + ext, ""
    while len(stem.encode("utf-8", "surrogatepass")) > stem_chars * 3 // 2 and len(stem) > 1:
        stem = stem[:-1]
    return stem + ext


def is_temp_name(name):
    """True for the name of one of our temp files (``.xla-<random><ext>.tmp``)."""
    return name.startswith(TEMP_PREFIX) and name.endswith(TEMP_SUFFIX)


def sweep_stale_temps(folder, older_than=None, now=None, dir_fd=None):
    """Remove our own temp files in ``folder`` that are older than ``older_than`` seconds
    (:data:`STALE_TEMP_AGE`); returns how many went. ``dir_fd``: an open descriptor of that folder
    (a writer's walked folder): names are then listed, checked and removed relative to it.

    Only a killed or crashed writer leaves one (a live one removes its temp file on every error),
    and no live writer keeps one anywhere near that long: the host kills every tool at 60 s. Only
    files whose name has our prefix and suffix are touched, never anything else in the folder.
    Errors (a read-only folder, a file gone meanwhile) are ignored: sweeping is housekeeping."""
    older_than = STALE_TEMP_AGE if older_than is None else older_than
    now = time.time() if now is None else now
    removed = 0
    try:
        names = os.listdir(dir_fd if dir_fd is not None else folder)
    except OSError:
        return 0
    for name in names:
        if not is_temp_name(name):
            continue
        where = name if dir_fd is not None else os.path.join(folder, name)
        try:
            st = os.stat(where, dir_fd=dir_fd, follow_symlinks=False) if dir_fd is not None else os.lstat(where)
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime > older_than:
                os.unlink(where, dir_fd=dir_fd)
                removed += 1
        except OSError:
            pass
    return removed


def backup_file(path, source_fd=None):
    """Copy an existing file into ``~/.xla/backup/`` before it changes; returns the copy's path.

    ``source_fd``: the old file already opened (through the walked folder, not by name again);
    without it ``path`` is opened. Names are ``YYYYmmdd-HHMMSS-micro_<key>_<name>`` so the copies of
    one file group by ``key`` and sort by time; after each copy the folder is pruned (see
    :func:`prune_backups`). The copy is made under a temp name and renamed when complete: a copy
    cut short (a full disk, the kill) never carries a backup's name.

    When the newest backup of this file already holds exactly its bytes, that copy is the answer
    and nothing is copied: a write retried while Excel holds the file (or the same content saved
    twice) must not push the real older versions out of the :data:`KEEP_PER_FILE` kept."""
    if source_fd is None:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as fh:
            return backup_file(path, fh.fileno())
    same = newest_backup_if_same(path, source_fd)
    if same:
        return same
    folder = paths.backup_dir(create=True)
    sweep_stale_temps(folder)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    target = unique_path(os.path.join(folder, "%s_%s_%s" % (stamp, _key(path), _short_name(path))))
    fd, part = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=TEMP_SUFFIX, dir=folder)
    try:
        try:
            _copy_fd(source_fd, fd)
            mode = stat.S_IMODE(os.fstat(source_fd).st_mode)
        finally:
            os.close(fd)
        try:
            os.chmod(part, mode)
        except OSError:
            pass
        os.replace(part, target)
    except BaseException:
        try:                        # a half-written copy is no backup
            os.remove(part)
        except OSError:
            pass
        raise
    prune_backups(keep=target)
    return target


def _digest_fd(fd):
    """SHA-256 of open file ``fd`` from its start (the position is left at the end)."""
    h = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    for block in iter(lambda: os.read(fd, 1 << 20), b""):
        h.update(block)
    return h.digest()


def newest_backup_if_same(path, source_fd):
    """The newest backup of ``path`` when it is byte-identical to the open file ``source_fd``
    (same size, same SHA-256), else None."""
    key = _key(path)
    try:
        size = os.fstat(source_fd).st_size
        for _mtime, _name, full, bsize, bkey in _backups(paths.backup_dir()):
            if bkey == key:
                if bsize != size:
                    return None
                with open(full, "rb") as fh:
                    return full if _digest_fd(fh.fileno()) == _digest_fd(source_fd) else None
    except OSError:
        return None
    return None


def _copy_fd(src, dst):
    """Everything of open file ``src`` (from its start) into ``dst`` at its current position."""
    os.lseek(src, 0, os.SEEK_SET)
    while True:
        chunk = os.read(src, 1 << 20)
        if not chunk:
            break
        view = memoryview(chunk)
        while view:
            view = view[os.write(dst, view):]


class scratch(object):
    """``with files.scratch("xla-pdf-") as folder:`` a private folder (mode 0700) in the system's
    temp directory for a helper program's own files (a LibreOffice profile, a conversion's
    output), removed with everything in it afterwards. Never a user's file: what reaches the
    user goes through :func:`atomic_write`."""

    def __init__(self, prefix="xla-"):
        self.prefix = prefix
        self.path = None

    def __enter__(self):
        try:
            self.path = tempfile.mkdtemp(prefix=self.prefix)
        except OSError as exc:
            raise os_error(exc, tempfile.gettempdir(), "创建临时文件夹")
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)
        return False


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
        if not os.path.isfile(full) or is_temp_name(name):
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

_UMASK = None


def process_umask():
    """The process umask, read once (reading it means setting it, so it is done once, early)."""
    global _UMASK
    if _UMASK is None:
        if os.name == "nt":  # pragma: no cover - no umask on Windows
            _UMASK = 0
        else:
            _UMASK = os.umask(0o022)
            os.umask(_UMASK)
    return _UMASK


def new_file_mode():
    """What a file created by an ordinary program gets: ``0666 & ~umask`` (``tempfile.mkstemp``
    makes 0600, which would hide a user's new report from the rest of the household or team)."""
    return 0o666 & ~process_umask()


# st_flags bits that make a file unchangeable (macOS ``chflags uchg`` / ``schg``; BSD append-only)
_IMMUTABLE_FLAGS = 0
for _name in ("UF_IMMUTABLE", "SF_IMMUTABLE", "UF_APPEND", "SF_APPEND"):
    _IMMUTABLE_FLAGS |= getattr(stat, _name, 0)
_WIN_READONLY = getattr(stat, "FILE_ATTRIBUTE_READONLY", 1)


def read_only_mark(st):
    """How a file is marked read-only by its owner (a Chinese phrase), or None.

    The file's own mark is what counts, not whether this process could write it anyway: on Linux
    and macOS ``os.replace`` onto a read-only file succeeds for anyone who may write the folder,
    and root passes every ``os.access`` check, so neither would stop us from overwriting a ledger
    the user protected with ``chmod 444`` or Explorer's 只读 box."""
    if os.name == "nt":  # pragma: no cover - Windows only
        if getattr(st, "st_file_attributes", 0) & _WIN_READONLY:
            return "只读属性"
        return None
    if getattr(st, "st_flags", 0) & _IMMUTABLE_FLAGS:
        return "已锁定（不可更改）标记"
    if stat.S_ISREG(st.st_mode) and not st.st_mode & 0o222:
        return "只读权限（没有任何人的写权限）"
    return None


def _unlock_hint(path):
    if os.name == "nt":  # pragma: no cover - Windows only
        return "在资源管理器里右键该文件 →「属性」→ 取消勾选「只读」"
    if sys.platform == "darwin":  # pragma: no cover - macOS only
        import shlex            # only for this message
        return "在访达里选中它 →「显示简介」→ 取消勾选「已锁定」，或在终端运行 chmod u+w %s" % shlex.quote(path)
    import shlex
    return "在终端运行 chmod u+w %s（或在文件管理器的「属性 → 权限」里允许写入）" % shlex.quote(path)


def check_not_read_only(path, action="修改"):
    """Refuse (Chinese ToolError) when ``path`` exists and is marked read-only; nothing is touched."""
    try:
        st = os.stat(path)
    except OSError:
        return
    mark = read_only_mark(st)
    if mark:
        raise ToolError("「%s」被设置了%s，说明它的主人不希望它被改动，工具不会%s它。如果确实要%s，请先去掉只读标记：%s，"
                        "然后重试。原文件没有改动" % (os.path.basename(path), mark, action, action, _unlock_hint(path)))


def _kind_of(st):
    mode = st.st_mode
    if stat.S_ISFIFO(mode):
        return "命名管道（FIFO）"
    if stat.S_ISSOCK(mode):
        return "套接字"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "设备文件"
    if stat.S_ISDIR(mode):
        return "文件夹"
    return "特殊文件"


O_TMPFILE = getattr(os, "O_TMPFILE", 0)
_PROC_FD = "/proc/self/fd"
# what open(O_TMPFILE) answers where the file system or kernel cannot make unnamed files
_NO_TMPFILE = {getattr(errno, n) for n in ("EOPNOTSUPP", "ENOTSUP", "EISDIR", "EINVAL", "ENOENT") if hasattr(errno, n)}


def _staging_fd():
    """An open descriptor of ``~/.xla/staging`` (made 0700 when missing; stale names of killed
    writers swept), where a complete unnamed file gets its name on the way to replacing the
    user's file (:meth:`NewFile._replace_from_staging`)."""
    folder = paths.xla_dir("staging")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    fd = os.open(folder, os.O_RDONLY | resolve.O_DIRECTORY | resolve.O_NOFOLLOW | resolve.O_CLOEXEC)
    sweep_stale_temps(folder, dir_fd=fd)
    return fd


def _proc_fd_works():
    return os.name == "posix" and os.path.isdir(_PROC_FD)


class NewFile(object):
    """The file a writer fills before it replaces the user's file, in the walked folder
    (``target``, a ``resolve.Walked``): unnamed (``O_TMPFILE``) where the system can, else a hidden
    ``.xla-*.tmp`` name. ``path`` is what the writer's callback opens: ``/proc/self/fd/N`` on Linux
    (the same inode, whatever names do meanwhile), the temp file's name elsewhere."""

    def __init__(self, target, suffix=""):
        self.target = target
        self.fd = None
        self.name = None
        flags = os.O_RDWR | resolve.O_CLOEXEC
        proc = _proc_fd_works() and target.parent_fd is not None
        if O_TMPFILE and proc:
            try:
                self.fd = os.open(".", flags | O_TMPFILE, 0o600, dir_fd=target.parent_fd)
            except OSError as exc:
                if exc.errno not in _NO_TMPFILE:
                    raise
        if self.fd is None:
            for _ in range(100):
                name = "%s%s%s%s" % (TEMP_PREFIX, secrets.token_hex(4), suffix, TEMP_SUFFIX)
                try:
                    self.fd = target.open(name, flags | os.O_CREAT | os.O_EXCL, 0o600)
                except FileExistsError:
                    continue
                self.name = name
                break
            else:
                raise FileExistsError(errno.EEXIST, "no free temp name", target.folder)
            winshare.hide(os.path.join(target.folder, self.name))
        if proc:
            self.path = "%s/%d" % (_PROC_FD, self.fd)
        else:
            # by name: the callback opens it, and Windows cannot rename a file this process
            # holds open
            self.path = os.path.join(target.folder, self.name)
            os.close(self.fd)
            self.fd = None

    def sync(self):
        if self.fd is not None:
            os.fsync(self.fd)
        else:
            with open(self.path, "rb+") as fh:
                os.fsync(fh.fileno())

    def keep_identity(self, st):
        """Give the new file what the old one had: its permission bits and, where this process may
        (root, or the same owner for the group), its owner and group; a new file gets
        ``0666 & ~umask``."""
        mode = stat.S_IMODE(st.st_mode) if st is not None else new_file_mode()
        fd = self.fd
        if fd is None:
            os.chmod(self.path, mode)
        else:
            os.fchmod(fd, mode)
        if st is None or not hasattr(os, "chown"):
            return
        for uid, gid in ((st.st_uid, st.st_gid), (-1, st.st_gid)):
            try:
                if fd is None:
                    os.chown(self.path, uid, gid)
                else:
                    os.fchown(fd, uid, gid)
                return
            except OSError:
                continue

    def put_in_place(self):
        """The complete file takes the target's name in one step (a rename, or a link for a new
        unnamed file); the old file, if any, is replaced atomically."""
        t = self.target
        if self.name is None:
            src = "%s/%d" % (_PROC_FD, self.fd)
            if t.st is None:
                try:
                    os.link(src, t.name, dst_dir_fd=t.parent_fd, follow_symlinks=True)
                    return
                except FileExistsError:
                    pass                # created meanwhile by someone else: replace it like any old file
            if self._replace_from_staging(src):
                return
            while True:
                name = "%s%s%s" % (TEMP_PREFIX, secrets.token_hex(4), TEMP_SUFFIX)
                try:
                    os.link(src, name, dst_dir_fd=t.parent_fd, follow_symlinks=True)
                except FileExistsError:
                    continue
                self.name = name
                break
        if t.parent_fd is None:
            # by name (Windows): the replaced file's attributes, and passing sharing violations
            # (scanners, the indexer, OneDrive) retried; a lasting hold is said in Chinese
            tmp = os.path.join(t.folder, self.name)
            winshare.unhide_like(tmp, t.st)
            winshare.replace(tmp, os.path.join(t.folder, t.name))
        else:
            t.rename(self.name, t.name)
        self.name = None

    def _replace_from_staging(self, src):
        """Replace the target with the complete unnamed file by way of ``~/.xla/staging``: a name
        is needed for the rename, and Linux has no atomic "link over". When that folder is on the
        target's file system, the name is made there and the rename crosses folders (still one
        atomic step), so a kill between the link and the rename leaves the stray name in the
        toolbox's own folder (swept there), never beside the user's file. False when the folders
        are on different file systems (EXDEV: a USB drive) or staging cannot be used; the caller
        then names the file beside the target as before."""
        t = self.target
        try:
            sfd = _staging_fd()
        except OSError:
            return False
        try:
            for _ in range(100):
                name = "%s%s%s" % (TEMP_PREFIX, secrets.token_hex(4), TEMP_SUFFIX)
                try:
                    os.link(src, name, dst_dir_fd=sfd, follow_symlinks=True)
                except FileExistsError:
                    continue
                except OSError:
                    return False            # EXDEV (another file system), EPERM...
                break
            else:
                return False
            try:
                os.replace(name, t.name, src_dir_fd=sfd, dst_dir_fd=t.parent_fd)
            except BaseException:
                try:
                    os.unlink(name, dir_fd=sfd)
                except OSError:
                    pass
                raise
            return True
        finally:
            os.close(sfd)

    def copy_over(self, old_fd):
        """Copy the new content over the old file's own inode (``old_fd``, opened through the
        walked folder): used when the file has other hard links, which a replace would leave
        holding the old content. Not atomic, which is why the backup is taken first."""
        os.lseek(old_fd, 0, os.SEEK_SET)
        if self.fd is not None:
            _copy_fd(self.fd, old_fd)
        else:
            with open(self.path, "rb") as src:
                _copy_fd(src.fileno(), old_fd)
        os.ftruncate(old_fd, os.lseek(old_fd, 0, os.SEEK_CUR))
        os.fsync(old_fd)

    def discard(self):
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = None
        if self.name is not None:
            try:
                self.target.unlink(self.name)
            except OSError:
                pass
            self.name = None


def _fsync_dir(target):
    if os.name == "nt":  # pragma: no cover - directories cannot be opened on Windows
        return
    try:
        fd = target.folder_fd()
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _check_existing(target, action="修改"):
    """The walked target's old file: None when there is none; refused when it is not an ordinary
    file (a FIFO, socket or device is never replaced) or is marked read-only."""
    st = target.st
    if st is None:
        return None
    if target.name is None or not stat.S_ISREG(st.st_mode):
        raise ToolError("%s 是一个%s，不是普通文件，工具不会写入或替换它。请换一个文件名" % (target.path, _kind_of(st)))
    mark = read_only_mark(st)
    if mark:
        raise ToolError("「%s」被设置了%s，说明它的主人不希望它被改动，工具不会%s它。如果确实要%s，请先去掉只读标记：%s，"
                        "然后重试。原文件没有改动" % (os.path.basename(target.path), mark, action, action,
                                             _unlock_hint(target.real)))
    return st


def atomic_write(path, write, backup=True, lock=True):
    """Write through ``write(tmp_path)`` into a new file beside ``path``, then replace ``path``.

    A crash or error leaves the old file untouched. Returns the backup path (or None). Pass
    ``lock=False`` when the caller already holds :func:`locked` for this path. ``tmp_path`` may be
    ``/proc/self/fd/N``: the callback opens it by that name (``open``, ``zipfile``, a library's
    ``save``) and never renames, removes or passes it to another program.

    What the user's file keeps: a new file gets ``0666 & ~umask``; an existing one keeps its mode,
    owner and group; a symbolic link stays a link and its target is written; a file with more than
    one hard link is rewritten in place (after the backup), so its other names see the change; a
    file marked read-only is refused before anything is written."""
    path = os.path.abspath(path)
    if lock:
        with locked(path):
            return _atomic_write(path, write, backup)
    return _atomic_write(path, write, backup)


def _atomic_write(path, write, backup):
    with paths.open_for_write(path, create=True) as target:
        old = _check_existing(target)
        check_not_open(target.real)
        if old is not None:             # held open in Excel/WPS (Windows): say so before writing anything
            winshare.check_replaceable(target.real)
        try:
            if target.parent_fd is not None:
                dfd = target.folder_fd()
                try:
                    sweep_stale_temps(target.folder, dir_fd=dfd)
                finally:
                    os.close(dfd)
            else:
                sweep_stale_temps(target.folder)
            new = NewFile(target, os.path.splitext(target.name)[1][:16])
        except OSError as exc:
            raise os_error(exc, path, "写入")
        try:
            try:
                write(new.path)
                new.sync()
                saved = None
                old_fd = None
                if old is not None:     # and again right before the backup (1 ms; it may have been opened
                    winshare.check_replaceable(target.real)     # meanwhile), before we hold it open ourselves
                if old is not None and (backup or old.st_nlink > 1):
                    old_fd = target.open(target.name, os.O_RDWR if old.st_nlink > 1 else os.O_RDONLY)
                try:
                    if old_fd is not None and not target.same_entry(old_fd):
                        raise ToolError("「%s」在写入的同时被换成了别的文件，工具没有写入。请稍后重试" % os.path.basename(path))
                    if backup and old is not None:
                        saved = backup_file(target.real, old_fd)
                    if old is not None and old.st_nlink > 1:
                        new.copy_over(old_fd)
                    else:
                        if old_fd is not None and target.parent_fd is None:
                            os.close(old_fd)    # Windows cannot replace a file this process holds open
                            old_fd = None
                        new.keep_identity(old)
                        new.put_in_place()
                finally:
                    if old_fd is not None:
                        os.close(old_fd)
                _fsync_dir(target)
            except OSError as exc:
                if isinstance(exc, TimeoutError):
                    raise
                raise os_error(exc, path, "写入")
        finally:
            new.discard()
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


def move_to_trash(path, within=None):
    """Move a file into ``~/.xla/trash/<stamp>-<key>/`` with a note of where it came from.

    The file is found by the same walk as every write (``paths.open_for_write``, the deny list on
    its real place; a link in the last component is the link itself) and moved relative to the
    descriptor of the folder the walk reached, never by name again. ``within``: a real folder the
    file must really be in (delete_file: the workspace). Returns ``{"trash_path", "original",
    "restore", "kept_days"}``. Moving within one file system is a rename; across file systems it
    is a copy from the opened file, complete first, then an unlink in the walked folder."""
    path = os.path.abspath(path)
    with paths.open_for_write(path, follow_final=False) as src:
        if src.st is None or src.name is None:
            raise ToolError("找不到要删除的文件：%s" % path)
        if within is not None and not (src.folder + os.sep).startswith(within.rstrip(os.sep) + os.sep):
            raise ToolError("%s 实际位于 %s 之外（路径经过的文件夹链接指向了别处），工具不删除它" % (path, within))
        is_link = stat.S_ISLNK(src.st.st_mode)
        if not is_link:     # a link is removed, not its target: the target's mark is not ours to judge
            mark = read_only_mark(src.st)
            if mark:
                raise ToolError("「%s」被设置了%s，说明它的主人不希望它被改动，工具不会删除它。如果确实要删除，请先去掉只读标记：%s，"
                                "然后重试。原文件没有改动" % (os.path.basename(path), mark, _unlock_hint(src.real)))
        _prune_trash()
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        slot = os.path.join(paths.trash_dir(create=True), "%s-%s" % (stamp, _key(path)))
        n = 2
        base = slot
        while os.path.exists(slot):
            slot, n = "%s-%d" % (base, n), n + 1
        os.makedirs(slot)
        name = os.path.basename(path)
        target = os.path.join(slot, name)
        try:
            _move_out(src, slot, name, is_link)
        except OSError as exc:
            shutil.rmtree(slot, ignore_errors=True)
            raise os_error(exc, path, "删除")
    info = {"original": path, "deleted_at": datetime.datetime.now().isoformat(timespec="seconds")}
    note = os.path.join(slot, ".xla-trash.json")
    try:        # the note is a convenience (the answer says where the file came from): a full disk skips it
        with open(note, "w", encoding="utf-8") as fh:
            json.dump(info, fh, ensure_ascii=False)
    except OSError:
        try:    # never a half-written note
            os.remove(note)
        except OSError:
            pass
    return {"trash_path": target, "original": path, "kept_days": TRASH_DAYS,
            "restore": "把 %s 移回 %s 即可恢复（回收站保留 %d 天）" % (target, path, TRASH_DAYS)}


def _move_out(src, slot, name, is_link):
    """Rename the walked entry ``src`` into folder ``slot`` as ``name``; across devices copy it
    (from the opened file, or the link's own text) and then unlink it in the walked folder."""
    slot_fd = os.open(slot, resolve.DIR_FLAGS) if src.parent_fd is not None else None
    try:
        where, fd = src.ref()
        dest = name if slot_fd is not None else os.path.join(slot, name)
        try:
            os.rename(where, dest, src_dir_fd=fd, dst_dir_fd=slot_fd)
            return
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
        if is_link:
            text = os.readlink(where, dir_fd=fd) if fd is not None else os.readlink(where)
            os.symlink(text, os.path.join(slot, name))
        else:
            old = src.open(src.name, os.O_RDONLY)
            try:
                if not src.same_entry(old):
                    raise OSError(errno.EAGAIN, "changed meanwhile", src.path)
                out = os.open(os.path.join(slot, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | resolve.O_CLOEXEC,
                              stat.S_IMODE(src.st.st_mode))
                try:
                    _copy_fd(old, out)
                    os.fsync(out)
                finally:
                    os.close(out)
                os.utime(os.path.join(slot, name), ns=(src.st.st_atime_ns, src.st.st_mtime_ns))
            finally:
                os.close(old)
        src.unlink(src.name)
    finally:
        if slot_fd is not None:
            os.close(slot_fd)
