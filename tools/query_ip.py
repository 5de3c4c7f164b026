"""query_ip: the public IPv4 address the current network goes out to the internet with.

Why three sources: any single free service is down, walled or slow now and then. They are asked
in order (ipv4.jsonip.com, ip9.com.cn, 4.ipw.cn), each within a short limit and all within one
overall deadline, and each answer is parsed strictly: only a well-formed IPv4 counts, so an error
page, a captcha or an IPv6 answer is a failure of that source, never a wrong "success".

Parameters: none.

Returns ``ip``, ``source`` (the service that answered), ``is_public`` (false for a private or
carrier-grade NAT address, which some networks report) and ``errors`` (why earlier sources failed,
only when a fallback answered). When all fail, the error lists each source's reason.
"""
import ipaddress
import json
import re
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit import http  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402

OVERALL = 45.0
PER_SOURCE = 12.0
_V4 = re.compile(r"^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$")


def strict_ipv4(value):
    """The dotted IPv4 in ``value`` (a str, surrounding whitespace allowed) or None."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    if not _V4.match(value):
        return None
    try:
        return str(ipaddress.IPv4Address(value))
    except ipaddress.AddressValueError:
        return None


def parse_jsonip(text):
    data = json.loads(text)
    return strict_ipv4(data.get("ip")) if isinstance(data, dict) else None


def parse_ip9(text):
    data = json.loads(text)
    if not isinstance(data, dict) or data.get("ret") != 200 or not isinstance(data.get("data"), dict):
        return None
    return strict_ipv4(data["data"].get("ip"))


def parse_plain(text):
    return strict_ipv4(text) if len(text) < 64 else None


SOURCES = (
    ("ipv4.jsonip.com", "https://ipv4.jsonip.com/", parse_jsonip),
    ("ip9.com.cn", "https://ip9.com.cn/get", parse_ip9),
    ("4.ipw.cn", "https://4.ipw.cn/", parse_plain),
)


def ask(name, url, parse, deadline):
    """The IPv4 from one source, or raise ValueError with the Chinese reason."""
    try:
        with http.Session(deadline=deadline) as s:
            resp = s.get(url, ajax=True, timeout=deadline.timeout(PER_SOURCE), max_bytes=65536)
    except http.NetError as exc:
        raise ValueError(str(exc))
    try:
        ip = parse(resp.text)
    except ValueError:
        ip = None
    if ip is None:
        sample = re.sub(r"\s+", " ", resp.text[:80]).strip()
        raise ValueError("返回的内容里没有有效的 IPv4 地址（%s%s）" % (resp.content_type or "未知类型",
                                                                 "：" + sample if sample else "，内容为空"))
    return ip


def main(params):
    deadline = http.call_deadline(rt.deadline, OVERALL)
    errors = []
    for name, url, parse in SOURCES:
        if deadline.remaining() < 1:
            errors.append("%s：时间用完，未尝试" % name)
            continue
        try:
            ip = ask(name, url, parse, deadline)
        except ValueError as exc:
            errors.append("%s：%s" % (name, exc))
            continue
        addr = ipaddress.IPv4Address(ip)
        out = {"ip": ip, "source": name, "is_public": bool(addr.is_global)}
        if not addr.is_global:
            rt.warn("%s 返回的 %s 不是公网地址（可能是运营商内网/NAT），实际出口地址可能不同" % (name, ip))
        if errors:
            out["errors"] = errors
        return out
    raise ToolError("查询公网 IP 失败，所有来源都没有给出有效地址：" + "；".join(errors)[:1500], errors=errors)


if __name__ == "__main__":
    rt.run(main)
