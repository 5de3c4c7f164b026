"""A small disk of our own: a tmpfs in a private mount namespace, for the full-disk and read-only
faults.

Why a forked child with ``unshare(CLONE_NEWNS)`` (through ctypes): the mount is seen by that
child and the tools it spawns only, so nothing on the machine (other tests, other users) ever
sees a disk go full or read-only, and the mount disappears with the child even if the test dies.
It needs root (CI runs as root); ``func`` runs in the child and returns a JSON-able result.

``fill(mount, free)`` leaves exactly ``free`` bytes (rounded down to whole pages, the unit tmpfs
counts in) by allocating one filler file; ``unfill`` gives the space back.
"""
import ctypes
import ctypes.util
import json
import os
import shutil
import tempfile
import traceback

CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_REMOUNT, MS_REC, MS_PRIVATE = 1, 32, 16384, 1 << 18
FILLER = "zz-filler.bin"
PAGE = 4096


def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _check(rc, what):
    if rc != 0:
        code = ctypes.get_errno()
        raise OSError(code, "%s: %s" % (what, os.strerror(code)))


def _mount(source, target, fstype, flags, data):
    enc = lambda s: s.encode() if s is not None else None   # noqa: E731
    _check(_libc().mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
           "mount %s" % target)


def available():
    """Why a private tmpfs cannot be had here, or None when it can (tried in a throwaway child)."""
    if not hasattr(os, "fork") or not os.path.exists("/proc/self/ns/mnt"):
        return "no Linux mount namespaces on this system"
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root (CI runs as root)"
    got = in_tmpfs(64 * 1024, lambda mount: os.statvfs(mount).f_blocks * os.statvfs(mount).f_frsize)
    if isinstance(got, dict) and "child_error" in got:
        return got["child_error"]
    return None


def in_tmpfs(size, func):
    """``func(mount_point)`` in a forked child that has a fresh ``size``-byte tmpfs mounted at
    ``mount_point`` in its own mount namespace; returns what ``func`` returned (or
    ``{"child_error": traceback}``)."""
    point = tempfile.mkdtemp(prefix="xla-disk-")
    os.chmod(point, 0o755)
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:                                        # pragma: no cover - the child
        os.close(rfd)
        try:
            libc = _libc()
            _check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
            _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
            _mount("tmpfs", point, "tmpfs", 0, "size=%d,mode=0755" % size)
            out = json.dumps(func(point))
        except BaseException:                           # noqa: BLE001 - report anything to the parent
            out = json.dumps({"child_error": traceback.format_exc()})
        os.write(wfd, out.encode())
        os._exit(0)
    os.close(wfd)
    chunks = []
    while True:
        chunk = os.read(rfd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(rfd)
    os.waitpid(pid, 0)
    shutil.rmtree(point, ignore_errors=True)
    return json.loads(b"".join(chunks).decode())


def free_bytes(mount):
    st = os.statvfs(mount)
    return st.f_bavail * st.f_frsize


def fill(mount, free):
    """Leave exactly ``free`` bytes (whole pages) free on the tmpfs at ``mount``."""
    unfill(mount)
    want = free - free % PAGE
    room = free_bytes(mount) - want
    if room > 0:
        fd = os.open(os.path.join(mount, FILLER), os.O_CREAT | os.O_WRONLY, 0o600)
        try:
            os.posix_fallocate(fd, 0, room)
        finally:
            os.close(fd)
    left = free_bytes(mount)
    assert left == want, "filled to %d bytes free, wanted %d" % (left, want)


def unfill(mount):
    try:
        os.remove(os.path.join(mount, FILLER))
    except FileNotFoundError:
        pass


def remount(mount, read_only):
    """Turn the tmpfs at ``mount`` read-only (``mount -o remount,ro``) or back to read-write."""
    _mount(None, mount, None, MS_REMOUNT | (MS_RDONLY if read_only else 0), None)


def mount_tmpfs(point, size):
    """One more tmpfs at ``point`` (inside the child's namespace; e.g. the user's folder as a disk
    of its own, to turn read-only while HOME stays writable)."""
    os.makedirs(point, exist_ok=True)
    _mount("tmpfs", point, "tmpfs", 0, "size=%d,mode=0755" % size)
