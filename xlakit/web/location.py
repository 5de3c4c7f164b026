"""IPv4 argument checks and the ip9.com.cn answer -> province/city.

ip9 answers ``{"ret": 200, "data": {"ip", "country", "prov", "city", "area", "isp", "lng", "lat",
…}}``; success is exactly ``ret == 200``, names carry no 省/市 suffix and any field may be empty
(foreign addresses have only ``country``). Private, loopback and reserved addresses cannot be
located by a public service, so they are refused before any request with a message that says why
(the ranges and their words are the address policy's, ``xlakit.net.policy.forbidden_reason``).
"""
import ipaddress
import json
import re

from ..net.policy import forbidden_reason

_V4 = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")
FIELDS = (("country", "country"), ("province", "prov"), ("city", "city"), ("district", "area"),
          ("isp", "isp"), ("area_code", "area_code"), ("post_code", "post_code"),
          ("longitude", "lng"), ("latitude", "lat"), ("region", "big_area"))


def check_ipv4(text):
    """``text`` -> normalised dotted IPv4, or raise ValueError with a Chinese reason."""
    value = (text or "").strip()
    if not _V4.match(value):
        if ":" in value:
            raise ValueError("「%s」是 IPv6 地址，这里只能查 IPv4（如 223.5.5.5）" % value)
        raise ValueError("「%s」不是 IPv4 地址，格式应为四段 0-255 的数字，如 223.5.5.5" % value)
    if any(len(p) > 1 and p.startswith("0") for p in value.split(".")):
        raise ValueError("「%s」的某一段以 0 开头，写法有歧义；请去掉前导 0" % value)
    try:
        ip = ipaddress.IPv4Address(value)
    except ipaddress.AddressValueError:
        raise ValueError("「%s」不是合法的 IPv4 地址：每段必须在 0-255 之间" % value)
    kind = forbidden_reason(ip)     # the one table of non-public ranges (xlakit/net/policy.py)
    if kind:
        raise ValueError("%s 是%s，没有公网归属地可查；请给一个公网 IPv4，或不填 ip 查询当前网络" % (value, kind))
    return str(ip)


def parse_ip9(text):
    """ip9 answer -> dict (``ip`` plus the non-empty FIELDS), or raise ValueError with the reason."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        raise ValueError("ip9.com.cn 返回的不是 JSON")
    if not isinstance(data, dict):
        raise ValueError("ip9.com.cn 返回的 JSON 格式不对")
    if data.get("ret") != 200:
        msg = data.get("msg") or data.get("message") or ("ret=%s" % data.get("ret"))
        raise ValueError("ip9.com.cn 没有给出结果（%s）" % msg)
    info = data.get("data")
    if not isinstance(info, dict):
        raise ValueError("ip9.com.cn 的结果里没有 data")
    out = {"ip": str(info.get("ip") or "").strip()}
    for key, src in FIELDS:
        value = info.get(src)
        if value not in (None, ""):
            out[key] = str(value).strip()
    if not any(out.get(k) for k in ("country", "province", "city")):
        raise ValueError("ip9.com.cn 对这个地址没有归属地信息")
    return out


def describe(info):
    """``{"country": "中国", "province": "广东", "city": "深圳"}`` -> ``"中国 广东 深圳"``."""
    parts = []
    for key in ("country", "province", "city", "district"):
        value = info.get(key)
        if value and value not in parts:
            parts.append(value)
    return " ".join(parts)
