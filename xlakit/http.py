"""The one HTTP client every network tool goes through (standard library only).

Why a module of our own instead of ``urllib.request``: the tools reach Chinese sites that wall
requests which do not look like a browser, they must answer inside the host's 60 s even when a
server trickles bytes, and every failure has to become a Chinese sentence the model can act on.
``urllib`` hides the redirects (Baidu's captcha is a 302 to ``wappass.baidu.com``), cannot bound a
whole request by a deadline, does not decompress, and knows no SOCKS5. This module adds exactly
that on top of ``http.client``:

- browser headers: a current desktop Chrome User-Agent (or a mobile one per session), the Accept
  headers Chrome sends, ``Accept-Language: zh-CN``, ``Accept-Encoding: gzip, deflate`` (never
  ``br``: the standard library cannot decode it); ``Sec-Fetch-*``/``sec-ch-ua`` only on https, as
  Chrome does;
- one cookie jar per ``Session``, an optional referer and a cookie warm-up request (Baidu and
  kuaidi.com hand out their cookies on the home page);
- redirects followed by hand (final ``url`` and ``history`` visible, a loop limit);
- one time limit per request, itself bounded by the tool's deadline (anything with
  ``remaining()``), enforced on DNS, connect and every read, so a slow-drip server cannot hold us;
- a download cap that stops reading (wire bytes and decompressed bytes: no gzip bombs);
- charset from BOM, the ``Content-Type`` header, ``<meta>``/XML declaration, then UTF-8, then
  GB18030 (gb2312/gbk labels are read as GB18030, their superset);
- verified HTTPS (macOS framework Pythons without certificates fall back to /etc/ssl/cert.pem);
- an HTTP or SOCKS5 proxy from ``~/.xla/settings.json``::

      {"proxy": "socks5://user:password@127.0.0.1:1080", "no_proxy": ["intranet.example.com"]}

  ``http://host:port`` (an HTTP proxy: absolute-URI requests for http, CONNECT for https),
  ``socks5://`` (the host name is resolved here) or ``socks5h://`` (the proxy resolves it);
  user and password are optional (username/password auth, RFC 1929). ``no_proxy`` lists hosts
  (``*.example.com`` or ``.example.com`` for subdomains) that go direct. Absent or empty: direct;
- Chinese errors (``NetError`` with ``kind``): ``offline``, ``dns``, ``refused``, ``timeout``,
  ``reset``, ``tls``, ``proxy``, ``http``, ``too_big``, ``redirects``, ``url``, ``decode``,
  ``config``.

Test seam ``XLA_NET_MAP``: a JSON object mapping an origin to a base URL, e.g.
``{"https://www.baidu.com": "http://127.0.0.1:8123"}``. It works like a DNS override with a scheme:
the connection goes to the base URL (its path, if any, is prefixed), while everything the caller
and the server see stays logical (the ``Host`` header, cookies, ``Response.url``, redirect
targets, which are mapped again on every hop). Keys may also be a bare host (``"www.baidu.com"``,
any scheme) or ``"*"`` (every origin not listed); the value ``"offline"`` makes the origin behave
as if the machine had no network, so tests can prove a tool's no-network answer without touching
the internet.
"""
import base64
import datetime
import errno
import http.client
import http.cookiejar
import ipaddress
import json
import os
import re
import socket
import ssl
import struct
import sys
import threading
import time
import urllib.parse
import urllib.request
import zlib

from .errors import ToolError

DEFAULT_TIMEOUT = 15.0          # seconds for one request (connect to last byte) unless told
DEFAULT_MAX_BYTES = 5_000_000   # download cap of one response body
MAX_REDIRECTS = 10
_CHUNK = 65536

# ---------------------------------------------------------------------------------------------
# User agents

def chrome_major(today=None):
    """The major version of the current stable Chrome, computed from the date.

    Why computed: Chrome ships a new major about every four weeks (with a longer gap around the
    new year and in summer: about 11.5 a year), and a User-Agent years out of date marks us as a
    bot. Anchor: Chrome 142 reached stable on 2025-10-28; a step is 32 days and one release is
    subtracted for the staged rollout, so the guess lags rather than leads. A clock set to the
    past gives the anchor."""
    today = today or datetime.date.today()
    steps = (today - datetime.date(2025, 10, 28)).days // 32
    return 142 + max(0, min(steps - 1, 300))


def user_agent(mobile=False, today=None):
    major = chrome_major(today)
    if mobile:
        return ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                "Chrome/%d.0.0.0 Mobile Safari/537.36" % major)
    return ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/%d.0.0.0 Safari/537.36" % major)


ACCEPT_HTML = ("text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
               "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7")
ACCEPT_AJAX = "application/json, text/javascript, */*; q=0.01"
ACCEPT_LANGUAGE = "zh-CN,zh;q=0.9,en;q=0.8"

# ---------------------------------------------------------------------------------------------
# Errors

