"""Where a path really leads, found the way the kernel finds it, and a handle on that place.

Why not ``os.path.realpath``: it follows links by *name*, and once the path it has built passes
PATH_MAX, ``lstat`` fails with ENAMETOOLONG and realpath quietly treats the rest as plain folders,
while the kernel, which never builds that string, follows every link. A script could stack
folders and links in the workspace so that realpath saw "workspace" and the kernel wrote
``~/.bashrc`` (issue 34). And even a right answer is worth little if the write then goes through
the name again: the name can be re-pointed in between.

So :func:`walk` does what the kernel does, one component at a time, each relative to the
descriptor of the folder before it (``openat`` with ``O_NOFOLLOW``; ``O_PATH`` on Linux, which
needs no read permission): a link is read with ``readlink(name, dir_fd)`` and its target walked
the same way (absolute ones from ``/``, at most :data:`MAX_LINKS` links, like the kernel's
ELOOP), ``..`` is the physical parent of the folder reached. Every lookup error other than a
missing *tail* (ENAMETOOLONG, ELOOP, EACCES, ENOTDIR...) is a Chinese :class:`WalkError`: what
cannot be followed cannot be judged. The answer, a :class:`Walked`, holds the real path (the
text the deny rules judge, ``paths.open_for_write``) and an open descriptor of the real parent
folder, through which ``files`` then creates, renames, backs up and deletes: what was checked is
what is changed, whatever the names point at meanwhile.

This module has no policy (``paths`` decides what may be written) and no knowledge of tools.

Windows has no ``dir_fd`` in Python: there :func:`walk` answers by name (``parent_fd`` is None,
the real path from :func:`windows_real`, the seam where the Windows rules plug in) and the
callers use full names instead of descriptors (``Walked.ref``).
"""
import collections
import errno
import os
import stat
import sys

from ..errors import InputError, ToolError, os_error

MAX_LINKS = 40                       # the kernel's own bound (ELOOP after 40 links in one lookup)
PATH_MAX = 1024 if sys.platform == "darwin" else 4096 if os.name != "nt" else 32767
O_PATH = getattr(os, "O_PATH", 0)
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# a folder handle: O_PATH where the system has it (Linux: no read permission needed, and no
# accidental reads), else a read-only directory open (macOS, BSD)
DIR_FLAGS = (O_PATH or os.O_RDONLY) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
HAVE_DIR_FD = (os.name != "nt" and {os.open, os.stat, os.readlink, os.mkdir, os.rename, os.unlink, os.link}
               <= os.supports_dir_fd)


class WalkError(ToolError):
    """The path cannot be followed the way the kernel would (what went wrong, in Chinese)."""

    def __init__(self, message, code=None):
        ToolError.__init__(self, message)
        self.errno = code


class WalkInputError(WalkError, InputError):
    """A walk error the caller's path itself causes (a file used as a folder, a path too long):
    exit code 2 like every other bad parameter."""


_WHY = {
    errno.ENAMETOOLONG: "路径太长或经过的文件夹太深，超出了系统能确认的范围",
    errno.ELOOP: "路径经过的链接太多（超过 %d 个）或链接互相指向，形成了循环" % MAX_LINKS,
    errno.EACCES: "没有权限查看路径中的某一级文件夹",
    errno.EPERM: "没有权限查看路径中的某一级文件夹",
    errno.ENOTDIR: "路径中的某一级不是文件夹",
}


def _error(exc_or_code, shown, where):
    code = exc_or_code.errno if isinstance(exc_or_code, OSError) else exc_or_code
    if code == errno.ENOTDIR:
        return WalkInputError("路径中的「%s」是一个文件，不是文件夹，不能在它下面保存 %s。请检查路径的每一级" % (
            where, os.path.basename(shown)), code)
    why = _WHY.get(code)
    if why is None or (code == errno.ENAMETOOLONG and len(os.fsencode(os.path.basename(where))) > 255):
        # an unknown error, or one name itself too long: the common wording (what to shorten)
        exc = exc_or_code if isinstance(exc_or_code, OSError) else OSError(code, os.strerror(code or 0))
        return os_error(exc, shown, "访问")
    cls = WalkInputError if code == errno.ENAMETOOLONG else WalkError
    return cls("无法确认 %s 真正指向哪里（%s，位置：%s），工具不写入、不删除这样的位置。请换一个普通的路径，"
               "例如工作空间里的文件名" % (shown, why, where), code)


