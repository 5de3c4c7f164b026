"""A cross-process file lock (fcntl on POSIX, msvcrt on Windows), shared by the dependency
bootstrap, the host's two-runs-at-once limit and the tag sync.

The lock is tied to an open file handle, so the OS releases it when a process dies: a killed tool
can never leave the toolbox locked forever."""
import os
import time

if os.name == "nt":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fh):
        try:
            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_NBLCK, 1)
            return True
        except OSError:
            return False

    def _unlock(fh):
        try:
            fh.seek(0)
            msvcrt.locking(fh.fileno(), msvcrt.LK_UNLCK, 1)
        except OSError:
            pass
else:
    import fcntl

    def _try_lock(fh):
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError:
            return False

    def _unlock(fh):
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        except OSError:
            pass


class FileLock:
    """``with FileLock(path, timeout=50):`` waits up to ``timeout`` seconds, then raises TimeoutError."""

    def __init__(self, path, timeout=None, poll=0.05):
        self.path = path
        self.timeout = timeout
        self.poll = poll
        self._fh = None

    def try_acquire(self):
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        fh = open(self.path, "a+b")
        if _try_lock(fh):
            self._fh = fh
            return True
        fh.close()
        return False

    def acquire(self):
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        while not self.try_acquire():
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError("lock %s busy" % self.path)
            time.sleep(self.poll)
        return self

    def release(self):
        if self._fh is not None:
            _unlock(self._fh)
            self._fh.close()
            self._fh = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
