"""A real HTTP server on 127.0.0.1 for every web test, plus a SOCKS5 server and an HTTP proxy.

Why not mocks: the tools are spawned as the host spawns them and talk to the network through
``xlakit.http``; the only seam is ``XLA_NET_MAP`` (origin -> base URL). So a test starts this
server, registers the pages a site would serve (by path, optionally by the logical ``Host`` the
tool asked for, so one server can play Baidu and 360 at once) and passes ``server.env(...)`` to
``run(...)``. Nothing here touches the internet.

Use from any test file::

    from netserver import serve          # the pytest fixture (a started NetServer)

    def test_x(serve, run):
        serve.page("/s", "<html>…</html>", host="www.baidu.com")
        serve.redirect("/old", "https://www.baidu.com/s")
        res = run("web_search", {...}, extra_env=serve.env("https://www.baidu.com"))

Replies: ``page`` (bytes/str with chosen headers, optional gzip/deflate), ``redirect``, ``slow``
(sleeps before answering), ``drip`` (headers, then a byte at a time, for a long while), ``huge``
(a body of any size, streamed, with or without Content-Length), ``handler`` (a function of the
request), ``close`` (drops the connection without answering). ``requests`` records what arrived
(method, path, query, headers, body, host), so tests can check headers and cookies.
"""
import gzip as _gzip
import json
import select
import socket
import socketserver
import struct
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

import pytest


class Request(object):
    """What the server received: ``method``, ``path`` (no query), ``query`` (dict of lists),
    ``headers`` (case-insensitive ``get``), ``body`` bytes, ``host`` (Host header without port)."""

    def __init__(self, method, target, headers, body):
        parts = urlsplit(target)
        self.method = method
        self.target = target
        self.path = unquote(parts.path or "/")   # routes are written as text: /路径
        self.query = parse_qs(parts.query, keep_blank_values=True)
        self.headers = headers
        self.body = body
        host = (headers.get("Host") or "").lower()
        self.host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host

    def arg(self, name, default=None):
        values = self.query.get(name)
        return values[0] if values else default

    def __repr__(self):
        return "<Request %s %s host=%s>" % (self.method, self.target, self.host)


class Reply(object):
    """An answer: ``status``, ``body`` (bytes, str, or an iterable of byte chunks for streaming),
    ``headers`` (list of pairs, repeated names allowed), ``encode`` ("gzip"/"deflate"/None),
    ``chunked`` (Transfer-Encoding: chunked instead of Content-Length), ``delay`` seconds before
    the status line, ``length`` to declare a Content-Length of your choosing (e.g. a lie)."""

    def __init__(self, body=b"", status=200, headers=None, content_type="text/html; charset=utf-8",
                 encode=None, chunked=False, delay=0.0, length=None, close=False):
        self.body = body
        self.status = status
        self.headers = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
        if content_type and not any(k.lower() == "content-type" for k, _ in self.headers):
            self.headers.append(("Content-Type", content_type))
        self.encode = encode
        self.chunked = chunked
        self.delay = delay
        self.length = length
        self.close = close


