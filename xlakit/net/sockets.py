"""Sockets for ``xlakit.http``: DNS with a timeout (``getaddrinfo`` has none of its own), TCP
connect with Chinese errors, the SOCKS5 handshake (RFC 1928/1929), an HTTP CONNECT tunnel, and
verified TLS (with the macOS certificate fallback). ``_Conn`` is the ``http.client`` connection
whose socket comes from the session's factory (proxy, TLS, deadline)."""
import base64
import http.client
import ipaddress
import os
import socket
import ssl
import struct
import threading
import time

from .errors import _OFFLINE_ERRNOS, _REFUSED_ERRNOS, NetError, _offline_error

class TimedSocket(socket.socket):
    """A socket whose every receive and send waits at most until ``xla_end`` (a
    ``time.monotonic()`` value; None = only the socket's own timeout).

    Why: a socket timeout is per call, and a server that trickles a byte a second resets it on
    every byte, through the status line, each header line (http.client reads them one recv at a
    time) and the body. Setting the remaining overall budget before each call makes the whole
    exchange end on time, whatever reads it (http.client, the SOCKS5 and CONNECT handshakes).
    ``TimedSSLSocket`` does the same after TLS is on; the handshake itself is bounded by the
    timeout set before it (the ssl module keeps one deadline across the handshake's reads)."""

    xla_end = None

    def _xla_budget(self):
        end = self.xla_end
        if end is not None:
            left = end - time.monotonic()
            if left <= 0:
                raise socket.timeout("the overall deadline has passed")
            socket.socket.settimeout(self, left)

    def recv(self, *args):
        self._xla_budget()
        return socket.socket.recv(self, *args)

    def recv_into(self, *args):
        self._xla_budget()
        return socket.socket.recv_into(self, *args)

    def send(self, *args):
        self._xla_budget()
        return socket.socket.send(self, *args)

    def sendall(self, *args):
        self._xla_budget()
        return socket.socket.sendall(self, *args)


class TimedSSLSocket(ssl.SSLSocket):
    """``TimedSocket`` for a TLS connection (the class ``_wrap_tls`` gives its context)."""

    xla_end = None
    _xla_budget = TimedSocket._xla_budget

    def recv(self, *args):
        self._xla_budget()
        return ssl.SSLSocket.recv(self, *args)

    def recv_into(self, *args):
        self._xla_budget()
        return ssl.SSLSocket.recv_into(self, *args)

    def send(self, *args):
        self._xla_budget()
        return ssl.SSLSocket.send(self, *args)

    def sendall(self, *args):
        self._xla_budget()
        return ssl.SSLSocket.sendall(self, *args)


def arm(sock, end):
    """Give ``sock`` (a Timed socket, or anything else: then nothing happens) the overall
    deadline ``end`` for what follows, e.g. a kept-alive connection reused by a new request."""
    if isinstance(sock, (TimedSocket, TimedSSLSocket)):
        sock.xla_end = end


def _is_ip(host):
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return False