class Walked(object):
    """Where a path leads. ``real``: the real absolute path (text, for the deny rules and answers);
    ``parent_fd``: an open descriptor of the real parent folder (None on Windows, and when a parent
    is still missing); ``folder``: that folder's real path; ``name``: the last component in it
    (None when the path ends at a folder reached through ``..``); ``st``: ``lstat`` of that entry,
    None when it does not exist; ``missing``: how many parent folders do not exist yet. A context
    manager: leaving it closes the descriptor."""

    def __init__(self, path):
        self.path = path
        self.real = None
        self.parent_fd = None
        self.folder = None
        self.name = None
        self.st = None
        self.missing = 0

    def ref(self, name=None):
        """(name, dir_fd) for an ``os`` call on ``name`` in the real parent folder: relative to the
        descriptor where there is one, else the full name (Windows)."""
        name = self.name if name is None else name
        if self.parent_fd is not None:
            return name, self.parent_fd
        return os.path.join(self.folder, name), None

    def lstat(self, name=None):
        where, fd = self.ref(name)
        return os.stat(where, dir_fd=fd, follow_symlinks=False) if fd is not None else os.lstat(where)

    def open(self, name, flags, mode=0o777):
        """``os.open`` of ``name`` in the real parent, never following a link there."""
        where, fd = self.ref(name)
        return os.open(where, flags | O_NOFOLLOW | O_CLOEXEC, mode, dir_fd=fd)

    def rename(self, src, dst):
        (a, fd), (b, _fd) = self.ref(src), self.ref(dst)
        os.replace(a, b, src_dir_fd=fd, dst_dir_fd=fd)

    def unlink(self, name):
        where, fd = self.ref(name)
        os.unlink(where, dir_fd=fd)

    def folder_fd(self):
        """A readable descriptor of the real parent (for ``listdir`` and ``fsync``); the caller closes it."""
        if self.parent_fd is None:
            return os.open(self.folder, os.O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        return os.open(".", os.O_RDONLY | O_DIRECTORY | O_CLOEXEC, dir_fd=self.parent_fd)

    def same_entry(self, fd):
        """True when open ``fd`` is still the entry the walk found (no swap in between)."""
        st = os.fstat(fd)
        return self.st is not None and (st.st_dev, st.st_ino) == (self.st.st_dev, self.st.st_ino)

    def close(self):
        if self.parent_fd is not None:
            try:
                os.close(self.parent_fd)
            except OSError:
                pass
            self.parent_fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        self.close()


def windows_real(path):  # pragma: no cover - Windows only
    """The real path on Windows (the seam for the Windows path rules: final-path-by-handle,
    junctions, UNC and device forms live in their own module and replace this)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path)


def walk(path, create=False, follow_final=True):
    """Follow absolute ``path`` component by component as the kernel does; returns a :class:`Walked`.

    ``create``: make missing parent folders one by one, each with ``mkdir(name, dir_fd)`` in the
    folder just reached (never ``makedirs`` on the name). ``follow_final``: a link in the last
    component is followed (writers write its target) or kept (deleting removes the link itself).
    Raises :class:`WalkError` for anything the kernel would not follow to the end."""
    if not HAVE_DIR_FD:  # pragma: no cover - Windows
        return _walk_by_name(path, create, follow_final)
    out = Walked(path)
    todo = collections.deque(path.split("/"))
    fd = os.open("/", DIR_FLAGS)
    real = []
    links = 0
    try:
        while todo:
            comp = todo.popleft()
            if comp in ("", "."):
                continue
            if comp == "..":
                if real:
                    fd = _step(fd, "..", None, path, real)
                    real.pop()
                continue
            last = all(c in ("", ".") for c in todo)
            shown = "/" + "/".join(real + [comp])
            try:
                st = os.stat(comp, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                if last:
                    real.append(comp)
                    break
                if not create:
                    # the rest does not exist: the kernel would create nothing there but the
                    # folders a writer makes, which are plain folders, so the rest is read as text
                    out.missing = sum(1 for c in todo if c not in ("", ".", ".."))   # + comp - the file
                    real = _textual(real + [comp] + list(todo))
                    os.close(fd)
                    fd = None
                    break
                try:
                    os.mkdir(comp, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
                except OSError as exc:
                    raise _folder_error(exc, shown)
                try:
                    st = os.stat(comp, dir_fd=fd, follow_symlinks=False)
                except OSError as exc:
                    raise _error(exc, path, shown)
            except OSError as exc:
                raise _error(exc, path, shown)
            if stat.S_ISLNK(st.st_mode) and (follow_final or not last):
                links += 1
                if links > MAX_LINKS:
                    raise _error(errno.ELOOP, path, shown)
                try:
                    target = os.readlink(comp, dir_fd=fd)
                except OSError as exc:
                    raise _error(exc, path, shown)
                if not target:
                    raise _error(errno.ENOENT, path, shown)
                if target.startswith("/"):
                    os.close(fd)
                    fd = None
                    fd = os.open("/", DIR_FLAGS)
                    real = []
                todo.extendleft(reversed(target.split("/")))
                continue
            if last:
                real.append(comp)
                out.st = st
                break
            if not stat.S_ISDIR(st.st_mode):
                raise _error(errno.ENOTDIR, path, shown)
            fd = _step(fd, comp, st, path, real)
            real.append(comp)
        else:
            # the path ended at a folder reached through ".." or "/": there is no name to write
            out.real = "/" + "/".join(real)
            out.folder = out.real
            out.parent_fd, fd = fd, None
            out.st = os.fstat(out.parent_fd)
            return out
        out.real = "/" + "/".join(real)
        out.folder = os.path.dirname(out.real)
        out.name = real[-1] if real else None
        out.parent_fd, fd = fd, None
    except BaseException:
        out.close()
        raise
    finally:
        if fd is not None:
            os.close(fd)
    if len(os.fsencode(out.real)) >= PATH_MAX:
        out.close()
        raise _error(errno.ENAMETOOLONG, path, out.real[:120] + "…")
    return out


def _step(fd, name, st, path, real):
    """Open folder ``name`` below ``fd`` (not following a link), close ``fd``; check it is still the
    folder ``lstat`` saw (``st``), so a folder swapped for a link in between is noticed."""
    try:
        nfd = os.open(name, DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        os.close(fd)
        raise _error(exc, path, "/" + "/".join(real + [name]))
    os.close(fd)
    if st is not None:
        now = os.fstat(nfd)
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            os.close(nfd)
            raise WalkError("路径 %s 在检查的同时被改动了（「%s」换成了别的东西），工具没有写入。请稍后重试" % (
                path, name), errno.EAGAIN)
    return nfd


def _folder_error(exc, shown):
    return os_error(exc, shown, "创建文件夹")


def _textual(parts):
    out = []
    for comp in parts:
        if comp in ("", "."):
            continue
        if comp == "..":
            if out:
                out.pop()
            continue
        out.append(comp)
    return out


def _walk_by_name(path, create, follow_final):  # pragma: no cover - Windows only
    out = Walked(path)
    real = windows_real(path) if follow_final else os.path.join(windows_real(os.path.dirname(path)),
                                                                   os.path.basename(path))
    out.real = real
    out.folder, out.name = os.path.split(real)
    probe = out.folder
    while probe and not os.path.isdir(probe) and os.path.dirname(probe) != probe:
        out.missing += 1
        probe = os.path.dirname(probe)
    if create and out.missing:
        try:
            os.makedirs(out.folder, exist_ok=True)
        except OSError as exc:
            raise _folder_error(exc, out.folder)
        out.missing = 0
    try:
        out.st = os.lstat(real)
    except FileNotFoundError:
        out.st = None
    except OSError as exc:
        raise _error(exc, path, real)
    return out
