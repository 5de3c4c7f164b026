"""Servers on 127.0.0.1 that misbehave on purpose, one listening port per fault, raw sockets
(``tests/netserver.py`` speaks correct HTTP; these do not).

Faults (``FAULTS``): ``never`` accepts and never answers; ``stall_headers`` sends the status line
and headers (a long Content-Length) and then nothing; ``trickle`` sends the headers and then one
byte a second; ``reset`` sends half a body and resets the connection (RST, ``SO_LINGER`` 0);
``short_length`` declares 200,000 bytes, sends 3,000 and closes; ``gzip_forever`` streams a gzip
body that never ends (chunked, zeros compress ~1000:1); ``redirect_loop`` answers every request
with a 302 to itself; ``garbage`` sends 10 MB of random bytes as ``text/html``; ``tls_stall``
takes the TLS ClientHello and never answers it (the origin is mapped with ``https://``);
``trickle_headers`` sends the status line and then its header lines a byte a second (a socket
timeout per read never fires there either); ``trickle_redirects`` answers every request with a
302 to the next hop, each answer trickled a byte every 50 ms (about 3 s a hop: ten hops would
take 30 s); ``redirect_local`` redirects to the cloud metadata address 169.254.169.254, which the
address policy must refuse.

Every connection runs in its own daemon thread and ends when the client goes or :meth:`stop`.
"""
import os
import socket
import struct
import threading
import time
import zlib

FAULTS = ("never", "stall_headers", "trickle", "reset", "short_length", "gzip_forever", "redirect_loop",
          "garbage", "tls_stall", "trickle_headers", "trickle_redirects", "redirect_local")
HEAD = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n"
BODY = ("<html><head><title>页面</title></head><body>" + "<p>内容内容内容内容内容</p>" * 400).encode("utf-8")


class BadNet(object):
    def __init__(self):
        self.stopped = threading.Event()
        self.ports, self._socks, self._conns = {}, [], []
        self.lock = threading.Lock()
        for fault in FAULTS:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            s.listen(64)
            s.settimeout(0.2)
            self.ports[fault] = s.getsockname()[1]
            self._socks.append(s)
            threading.Thread(target=self._accept, args=(s, getattr(self, "_" + fault)), daemon=True).start()

    def base(self, fault):
        scheme = "https" if fault == "tls_stall" else "http"
        return "%s://127.0.0.1:%d" % (scheme, self.ports[fault])

    def stop(self):
        self.stopped.set()
        for s in self._socks:
            s.close()
        with self.lock:
            for c in self._conns:
                try:
                    c.close()
                except OSError:
                    pass

    # -- plumbing ------------------------------------------------------------------------------

    def _accept(self, s, behave):
        while not self.stopped.is_set():
            try:
                conn, _ = s.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self._conns.append(conn)
            threading.Thread(target=self._run, args=(conn, behave), daemon=True).start()

    def _run(self, conn, behave):
        try:
            conn.settimeout(5)
            behave(conn)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def _request(self, conn):
        """Read one request head; False when the client went away."""
        data = b""
        while b"\r\n\r\n" not in data:
            try:
                chunk = conn.recv(65536)
            except socket.timeout:
                return False
            if not chunk:
                return False
            data += chunk
        return data

    def _hold(self, seconds=120):
        self.stopped.wait(seconds)

    # -- the faults ----------------------------------------------------------------------------

    def _never(self, conn):
        self._request(conn)
        self._hold()

    def _tls_stall(self, conn):
        conn.recv(65536)                      # the ClientHello, never answered
        self._hold()

    def _stall_headers(self, conn):
        if self._request(conn):
            conn.sendall((HEAD % 200000).encode() + b"<html><body>")
            self._hold()

    def _trickle(self, conn):
        if self._request(conn):
            conn.sendall((HEAD % 200000).encode())
            for i in range(200000):
                if self.stopped.wait(1.0):
                    return
                conn.sendall(BODY[i % len(BODY):i % len(BODY) + 1])

    def _drip(self, conn, data, interval):
        for i in range(len(data)):
            if self.stopped.wait(interval):
                return False
            conn.sendall(data[i:i + 1])
        return True

    def _trickle_headers(self, conn):
        if self._request(conn):
            conn.sendall(b"HTTP/1.1 200 OK\r\n")
            self._drip(conn, b"Content-Type: text/html; charset=utf-8\r\nX-Slow: " + b"a" * 200000, 1.0)

    def _trickle_redirects(self, conn):
        hop = 0
        while not self.stopped.is_set():
            if not self._request(conn):
                return
            hop += 1
            head = ("HTTP/1.1 302 Found\r\nLocation: /hop/%d\r\nContent-Length: 0\r\n\r\n" % hop).encode()
            if not self._drip(conn, head, 0.05):
                return

    def _redirect_local(self, conn):
        if self._request(conn):
            conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/latest/meta-data/\r\n"
                         b"Content-Length: 0\r\n\r\n")

    def _reset(self, conn):
        if self._request(conn):
            conn.sendall((HEAD % len(BODY)).encode() + BODY[:len(BODY) // 2])
            time.sleep(0.05)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def _short_length(self, conn):
        if self._request(conn):
            conn.sendall((HEAD % 200000).encode() + BODY[:3000])
            conn.shutdown(socket.SHUT_WR)

    def _gzip_forever(self, conn):
        if self._request(conn):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: gzip\r\n"
                         b"Transfer-Encoding: chunked\r\n\r\n")
            comp = zlib.compressobj(9, zlib.DEFLATED, 31)
            first = comp.compress(b"<html><body>")
            block = b"\0" * (1 << 20)
            while not self.stopped.is_set():
                piece = first + comp.compress(block) + comp.flush(zlib.Z_SYNC_FLUSH)
                first = b""
                conn.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))

    def _redirect_loop(self, conn):
        while not self.stopped.is_set():
            head = self._request(conn)
            if not head:
                return
            path = head.split(b" ", 2)[1] if head.count(b" ") >= 2 else b"/"
            conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: " + path + b"\r\nContent-Length: 0\r\n\r\n")

    def _garbage(self, conn):
        if self._request(conn):
            size = 10 * 1024 * 1024
            conn.sendall((HEAD % size).encode())
            chunk = os.urandom(1 << 16)
            sent = 0
            while sent < size and not self.stopped.is_set():
                conn.sendall(chunk)
                sent += len(chunk)