def _resolve(host, port, timeout, url):
    """``getaddrinfo`` bounded by ``timeout`` (it has none of its own: a dead resolver would hang
    the tool past the host's limit). IP literals skip the thread."""
    if _is_ip(host):
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        return [(fam, socket.SOCK_STREAM, 6, "", (host, port))]
    box = {}

    def work():
        try:
            box["v"] = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
        except Exception as exc:  # noqa: BLE001 - handed to the caller's thread
            box["e"] = exc

    worker = threading.Thread(target=work, name="dns", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise NetError("解析域名 %s 超时：DNS 服务没有回应，可能是网络没连上。请检查网络后重试" % host, "timeout", url)
    if "e" in box:
        raise dns_error(host, box["e"], url)
    return box["v"]


def dns_error(host, exc, url=None):
    """The Chinese NetError for a failed ``getaddrinfo`` (EAI_AGAIN is what a machine without a
    network usually gets; "name not known" may be either a typo or no network)."""
    if isinstance(exc, socket.gaierror):
        code = exc.args[0] if exc.args else None
        if code in (getattr(socket, "EAI_AGAIN", -3), 11002):
            return NetError("无法解析域名 %s：DNS 暂时不可用，多半是本机没有联网。请检查网络后重试" % host, "dns", url)
        return NetError("无法解析域名 %s：域名不存在，或本机没有联网、DNS 不可用。请检查网址拼写和网络连接" % host,
                        "dns", url)
    if isinstance(exc, UnicodeError):
        return NetError("域名 %s 不合法（含有无法编码的字符或空的段）。请检查网址" % host, "url", url)
    return NetError("无法解析域名 %s（%s）。请检查网址和网络连接" % (host, exc), "dns", url)


def _connect(host, port, timeout, url, what=None, check=None, end=None):
    """A connected TCP socket to ``host:port``; errors in Chinese. ``what`` names the peer in
    messages (the proxy, when connecting to one). ``check(address)`` (the address policy) is
    called on every resolved address before the first connect (one refusal refuses the name)
    and on the peer after it, so the socket is connected to exactly an address that was checked
    and the name is never resolved a second time. ``end`` (a ``time.monotonic()`` value) arms
    the socket's overall deadline (``TimedSocket``)."""
    start = time.monotonic()
    addrs = _resolve(host, port, timeout, url)
    if check is not None:
        for addr in addrs:
            check(addr[4][0])
    last = None
    for family, socktype, proto, _, addr in addrs:
        left = timeout - (time.monotonic() - start)
        if left <= 0:
            break
        sock = TimedSocket(family, socktype, proto)
        try:
            sock.settimeout(left)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.connect(addr)
        except (OSError, socket.timeout) as exc:
            sock.close()
            last = exc
            continue
        sock.xla_end = end
        if check is not None:
            try:
                check(sock.getpeername()[0])
            except BaseException:
                sock.close()
                raise
        return sock
    name = what or "%s:%d" % (host, port)
    if last is None or isinstance(last, socket.timeout):
        raise NetError("连接 %s 超时：网络不通或被防火墙拦截。请检查网络后重试" % name, "timeout", url)
    code = getattr(last, "errno", None) or getattr(last, "winerror", None)
    if isinstance(last, ConnectionRefusedError) or code in _REFUSED_ERRNOS:
        raise NetError("连接被拒绝：%s 没有在接受连接（服务没有运行，或地址、端口不对）。稍后重试或换一个来源" % name,
                       "refused", url)
    if code in _OFFLINE_ERRNOS:
        raise _offline_error(url, "连不上 %s：网络不可达" % name)
    raise NetError("无法连接 %s：%s。请检查网络后重试" % (name, last), "offline" if code is None else "refused", url)


_SOCKS_REPLIES = {
    1: "代理服务器内部故障", 2: "代理规则不允许这个连接", 3: "代理那边网络不可达", 4: "代理连不上目标主机",
    5: "目标主机拒绝连接", 6: "代理连接目标超时", 7: "代理不支持该命令", 8: "代理不支持这种地址类型",
}


def _recv_exact(sock, n, what):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise NetError("%s 中途断开了连接" % what, "proxy")
        buf += chunk
    return buf


def socks5_handshake(sock, host, port, user=None, password="", remote_dns=True, label="SOCKS5 代理"):
    """Ask the SOCKS5 server on ``sock`` for a tunnel to ``host:port`` (RFC 1928, with RFC 1929
    username/password when ``user`` is given). ``remote_dns`` sends the name for the proxy to
    resolve; otherwise ``host`` must already be an IP address. Raises NetError(kind="proxy")."""
    methods = b"\x00\x02" if user is not None else b"\x00"
    sock.sendall(b"\x05" + struct.pack("B", len(methods)) + methods)
    ver, method = _recv_exact(sock, 2, label)
    if ver != 5:
        raise NetError("%s 的回应不是 SOCKS5 协议（端口是否填成了 HTTP 代理？）" % label, "proxy")
    if method == 0x02:
        if user is None:
            raise NetError("%s 要求用户名和密码，请在设置的 proxy 地址里写上，如 socks5://用户名:密码@主机:端口" % label,
                           "proxy")
        u, p = user.encode("utf-8"), (password or "").encode("utf-8")
        if len(u) > 255 or len(p) > 255:
            raise NetError("%s 的用户名或密码太长（最多 255 字节）" % label, "proxy")
        sock.sendall(b"\x01" + struct.pack("B", len(u)) + u + struct.pack("B", len(p)) + p)
        _, status = _recv_exact(sock, 2, label)
        if status != 0:
            raise NetError("%s 拒绝了用户名或密码，请检查设置里 proxy 地址中的账号" % label, "proxy")
    elif method == 0xFF:
        raise NetError("%s 不接受本工具支持的认证方式（无认证或用户名密码）" % label, "proxy")
    elif method != 0x00:
        raise NetError("%s 选择了不支持的认证方式 %d" % (label, method), "proxy")
    if _is_ip(host):
        ip = ipaddress.ip_address(host)
        addr = (b"\x01" if ip.version == 4 else b"\x04") + ip.packed
    elif remote_dns:
        name = host.encode("idna")
        addr = b"\x03" + struct.pack("B", len(name)) + name
    else:
        raise NetError("SOCKS5 本地解析需要 IP 地址", "proxy")
    sock.sendall(b"\x05\x01\x00" + addr + struct.pack(">H", port))
    ver, rep, _, atyp = _recv_exact(sock, 4, label)
    if ver != 5:
        raise NetError("%s 的回应不是 SOCKS5 协议" % label, "proxy")
    if rep != 0:
        raise NetError("%s 无法连到 %s:%d：%s" % (label, host, port, _SOCKS_REPLIES.get(rep, "错误码 %d" % rep)),
                       "proxy")
    if atyp == 1:
        _recv_exact(sock, 4 + 2, label)
    elif atyp == 4:
        _recv_exact(sock, 16 + 2, label)
    elif atyp == 3:
        n = _recv_exact(sock, 1, label)[0]
        _recv_exact(sock, n + 2, label)
    else:
        raise NetError("%s 的回应地址类型无法识别" % label, "proxy")
    return sock


def _http_connect_tunnel(sock, host, port, proxy, label):
    """An HTTP CONNECT tunnel through an HTTP proxy (for https targets)."""
    lines = ["CONNECT %s:%d HTTP/1.1" % (host, port), "Host: %s:%d" % (host, port)]
    if proxy.user is not None:
        token = base64.b64encode(("%s:%s" % (proxy.user, proxy.password)).encode("utf-8")).decode("ascii")
        lines.append("Proxy-Authorization: Basic " + token)
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(4096)
        if not chunk:
            raise NetError("%s 在建立隧道时断开了连接" % label, "proxy")
        buf += chunk
        if len(buf) > 65536:
            raise NetError("%s 的回应无法识别" % label, "proxy")
    status_line = buf.split(b"\r\n", 1)[0].decode("latin-1", "replace")
    parts = status_line.split(None, 2)
    code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    if code == 407:
        raise NetError("%s 要求认证（407），请在设置的 proxy 地址里写上用户名和密码" % label, "proxy")
    if code != 200:
        raise NetError("%s 拒绝建立到 %s:%d 的隧道（%s）" % (label, host, port, status_line), "proxy")
    return sock


_ssl_context = [None]


def ssl_context():
    """A verifying TLS context. macOS Pythons from python.org ship without CA certificates until
    someone runs "Install Certificates"; then the system's /etc/ssl/cert.pem is loaded."""
    if _ssl_context[0] is None:
        ctx = ssl.create_default_context()
        try:
            if not ctx.cert_store_stats().get("x509_ca"):
                for path in ("/etc/ssl/cert.pem", "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"):
                    if os.path.exists(path):
                        ctx.load_verify_locations(path)
                        break
        except (ssl.SSLError, OSError):
            pass
        _ssl_context[0] = ctx
    return _ssl_context[0]


def _wrap_tls(sock, server_host, url, context=None):
    ctx = context or ssl_context()
    if ctx.sslsocket_class is ssl.SSLSocket:
        ctx.sslsocket_class = TimedSSLSocket
    end = getattr(sock, "xla_end", None)
    try:
        tls = ctx.wrap_socket(sock, server_hostname=server_host)
        arm(tls, end)
        return tls
    except ssl.SSLCertVerificationError as exc:
        sock.close()
        reason = getattr(exc, "verify_message", "") or str(exc)
        why = "证书校验未通过"
        low = reason.lower()
        if "expired" in low:
            why = "网站证书已过期（也可能是本机日期不对）"
        elif "hostname" in low or "ip address mismatch" in low:
            why = "证书上的域名和网址不符"
        elif "self signed" in low or "self-signed" in low:
            why = "证书是自签名的，不受信任"
        elif "unable to get local issuer" in low:
            why = "找不到签发该证书的受信任机构（系统根证书缺失，或网络被代理/抓包软件替换了证书）"
        raise NetError("HTTPS 证书校验失败（%s）：%s。为了安全不会跳过校验；请检查本机时间，"
                       "或换用该网站的官方地址" % (server_host, why), "tls", url)
    except ssl.SSLError as exc:
        sock.close()
        raise NetError("与 %s 建立 HTTPS 加密连接失败（%s）。可能是网络被拦截或网站的加密配置过旧" % (
            server_host, exc.reason or exc), "tls", url)
    except socket.timeout:
        sock.close()
        raise NetError("与 %s 建立 HTTPS 加密连接超时，网络很慢或连接被干扰。请稍后重试" % server_host, "timeout", url)
    except OSError as exc:
        sock.close()
        raise NetError("与 %s 建立 HTTPS 连接时连接被中断（%s）。请稍后重试" % (server_host, exc), "reset", url)


class _Conn(http.client.HTTPConnection):
    """An ``HTTPConnection`` whose socket comes from our own factory (proxy, TLS, deadline)."""

    def __init__(self, host, port, factory, timeout):
        http.client.HTTPConnection.__init__(self, host, port, timeout=timeout)
        self._factory = factory

    def connect(self):
        self.sock = self._factory()
