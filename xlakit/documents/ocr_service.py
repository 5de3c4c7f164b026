"""A warm OCR engine shared by the tool processes of one long-lived host (the MCP server).

Why: loading the engine costs about a second of every call that reads a scan (issue 36.7), and a
tool process lives for one call. The MCP server is one long process, so it keeps one OCR engine
process (this module run as ``python -m xlakit.documents.ocr_service``) and hands its address to
the tool processes it starts (``XLA_OCR_SERVICE``, ``XLA_OCR_KEY``). Tool processes stay as they
are: a ``read_document`` child that finds the address sends its page pictures there instead of
loading the engine; without it (or when the service does not answer) it loads its own engine as
always (``ocr.Reader``). The client side lives in ``ocr_client``.

Protocol: ``multiprocessing.connection`` (a Unix socket in a private folder, a named pipe on
Windows) with its HMAC handshake on a random key, and then only bytes: a JSON header, and for a
picture its raw RGB pixels. Nothing is unpickled, so a stranger who could reach the socket gets
nothing without the key and cannot run code with it. One connection per thread of the client,
so a PDF's next page is detected while this page is recognised exactly as in one process:

- ``{"op": "hello"}`` -> ``{"ok": true}`` once the engine is loaded (the first hello loads it),
  or ``{"ok": false, "error": ...}`` when it is not installed (the client then takes its own
  path, which may install it);
- ``{"op": "detect", "size": [w, h]}`` + pixels -> ``{"ok": true, "id": n}``: the lines found,
  kept here (at most :data:`KEEP` pictures; a detection never collected is dropped);
- ``{"op": "recognise", "id": n}`` -> ``{"ok": true, "lines": [[quad, text, score], ...]}``.

Memory stays bounded: pictures are kept only between detect and recognise (:data:`KEEP`), and
after :data:`IDLE` seconds without a request the process exits, giving the engine's memory back
(the server starts a new one at the next call that may need it). It also exits when its parent
closes its stdin (the server ended), so it never outlives the server.
"""
import json
import os
import sys
import threading
import time

IDLE = 600.0              # seconds without a request after which the service exits (memory back)
KEEP = 4                  # detected pictures waiting for their recognition, at most
FIRST_WAIT = 60.0         # seconds a new service waits for its first request, however short IDLE is


# -- service (its own process) ----------------------------------------------------------------

class Service(object):
    def __init__(self):
        from . import ocr
        self.ocr = ocr
        self.reader = ocr.Reader()
        self.reader.remote_tried = True        # this is the warm engine: never a client of one
        self.kept = {}               # id -> _Found, oldest first
        self.next_id = 0
        self.lock = threading.Lock()
        self.detecting = threading.Lock()      # one detection at a time (as in one process)
        self.recognising = threading.Lock()    # one page's lines at a time (its threads share the cores)
        self.loading = threading.Lock()
        self.last = time.monotonic()
        self.busy = 0
        self.requests = 0

    def log(self, text):
        sys.stderr.write("[ocr-service] %s\n" % text)
        sys.stderr.flush()

    def handle(self, conn):
        try:
            while True:
                header = json.loads(conn.recv_bytes().decode("utf-8"))
                payload = conn.recv_bytes() if header.get("op") == "detect" else None
                with self.lock:
                    self.busy += 1
                    self.requests += 1
                try:
                    answer = self.answer(header, payload)
                except Exception as exc:  # noqa: BLE001 - said to the client, which reads on its own
                    answer = {"ok": False, "error": "%s: %s" % (type(exc).__name__, str(exc)[:200])}
                finally:
                    with self.lock:
                        self.busy -= 1
                        self.last = time.monotonic()
                conn.send_bytes(json.dumps(answer).encode("utf-8"))
        except (EOFError, OSError):
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def load(self):
        with self.loading:
            if self.reader.engine is None:
                if not self.ocr.ready():
                    raise self.ocr.Missing("not installed")
                started = time.monotonic()
                self.reader.load()
                self.log("文字识别引擎已加载（%.1f 秒）" % (time.monotonic() - started))

    def answer(self, header, payload):
        op = header.get("op")
        if op == "hello":
            self.load()
            return {"ok": True}
        self.load()
        if op == "detect":
            from PIL import Image
            width, height = header["size"]
            image = Image.frombytes("RGB", (int(width), int(height)), payload)
            with self.detecting:
                found = self.reader.detect(image)
            with self.lock:
                self.next_id += 1
                handle = self.next_id
                self.kept[handle] = found
                while len(self.kept) > KEEP:
                    self.kept.pop(next(iter(self.kept)))
            return {"ok": True, "id": handle}
        if op == "recognise":
            with self.lock:
                found = self.kept.pop(header.get("id"), None)
            if found is None:
                return {"ok": False, "error": "unknown picture"}
            with self.recognising:
                lines = self.reader.recognise(found)
                del self.reader.seconds[:]          # the client times its own pages
            return {"ok": True, "lines": [[line.quad, line.text, line.score] for line in lines]}
        return {"ok": False, "error": "unknown op"}

    def idle_for(self):
        with self.lock:
            return 0.0 if self.busy else time.monotonic() - self.last


def serve(idle=IDLE):
    """Listen, print the address on stdout, serve until idle for ``idle`` s or stdin closes.
    The key comes as the first line of stdin (hex), never on a command line others can read."""
    from multiprocessing.connection import Listener
    key = bytes.fromhex(sys.stdin.readline().strip())
    if os.name == "nt":  # pragma: no cover - Windows only
        listener = Listener(family="AF_PIPE", authkey=key)
    else:
        import tempfile
        folder = tempfile.mkdtemp(prefix="xla-ocr-")       # 0700: only this user reaches the socket
        listener = Listener(os.path.join(folder, "s"), family="AF_UNIX", authkey=key)
    service = Service()
    sys.stdout.write(listener.address + "\n")
    sys.stdout.flush()
    done = threading.Event()

    def parent_gone():
        try:
            while sys.stdin.read(65536):
                pass
        except (OSError, ValueError):
            pass
        done.set()

    def accept():
        while not done.is_set():
            try:
                conn = listener.accept()
            except Exception:  # noqa: BLE001 - a failed handshake (wrong key) or a closed listener
                continue
            threading.Thread(target=service.handle, args=(conn,), name="ocr-conn", daemon=True).start()

    threading.Thread(target=parent_gone, name="ocr-parent", daemon=True).start()
    threading.Thread(target=accept, name="ocr-accept", daemon=True).start()
    while not done.wait(1.0):
        if service.idle_for() > (idle if service.requests else max(idle, FIRST_WAIT)):
            service.log("空闲 %.0f 秒，退出（释放引擎占用的内存）" % idle)
            break
    address = listener.address
    if os.name != "nt":          # first: the server takes a missing socket for a service gone
        import shutil
        shutil.rmtree(os.path.dirname(address), ignore_errors=True)
    try:
        listener.close()
    except OSError:
        pass
    os._exit(0)          # daemon threads may be inside the engine: no interpreter teardown


if __name__ == "__main__":
    idle = float(sys.argv[1]) if len(sys.argv) > 1 else IDLE
    serve(idle)
