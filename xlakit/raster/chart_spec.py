"""What a draw_chart call asks for, checked, and how its numbers read.

Split from chart.py (the drawing) along its seam: ``normalize`` turns the call into a clean spec
with Chinese errors before anything is drawn; ``nice_ticks``/``unit_for``/``fmt_number`` are the
value axis's 1-2-5 steps and 万/亿 units, which the xlsx chart writer and tests use too.
"""
import math

from ..errors import InputError

MIN_W, MAX_W, MIN_H, MAX_H = 320, 2400, 240, 1800


# -- numbers --------------------------------------------------------------------------------------

def nice_ticks(lo, hi, target=5):
    """Ticks covering [lo, hi] (lo < hi) with the tightest nice step: 1, 2, 2.5 or 5 times a power
    of ten, 4 to ``target`` + 2 ticks, the count nearest ``target`` among equally tight ones. The tightest, not the first step above (hi - lo) / target:
    a maximum of 9.57万 ends at 10万 or 12万, not 15万 (40% of the plot empty)."""
    if hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / float(target)
    mag = 10 ** math.floor(math.log10(raw))
    best = None
    for m in (1, 2, 2.5, 5, 10, 20, 25, 50):
        step = m * mag
        first = math.floor(lo / step + 1e-9) * step
        last = math.ceil(hi / step - 1e-9) * step
        n = int(round((last - first) / step))
        if n + 1 > target + 2 or n < 3:
            continue
        key = (round((last - first) / step * step, 12), abs(n - target))
        if best is None or key < best[0]:
            best = (key, step, first, n)
    _key, step, first, n = best
    ticks = [float("%.12g" % (first + i * step)) for i in range(n + 1)]
    return [0.0 if abs(t) < step * 1e-9 else t for t in ticks], step


def _decimals(step):
    d = 0
    while d < 6 and abs(step * 10 ** d - round(step * 10 ** d)) > 1e-6 * max(1.0, step * 10 ** d):
        d += 1
    return d


def unit_for(max_abs, style="auto"):
    """(divisor, suffix) for a number style: auto (万/亿), comma (thousands), plain."""
    if style == "auto":
        if max_abs >= 1e8:
            return 1e8, "亿"
        if max_abs >= 1e4:
            return 1e4, "万"
    return 1.0, ""


def fmt_number(v, step=None, unit=(1.0, ""), style="auto"):
    div, suffix = unit
    x = v / div
    if step is not None:
        d = _decimals(step / div)
    else:
        a = abs(x)
        d = 0 if (a >= 100 or a == int(a)) else (1 if a >= 10 else 2)
    d = min(d, 4)
    text = ("{:,.%df}" % d).format(x) if (style == "comma" or (style == "auto" and not suffix)) else ("{:.%df}" % d).format(x)
    if step is None and "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("-0", "-0.0"):
        text = "0"
    return text + suffix if x != 0 else "0"


# -- validation -------------------------------------------------------------------------------------

def _num(v, where):
    if v is None:
        return None
    if isinstance(v, bool):
        raise InputError("%s 是布尔值 %s，应为数字" % (where, v))
    if isinstance(v, (int, float)):
        if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
            raise InputError("%s 不是有限的数字（%r），请换成数字或 null" % (where, v))
        return float(v)
    if isinstance(v, str):
        t = v.strip().replace(",", "").replace("，", "").replace("￥", "").replace("¥", "")
        mult = 1.0
        if t.endswith("%"):
            t = t[:-1]
        if t.endswith("万"):
            t, mult = t[:-1], 1e4
        elif t.endswith("亿"):
            t, mult = t[:-1], 1e8
        try:
            f = float(t) * mult
            if not math.isinf(f) and not math.isnan(f):
                return f
        except ValueError:
            pass
    raise InputError("%s 的值 %r 不是数字。请传数字（如 1280.5），缺失的点用 null" % (where, v))