_STATUS_CN = {
    400: "请求有误", 401: "需要登录或授权", 402: "需要付费", 403: "拒绝访问（可能需要登录，或被网站的反爬限制拦下）",
    404: "页面不存在", 405: "不接受这种请求方式", 406: "无法提供可接受的内容", 407: "代理需要认证",
    408: "服务器等待请求超时", 409: "请求冲突", 410: "页面已被删除", 412: "前提条件不满足",
    413: "请求内容太大", 414: "网址太长", 415: "不支持的内容类型", 418: "拒绝服务（反爬）",
    421: "请求被发到了错误的服务器", 429: "请求太频繁，被网站限流",
    451: "因法律原因不可访问", 500: "服务器内部错误", 501: "服务器不支持该功能", 502: "网关错误（上游服务器无响应）",
    503: "服务暂时不可用（维护或过载）", 504: "网关超时", 520: "服务器返回了未知错误", 521: "源站已关闭",
    522: "连接源站超时", 523: "源站不可达", 524: "源站响应超时",
}


def status_text(status):
    """Chinese words for an HTTP status (``404`` -> ``页面不存在``)."""
    if status in _STATUS_CN:
        return _STATUS_CN[status]
    if 400 <= status < 500:
        return "请求被网站拒绝"
    if status >= 500:
        return "服务器出错"
    return "非预期的状态"


class NetError(ToolError):
    """A network failure in Chinese. ``kind`` says which (see the module docstring), ``url`` the
    address asked for, ``status`` the HTTP status for ``kind == "http"`` (with ``response`` the
    whole answer, so a caller can still look at an error page)."""

    def __init__(self, message, kind, url=None, status=None, response=None, **extra):
        super().__init__(message, **extra)
        self.kind = kind
        self.url = url
        self.status = status
        self.response = response


