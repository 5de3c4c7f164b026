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
  ``remaining()``), enforced on DNS, connect and every read and send as the time left of the
  whole request (``TimedSocket``), so a server that drips its headers or body cannot hold us;
  ``call_deadline`` gives a tool call its one budget for every request and fallback;
- the address policy (``xlakit/net/policy.py``): no connection to loopback, LAN, CGNAT,
  link-local (cloud metadata), multicast or reserved addresses, checked on the written host and
  on the address actually connected, on every hop; ``net_allow`` in the settings opts hosts in;
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
  ``config``, ``blocked`` (the address policy).

Test seam ``XLA_NET_MAP``: a JSON object mapping an origin to a base URL, e.g.
``{"https://www.baidu.com": "http://127.0.0.1:8123"}``. It works like a DNS override with a scheme:
the connection goes to the base URL (its path, if any, is prefixed), while everything the caller
and the server see stays logical (the ``Host`` header, cookies, ``Response.url``, redirect
targets, which are mapped again on every hop). Keys may also be a bare host (``"www.baidu.com"``,
any scheme) or ``"*"`` (every origin not listed); the value ``"offline"`` makes the origin behave
as if the machine had no network, so tests can prove a tool's no-network answer without touching
the internet.

The parts live in ``xlakit/net/`` (errors, route, charset, sockets, response), one seam a
module; this module keeps the request loop (``Session``) and re-exports their public names, so
callers only ever write ``from xlakit import http``.
"""
import base64
import datetime
import http.client
import http.cookiejar
import json
import socket
import sys
import time
import urllib.parse
import urllib.request
import zlib

from .net.charset import decode_body, header_charset, normalize_charset  # noqa: F401 - public surface
from .net.errors import (_OFFLINE_ERRNOS, _RESET_ERRNOS, NetError, _fmt_bytes, _offline_error,  # noqa: F401
                         _timeout_error, status_text)
from .net.response import Response, _CookieResponse, _Decoder, _Headers, is_text_type  # noqa: F401
from .net import policy
from .net.policy import forbidden_reason  # noqa: F401 - public surface
from .net.route import _DEFAULT_PORTS, Proxy, load_proxy, map_rule, map_target, settings_path  # noqa: F401
from .net.sockets import (_Conn, _connect, _http_connect_tunnel, _is_ip, _resolve,  # noqa: F401
                          _wrap_tls, arm, dns_error, socks5_handshake, ssl_context)

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
                allow_redirects=True, binary_max_bytes=None, partial_on_timeout=False, _warm=True):
        """Send one request, follow redirects, return a ``Response``.

        ``check`` raises NetError(kind="http") for a final status >= 400 (its ``response`` keeps
        the page); ``max_bytes`` caps the body (``allow_truncated`` keeps the first part instead
        of failing); ``ajax`` sends the headers of a page's XHR (JSON Accept, X-Requested-With);
        ``timeout`` bounds the whole request including redirects, never beyond the deadline;
        ``partial_on_timeout`` returns what the final answer's body had brought when that time ran
        out (``truncated`` and ``timed_out`` set) instead of a timeout error. Every hop's address
        is checked by the address policy (``xlakit.net.policy``)."""
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
                             allow_truncated, started, history, binary_max_bytes, partial_on_timeout)
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

    def _socket_factory(self, route, url, end, limit, budget_bound, mapped=False, via=None):
        """A function that opens the socket for ``route`` when http.client asks for it.

        Unless the route comes from an XLA_NET_MAP rule (``mapped``: the operator chose where it
        goes), every address the target resolves to is checked by the address policy and the
        socket connects only to those (see ``xlakit.net.policy``). Through a proxy that
        resolves names (socks5h, HTTP) the proxy connects: only the written host was checked,
        in ``_one``; with socks5 the name is resolved here and its addresses are checked."""
        t_scheme, t_host, t_port, _ = route
        logical = self._host(url).lower()
        proxy = self.proxy if self.proxy and not (self.proxy.bypass(logical) or self.proxy.bypass(t_host)) else None
        check = None if mapped else (lambda address: policy.check_address(address, t_host, url, via))

        def left():
            remaining = end - time.monotonic()
            if remaining <= 0.01:
                raise _timeout_error(url, self._host(url), limit, budget_bound)
            return remaining

        def factory():
            if proxy is None:
                sock = _connect(t_host, t_port, left(), url, check=check, end=end)
            else:
                label = "代理服务器 %s（%s 里的 proxy）" % (proxy.label, settings_path())
                try:
                    sock = _connect(proxy.host, proxy.port, left(), url, what=label, end=end)
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
                            found = _resolve(host, t_port, left(), url)
                            for item in found if check is not None else ():
                                check(item[4][0])
                            host = found[0][4][0]
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
             allow_truncated, started, history, binary_max_bytes=None, partial_on_timeout=False):
        """One hop: check the address, connect (or reuse), send, read the capped body, store
        cookies."""
        parts = urllib.parse.urlsplit(url)
        scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
        port = parts.port or _DEFAULT_PORTS[scheme]
        route, rule = map_rule(scheme, host, port)
        via = history[-1] if history else None
        if rule != "exact":                 # an exact XLA_NET_MAP key is the operator's opt-in
            policy.check_host(host, url, via)
        if route == "offline":
            raise _offline_error(url, "无法连接 %s" % host)
        t_scheme, t_host, t_port, prefix = route
        path = parts.path or "/"
        if parts.query:
            path += "?" + parts.query
        path = prefix + path
        headers = self._headers_for(method, url, extra, referer, ajax, body)
        factory, proxy = self._socket_factory(route, url, end, limit, budget_bound, mapped=rule is not None, via=via)
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
                                      max_bytes, allow_truncated, started, history, binary_max_bytes,
                                      partial_on_timeout)
            except _StaleConnection:
                conn.close()
                if not reused or method not in ("GET", "HEAD"):
                    raise NetError("%s 在回应前断开了连接。请稍后重试" % host, "reset", url)
            except BaseException:
                conn.close()
                raise

    def _exchange(self, conn, key, method, url, path, headers, body, end, limit, budget_bound, max_bytes,
                  allow_truncated, started, history, binary_max_bytes=None, partial_on_timeout=False):
        host = self._host(url)
        phase = ["connect"]

        def slow():
            what = {"connect": "连接或加密握手没有完成", "send": "请求没有发送完",
                    "headers": "网站没有发完回应头（连接已建立，回应一个字节一个字节地来得很慢，或根本不来）"}
            detail = what.get(phase[0])
            if history:
                detail = "%s（此前已跟随 %d 次重定向）" % (detail, len(history))
            return _timeout_error(url, host, limit, budget_bound, detail)

        def left():
            remaining = end - time.monotonic()
            if remaining <= 0.01:
                raise slow()
            return remaining

        try:
            if conn.sock is None:
                conn.connect()
            arm(conn.sock, end)
            conn.sock.settimeout(left())
            phase[0] = "send"
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            for k, v in headers:
                conn.putheader(k, v)
            conn.endheaders(body)
            phase[0] = "headers"
            resp = conn.getresponse()
        except NetError:
            raise
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            raise _StaleConnection()
        except socket.timeout:
            raise slow()
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
        truncated = timed_out = False
        try:
            while True:
                if conn.sock is not None:
                    remaining = end - time.monotonic()
                    if remaining <= 0.01:
                        raise socket.timeout("the overall deadline has passed")
                    conn.sock.settimeout(remaining)
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
                if not resp.chunked and resp.length:
                    # the server closed before the Content-Length it promised (http.client's read1
                    # just returns b"" there): a cut-off page must not pass for the whole one
                    raise NetError("%s 的回应在传输中途断开（声明 %s，只收到 %s）。请稍后重试" % (
                        host, _fmt_bytes(declared or 0), _fmt_bytes(wire)), "reset", url)
                tail = decoder.flush()
                out.append(tail)
                size += len(tail)
                truncated = cap is not None and size > cap
        except NetError:
            raise
        except socket.timeout:
            timed_out = True
        except http.client.IncompleteRead as exc:
            out.append(decoder.feed(exc.partial, None))
            raise NetError("%s 的回应在传输中途断开（只收到部分内容）。请稍后重试" % host, "reset", url)
        except (http.client.HTTPException, OSError) as exc:
            raise NetError("读取 %s 的回应时连接出错（%s）。请稍后重试" % (host, exc), "reset", url)
        except zlib.error:
            raise NetError("%s 声明了 %s 压缩，但内容无法解压" % (host, encoding), "decode", url)
        content = b"".join(out)
        if timed_out:
            resp.close()
            conn.close()
            got = "只收到 %s" % _fmt_bytes(wire) if wire else "正文一个字节也没有收到"
            if declared:
                got += "（声明共 %s）" % _fmt_bytes(declared)
            if not partial_on_timeout or is_redirect:
                raise _timeout_error(url, host, limit, budget_bound, "网站发送正文太慢，%s" % got)
            return Response(status, resp.reason, url, headers_obj, content, time.monotonic() - started, list(history),
                            truncated=True, wire_bytes=wire, timed_out="网站发送正文太慢，%s" % got)
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


# ---------------------------------------------------------------------------------------------
# One-shot helpers

def get(url, deadline=None, mobile=False, **kw):
    """A one-off GET in a fresh session (no cookies kept)."""
    with Session(deadline=deadline, mobile=mobile) as s:
        return s.get(url, **kw)


def post(url, data=None, json=None, deadline=None, mobile=False, **kw):
    with Session(deadline=deadline, mobile=mobile) as s:
        return s.post(url, data=data, json=json, **kw)


def call_deadline(deadline, overall=45.0, reserve=1.0):
    """The network budget of one tool call: at most ``overall`` seconds, ending ``reserve``
    seconds before ``deadline`` (the tool's ``rt.deadline``) so the Chinese answer is printed
    before it, however slow every source was. Every request, redirect and fallback of the call
    shares it (``Session(deadline=...)``, ``deadline.sub(...)`` for a part)."""
    from .errors import Deadline
    left = deadline.remaining()
    return Deadline(max(0.0, min(overall, left - min(reserve, left * 0.2))))


def host_of(url):
    """The lower-case host of ``url`` ("" when it has none)."""
    try:
        return (urllib.parse.urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


if sys.version_info < (3, 9):  # pragma: no cover - the toolbox's floor
    raise ImportError("xlakit.http needs Python 3.9+")
