"""query_express: where a parcel is, by tracking number (kuaidi.com).

Why this flow: kuaidi.com answers the same two requests its own page makes: it first guesses the
carrier from the number (``index-ajaxselectinfo-<number>.html``), then returns the trace for a
number and carrier (``index-ajaxselectcourierinfo-<number>-<code>.html``). Without ``company`` the
first three guesses are tried in order. Some carriers (顺丰, 中通 …) only show a trace when the
last four digits of the recipient's or sender's phone are given: ``phone`` passes them, and when
they are missing the error says so instead of a vague "not found".

Parameters:
    number   tracking number: letters, digits and dashes, 5-40 characters.
    company  optional carrier code (``zhongtong``, ``yunda``, ``shunfeng``, ``jtexpress`` …).
    phone    optional last four digits of the phone on the parcel.

Returns ``number``, ``company`` (code) and ``company_name``, ``status`` (在途 / 揽件 / 派件中 /
已签收 …), ``status_code``, ``traces`` (``time``, ``context``; newest first), ``returned`` and
``candidates`` (the carriers guessed). On failure ``candidates`` and ``errors`` come with the error.
"""
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit import http  # noqa: E402
from xlakit.errors import InputError, ToolError  # noqa: E402
from xlakit.web import express  # noqa: E402

OVERALL = 45.0
SITE = "http://www.kuaidi.com"
MAX_TRIES = 3
TRACE_ROOM = 15000     # characters of traces kept (newest first) before cutting


def _get(session, url, deadline, params=None):
    try:
        return session.get(url, params=params, ajax=True, check=False, timeout=deadline.timeout(15))
    except http.NetError as exc:
        raise ToolError("无法访问快递网：%s" % exc)


def main(params):
    number = (params.get("number") or "").strip().replace(" ", "")
    company = (params.get("company") or "").strip().lower()
    phone = (params.get("phone") or "").strip()
    if not express.NUMBER.match(number):
        raise InputError("number「%s」不像快递单号：只能含字母、数字和短横线，长度 5–40 位" % number[:60])
    if company and not express.re.match(r"^[a-z0-9_-]{2,40}$", company):
        raise InputError("company「%s」不是快递公司代码：应为小写拼音/英文代码，如 zhongtong、yunda、jtexpress" % company[:60])
    if phone and not express.PHONE.match(phone):
        raise InputError("phone 应是手机号的后四位数字，如 \"1234\"，收到的是「%s」" % phone[:20])
    deadline = http.call_deadline(rt.deadline, OVERALL)
    with http.Session(deadline=deadline, referer=SITE + "/", warmup=SITE + "/") as s:
        if company:
            candidates = [{"code": company, "name": express.PHONE_CARRIERS.get(company, company)}]
        else:
            resp = _get(s, "%s/index-ajaxselectinfo-%s.html" % (SITE, number), deadline)
            if resp.status >= 400:
                raise ToolError("快递网识别快递公司时返回 HTTP %d（%s）。请稍后重试，或用 company 指定快递公司代码" % (
                    resp.status, http.status_text(resp.status)))
            candidates = express.parse_candidates(resp.text)
            if not candidates:
                raise ToolError("快递网认不出单号 %s 属于哪家快递公司：请核对单号，或用 company 指定快递公司代码（如 zhongtong、yunda）" % number,
                                candidates=[])
        errors = []
        for cand in candidates[:MAX_TRIES]:
            if deadline.remaining() < 2:
                errors.append({"company": cand["code"], "error": "时间已用完，没有再查询"})
                break
            query = {"phone": phone} if phone else None
            resp = _get(s, "%s/index-ajaxselectcourierinfo-%s-%s.html" % (SITE, number, cand["code"]), deadline, query)
            if resp.status >= 400:
                errors.append({"company": cand["code"], "error": "HTTP %d（%s）" % (resp.status, http.status_text(resp.status))})
                continue
            trace = express.parse_trace(resp.text)
            if trace["found"]:
                return _answer(number, cand, trace, candidates)
            needs_phone = trace["needs_phone"] or (cand["code"] in express.PHONE_CARRIERS and not phone)
            if not trace["valid_json"]:
                reason = "返回的不是查询结果（可能被限流或接口已变化）"
            elif trace["rate_limited"]:
                reason = "查询太频繁被限制：%s" % trace["reason"]
            elif needs_phone and not phone:
                reason = "需要手机号后四位才能查看（用 phone 参数提供）"
            else:
                reason = trace["reason"] or trace["status"] or "暂无结果"
            errors.append({"company": cand["code"], "name": cand["name"], "error": reason, "needs_phone": needs_phone})
    names = "、".join("%s（%s）" % (c["name"], c["code"]) for c in candidates[:MAX_TRIES])
    if any(e.get("needs_phone") for e in errors) and not phone:
        who = "、".join(e["name"] for e in errors if e.get("needs_phone"))
        raise ToolError("%s 需要收件人或寄件人手机号的后四位才能查询单号 %s：请加上 phone 参数（如 \"phone\": \"1234\"）后重试" % (
            who, number), candidates=candidates, errors=errors)
    detail = "；".join("%s：%s" % (e.get("name") or e["company"], e["error"]) for e in errors)
    raise ToolError("没有查到单号 %s 的物流信息（试过：%s。%s）。请核对单号；如果知道快递公司，用 company 指定代码重试" % (
        number, names, detail), candidates=candidates, errors=errors)


def _answer(number, cand, trace, candidates):
    traces = trace["traces"]
    kept, size = [], 0
    for row in traces:
        size += len(row.get("time", "")) + len(row.get("context", "")) + 40
        if size > TRACE_ROOM:
            break
        kept.append(row)
    if len(kept) < len(traces):
        rt.warn("物流轨迹共 %d 条，只返回最新的 %d 条" % (len(traces), len(kept)))
    out = {"number": number, "company": cand["code"], "company_name": trace.get("company") or cand["name"],
           "status": trace["status"], "status_code": trace["status_code"], "latest": kept[0] if kept else None,
           "traces": kept, "returned": len(kept), "total": len(traces),
           "candidates": candidates}
    if trace.get("timeused"):
        out["time_used"] = trace["timeused"]
    return out


if __name__ == "__main__":
    rt.run(main)