def _bytes(body):
    return body.encode("utf-8") if isinstance(body, str) else body


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "netserver/1"
    disable_nagle_algorithm = True   # headers and body are separate writes: no 40 ms delayed-ACK stalls

    def log_message(self, fmt, *args):   # quiet
        pass

    def _serve(self):
        owner = self.server.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        req = Request(self.command, self.path, self.headers, body)
        with owner.lock:
            owner.requests.append(req)
        handler = owner.find(req)
        if handler is None:
            reply = Reply("<html><head><title>404 Not Found</title></head><body><h1>404 Not Found</h1>"
                          "<p>netserver: no route for %s %s</p></body></html>" % (req.host, req.path), status=404)
        else:
            try:
                reply = handler(req)
            except Exception as exc:  # a broken test handler shows as a 500 with the reason
                reply = Reply("handler error: %r" % (exc,), status=500, content_type="text/plain")
            if not isinstance(reply, Reply):
                reply = Reply(reply)
        if reply.delay:
            owner.stopped.wait(reply.delay)
        if reply.status is None:          # drop the connection without a word
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        self.send_response_only(reply.status)
        for k, v in reply.headers:
            self.send_header(k, v)
        stream = not isinstance(reply.body, (bytes, str))
        if stream:
            chunks = reply.body
        else:
            data = _bytes(reply.body)
            if reply.encode == "gzip":
                data = _gzip.compress(data)
            elif reply.encode == "deflate":
                data = zlib.compress(data)
            elif reply.encode == "raw-deflate":
                c = zlib.compressobj(wbits=-zlib.MAX_WBITS)
                data = c.compress(data) + c.flush()
            chunks = [data]
        if reply.encode:
            self.send_header("Content-Encoding", "deflate" if reply.encode == "raw-deflate" else reply.encode)
        if reply.chunked or (stream and reply.length is None):
            self.send_header("Transfer-Encoding", "chunked")
            chunked = True
        else:
            chunked = False
            self.send_header("Content-Length", str(reply.length if reply.length is not None else len(chunks[0])))
        if reply.close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if self.command == "HEAD":
            return
        try:
            for chunk in chunks:
                if owner.stopped.is_set():
                    break
                chunk = _bytes(chunk)
                if not chunk:
                    continue
                if chunked:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                else:
                    self.wfile.write(chunk)
                self.wfile.flush()
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:   # the client hung up (it hit its cap or deadline): that is the point
            self.close_connection = True

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _serve


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        """Clients hanging up mid-answer (caps, deadlines, TLS refusals) are expected here."""
        import sys
        if not isinstance(sys.exc_info()[1], (OSError, ValueError)):
            ThreadingHTTPServer.handle_error(self, request, client_address)


