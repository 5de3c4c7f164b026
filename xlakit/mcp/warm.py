"""The MCP server's warm OCR engine: one ``xlakit.documents.ocr_service`` process, started at the
first call of a tool that may read scans and handed to those calls (issue 36.7).

Why here: the server is the one long process of an MCP session, so it is what can keep the engine
loaded between calls; the tool processes stay one per call, as the host contract has them. The
service process exits by itself after ``ocr_service.IDLE`` seconds without a request (memory back)
and whenever our end of its stdin closes (we ended); ``env`` starts a new one when the last has
gone. Any trouble (no interpreter, a slow start) only means the call reads with its own engine.
Standard library only: nothing of the OCR engine is imported into the server.
"""
import binascii
import os
import subprocess
import threading

from .. import host as xla_host

TOOLS = ("read_document",)    # the tools that may read scans and pictures
START_WAIT = 10.0             # seconds the service may take to say its address


def _stream(errfile):
    """The service's log goes where the server's does when that is a real file, else nowhere."""
    try:
        errfile.fileno()
        return errfile
    except (AttributeError, OSError, ValueError):
        return subprocess.DEVNULL


class WarmOcr(object):
    """``idle``: seconds the service waits for a request before it exits (default
    ``ocr_service.IDLE``; ``XLA_MCP_OCR_IDLE`` in the server's environment sets it)."""

    def __init__(self, root, home, python, errfile=None, idle=None):
        self.root, self.home, self.python, self.errfile = root, home, python, errfile
        self.idle = idle if idle is not None else os.environ.get("XLA_MCP_OCR_IDLE") or None
        self.proc = None
        self.address = None
        self.key = None
        self.lock = threading.Lock()

    def env(self, tool):
        """Extra environment for a call of ``tool``: the service's address and key, or {}."""
        if tool not in TOOLS:
            return {}
        with self.lock:
            if not self._alive():
                self.close()
                self._start()
            if self.address is None:
                return {}
            return {"XLA_OCR_SERVICE": self.address, "XLA_OCR_KEY": self.key}

    def _alive(self):
        """Is the service there? An exiting service removes its socket first (its process can
        stay unreapable for a moment while its threads end), so a missing socket means gone."""
        if self.proc is None or self.proc.poll() is not None or self.address is None:
            return False
        return os.name == "nt" or os.path.exists(self.address)

    def _start(self):
        self.address = None
        self.key = binascii.hexlify(os.urandom(32)).decode("ascii")
        cmd = [self.python, "-X", "utf8", "-u", "-m", "xlakit.documents.ocr_service"]
        if self.idle is not None:
            cmd.append(str(self.idle))
        try:
            self.proc = subprocess.Popen(cmd, cwd=self.root, env=xla_host.tool_env(self.root, self.home or xla_host.home_dir()),
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=_stream(self.errfile),
                                         **xla_host.group_kwargs())
            self.proc.stdin.write((self.key + "\n").encode("ascii"))
            self.proc.stdin.flush()
        except (OSError, ValueError):
            self.proc = None
            return
        line = []
        reader = threading.Thread(target=lambda: line.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(START_WAIT)
        address = line[0].decode("utf-8", "replace").strip() if line else ""
        if address:
            self.address = address
        else:
            self.close()

    def close(self):
        """End the service: close its stdin (it exits at once), kill it if it does not."""
        with_proc, self.proc, self.address = self.proc, None, None
        if with_proc is None:
            return
        try:
            with_proc.stdin.close()
        except OSError:
            pass
        try:
            with_proc.wait(3)
        except subprocess.TimeoutExpired:
            xla_host.kill_tree(with_proc)
            try:
                with_proc.wait(3)
            except subprocess.TimeoutExpired:
                pass
