"""Which addresses the web tools may connect to: the public internet, not the user's own machine,
the LAN or a cloud server's metadata service. Part of ``xlakit.http``.

Why: fetch_url takes any address the model was given, and a page can redirect anywhere. Without a
rule a prompt-injected page could have the tool read ``http://169.254.169.254/`` (a cloud
server's credentials), a router's admin page or a service on ``127.0.0.1`` and hand the answer
to the model. So every hop of every request (the first one, each redirect, each jump page) is
checked twice:

1. the host written in the address: an IP literal in any spelling the C library accepts
   (``2130706433``, ``0x7f.1``, ``127.1``, ``0177.0.0.1``, ``[::ffff:127.0.0.1]``) and local
   names (``localhost``, ``*.localhost``) are refused before anything is sent; this is also all
   that can be checked when a proxy resolves names (``socks5h://``, an HTTP proxy): there the
   proxy decides where a name leads, as it does for a browser configured the same way;
2. the address actually connected to: the name is resolved once, every address it has is
   checked (one refused address refuses the name: a name that mixes public and private
   addresses is how DNS rebinding works), and the socket connects to exactly those checked
   addresses, with ``Host`` and TLS SNI still the name; the peer address is checked again after
   the connect. With ``socks5://`` (names resolved here) the resolved address is checked too.

Refused (``forbidden_reason``): loopback, "this network" 0.0.0.0/8, RFC 1918 private, CGNAT
100.64/10, link-local 169.254/16 (cloud metadata), IETF protocol 192.0.0/24, documentation and
benchmark ranges, multicast, reserved 240/4 and broadcast; in IPv6 the same through every form
that embeds an IPv4 address (IPv4-mapped ``::ffff:0:0/96``, IPv4-compatible ``::a.b.c.d``, NAT64
``64:ff9b::/96``, 6to4 ``2002::/16``, Teredo), plus ``::1``, ``::``, ``fe80::/10``,
``fec0::/10``, ``fc00::/7``, ``ff00::/8``, the discard, documentation and local NAT64 ranges and
anything outside global unicast ``2000::/3``. The table is written out here rather than taken
from ``ipaddress.is_global``, whose lists differ between Python versions.

Opting in: ``"net_allow"`` in ``~/.xla/settings.json`` (the host passes only PATH and HOME, so
that file is what a user can set) or the environment variable ``XLA_NET_ALLOW`` (comma
separated, for scripts run by hand)::

    {"net_allow": ["intranet.example.com", "*.corp.example.com", "10.1.2.3", "192.168.1.0/24"]}

A host name or ``*.``/``.`` pattern allows that host written in the address (whatever it
resolves to); an IP address or network allows connecting to it, under any name. Origins mapped
by the test seam ``XLA_NET_MAP`` go where the operator mapped them (an explicit opt-in), but a
mapped server's redirect to an unmapped local address is refused like any other.
"""
import ipaddress
import json
import os
import re

from .errors import NetError