def _fmt_bytes(n):
    if n >= 1024 * 1024:
        return "%.1f MB" % (n / 1024.0 / 1024.0)
    if n >= 1024:
        return "%d KB" % (n // 1024)
    return "%d 字节" % n


_OFFLINE_ERRNOS = {errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, 10051, 10065, 10050}
_REFUSED_ERRNOS = {errno.ECONNREFUSED, 10061}
_RESET_ERRNOS = {errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED, 10053, 10054}


def _offline_error(url, detail):
    return NetError("无法联网：本机现在没有可用的网络（%s）。请检查网线、Wi-Fi 或代理软件后再试" % detail,
                    "offline", url)


def _timeout_error(url, host, seconds, budget_spent=False):
    if budget_spent:
        return NetError("时间用完了：访问 %s 时已到本次调用的时间上限，没有等到回应。网络较慢时请稍后重试" % host,
                        "timeout", url)
    return NetError("访问 %s 超时（%.0f 秒内没有完成）：网络很慢或网站没有响应。请稍后重试，或换一个来源" % (
        host, max(1, seconds)), "timeout", url)


# ---------------------------------------------------------------------------------------------
# XLA_NET_MAP and proxy settings

_DEFAULT_PORTS = {"http": 80, "https": 443}
_map_cache = [None, None]   # raw env text, parsed rules


def _origin_parts(text):
    """``"https://www.baidu.com"`` -> ``("https", "www.baidu.com", 443)``; a bare host gives
    scheme None (matches both); ``"host:port"`` keeps the port."""
    text = text.strip().rstrip("/")
    if "://" in text:
        parts = urllib.parse.urlsplit(text)
        scheme = parts.scheme.lower()
        return scheme, (parts.hostname or "").lower(), parts.port or _DEFAULT_PORTS.get(scheme)
    host, _, port = text.partition(":")
    return None, host.lower(), int(port) if port.isdigit() else None


def _net_map():
    raw = os.environ.get("XLA_NET_MAP") or ""
    if _map_cache[0] == raw:
        return _map_cache[1]
    rules = {}
    if raw.strip():
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise ValueError("not an object")
        except ValueError:
            raise NetError("测试用地址映射 XLA_NET_MAP 不是 JSON 对象（应形如 {\"https://www.baidu.com\": "
                           "\"http://127.0.0.1:8123\"}）", "config")
        for key, value in data.items():
            if not isinstance(value, str):
                raise NetError("XLA_NET_MAP 里 %s 的值应是地址字符串" % key, "config")
            target = value.strip()
            if target.lower() != "offline" and "://" not in target:
                target = "http://" + target
            rules[key.strip() if key.strip() == "*" else _origin_parts(key)] = target
    _map_cache[0], _map_cache[1] = raw, rules
    return rules


def map_target(scheme, host, port):
    """Where a connection for the logical origin really goes: ``(scheme, host, port, prefix)``,
    or the string ``"offline"``. Without a matching XLA_NET_MAP rule: the origin itself."""
    rules = _net_map()
    if rules:
        target = rules.get((scheme, host, port)) or rules.get((None, host, port))
        if target is None and port == _DEFAULT_PORTS.get(scheme):
            target = rules.get((None, host, None))
        if target is None:
            target = rules.get("*")
        if target is not None:
            if target.lower() == "offline":
                return "offline"
            parts = urllib.parse.urlsplit(target)
            t_scheme = parts.scheme.lower()
            return (t_scheme, parts.hostname or "", parts.port or _DEFAULT_PORTS.get(t_scheme, 80),
                    parts.path.rstrip("/"))
    return scheme, host, port, ""


def settings_path():
    """``~/.xla/settings.json`` (HOME first, as the rest of the toolbox resolves it)."""
    try:
        from . import paths
        return paths.xla_dir("settings.json")
    except Exception:   # paths not importable (being built, or a stripped install): same rule here
        home = os.environ.get("HOME") or os.environ.get("USERPROFILE") or os.path.expanduser("~")
        return os.path.join(home, ".xla", "settings.json")


class Proxy(object):
    """A parsed proxy setting: ``scheme`` in http/socks5/socks5h, ``host``, ``port``, ``user``,
    ``password``, ``no_proxy`` (list of host patterns)."""

    def __init__(self, url, no_proxy=()):
        self.url = url
        parts = urllib.parse.urlsplit(url if "://" in url else "http://" + url)
        self.scheme = parts.scheme.lower()
        if self.scheme == "https":
            self.scheme = "http"   # TLS to the proxy itself is not supported; most "https" proxies mean CONNECT
        if self.scheme not in ("http", "socks5", "socks5h"):
            raise NetError("代理设置 %s 不支持（%s 里的 proxy）：只支持 http://、socks5:// 和 socks5h:// 开头的地址" % (
                url, settings_path()), "config")
        try:
            port = parts.port
        except ValueError:
            port = None
        self.host = parts.hostname or ""
        if not self.host:
            raise NetError("代理设置 %s 缺少主机名（%s 里的 proxy），应形如 socks5://127.0.0.1:1080" % (
                url, settings_path()), "config")
        self.port = port or (1080 if self.scheme.startswith("socks") else 8080)
        self.user = urllib.parse.unquote(parts.username) if parts.username else None
        self.password = urllib.parse.unquote(parts.password) if parts.password else ""
        self.no_proxy = [p.strip().lower() for p in no_proxy if isinstance(p, str) and p.strip()]

    @property
    def label(self):
        return "%s://%s:%d" % (self.scheme, self.host, self.port)

    def bypass(self, host):
        host = host.lower()
        for pattern in self.no_proxy:
            if pattern == "*" or pattern == host:
                return True
            suffix = pattern[1:] if pattern.startswith("*.") else pattern
            if suffix.startswith(".") and (host.endswith(suffix) or host == suffix[1:]):
                return True
        return False


def load_proxy(path=None):
    """The proxy from ``~/.xla/settings.json`` (``None`` when there is none). A broken file is a
    Chinese error naming the file, never a silent direct connection the user did not want."""
    path = path or settings_path()
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except (OSError, IOError):
        return None
    try:
        data = json.loads(raw.decode("utf-8-sig") or "{}")
    except ValueError:
        raise NetError("设置文件 %s 不是合法的 JSON，无法读取代理设置。请修正或删除它" % path, "config")
    if not isinstance(data, dict):
        return None
    url = data.get("proxy")
    if not url:
        return None
    if not isinstance(url, str):
        raise NetError("设置文件 %s 里的 proxy 应是字符串，如 \"socks5://127.0.0.1:1080\"" % path, "config")
    no_proxy = data.get("no_proxy") or []
    if isinstance(no_proxy, str):
        no_proxy = [p for p in re.split(r"[,\s]+", no_proxy) if p]
    return Proxy(url.strip(), no_proxy)


# ---------------------------------------------------------------------------------------------
# Charset

_CHARSET_ALIASES = {
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "gb_2312-80": "gb18030", "cp936": "gb18030",
    "ms936": "gb18030", "windows-936": "gb18030", "csgb2312": "gb18030", "euc-cn": "gb18030", "gb18030": "gb18030",
    "big5": "big5hkscs", "x-x-big5": "big5hkscs", "utf8": "utf-8", "unicode": "utf-8",
    "iso-8859-1": "cp1252", "latin1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252",
}
_META_CHARSET = re.compile(rb"""<meta[^>]+?charset\s*=\s*["']?\s*([A-Za-z0-9_.:\-]+)""", re.I)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9_.:\-]+)""", re.I)
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def normalize_charset(label):
    """A Python codec name for a web charset label, or None when Python has no such codec."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        import codecs
        return codecs.lookup(label).name if label not in ("utf-8-sig",) else label
    except LookupError:
        return None


def header_charset(content_type):
    m = re.search(r"charset\s*=\s*[\"']?([^\s;\"']+)", content_type or "", re.I)
    return m.group(1) if m else None


def decode_body(data, content_type=""):
    """``(text, encoding, reason)`` for a response body, in the order a browser decides: a BOM,
    the header's charset, ``<meta charset>`` (or the XML declaration) in the first 16 KB, then
    UTF-8 if the bytes are valid UTF-8, else GB18030 (what a Chinese page without labels almost
    always is). A label that does not decode the bytes strictly loses to the next source, since
    Chinese servers often send ``charset=utf-8`` for GBK pages; nothing decodes: the first
    candidate with replacement characters."""
    if not data:
        return "", "utf-8", "empty"
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data.decode(codec, "replace"), codec.replace("-sig", ""), "bom"
    candidates = []
    head = data[:16384]
    for reason, label in (("header", header_charset(content_type)),
                          ("meta", (_META_CHARSET.search(head) or _XML_ENCODING.search(head) or [None, None])[1])):
        if isinstance(label, bytes):
            label = label.decode("ascii", "replace")
        codec = normalize_charset(label)
        if codec and codec not in [c for c, _ in candidates]:
            candidates.append((codec, reason))
    # a Latin-1/ASCII header label is what Java servers send by default for UTF-8 pages: weak
    weak = [(c, r) for c, r in candidates if r == "header" and c in ("cp1252", "ascii", "latin-1", "iso8859-1")]
    candidates = [x for x in candidates if x not in weak]
    for codec, reason in (("utf-8", "utf-8"), ("gb18030", "gb18030")):
        if codec not in [c for c, _ in candidates]:
            candidates.append((codec, reason))
    if weak:
        candidates.insert(len(candidates) - 1, weak[0])
    for codec, reason in candidates:
        try:
            return data.decode(codec), codec, reason
        except (UnicodeDecodeError, LookupError):
            continue
    codec, reason = candidates[0]
    return data.decode(codec, "replace"), codec, reason + "+replace"


