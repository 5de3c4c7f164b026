"""Category and value labels broken into lines the way a Chinese reader expects.

Split from chart.py along its seam: a label breaks between words, never inside a common word
(采购, 数字化) nor before closing punctuation (禁则), prefers a break after a unit word
(部/区/中心…), and ``wrap``/``fits`` tell the layout whether two lines are enough.
"""

# -- drawing helpers --------------------------------------------------------------------------------

# a line never starts with closing punctuation nor ends with opening punctuation (禁则)
_NO_START = set("，。、；：？！）》」』】〕,.;:!?)%％")
_NO_END = set("（《「『【〔(")


def _tokens(text):
    """Break units: a Latin word or number, one CJK character, one space."""
    tokens, word = [], ""
    for ch in text:
        if ord(ch) < 0x2E80 and not ch.isspace():
            word += ch
        else:
            if word:
                tokens.append(word)
                word = ""
            tokens.append(ch)
    if word:
        tokens.append(word)
    return tokens


def _visible(line):
    return len(line.replace(" ", ""))


# CJK has no spaces: a label breaks well after a unit word (部, 区, 中心, 公司 …) and badly inside a
# common two-character word (采/购, 数/字化, 客/户). Small lists, no dictionary: office labels are
# mostly department, region, product and cost names.
_UNIT_END = set("部区处科室局厅省市县镇乡村费类组站所院馆队店厂司团化型级期季月年度量额额率")
_WORDS = ("采购", "数字", "管理", "办公", "财务", "销售", "市场", "技术", "行政", "人力", "资源", "研发", "生产",
          "运营", "客服", "客户", "信息", "物流", "仓储", "质量", "安全", "服务", "工程", "项目", "中心", "事业",
          "营销", "发展", "建设", "设备", "公司", "集团", "分公司", "华东", "华南", "华北", "华中", "西南", "西北",
          "东北", "电商", "渠道", "直营", "加盟", "门店", "产品", "业务", "智能", "网络", "数据", "系统", "综合",
          "后勤", "保障", "培训", "招聘", "差旅", "餐饮", "交通", "通讯", "租赁", "维修", "广告", "宣传", "推广",
          "转型", "区域", "大客户", "办公室", "委员会", "有限")


def _break_cost(first, second):
    """0: a good place (a space, Latin|CJK, after a unit word); 1: between two CJK characters;
    2: inside a common word."""
    a, b = first[-1:], second[:1]
    if not a or not b or a == " " or b == " " or (ord(a) < 0x2E80) != (ord(b) < 0x2E80):
        return 0
    if ord(a) < 0x2E80:
        return 0
    joined = first[-3:] + second[:3]
    cut = len(first[-3:])
    for w in _WORDS:
        at = joined.find(w)
        while at >= 0:
            if at < cut < at + len(w):
                return 2
            at = joined.find(w, at + 1)
    return 0 if a in _UNIT_END or first.endswith(("中心", "公司", "集团")) else 1


def split_two(fonts, text, size, max_w):
    """The best two-line break of ``text`` at a word/character boundary, or None: both lines fit
    ``max_w``, neither holds a single character (no "西北区大客户事业/部"), no line starts with
    closing or ends with opening punctuation; among those the best place (``_break_cost``: after
    a unit word, never inside 采购 or 数字化), then the most even split (the longer line
    shortest), the first line the longer one on a tie."""
    tokens = _tokens(text)
    best = None
    for i in range(1, len(tokens)):
        first, second = "".join(tokens[:i]).rstrip(), "".join(tokens[i:]).lstrip()
        if _visible(first) < 2 or _visible(second) < 2:
            continue
        if second[:1] in _NO_START or first[-1:] in _NO_END:
            continue
        w1, w2 = fonts.width(first, size), fonts.width(second, size)
        if w1 > max_w or w2 > max_w:
            continue
        cost = _break_cost(first, second)
        if cost >= 2:
            continue            # never inside 采购 / 数字化: the caller shrinks or rotates instead
        score = (cost, max(w1, w2), w1 < w2)
        if best is None or score < best[0]:
            best = (score, [first, second])
    return best[1] if best else None


def _cut(fonts, line, size, max_w):
    while fonts.width(line, size) > max_w and len(line) > 1:
        line = line[:-2] + "…"
    return line


def wrap(fonts, text, size, max_w, max_lines=2):
    """Split a label into at most max_lines lines fitting max_w, at word/character boundaries
    (CJK between any two characters, Latin words at spaces), evenly and never leaving a single
    character on a line (``split_two``); what does not fit is cut with ….  Callers that can
    shrink or rotate instead check ``fits(lines)`` first."""
    if fonts.width(text, size) <= max_w:
        return [text]
    if max_lines >= 2:
        two = split_two(fonts, text, size, max_w)
        if two:
            return two
    lines, cur = [], ""
    for tok in _tokens(text):
        if fonts.width(cur + tok, size) <= max_w or not cur:
            cur += tok
        else:
            lines.append(cur.rstrip())
            cur = tok.lstrip()
    if cur:
        lines.append(cur)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1] + "…"
    elif len(lines) > 1 and _visible(lines[-1]) < 2 and len(lines[-2]) > 2:
        lines[-2], lines[-1] = lines[-2][:-1], lines[-2][-1] + lines[-1]     # no orphan character
    return [_cut(fonts, ln, size, max_w) for ln in lines]


def fits(lines):
    """True when a wrapped label lost nothing (no … cut) and has no single-character line."""
    return not any(ln.endswith("…") for ln in lines) and (len(lines) == 1 or all(_visible(ln) >= 2 for ln in lines))
