"""Where a connection for a logical origin really goes: the ``XLA_NET_MAP`` test seam (an origin
mapped to a base URL, or ``"offline"``) and the proxy from ``~/.xla/settings.json``. Part of
``xlakit.http``; its module docstring describes both settings."""
import json
import os
import re
import urllib.parse

from .errors import NetError

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
    return map_rule(scheme, host, port)[0]


def map_rule(scheme, host, port):
    """``(target, rule)``: ``map_target``'s answer and which XLA_NET_MAP rule gave it: ``"exact"``
    (the origin or host is a key), ``"*"`` (the catch-all) or None (no rule: the origin itself).
    The address policy lets an exact key name a local address, never the catch-all."""
    rules = _net_map()
    if rules:
        how = "exact"
        target = rules.get((scheme, host, port)) or rules.get((None, host, port))
        if target is None and port == _DEFAULT_PORTS.get(scheme):
            target = rules.get((None, host, None))
        if target is None:
            target, how = rules.get("*"), "*"
        if target is not None:
            if target.lower() == "offline":
                return "offline", how
            parts = urllib.parse.urlsplit(target)
            t_scheme = parts.scheme.lower()
            return (t_scheme, parts.hostname or "", parts.port or _DEFAULT_PORTS.get(t_scheme, 80),
                    parts.path.rstrip("/")), how
    return (scheme, host, port, ""), None


def settings_path():
    """``~/.xla/settings.json`` (HOME first, as the rest of the toolbox resolves it)."""
    try:
        from ..fs import paths
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
