"""kuaidi.com (快递网) answers -> carrier candidates and parcel traces.

No real kuaidi.com body is public; the shapes below are the union of what a dozen independent
clients parse, so every reader here is lenient about which optional fields are present:

* carrier detection ``index-ajaxselectinfo-<number>.html``: a JSON object keyed by index strings
  (``{"0": {"name": "中通快递", "exname": "zhongtong", …}}``), or an array in one newer client;
* trace query ``index-ajaxselectcourierinfo-<number>-<exname>.html``: ``success``, ``reason``,
  ``status`` (0-9), ``data`` rows ``{time, context[, location]}``; a single ``查无结果`` row means
  no data.
"""
import datetime
import json
import re

STATUS = {0: "暂无结果", 1: "查询成功", 2: "接口异常", 3: "在途", 4: "揽件", 5: "疑难",
          6: "已签收", 7: "退签", 8: "派件中", 9: "退回"}
TERMINAL = frozenset((0, 2, 5, 6, 7, 9))
# Carriers that only show a trace after the recipient's (or sender's) phone tail is given.
PHONE_CARRIERS = {"shunfeng": "顺丰速运", "shunfengkuaiyun": "顺丰快运", "zhongtong": "中通快递",
                  "zhongtongkuaiyun": "中通快运", "fengwang": "丰网速运"}
NUMBER = re.compile(r"^[A-Za-z0-9-]{5,40}$")
PHONE = re.compile(r"^\d{4}$")
_NEEDS_PHONE = ("验证码", "手机", "核验", "后四位", "电话", "验证")
_RATE = ("频繁", "限制", "次数", "稍后", "繁忙")
_NOTHING = ("查无结果", "暂无结果", "暂无轨迹", "没有查到", "无记录")


def _loads(text):
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def parse_candidates(text):
    """Carrier-detection answer -> ``[{"code", "name", "phone"?}]`` (empty when the number is
    unknown or the body is not JSON)."""
    data = _loads(text)
    if isinstance(data, dict):
        if "data" in data and isinstance(data["data"], (list, dict)) and not any(k.isdigit() for k in data):
            data = data["data"]
        rows = [data[k] for k in sorted(data, key=lambda k: (not str(k).isdigit(), int(k) if str(k).isdigit() else 0))] \
            if isinstance(data, dict) else data
    elif isinstance(data, list):
        rows = data
    else:
        return []
    out = []
    seen = set()
    for row in rows:
        if not isinstance(row, dict):
            continue
        code = str(row.get("exname") or row.get("comCode") or row.get("code") or "").strip()
        if not code or code in seen or not re.match(r"^[A-Za-z0-9_-]{1,40}$", code):
            continue
        seen.add(code)
        item = {"code": code, "name": str(row.get("name") or PHONE_CARRIERS.get(code) or code).strip()}
        if row.get("phone"):
            item["phone"] = str(row["phone"]).strip()
        out.append(item)
    return out


def _time_key(row):
    text = row.get("time") or ""
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y/%m/%d %H:%M:%S"):
        try:
            return datetime.datetime.strptime(text, fmt)
        except ValueError:
            pass
    return None


def parse_trace(text):
    """Trace answer -> dict: ``found`` (bool), ``status_code``, ``status`` (Chinese), ``traces``
    (newest first), ``company``, ``reason``, ``needs_phone``, ``rate_limited``, ``valid_json``."""
    data = _loads(text)
    if not isinstance(data, dict):
        return {"found": False, "valid_json": False, "reason": "快递网返回的不是 JSON", "traces": [],
                "status_code": None, "status": "暂无结果", "needs_phone": False, "rate_limited": False}
    reason = str(data.get("reason") or data.get("message") or data.get("msg") or "").strip()
    try:
        code = int(data.get("status")) if data.get("status") not in (None, "") else None
    except (TypeError, ValueError):
        code = None
    if code is not None and code not in STATUS:
        code = None
    rows = data.get("data") if isinstance(data.get("data"), list) else []
    traces = []
    for row in rows:
        if not isinstance(row, dict):
            continue
        context = re.sub(r"\s+", " ", str(row.get("context") or row.get("desc") or "")).strip()
        if not context or (len(rows) == 1 and any(w in context for w in _NOTHING)):
            continue
        item = {"time": str(row.get("time") or row.get("ftime") or "").strip(), "context": context}
        if row.get("location"):
            item["location"] = str(row["location"]).strip()
        traces.append(item)
    keyed = [_time_key(t) for t in traces]
    if traces and all(k is not None for k in keyed):
        order = sorted(range(len(traces)), key=lambda i: keyed[i], reverse=True)
        traces = [traces[i] for i in order]
    success = data.get("success")
    found = bool(traces) and success is not False
    out = {"found": found, "valid_json": True, "traces": traces, "reason": reason, "status_code": code,
           "status": STATUS.get(code) if code is not None else ("查询成功" if found else "暂无结果"),
           "needs_phone": any(w in reason for w in _NEEDS_PHONE),
           "rate_limited": any(w in reason for w in _RATE)}
    if found and code in (0, 1, None):
        out["status"] = _guess_state(traces[0]["context"]) or out["status"]
    for key in ("company", "exname", "timeused", "nu"):
        if data.get(key):
            out[key] = str(data[key]).strip()
    return out


def _guess_state(latest):
    """When the site says only 查询成功, read the state from the newest trace line."""
    for words, state in ((("签收", "已取件", "已代收"), "已签收"), (("派件", "派送", "正在投递"), "派件中"),
                         (("揽收", "揽件", "已收件", "已揽"), "揽件"), (("退回", "退件"), "退回")):
        if any(w in latest for w in words):
            return state
    return "在途"