class NetServer(object):
    """The server. ``base`` is its ``http://127.0.0.1:PORT``; ``env(*origins)`` the ``extra_env`` for
    ``run`` mapping each origin (``https://www.baidu.com``) to it."""

    def __init__(self):
        self.routes = {}
        self.requests = []
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.httpd = _QuietServer(("127.0.0.1", 0), _Handler)
        self.httpd.owner = self
        self.port = self.httpd.server_address[1]
        self.base = "http://127.0.0.1:%d" % self.port
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="netserver", daemon=True)
        self._thread.start()

    # ---- routing -----------------------------------------------------------------------------
    def find(self, req):
        return self.routes.get((req.host, req.path)) or self.routes.get((None, req.path)) or \
            self.routes.get((req.host, "*")) or self.routes.get((None, "*"))

    def handler(self, path, fn=None, host=None):
        """Register ``fn(request) -> Reply | bytes | str`` for ``path`` (``"*"`` = any path).
        Usable as a decorator: ``@serve.handler("/api")``."""
        def register(f):
            self.routes[(host.lower() if host else None, path)] = f
            return f
        return register(fn) if fn is not None else register

    def page(self, path, body, content_type="text/html; charset=utf-8", status=200, headers=None, host=None,
             encode=None, chunked=False):
        reply = Reply(body, status=status, headers=headers, content_type=content_type, encode=encode, chunked=chunked)
        return self.handler(path, lambda req: reply, host=host)

    def json(self, path, obj, status=200, host=None, headers=None):
        return self.page(path, json.dumps(obj, ensure_ascii=False), "application/json; charset=utf-8", status,
                         headers, host)

    def redirect(self, path, location, status=302, host=None, headers=None):
        extra = [("Location", location)] + (list(headers.items()) if isinstance(headers, dict) else list(headers or []))
        return self.page(path, "", status=status, headers=extra, host=host, content_type="text/html")

    def slow(self, path, delay, body="<html><body>slow</body></html>", host=None, **kw):
        """Answers only after ``delay`` seconds (cut short when the server stops)."""
        reply = Reply(body, delay=delay, **kw)
        return self.handler(path, lambda req: reply, host=host)

    def drip(self, path, interval=0.2, total=600, host=None, head="<html><body>"):
        """Headers at once, then one byte every ``interval`` s: a request timeout on each read would
        never fire, only a bound on the whole request does."""
        def gen():
            yield head
            for _ in range(total):
                if self.stopped.wait(interval):
                    return
                yield "x"
        return self.handler(path, lambda req: Reply(gen(), chunked=True), host=host)

    def huge(self, path, size, declare_length=True, host=None, content_type="text/html; charset=utf-8",
             encode=None):
        """A body of ``size`` bytes streamed in 64 KB pieces (never held in memory), with a true
        Content-Length or chunked. ``encode="gzip"`` sends a small gzip that inflates to ``size``
        (a zip bomb in miniature)."""
        if encode == "gzip":
            comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            piece = b"<p>" + b"a" * 65530 + b"</p>"
            data = []
            left = size
            while left > 0:
                data.append(comp.compress(piece[:min(left, len(piece))]))
                left -= len(piece)
            data.append(comp.flush())
            blob = b"".join(data)
            return self.handler(path, lambda req: Reply([blob], headers=[("Content-Encoding", "gzip")],
                                                        content_type=content_type, length=len(blob)), host=host)

        def gen():
            piece = b"<p>" + "中文".encode("utf-8") * 10920 + b"</p>"   # 65,527 bytes
            left = size
            while left > 0:
                yield piece[:min(left, len(piece))]
                left -= len(piece)
        return self.handler(path, lambda req: Reply(gen(), content_type=content_type,
                                                    length=size if declare_length else None), host=host)

    def close(self, path, host=None):
        """Accept the request, then drop the connection without any answer."""
        return self.handler(path, lambda req: Reply(status=None), host=host)

    # ---- what the tools get ------------------------------------------------------------------
    def net_map(self, *origins, **extra):
        mapping = dict((o, self.base) for o in origins)
        mapping.update(extra)
        return json.dumps(mapping)

    def env(self, *origins, **extra):
        """``{"XLA_NET_MAP": ...}`` mapping every origin to this server, plus ``"*": "offline"`` so
        a tool that strays to an unlisted site fails at once instead of reaching the internet."""
        mapping = dict((o, self.base) for o in origins)
        mapping.setdefault("*", "offline")
        mapping.update(extra)
        return {"XLA_NET_MAP": json.dumps(mapping)}

    def hits(self, path=None, host=None):
        with self.lock:
            return [r for r in self.requests if (path is None or r.path == path) and (host is None or r.host == host)]

    def stop(self):
        self.stopped.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def free_port():
    """A port on 127.0.0.1 that nothing listens on (for "connection refused")."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---------------------------------------------------------------------------------------------
# Proxies

class _Relay(object):
    """Copy bytes both ways between two sockets until one side closes."""

    @staticmethod
    def pump(a, b, stopped):
        socks = [a, b]
        try:
            while not stopped.is_set():
                ready, _, _ = select.select(socks, [], [], 0.2)
                for s in ready:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except OSError:
            return
        finally:
            for s in socks:
                try:
                    s.close()
                except OSError:
                    pass


class _ProxyBase(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, handler):
        socketserver.ThreadingTCPServer.__init__(self, ("127.0.0.1", 0), handler)
        self.stopped = threading.Event()
        self.connects = []   # (host, port) each tunnel asked for
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self):
        self.stopped.set()
        self.shutdown()
        self.server_close()


def _recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("eof")
        buf += chunk
    return buf


class _SocksHandler(socketserver.BaseRequestHandler):
    def handle(self):
        srv = self.server
        c = self.request
        c.settimeout(10)
        try:
            ver, n = _recv_exact(c, 2)
            methods = _recv_exact(c, n)
            if srv.user is not None:
                if 2 not in methods:
                    c.sendall(b"\x05\xff")
                    return
                c.sendall(b"\x05\x02")
                _recv_exact(c, 1)
                user = _recv_exact(c, _recv_exact(c, 1)[0]).decode("utf-8")
                password = _recv_exact(c, _recv_exact(c, 1)[0]).decode("utf-8")
                srv.auths.append((user, password))
                if (user, password) != (srv.user, srv.password):
                    c.sendall(b"\x01\x01")
                    return
                c.sendall(b"\x01\x00")
            else:
                c.sendall(b"\x05\x00")
            ver, cmd, _, atyp = _recv_exact(c, 4)
            if atyp == 1:
                host = socket.inet_ntoa(_recv_exact(c, 4))
            elif atyp == 3:
                host = _recv_exact(c, _recv_exact(c, 1)[0]).decode("idna")
            elif atyp == 4:
                host = socket.inet_ntop(socket.AF_INET6, _recv_exact(c, 16))
            else:
                c.sendall(b"\x05\x08\x00\x01" + b"\x00" * 6)
                return
            port = struct.unpack(">H", _recv_exact(c, 2))[0]
            srv.connects.append((host, port))
            if cmd != 1:
                c.sendall(b"\x05\x07\x00\x01" + b"\x00" * 6)
                return
            try:
                up = socket.create_connection((host, port), timeout=5)
            except ConnectionRefusedError:
                c.sendall(b"\x05\x05\x00\x01" + b"\x00" * 6)
                return
            except OSError:
                c.sendall(b"\x05\x04\x00\x01" + b"\x00" * 6)
                return
            bound = up.getsockname()
            c.sendall(b"\x05\x00\x00\x01" + socket.inet_aton(bound[0]) + struct.pack(">H", bound[1]))
            c.settimeout(None)
            up.settimeout(None)
            _Relay.pump(c, up, srv.stopped)
        except (OSError, ConnectionError, ValueError):
            return


class Socks5Server(_ProxyBase):
    """A minimal SOCKS5 server (CONNECT only; no auth, or username/password when ``user`` is
    given). ``connects`` lists the targets asked for, ``auths`` the credentials offered."""

    def __init__(self, user=None, password=None):
        self.user, self.password = user, password
        self.auths = []
        _ProxyBase.__init__(self, _SocksHandler)

    @property
    def url(self):
        if self.user is not None:
            return "socks5h://%s:%s@127.0.0.1:%d" % (self.user, self.password, self.port)
        return "socks5h://127.0.0.1:%d" % self.port


class _HttpProxyHandler(socketserver.StreamRequestHandler):
    def handle(self):
        srv = self.server
        try:
            line = self.rfile.readline(65537).decode("latin-1").strip()
            if not line:
                return
            method, target, _ = line.split(" ", 2)
            headers = []
            while True:
                h = self.rfile.readline(65537).decode("latin-1")
                if h in ("\r\n", "\n", ""):
                    break
                headers.append(h.rstrip("\r\n"))
            auth = [h.split(":", 1)[1].strip() for h in headers if h.lower().startswith("proxy-authorization:")]
            srv.seen.append((method, target, auth[0] if auth else None))
            if srv.token and (not auth or auth[0] != "Basic " + srv.token):
                self.wfile.write(b"HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n"
                                 b"Connection: close\r\n\r\n")
                return
            if method == "CONNECT":
                host, port = target.rsplit(":", 1)
                srv.connects.append((host, int(port)))
                up = socket.create_connection((host, int(port)), timeout=5)
                self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                self.wfile.flush()
                _Relay.pump(self.connection, up, srv.stopped)
                return
            parts = urlsplit(target)
            srv.connects.append((parts.hostname, parts.port or 80))
            up = socket.create_connection((parts.hostname, parts.port or 80), timeout=5)
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            kept = [h for h in headers if not h.lower().startswith(("proxy-authorization:", "proxy-connection:",
                                                                     "connection:"))]
            up.sendall(("%s %s HTTP/1.1\r\n%s\r\nConnection: close\r\n\r\n" % (
                method, path, "\r\n".join(kept))).encode("latin-1"))
            length = [int(h.split(":", 1)[1]) for h in headers if h.lower().startswith("content-length:")]
            if length:
                up.sendall(self.rfile.read(length[0]))
            # the answer goes back as is; "Connection: close" upstream ends the exchange
            while True:
                data = up.recv(65536)
                if not data:
                    break
                self.wfile.write(data)
            up.close()
        except (OSError, ValueError):
            return


class HttpProxy(_ProxyBase):
    """A minimal HTTP proxy: absolute-URI requests for http, CONNECT tunnels for https, optional
    Basic ``Proxy-Authorization``. ``seen`` lists (method, target, auth) per request."""

    def __init__(self, user=None, password=None):
        import base64
        self.token = base64.b64encode(("%s:%s" % (user, password)).encode()).decode() if user is not None else None
        self.user, self.password = user, password
        self.seen = []
        _ProxyBase.__init__(self, _HttpProxyHandler)

    @property
    def url(self):
        if self.user is not None:
            return "http://%s:%s@127.0.0.1:%d" % (self.user, self.password, self.port)
        return "http://127.0.0.1:%d" % self.port


# ---------------------------------------------------------------------------------------------
# pytest fixtures (import them into a test module: ``from netserver import serve``)

@pytest.fixture
def serve():
    server = NetServer()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def socks5():
    server = Socks5Server(user="xla", password="秘密pw")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def http_proxy():
    server = HttpProxy()
    try:
        yield server
    finally:
        server.stop()