def normalize(params):
    """Check the call and return a clean spec dict (Chinese InputError on bad data)."""
    kind = params.get("type") or "bar"
    if kind not in ("line", "bar", "pie"):
        raise InputError("type 只能是 line（折线图）、bar（柱状图）或 pie（饼图），收到 %r" % (kind,))
    labels = params.get("labels")
    if labels is not None and not isinstance(labels, list):
        raise InputError("labels 应是类目名数组，如 [\"1月\", \"2月\"]")
    labels = ["" if l is None else (l if isinstance(l, str) else _label_text(l)) for l in (labels or [])]
    spec = {"type": kind, "title": (params.get("title") or "").strip(), "labels": labels,
            "x_label": (params.get("x_label") or "").strip(), "y_label": (params.get("y_label") or "").strip(),
            "stacked": bool(params.get("stacked")), "horizontal": bool(params.get("horizontal")),
            "value_labels": params.get("value_labels"), "number_format": params.get("number_format") or "auto",
            "unit": (params.get("unit") or "").strip()}
    if spec["number_format"] not in ("auto", "comma", "plain"):
        raise InputError("number_format 只能是 auto（万/亿）、comma（千分位）或 plain")
    w = params.get("width") or (640 if kind == "pie" else 800)
    h = params.get("height") or (480 if kind == "pie" else 500)
    spec["clamped"] = []
    for key, val, lo, hi in (("width", w, MIN_W, MAX_W), ("height", h, MIN_H, MAX_H)):
        v = int(val)
        if v < lo or v > hi:
            spec["clamped"].append("%s=%d 超出范围，已调整为 %d" % (key, v, min(max(v, lo), hi)))
        spec[key] = min(max(v, lo), hi)
    scale = params.get("scale", 1)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 1 <= scale <= 3:
        raise InputError("scale 要给 1 到 3 之间的数字（2 = 像素加倍，插进报告打印用），收到 %r" % (scale,))
    spec["scale"] = float(scale)
    if kind == "pie":
        values = params.get("values")
        if values is None and params.get("series"):
            s0 = params["series"][0]
            values = s0.get("data") if isinstance(s0, dict) else None
        if not isinstance(values, list) or not values:
            raise InputError("饼图需要 values（各部分的数值），如 {\"type\": \"pie\", \"labels\": [\"A\", \"B\"], \"values\": [30, 70]}")
        vals = [_num(v, "values[%d]" % i) for i, v in enumerate(values)]
        vals = [0.0 if v is None else v for v in vals]
        neg = [i for i, v in enumerate(vals) if v < 0]
        if neg:
            raise InputError("饼图的数值不能为负（values[%d] = %s）。有正有负的数据请改用柱状图 type=bar" % (neg[0], _g(vals[neg[0]])))
        if sum(vals) <= 0:
            raise InputError("饼图的数值全是 0，画不出占比。请检查数据，或改用柱状图")
        if labels and len(labels) != len(vals):
            raise InputError("labels 有 %d 个，values 有 %d 个，数量要一致" % (len(labels), len(vals)))
        spec["values"] = vals
        spec["labels"] = labels or ["第%d项" % (i + 1) for i in range(len(vals))]
        return spec
    series = params.get("series")
    if series is None and isinstance(params.get("values"), list):
        series = [{"name": "", "data": params["values"]}]
    if not isinstance(series, list) or not series:
        raise InputError("折线图/柱状图需要 series，如 [{\"name\": \"销售额\", \"data\": [120, 98, 150]}]")
    clean = []
    for i, s in enumerate(series):
        if isinstance(s, list):
            s = {"data": s}
        if not isinstance(s, dict):
            raise InputError("series[%d] 应是对象 {\"name\": 名称, \"data\": [数值…]}" % i)
        data = s.get("data")
        if not isinstance(data, list) or not data:
            raise InputError("series[%d]（%s）的 data 为空，至少要有一个数值" % (i, s.get("name") or "未命名"))
        vals = [_num(v, "series[%d].data[%d]" % (i, j)) for j, v in enumerate(data)]
        if all(v is None for v in vals):
            raise InputError("series[%d]（%s）的数值全是 null，没有可画的数据" % (i, s.get("name") or "未命名"))
        name = s.get("name")
        clean.append({"name": "" if name is None else str(name), "data": vals})
    n = len(clean[0]["data"])
    for i, s in enumerate(clean):
        if len(s["data"]) != n:
            raise InputError("series[%d] 有 %d 个数值，series[0] 有 %d 个：各系列长度要一致（缺的点用 null）" % (i, len(s["data"]), n))
    if labels and len(labels) != n:
        raise InputError("labels 有 %d 个，但每个系列有 %d 个数值，数量要一致" % (len(labels), n))
    if kind == "bar":
        for s in clean:
            s["data"] = [0.0 if v is None else v for v in s["data"]] if spec["stacked"] else s["data"]
    spec["series"] = clean
    spec["labels"] = labels or [str(i + 1) for i in range(n)]
    return spec


def _label_text(v):
    if isinstance(v, float) and v == int(v):
        return str(int(v))
    return str(v)


def _g(v):
    return ("%.6g" % v)
