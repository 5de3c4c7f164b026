"""Automatic list numbering as Word shows it: "一、", "（一）", "1.", "1.1", "①", "A)".

Chinese documents number their sections with Word's automatic numbering (``numbering.xml`` in a
docx), so the labels are not in the text at all; a reader that drops them turns "一、总则 …
（二）适用范围 … 3. 报送时限" into unlabeled paragraphs and the model cannot cite "第二条". This module
knows the number formats Word writes (``w:numFmt``), expands a level's template (``w:lvlText``,
``%1``–``%9`` standing for the current count of each level), and counts like Word does: a level
continues across paragraphs, starts at ``w:start``, restarts when a higher level moves on (or per
``w:lvlRestart``), and a list instance (``w:num``) with ``w:startOverride`` starts afresh.

Used by ``docx`` (from numbering.xml) and WordML; ``doc_lists`` fills it from a .doc's LST/LFO tables
through ``add_list``/``add_num``, mapping its LVL codes onto Word's format names.
"""
import xml.etree.ElementTree as ET

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"

_DIGITS = "〇一二三四五六七八九"        # digit by digit (二〇二四)
_COUNTING = "零一二三四五六七八九"      # counting (一百零五)
_LEGAL = "零壹贰叁肆伍陆柒捌玖"
_STEMS = "甲乙丙丁戊己庚辛壬癸"
_BRANCHES = "子丑寅卯辰巳午未申酉戌亥"


def chinese_number(n, digits=_COUNTING, units=("", "十", "百", "千")):
    """1 -> 一, 10 -> 十, 21 -> 二十一, 105 -> 一百零五, 2024 -> 二千零二十四 (as Word counts)."""
    if n <= 0 or n >= 10000:
        return str(n)
    text, zero = "", False
    for power in (3, 2, 1, 0):
        d = n // (10 ** power) % 10
        if d == 0:
            zero = bool(text)
            continue
        if zero:
            text += digits[0]
            zero = False
        text += digits[d] + units[power]
    if text.startswith(digits[1] + units[1]) and n < 20:
        text = text[1:]                          # 十一, not 一十一
    return text


