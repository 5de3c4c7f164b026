"""The error types and the time budget every layer shares.

They live apart from the runtime so that a format reader, the HTTP layer or a document converter
can raise a Chinese error or honour the deadline without importing the process runtime (which
reads stdin and owns the exit code) or the manifest.
"""
import time


class ToolError(Exception):
    """A failure the user can act on. ``str(exc)`` is the Chinese message shown to the model.

    ``extra`` is merged into the failure JSON (e.g. ``candidates`` for a retry)."""

    def __init__(self, message, **extra):
        super().__init__(message)
        self.extra = extra


class InputError(ToolError):
    """The call itself is wrong (bad JSON, bad parameter): exit code 2."""


class FormatError(ToolError):
    """The file is not what this reader handles. ``tool`` names the tool that can read it, so the
    caller can add a hint only when that tool exists in the manifest."""

    def __init__(self, message, tool=None, **extra):
        super().__init__(message, **extra)
        self.tool = tool


class TimeUp(ToolError):
    """The tool's time budget ran out. Loops that can return a partial answer catch it."""


class Deadline:
    """One time budget from a start point: every loop, reader and request asks the same clock.

    ``budget`` is seconds from ``start`` (``time.monotonic()`` when omitted). The runtime makes one
    at import with a budget a little under the host's 60 s; domain code receives it as a
    ``deadline`` argument (``None`` meaning no limit), so it never imports the runtime."""

    def __init__(self, budget, start=None):
        self.start = time.monotonic() if start is None else start
        self.budget = float(budget)

    @property
    def at(self):
        return self.start + self.budget

    def remaining(self):
        return max(0.0, self.at - time.monotonic())

    def elapsed(self):
        return time.monotonic() - self.start

    def expired(self):
        return time.monotonic() >= self.at

    def timeout(self, cap=None, floor=0.05):
        """A timeout for one blocking call: the time left, at most ``cap``, never below ``floor``
        (a zero timeout would mean "block forever" to some APIs)."""
        left = self.remaining()
        if cap is not None:
            left = min(left, cap)
        return max(floor, left)

    def sub(self, budget):
        """A deadline of at most ``budget`` seconds from now that never outlives this one."""
        return Deadline(min(budget, self.remaining()))

    def check(self, what=""):
        if self.expired():
            raise TimeUp("%s超过时间上限（约 %d 秒）。请缩小范围（分段、筛选或更具体的条件）后重试" % (
                (what + "时") if what else "处理", int(self.budget)))


def remaining(deadline, default=None):
    """Seconds left on an optional deadline (``default`` when there is none)."""
    return default if deadline is None else deadline.remaining()
