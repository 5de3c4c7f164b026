"""The tool process's side of the warm OCR engine (``ocr_service``): connect, send a picture, read
the lines back.

Why a module of its own: ``ocr.Reader`` (in every tool process that reads a scan) uses this client,
and the service process uses ``ocr.Reader`` as its engine; with the client here neither of
``ocr`` and ``ocr_service`` imports the other's importer, so there is no circle. The protocol is
described in ``ocr_service``.
"""
import json
import os
import threading

WAIT = 60.0               # seconds a client waits for one answer before it reads on its own
ENV_ADDRESS, ENV_KEY = "XLA_OCR_SERVICE", "XLA_OCR_KEY"


class Unavailable(Exception):
    """The service cannot be used (absent, gone, too slow, refused): read without it."""


class Client(object):
    """The tool process's side: one connection per thread, opened on first use."""

    def __init__(self, address, key):
        self.address, self.key = address, key
        self._local = threading.local()

    @classmethod
    def from_env(cls):
        address, key = os.environ.get(ENV_ADDRESS), os.environ.get(ENV_KEY)
        if not address or not key:
            return None
        try:
            return cls(address, bytes.fromhex(key))
        except ValueError:
            return None

    def _conn(self):
        conn = getattr(self._local, "conn", None)
        if conn is None:
            from multiprocessing.connection import Client as Connect
            try:
                conn = Connect(self.address, authkey=self.key)
            except Exception as exc:  # noqa: BLE001 - gone, refused, wrong key: read locally
                raise Unavailable(str(exc))
            self._local.conn = conn
        return conn

    def ask(self, header, payload=None):
        conn = self._conn()
        try:
            conn.send_bytes(json.dumps(header).encode("utf-8"))
            if payload is not None:
                conn.send_bytes(payload)
            if not conn.poll(WAIT):
                raise Unavailable("no answer")
            answer = json.loads(conn.recv_bytes().decode("utf-8"))
        except Unavailable:
            self._forget(conn)
            raise
        except Exception as exc:  # noqa: BLE001 - a broken pipe, a service that died mid-page
            self._forget(conn)
            raise Unavailable(str(exc))
        if not answer.get("ok"):
            raise Unavailable(answer.get("error") or "refused")
        return answer

    def _forget(self, conn):
        self._local.conn = None
        try:
            conn.close()
        except OSError:
            pass

    def hello(self):
        return self.ask({"op": "hello"})

    def detect(self, image):
        """``image``: RGB PIL image (already ``ocr.prepare``d) -> the service's id for it."""
        return self.ask({"op": "detect", "size": list(image.size)}, image.tobytes())["id"]

    def recognise(self, handle):
        return self.ask({"op": "recognise", "id": handle})["lines"]
