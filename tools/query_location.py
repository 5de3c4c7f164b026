"""query_location: which province and city a public IPv4 address belongs to (ip9.com.cn).

Why check the address first: private, loopback and reserved addresses have no public location,
and a public service asked about them answers with junk or an error; refusing them here says
clearly why. Without ``ip`` the service locates the current network's own public address.

Parameters:
    ip   optional IPv4 address such as ``223.5.5.5``; empty = the current network.

Returns ``ip``, ``location`` (e.g. ``中国 安徽 合肥``), ``country``, ``province``, ``city``,
``district``, ``isp``, ``area_code``, ``post_code``, ``longitude``/``latitude`` (those the service
knows) and ``source``.
"""
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit import http  # noqa: E402
from xlakit.errors import InputError, ToolError  # noqa: E402
from xlakit.web import location  # noqa: E402

OVERALL = 45.0
API = "https://ip9.com.cn/get"


def main(params):
    raw = (params.get("ip") or "").strip()
    ip = None
    if raw:
        try:
            ip = location.check_ipv4(raw)
        except ValueError as exc:
            raise InputError(str(exc))
    deadline = http.call_deadline(rt.deadline, OVERALL)
    try:
        resp = http.get(API, params={"ip": ip} if ip else None, deadline=deadline, ajax=True, check=False,
                        timeout=deadline.timeout(20), referer="https://ip9.com.cn/")
    except http.NetError as exc:
        raise ToolError("查询 IP 归属地失败：%s" % exc)
    if resp.status >= 400:
        raise ToolError("ip9.com.cn 返回 HTTP %d（%s），暂时查不了归属地。请稍后重试" % (resp.status, http.status_text(resp.status)))
    try:
        info = location.parse_ip9(resp.text)
    except ValueError as exc:
        raise ToolError("查询 IP 归属地失败：%s。请稍后重试" % exc)
    if ip and info.get("ip") and info["ip"] != ip:
        rt.warn("服务返回的 IP（%s）与查询的（%s）不同" % (info["ip"], ip))
    out = {"ip": info.get("ip") or ip or "", "location": location.describe(info)}
    out.update((k, v) for k, v in info.items() if k != "ip")
    out["source"] = "ip9.com.cn"
    return out


if __name__ == "__main__":
    rt.run(main)