def _roman(n):
    if n <= 0 or n >= 4000:
        return str(n)
    out = ""
    for value, letters in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
                           (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out += letters
            n -= value
    return out


def _letters(n):
    """Word's letter numbering: A..Z, then AA..ZZ, AAA.. (the letter repeated, not base 26)."""
    if n <= 0:
        return str(n)
    return chr(ord("A") + (n - 1) % 26) * ((n - 1) // 26 + 1)


def _enclosed(n, ranges):
    for first, last, base in ranges:
        if first <= n <= last:
            return chr(base + n - first)
    return str(n)


def format_number(n, fmt):
    """The count ``n`` in Word's number format ``fmt`` (unknown formats fall back to decimal)."""
    if fmt == "none":
        return ""
    if fmt in ("decimal", "decimalHalfWidth", None):
        return str(n)
    if fmt == "decimalZero":
        return "%02d" % n
    if fmt in ("decimalFullWidth", "decimalFullWidth2"):
        return "".join(chr(0xFF10 + int(c)) if c.isdigit() else c for c in str(n))
    if fmt in ("upperRoman", "lowerRoman"):
        text = _roman(n)
        return text if fmt == "upperRoman" else text.lower()
    if fmt in ("upperLetter", "lowerLetter"):
        text = _letters(n)
        return text if fmt == "upperLetter" else text.lower()
    if fmt in ("chineseCounting", "chineseCountingThousand", "japaneseCounting", "taiwaneseCounting",
               "taiwaneseCountingThousand", "japaneseCountingThousand",
               "ideographLegalTraditional"):
        return chinese_number(n)
    if fmt == "chineseLegalSimplified":
        return chinese_number(n, _LEGAL, ("", "拾", "佰", "仟"))
    if fmt in ("ideographDigital", "taiwaneseDigital", "japaneseDigitalTenThousand"):
        return "".join(_DIGITS[int(c)] for c in str(n))
    if fmt == "ideographTraditional":
        return _STEMS[(n - 1) % 10] if n > 0 else str(n)
    if fmt == "ideographZodiac":
        return _BRANCHES[(n - 1) % 12] if n > 0 else str(n)
    if fmt in ("decimalEnclosedCircle", "decimalEnclosedCircleChinese", "ideographEnclosedCircle"):
        return _enclosed(n, ((1, 20, 0x2460), (21, 35, 0x3251), (36, 50, 0x32B1)))
    if fmt == "decimalEnclosedParen":
        return _enclosed(n, ((1, 20, 0x2474),))
    if fmt == "decimalEnclosedFullstop":
        return _enclosed(n, ((1, 20, 0x2488),))
    if fmt == "ordinal":
        return "%d." % n
    return str(n)


class Level:
    """One list level: number format (Word's name), label template with %1-%9, start value,
    restart rule (None after any higher level, 0 never, k after level k-1 or higher), legal."""
    __slots__ = ("fmt", "text", "start", "restart", "legal")

    def __init__(self, fmt="decimal", text=None, start=1, restart=None, legal=False):
        self.fmt, self.text, self.start, self.restart, self.legal = fmt, text, start, restart, legal


def _int(el, default):
    try:
        return int(el.get(W + "val")) if el is not None else default
    except (TypeError, ValueError):
        return default


def _ilvl(el):
    try:
        return max(0, min(8, int(el.get(W + "ilvl", "0") or 0)))
    except ValueError:
        return 0


def _read_level(lvl, base=None):
    level = Level() if base is None else Level(base.fmt, base.text, base.start, base.restart, base.legal)
    fmt = lvl.find(W + "numFmt")
    if fmt is not None:
        level.fmt = fmt.get(W + "val", "decimal")
    text = lvl.find(W + "lvlText")
    if text is not None:
        level.text = text.get(W + "val", "")
    if lvl.find(W + "start") is not None:
        level.start = _int(lvl.find(W + "start"), 1)
    if lvl.find(W + "lvlRestart") is not None:
        level.restart = _int(lvl.find(W + "lvlRestart"), None)
    legal = lvl.find(W + "isLgl")
    if legal is not None:
        level.legal = legal.get(W + "val", "true") not in ("0", "false", "off")
    return level


class Numbering:
    """The lists of one document and their running counts; ``label(num_id, ilvl)`` returns the
    label of the next paragraph of that list level ("一、", "1.1", "①", "-" for bullets, or None
    for a paragraph that is not numbered)."""

    def __init__(self, data=None):
        self.abstract = {}       # abstractNumId -> {ilvl: Level}
        self.nums = {}           # numId -> (abstractNumId, {ilvl: Level overriding}, {ilvl: start})
        self.counts = {}         # abstractNumId -> [count or None] * 9
        self.started = set()     # numIds whose startOverride has been applied
        self.pending = {}        # abstractNumId -> {ilvl: start override not yet counted}
        self.style_links = {}    # abstractNumId -> the list style it only points to (w:numStyleLink)
        self.alias = {}          # abstractNumId -> the abstractNumId that defines its levels
        if data:
            try:
                self._load(ET.fromstring(data))
            except ET.ParseError:
                pass

    def _load(self, root):
        for ab in root.iter(W + "abstractNum"):
            self.abstract[ab.get(W + "abstractNumId")] = {
                _ilvl(lvl): _read_level(lvl) for lvl in ab.findall(W + "lvl")}
            link = ab.find(W + "numStyleLink")
            if link is not None and link.get(W + "val"):
                self.style_links[ab.get(W + "abstractNumId")] = link.get(W + "val")
        for num in root.iter(W + "num"):
            ref = num.find(W + "abstractNumId")
            if ref is None:
                continue
            levels, starts = {}, {}
            for over in num.findall(W + "lvlOverride"):
                ilvl = _ilvl(over)
                start = over.find(W + "startOverride")
                if start is not None:
                    starts[ilvl] = _int(start, 1)
                lvl = over.find(W + "lvl")
                if lvl is not None:
                    levels[ilvl] = lvl
            self.nums[num.get(W + "numId")] = (ref.get(W + "val"), levels, starts)

    def link_styles(self, style_num_id):
        """Follow ``w:numStyleLink``: a list that uses a list style (Word's "1/a/i" and the
        multilevel lists of many templates) has an abstractNum with no levels, only the style's
        name; the style's ``w:numPr`` names the w:num whose abstractNum holds the levels. Both then
        count as one list, as in Word. ``style_num_id(style id)`` gives that numId or None."""
        for aid, style in self.style_links.items():
            num = self.nums.get(style_num_id(style))
            if num and num[0] != aid and self.abstract.get(num[0]):
                self.alias[aid] = num[0]

    def add_list(self, aid, levels):
        """A list definition given as data: ``levels`` {ilvl: Level}."""
        self.abstract[str(aid)] = dict(levels)

    def add_num(self, num_id, aid, starts=None, levels=None):
        """A list instance of list ``aid``: ``starts`` {ilvl: start override}, ``levels`` {ilvl: Level}."""
        self.nums[str(num_id)] = (str(aid), dict(levels or {}), dict(starts or {}))

    def _level(self, num_id, ilvl):
        aid, overrides, _starts = self.nums[num_id]
        aid = self.alias.get(aid, aid)
        base = self.abstract.get(aid, {}).get(ilvl)
        if ilvl in overrides:
            over = overrides[ilvl]
            return over if isinstance(over, Level) else _read_level(over, base)
        return base or Level("bullet" if not self.abstract.get(aid) else "decimal")

    def label(self, num_id, ilvl=0):
        if not num_id or num_id == "0" or num_id not in self.nums:
            return None
        ilvl = max(0, min(8, ilvl))
        aid, _overrides, starts = self.nums[num_id]
        aid = self.alias.get(aid, aid)
        level = self._level(num_id, ilvl)
        if level.fmt == "bullet":
            return "-"
        counts = self.counts.setdefault(aid, [None] * 9)
        pending = self.pending.setdefault(aid, {})
        if num_id not in self.started:          # this list instance restarts its overridden levels
            self.started.add(num_id)
            for lvl, start in starts.items():
                if 0 <= lvl < 9:
                    counts[lvl] = None
                    pending[lvl] = start
        # an overridden start is the level's number until a paragraph counts on from it: "2.99"
        # for the first level-2 item when the instance starts level 1 at 2 and level 2 at 99
        counts[ilvl] = (counts[ilvl] + 1) if counts[ilvl] is not None else \
            pending.pop(ilvl, self._level(num_id, ilvl).start)
        for deeper in range(ilvl + 1, 9):      # a new item restarts the levels under it
            restart = self._level(num_id, deeper).restart   # None: after any higher level; 0: never
            if restart is None or (restart > 0 and ilvl <= restart - 1):
                counts[deeper] = None
                pending.pop(deeper, None)
        if level.fmt == "none" and not level.text:
            return None
        template = level.text if level.text is not None else "%" + str(ilvl + 1) + "."
        out = template
        for k in range(9):
            mark = "%" + str(k + 1)
            if mark not in out:
                continue
            value = counts[k] if counts[k] is not None else pending.get(k, self._level(num_id, k).start)
            fmt = self._level(num_id, k).fmt
            if level.legal and k < ilvl:
                fmt = "decimal"                 # legal numbering: 1.1.1 even under 第一章
            out = out.replace(mark, format_number(value, fmt))
        return out.strip() or None