# ---------------------------------------------------------------------------------------------
# Response

def is_text_type(content_type):
    """True for answers meant to be read as text (HTML, plain text, JSON, XML, JavaScript, CSV)
    and for a missing type (which servers use for HTML far more often than for binaries)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if not media:
        return True
    if media.startswith("text/"):
        return True
    return any(word in media for word in ("json", "xml", "javascript", "ecmascript", "x-www-form-urlencoded",
                                            "csv", "yaml"))


class Response(object):
    """One finished request. ``url`` is the final (logical) address after redirects,
    ``history`` the addresses before it, ``content`` the decompressed body (at most the cap),
    ``truncated`` True when the cap stopped the download (only with ``allow_truncated``)."""

    def __init__(self, status, reason, url, headers, content, elapsed, history, truncated=False,
                 wire_bytes=0):
        self.status = status
        self.reason = reason
        self.url = url
        self.headers = headers
        self.content = content
        self.elapsed = elapsed
        self.history = history
        self.truncated = truncated
        self.wire_bytes = wire_bytes
        self._text = None
        self._encoding = None
        self._encoding_reason = None

    @property
    def content_type(self):
        """The media type without parameters, lower case (``text/html``), "" when absent."""
        return (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()

    def _decode(self):
        if self._text is None:
            self._text, self._encoding, self._encoding_reason = decode_body(
                self.content, self.headers.get("Content-Type") or "")

    @property
    def text(self):
        self._decode()
        return self._text

    @property
    def encoding(self):
        self._decode()
        return self._encoding

    @property
    def encoding_reason(self):
        self._decode()
        return self._encoding_reason

    @property
    def ok(self):
        return 200 <= self.status < 400

    def json(self):
        try:
            return json.loads(self.text)
        except ValueError:
            host = urllib.parse.urlsplit(self.url).hostname or self.url
            raise NetError("%s 返回的不是预期的 JSON 数据（内容类型 %s，%s），接口可能已变化或请求被拦截" % (
                host, self.content_type or "未知", _fmt_bytes(len(self.content))), "decode", self.url,
                response=self)

    def __repr__(self):
        return "<Response %d %s %d bytes>" % (self.status, self.url, len(self.content))


class _Headers(object):
    """Case-insensitive response headers; ``get_all`` for Set-Cookie and friends."""

    def __init__(self, pairs):
        self._pairs = list(pairs)

    def get(self, name, default=None):
        name = name.lower()
        for k, v in self._pairs:
            if k.lower() == name:
                return v
        return default

    def get_all(self, name, failobj=None):
        name = name.lower()
        values = [v for k, v in self._pairs if k.lower() == name]
        return values or ([] if failobj is None else failobj)

    # http.cookiejar reads cookies through this name
    get_all_cookie = get_all

    def items(self):
        return list(self._pairs)

    def __contains__(self, name):
        return self.get(name) is not None

    def __getitem__(self, name):
        return self.get(name)

    def __repr__(self):
        return repr(dict(self._pairs))


class _CookieResponse(object):
    """What ``CookieJar.extract_cookies`` wants from a response: ``info()`` with ``get_all``."""

    def __init__(self, headers):
        self._headers = headers

    def info(self):
        return self._headers


# ---------------------------------------------------------------------------------------------
# Sockets: DNS with a timeout, connect, SOCKS5, HTTP CONNECT, TLS

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


def _connect(host, port, timeout, url, what=None):
    """A connected TCP socket to ``host:port``; errors in Chinese. ``what`` names the peer in
    messages (the proxy, when connecting to one)."""
    start = time.monotonic()
    addrs = _resolve(host, port, timeout, url)
    last = None
    for family, socktype, proto, _, addr in addrs:
        left = timeout - (time.monotonic() - start)
        if left <= 0:
            break
        sock = socket.socket(family, socktype, proto)
        try:
            sock.settimeout(left)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.connect(addr)
            return sock
        except (OSError, socket.timeout) as exc:
            sock.close()
            last = exc
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
    try:
        return ctx.wrap_socket(sock, server_hostname=server_host)
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


# ---------------------------------------------------------------------------------------------
# Session

class Session(object):
    """A browser-like visitor: one cookie jar, one User-Agent, kept-alive connections.

    ``deadline`` bounds every request (anything with ``remaining()``; None = only ``timeout``).
    ``mobile`` picks the Android Chrome User-Agent (Baidu serves its mobile page to it without
    the captcha wall). ``referer`` is sent on every request unless one is given per call.
    ``warmup`` is a URL fetched once before the first request so the site's cookies are set, as a
    browser that opened the home page first would have them (failures there are ignored: the real
    request reports its own error). ``proxy``: a ``Proxy``, a proxy URL, ``False`` for direct, or
    None to read ``~/.xla/settings.json``."""

    def __init__(self, deadline=None, mobile=False, referer=None, warmup=None, proxy=None,
                 timeout=DEFAULT_TIMEOUT, max_redirects=MAX_REDIRECTS, headers=None, ssl_context=None):
        self.deadline = deadline
        self.mobile = mobile
        self.referer = referer
        self.warmup_url = warmup
        self._warmed = not warmup
        self.timeout = timeout
        self.max_redirects = max_redirects
        self.extra_headers = dict(headers or {})
        self.cookies = http.cookiejar.CookieJar()
        self.user_agent = user_agent(mobile)
        self._ssl = ssl_context
        if proxy is None:
            proxy = load_proxy()
        elif isinstance(proxy, str):
            proxy = Proxy(proxy)
        self.proxy = proxy or None
        self._pool = {}
        self._dns = {}

    # ---- public ------------------------------------------------------------------------------
    def get(self, url, params=None, **kw):
        return self.request("GET", url, params=params, **kw)

    def post(self, url, data=None, json=None, params=None, **kw):
        return self.request("POST", url, params=params, data=data, json_body=json, **kw)

    def head(self, url, **kw):
        return self.request("HEAD", url, **kw)

    def warm(self, url=None, timeout=8.0):
        """Fetch ``url`` (default the session's warm-up URL) for its cookies; errors ignored.
        Returns the Response or None."""
        url = url or self.warmup_url
        self._warmed = True
        if not url:
            return None
        try:
            return self.request("GET", url, timeout=min(timeout, self.timeout), check=False,
                                allow_truncated=True, max_bytes=2_000_000, _warm=False)
        except NetError:
            return None

    def close(self):
        for conn in self._pool.values():
            try:
                conn.close()
            except Exception:
                pass
        self._pool.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def request(self, method, url, params=None, data=None, json_body=None, headers=None, referer=None,
                timeout=None, max_bytes=DEFAULT_MAX_BYTES, allow_truncated=False, check=True, ajax=False,
                allow_redirects=True, binary_max_bytes=None, _warm=True):
        """Send one request, follow redirects, return a ``Response``.

        ``check`` raises NetError(kind="http") for a final status >= 400 (its ``response`` keeps
        the page); ``max_bytes`` caps the body (``allow_truncated`` keeps the first part instead
        of failing); ``ajax`` sends the headers of a page's XHR (JSON Accept, X-Requested-With);
        ``timeout`` bounds the whole request including redirects, never beyond the deadline."""
        if _warm and not self._warmed:
            self.warm()
        started = time.monotonic()
        limit = self.timeout if timeout is None else timeout
        budget_bound = False
        if self.deadline is not None:
            left = self.deadline.remaining()
            if left <= limit:
                limit, budget_bound = left, True
        end = started + limit
        url = self._check_url(url)
        if params:
            query = urllib.parse.urlencode(params, doseq=True)
            url += ("&" if urllib.parse.urlsplit(url).query else ("" if url.endswith("?") else "?")) + query
        body, ctype = self._encode_body(data, json_body)
        hdrs = dict(self.extra_headers)
        if ctype:
            hdrs["Content-Type"] = ctype
        hdrs.update(headers or {})
        ref = referer if referer is not None else self.referer
        history = []
        seen = {}
        while True:
            resp = self._one(method, url, body, hdrs, ref, ajax, end, limit, budget_bound, max_bytes,
                             allow_truncated, started, history, binary_max_bytes)
            location = resp.headers.get("Location")
            if not (allow_redirects and resp.status in (301, 302, 303, 307, 308) and location):
                break
            target = urllib.parse.urljoin(url, location.strip())
            if not target.lower().startswith(("http://", "https://")):
                raise NetError("%s 把请求重定向到了不支持的地址 %s" % (self._host(url), target[:200]), "redirects", url)
            history.append(url)
            seen[(method, target)] = seen.get((method, target), 0) + 1
            if len(history) > self.max_redirects or seen[(method, target)] > 2:
                raise NetError("重定向次数过多（超过 %d 次，网址之间可能在循环跳转）：%s。请换一个地址，或稍后重试" % (
                    self.max_redirects, history[0][:200]), "redirects", history[0])
            if resp.status == 303 or (resp.status in (301, 302) and method == "POST"):
                method, body = ("GET" if method != "HEAD" else "HEAD"), None
                hdrs = {k: v for k, v in hdrs.items() if k.lower() not in ("content-type", "content-length")}
            if self._origin(target) != self._origin(url):
                hdrs = {k: v for k, v in hdrs.items() if k.lower() not in ("authorization", "cookie")}
            url = target
        if check and resp.status >= 400:
            raise NetError("%s 返回 HTTP %d（%s）：%s" % (self._host(resp.url), resp.status, status_text(resp.status),
                                                    resp.url[:300]), "http", resp.url, status=resp.status,
                           response=resp)
        return resp

    # ---- internals ---------------------------------------------------------------------------
    @staticmethod
    def _host(url):
        try:
            return urllib.parse.urlsplit(url).hostname or url
        except ValueError:
            return url

    @staticmethod
    def _origin(url):
        p = urllib.parse.urlsplit(url)
        return p.scheme.lower(), (p.hostname or "").lower(), p.port or _DEFAULT_PORTS.get(p.scheme.lower())

    @staticmethod
    def _check_url(url):
        if not isinstance(url, str) or not url.strip():
            raise NetError("网址为空", "url", url)
        url = url.strip()
        try:
            parts = urllib.parse.urlsplit(url)
            parts.port  # noqa: B018 - raises ValueError for a bad port
        except ValueError:
            raise NetError("网址格式不对：%s" % url[:200], "url", url)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise NetError("网址须以 http:// 或 https:// 开头并带上域名：%s" % url[:200], "url", url)
        if any(c in url for c in "\r\n\x00 "):
            url = url.replace(" ", "%20")
            if any(c in url for c in "\r\n\x00"):
                raise NetError("网址里含有换行或控制字符：%r" % url[:200], "url", url)
        # non-ASCII paths/queries (中文) are sent percent-encoded as a browser does
        if any(ord(c) > 127 for c in url):
            host = parts.hostname.encode("idna").decode("ascii") if any(ord(c) > 127 for c in parts.hostname) else None
            netloc = parts.netloc
            if host:
                netloc = netloc.replace(parts.hostname, host)
            url = urllib.parse.urlunsplit((parts.scheme, netloc, urllib.parse.quote(parts.path, safe="/%:@!$&'()*+,;="),
                                           urllib.parse.quote(parts.query, safe="=&%:@!$'()*+,;/?"), parts.fragment))
        return url

    @staticmethod
    def _encode_body(data, json_body):
        if json_body is not None:
            return json.dumps(json_body, ensure_ascii=False).encode("utf-8"), "application/json;charset=UTF-8"
        if data is None:
            return None, None
        if isinstance(data, dict) or isinstance(data, (list, tuple)):
            return urllib.parse.urlencode(data, doseq=True).encode("utf-8"), \
                "application/x-www-form-urlencoded; charset=UTF-8"
        if isinstance(data, str):
            return data.encode("utf-8"), "application/x-www-form-urlencoded; charset=UTF-8"
        return bytes(data), None

    def _headers_for(self, method, url, extra, referer, ajax, body):
        """Chrome's header set, in Chrome's order (some walls look at the order too)."""
        parts = urllib.parse.urlsplit(url)
        secure = parts.scheme.lower() == "https"
        out = [("Host", parts.netloc.rsplit("@", 1)[-1]), ("Connection", "keep-alive")]
        if secure:
            major = self.user_agent.split("Chrome/", 1)[1].split(".", 1)[0]
            out += [("sec-ch-ua", '"Google Chrome";v="%s", "Chromium";v="%s", "Not_A Brand";v="24"' % (major, major)),
                    ("sec-ch-ua-mobile", "?1" if self.mobile else "?0"),
                    ("sec-ch-ua-platform", '"Android"' if self.mobile else '"Windows"')]
        if not ajax:
            out.append(("Upgrade-Insecure-Requests", "1"))
        out.append(("User-Agent", self.user_agent))
        if ajax:
            out += [("Accept", ACCEPT_AJAX), ("X-Requested-With", "XMLHttpRequest")]
        else:
            out.append(("Accept", ACCEPT_HTML))
        if secure:
            site = "none"
            if referer:
                site = "same-origin" if self._origin(referer) == self._origin(url) else "cross-site"
            out += [("Sec-Fetch-Site", site), ("Sec-Fetch-Mode", "cors" if ajax else "navigate")]
            if not ajax:
                out.append(("Sec-Fetch-User", "?1"))
            out.append(("Sec-Fetch-Dest", "empty" if ajax else "document"))
        if referer:
            out.append(("Referer", referer))
        out += [("Accept-Encoding", "gzip, deflate"), ("Accept-Language", ACCEPT_LANGUAGE)]
        # cookies from the jar, for the logical URL
        req = urllib.request.Request(url, method=method)
        self.cookies.add_cookie_header(req)
        cookie = req.get_header("Cookie") or req.unredirected_hdrs.get("Cookie")
        overrides = {k.lower(): (k, v) for k, v in extra.items()}
        if cookie and "cookie" not in overrides:
            out.append(("Cookie", cookie))
        merged = []
        for k, v in out:
            if k.lower() in overrides:
                k, v = overrides.pop(k.lower())
            if v is not None:
                merged.append((k, v))
        merged += [(k, v) for k, v in overrides.values() if v is not None]
        if body is not None:
            merged.append(("Content-Length", str(len(body))))
        return merged

    def _socket_factory(self, route, url, end, limit, budget_bound):
        """A function that opens the socket for ``route`` when http.client asks for it."""
        t_scheme, t_host, t_port, _ = route
        logical = self._host(url).lower()
        proxy = self.proxy if self.proxy and not (self.proxy.bypass(logical) or self.proxy.bypass(t_host)) else None

        def left():
            remaining = end - time.monotonic()
            if remaining <= 0.01:
                raise _timeout_error(url, self._host(url), limit, budget_bound)
            return remaining

        def factory():
            if proxy is None:
                sock = _connect(t_host, t_port, left(), url)
            else:
                label = "代理服务器 %s（%s 里的 proxy）" % (proxy.label, settings_path())
                try:
                    sock = _connect(proxy.host, proxy.port, left(), url, what=label)
                except NetError as exc:
                    if exc.kind in ("refused", "timeout", "dns", "offline"):
                        raise NetError("无法连接%s：%s。请确认代理软件正在运行，或删掉这项设置直接联网" % (
                            label, str(exc).split("：", 1)[-1].rstrip("。")), "proxy", url)
                    raise
                try:
                    sock.settimeout(left())
                    if proxy.scheme.startswith("socks"):
                        host = t_host
                        if proxy.scheme == "socks5" and not _is_ip(host):
                            host = _resolve(host, t_port, left(), url)[0][4][0]
                        socks5_handshake(sock, host, t_port, proxy.user, proxy.password,
                                         remote_dns=True, label=label)
                    elif t_scheme == "https":
                        _http_connect_tunnel(sock, t_host, t_port, proxy, label)
                except NetError as exc:
                    sock.close()
                    exc.url = url
                    raise
                except socket.timeout:
                    sock.close()
                    raise NetError("%s 回应超时" % label, "proxy", url)
                except OSError as exc:
                    sock.close()
                    raise NetError("%s 中断了连接（%s）" % (label, exc), "proxy", url)
            if t_scheme == "https":
                sock.settimeout(left())
                sock = _wrap_tls(sock, t_host, url, self._ssl)
            return sock
        return factory, proxy

    def _one(self, method, url, body, extra, referer, ajax, end, limit, budget_bound, max_bytes,
             allow_truncated, started, history, binary_max_bytes=None):
        """One hop: connect (or reuse), send, read the capped body, store cookies."""
        parts = urllib.parse.urlsplit(url)
        scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
        port = parts.port or _DEFAULT_PORTS[scheme]
        route = map_target(scheme, host, port)
        if route == "offline":
            raise _offline_error(url, "无法连接 %s" % host)
        t_scheme, t_host, t_port, prefix = route
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        path = prefix + path
        headers = self._headers_for(method, url, extra, referer, ajax, body)
        factory, proxy = self._socket_factory(route, url, end, limit, budget_bound)
        if proxy is not None and proxy.scheme == "http" and t_scheme == "http":
            path = "http://%s:%d%s" % (t_host, t_port, path)   # absolute-URI form for a plain proxy
            if proxy.user is not None:
                token = base64.b64encode(("%s:%s" % (proxy.user, proxy.password)).encode("utf-8")).decode("ascii")
                headers.append(("Proxy-Authorization", "Basic " + token))
        key = (t_scheme, t_host, t_port, proxy.label if proxy else None)
        for attempt in (0, 1):
            conn = self._pool.pop(key, None) if attempt == 0 else None
            reused = conn is not None
            if conn is None:
                conn = _Conn(t_host, t_port, factory, timeout=max(0.05, end - time.monotonic()))
            try:
                return self._exchange(conn, key, method, url, path, headers, body, end, limit, budget_bound,
                                      max_bytes, allow_truncated, started, history, binary_max_bytes)
            except _StaleConnection:
                conn.close()
                if not reused or method not in ("GET", "HEAD"):
                    raise NetError("%s 在回应前断开了连接。请稍后重试" % host, "reset", url)
            except BaseException:
                conn.close()
                raise

    def _exchange(self, conn, key, method, url, path, headers, body, end, limit, budget_bound, max_bytes,
                  allow_truncated, started, history, binary_max_bytes=None):
        host = self._host(url)

        def left():
            remaining = end - time.monotonic()
            if remaining <= 0.01:
                raise _timeout_error(url, host, limit, budget_bound)
            return remaining

        try:
            if conn.sock is None:
                conn.connect()
            conn.sock.settimeout(left())
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for k, v in headers:
                conn.putheader(k, v)
            conn.endheaders(body)
            resp = conn.getresponse()
        except NetError:
            raise
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            raise _StaleConnection()
        except socket.timeout:
            raise _timeout_error(url, host, limit, budget_bound)
        except http.client.HTTPException as exc:
            raise NetError("%s 的回应不符合 HTTP 协议（%s），可能不是网站服务或连接被干扰" % (host, type(exc).__name__),
                           "reset", url)
        except OSError as exc:
            code = getattr(exc, "errno", None)
            if code in _OFFLINE_ERRNOS:
                raise _offline_error(url, str(exc))
            raise NetError("与 %s 的连接出错（%s）。请稍后重试" % (host, exc), "reset", url)
        pairs = resp.getheaders()
        headers_obj = _Headers(pairs)
        # cookies are stored for the logical URL, as the browser would
        try:
            self.cookies.extract_cookies(_CookieResponse(headers_obj), urllib.request.Request(url, method=method))
        except Exception:   # a malformed Set-Cookie never breaks the request
            pass
        status = resp.status
        is_redirect = status in (301, 302, 303, 307, 308) and headers_obj.get("Location")
        declared = headers_obj.get("Content-Length")
        try:
            declared = int(declared) if declared is not None else None
        except ValueError:
            declared = None
        cap = max_bytes if max_bytes else None
        if is_redirect:
            cap = 65536   # a redirect body is never needed; read a little to keep the connection
            allow = True
        else:
            allow = allow_truncated
            if binary_max_bytes and not is_text_type(headers_obj.get("Content-Type")):
                cap, allow = min(cap or binary_max_bytes, binary_max_bytes), True
            if cap is not None and declared is not None and declared > cap and not allow:
                resp.close()
                conn.close()
                raise NetError("%s 返回的内容有 %s，超过本次下载上限 %s，已停止下载。请换一个更具体的地址" % (
                    host, _fmt_bytes(declared), _fmt_bytes(cap)), "too_big", url)
        encoding = (headers_obj.get("Content-Encoding") or "").strip().lower()
        try:
            decoder = _Decoder(encoding)
        except NetError as exc:
            resp.close()
            conn.close()
            exc.url = url
            raise NetError("%s 用了无法解码的压缩方式 %s，读不了这个回应" % (host, encoding), "decode", url)
        out = []
        size = 0
        wire = 0
        truncated = False
        try:
            while True:
                if conn.sock is not None:
                    conn.sock.settimeout(left())
                chunk = resp.read1(_CHUNK)
                if not chunk:
                    break
                wire += len(chunk)
                piece = decoder.feed(chunk, None if cap is None else cap - size + 1)
                out.append(piece)
                size += len(piece)
                if cap is not None and (size > cap or wire > cap * 4 + _CHUNK):
                    truncated = True
                    break
            if not truncated:
                tail = decoder.flush()
                out.append(tail)
                size += len(tail)
                truncated = cap is not None and size > cap
        except NetError:
            raise
        except socket.timeout:
            raise _timeout_error(url, host, limit, budget_bound)
        except http.client.IncompleteRead as exc:
            out.append(decoder.feed(exc.partial, None))
            raise NetError("%s 的回应在传输中途断开（只收到部分内容）。请稍后重试" % host, "reset", url)
        except (http.client.HTTPException, OSError) as exc:
            raise NetError("读取 %s 的回应时连接出错（%s）。请稍后重试" % (host, exc), "reset", url)
        except zlib.error:
            raise NetError("%s 声明了 %s 压缩，但内容无法解压" % (host, encoding), "decode", url)
        content = b"".join(out)
        if truncated:
            resp.close()
            conn.close()
            if not allow:
                raise NetError("%s 返回的内容超过本次下载上限 %s，已停止下载。请换一个更具体的地址" % (
                    host, _fmt_bytes(cap)), "too_big", url)
            content = content[:cap]
        elif resp.will_close:
            resp.close()
            conn.close()
        else:
            resp.close()          # body fully read: the connection is free for the next request
            self._pool[key] = conn
        return Response(status, resp.reason, url, headers_obj, content, time.monotonic() - started, list(history),
                        truncated=truncated and not is_redirect, wire_bytes=wire)


class _StaleConnection(Exception):
    """A kept-alive connection the server had already closed: retried once on a fresh one."""


class _Decoder(object):
    """Streaming gzip/deflate decoding with an output bound (a 5 MB cap must hold for a 5 GB bomb)."""

    def __init__(self, encoding):
        self.encoding = encoding
        self._obj = None
        self._raw_deflate = False
        if encoding in ("gzip", "x-gzip"):
            self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._obj = zlib.decompressobj(zlib.MAX_WBITS)
            self._first = True
        elif encoding and encoding not in ("identity", "none"):
            raise NetError("网站用了无法解码的压缩方式 %s" % encoding, "decode")

    def feed(self, data, limit):
        if self._obj is None:
            return data
        if self.encoding == "deflate" and getattr(self, "_first", False):
            self._first = False
            try:
                probe = zlib.decompressobj(zlib.MAX_WBITS)
                probe.decompress(data[:2] if len(data) >= 2 else data)
            except zlib.error:
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)   # raw deflate (old IIS)
        out = []
        size = 0
        while data:
            bound = 0 if limit is None else max(1, limit - size)
            piece = self._obj.decompress(data, bound)
            out.append(piece)
            size += len(piece)
            data = self._obj.unconsumed_tail
            if self._obj.eof and self._obj.unused_data:   # concatenated gzip members
                data = self._obj.unused_data
                self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS if self.encoding != "deflate" else zlib.MAX_WBITS)
            if limit is not None and size >= limit:
                break
        return b"".join(out)

    def flush(self):
        if self._obj is None:
            return b""
        return self._obj.flush()


# ---------------------------------------------------------------------------------------------
# One-shot helpers

def get(url, deadline=None, mobile=False, **kw):
    """A one-off GET in a fresh session (no cookies kept)."""
    with Session(deadline=deadline, mobile=mobile) as s:
        return s.get(url, **kw)


def post(url, data=None, json=None, deadline=None, mobile=False, **kw):
    with Session(deadline=deadline, mobile=mobile) as s:
        return s.post(url, data=data, json=json, **kw)


def host_of(url):
    """The lower-case host of ``url`` ("" when it has none)."""
    try:
        return (urllib.parse.urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


if sys.version_info < (3, 9):  # pragma: no cover - the toolbox's floor
    raise ImportError("xlakit.http needs Python 3.9+")