_V4 = [(ipaddress.ip_network(net), why) for net, why in (
    ("255.255.255.255/32", "广播地址"),
    ("127.0.0.0/8", "本机回环地址"),
    ("0.0.0.0/8", "“本网络”保留地址（0.0.0.0 会连到本机）"),
    ("10.0.0.0/8", "局域网（私有）地址"),
    ("172.16.0.0/12", "局域网（私有）地址"),
    ("192.168.0.0/16", "局域网（私有）地址"),
    ("100.64.0.0/10", "运营商内网地址（CGNAT）"),
    ("169.254.0.0/16", "链路本地地址（含云服务器的元数据服务 169.254.169.254）"),
    ("192.0.0.0/24", "IETF 协议保留地址"),
    ("192.0.2.0/24", "文档示例专用地址"),
    ("198.51.100.0/24", "文档示例专用地址"),
    ("203.0.113.0/24", "文档示例专用地址"),
    ("198.18.0.0/15", "网络性能测试专用地址"),
    ("192.88.99.0/24", "已废弃的 6to4 中继地址"),
    ("224.0.0.0/4", "组播地址"),
    ("240.0.0.0/4", "保留地址"),
)]
_V6 = [(ipaddress.ip_network(net), why) for net, why in (
    ("::/128", "未指定地址（::，会连到本机）"),
    ("::1/128", "本机回环地址"),
    ("64:ff9b:1::/48", "本地 NAT64 地址"),
    ("100::/64", "丢弃专用地址"),
    ("2001:db8::/32", "文档示例专用地址"),
    ("2001:2::/48", "网络性能测试专用地址"),
    ("2001:10::/28", "保留地址（ORCHID）"),
    ("2001:20::/28", "保留地址（ORCHIDv2）"),
    ("fc00::/7", "IPv6 内网地址（ULA）"),
    ("fe80::/10", "IPv6 链路本地地址"),
    ("fec0::/10", "IPv6 站点本地地址（已废弃）"),
    ("ff00::/8", "组播地址"),
)]
_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_COMPAT = ipaddress.ip_network("::/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_6TO4 = ipaddress.ip_network("2002::/16")
_TEREDO = ipaddress.ip_network("2001::/32")
_GLOBAL6 = ipaddress.ip_network("2000::/3")
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")
_V4_PART = re.compile(r"^(?:0[xX][0-9a-fA-F]*|0[0-7]*|[1-9][0-9]*)$")


def forbidden_reason(ip):
    """Chinese words for why ``ip`` (an ``ipaddress`` address or its text) must not be reached,
    or None for a public address. IPv6 forms that carry an IPv4 address answer for that one."""
    if not isinstance(ip, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        ip = ipaddress.ip_address(str(ip).split("%", 1)[0])
    if ip.version == 4:
        for net, why in _V4:
            if ip in net:
                return why
        return None
    if getattr(ip, "scope_id", None):
        ip = ipaddress.IPv6Address(str(ip).split("%", 1)[0])
    for net, why in _V6:
        if ip in net:
            return why
    inner = None
    if ip in _MAPPED:
        inner = ip.ipv4_mapped
    elif ip in _COMPAT:
        inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    elif ip in _NAT64:
        inner = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    elif ip in _6TO4:
        inner = ip.sixtofour
    elif ip in _TEREDO:
        server, client = ip.teredo
        why = forbidden_reason(server) or forbidden_reason(client)
        return ("内嵌了%s的 Teredo 地址" % why) if why else None
    if inner is not None:
        why = forbidden_reason(inner)
        return ("指向 %s（%s）的 IPv6 写法" % (inner, why)) if why else None
    if ip not in _GLOBAL6:
        return "保留的 IPv6 地址"
    return None


def parse_ipv4_loose(host):
    """The IPv4 address a host string means to the C library's ``inet_aton`` (which
    ``getaddrinfo`` uses before DNS): one to four parts, each decimal, octal (leading 0) or hex
    (0x), the last filling the remaining bytes: ``2130706433``, ``0x7f.1``, ``127.1`` and
    ``0177.0.0.1`` are all 127.0.0.1. None when ``host`` is not such a spelling."""
    text = (host or "").strip()
    if text.endswith("."):
        text = text[:-1]
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or not all(_V4_PART.match(p) for p in parts):
        return None
    values = []
    for p in parts:
        if p[:2].lower() == "0x":
            values.append(int(p[2:] or "0", 16))
        elif len(p) > 1 and p.startswith("0"):
            values.append(int(p, 8))
        else:
            values.append(int(p))
    last_bytes = 5 - len(values)
    if any(v > 255 for v in values[:-1]) or values[-1] >= 256 ** last_bytes:
        return None
    number = 0
    for v in values[:-1]:
        number = number * 256 + v
    number = number * 256 ** last_bytes + values[-1]
    return ipaddress.IPv4Address(number)


def host_address(host):
    """The address a URL host is written as (any IPv4 spelling, an IPv6 literal with or without
    brackets or zone), or None for a name."""
    text = (host or "").strip().strip("[]")
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return parse_ipv4_loose(text)


def _is_local_name(host):
    host = (host or "").strip().rstrip(".").lower()
    return host in _LOCAL_NAMES or host.endswith(".localhost")


# ---- the user's opt-ins ----------------------------------------------------------------------

_allow_cache = [None, None]


def _settings_file():
    from .route import settings_path
    return settings_path()


def allow_list():
    """``(names, networks)`` the user allowed: ``net_allow`` of ``~/.xla/settings.json`` plus
    ``XLA_NET_ALLOW``. A broken settings file allows nothing (the proxy reader reports it)."""
    path = _settings_file()
    env = os.environ.get("XLA_NET_ALLOW") or ""
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        stamp = None
    key = (path, stamp, env)
    if _allow_cache[0] == key:
        return _allow_cache[1]
    entries = [e for e in re.split(r"[,\s]+", env) if e]
    if stamp is not None:
        try:
            with open(path, "rb") as fh:
                data = json.loads(fh.read().decode("utf-8-sig") or "{}")
            value = data.get("net_allow") if isinstance(data, dict) else None
            if isinstance(value, str):
                value = re.split(r"[,\s]+", value)
            if isinstance(value, list):
                entries += [e.strip() for e in value if isinstance(e, str) and e.strip()]
        except (OSError, ValueError):
            pass
    names, networks = [], []
    for entry in entries:
        entry = entry.strip().lower()
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            continue
        except ValueError:
            pass
        ip = parse_ipv4_loose(entry)
        if ip is not None:
            networks.append(ipaddress.ip_network(ip))
        else:
            names.append(entry.rstrip("."))
    result = (tuple(names), tuple(networks))
    _allow_cache[0], _allow_cache[1] = key, result
    return result


def name_allowed(host):
    """True when the user allowed this host name (exact, ``*.example.com`` or ``.example.com``)."""
    host = (host or "").strip().rstrip(".").lower()
    for pattern in allow_list()[0]:
        if pattern == host:
            return True
        suffix = pattern[1:] if pattern.startswith("*.") else pattern
        if suffix.startswith(".") and (host.endswith(suffix) or host == suffix[1:]):
            return True
    return False


def address_allowed(ip):
    ip = ipaddress.ip_address(str(ip).split("%", 1)[0])
    return any(ip.version == net.version and ip in net for net in allow_list()[1])


# ---- the checks ------------------------------------------------------------------------------

def _refuse(shown, why, url, via, allow_as):
    where = "（由 %s 重定向而来）" % via[:200] if via else ""
    raise NetError(
        "已拒绝访问 %s（%s）：为了安全，联网工具不访问本机、局域网和云服务器元数据这类内部地址。网址 %s%s。"
        "如果这是你信任的内网网站，请在 %s 里加上 \"net_allow\": [\"%s\"] 后重试" % (
            shown, why, (url or "")[:200], where, _settings_file(), allow_as),
        "blocked", url, address=shown)


def check_host(host, url, via=None):
    """Refuse ``host`` as written in the address when it is a local name or an IP literal (any
    spelling) of a forbidden range, unless the user allowed it."""
    if name_allowed(host):
        return
    ip = host_address(host)
    if ip is not None:
        why = forbidden_reason(ip)
        if why and not address_allowed(ip):
            _refuse(str(ip) if str(ip) == host.strip("[]") else "%s（即 %s）" % (host, ip), why, url, via, str(ip))
    elif _is_local_name(host) and not (address_allowed("127.0.0.1") or address_allowed("::1")):
        _refuse(host, "本机的名字，指向本机回环地址", url, via, host)


def check_address(ip, host, url, via=None):
    """Refuse connecting to ``ip`` (what ``host`` resolved to) unless it is public or allowed."""
    if name_allowed(host):
        return
    why = forbidden_reason(ip)
    if why and not address_allowed(ip):
        shown = str(ip) if host_address(host) is not None else "%s（%s 解析到的地址）" % (ip, host)
        _refuse(shown, why, url, via, host if host_address(host) is None else str(ip))
