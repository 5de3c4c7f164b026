"""The order a Chinese user expects for names and labels: the one sort key every tool uses.

Code-point order puts 北京 after 上海 and 第10组 before 第2组 -- nobody reads lists that way.
``text_key(text, mode)`` orders:

- ``"pinyin"`` (default): digit runs by value (``第2组`` < ``第10组``, ``2024-3`` < ``2024-12``),
  then punctuation and symbols, Latin letters case-insensitively, and Chinese characters by pinyin.
  The pinyin order comes from the national standard itself: GB2312 level-1 (the 3,755 common
  characters, lead bytes 0xB0-0xD7) is laid out in pinyin order, so the character's GB2312 bytes
  are its pinyin rank -- no table to ship or keep up to date. Characters outside level 1 (rare and
  traditional ones) follow, in GB18030 order; a few very common traditional forms are mapped to
  their simplified character first (``張`` sorts with ``张``).
- ``"stroke"``: the same, but Chinese characters by total stroke count (姓氏笔画: 王 4 before
  李 7 before 赵 9), characters with the same count by pinyin. The counts come from Unihan's
  ``kTotalStrokes`` (:mod:`xlakit.strokes`, the basic CJK block); characters it lacks follow
  the counted ones. Stroke order within one count (横竖撇点折) is not modelled: pinyin decides.
- ``"codepoint"``: plain code-point order (what Python's ``sorted`` does), for users who want it.

``value_key(value, mode)`` orders mixed cell values (numbers, then text, then booleans, empty
last); ``name_key`` is ``text_key`` for file names. Middle layer: imports only its stroke table (``xlakit.strokes``).
"""
import re

from .strokes import strokes as _strokes

MODES = ("pinyin", "stroke", "codepoint")
MODE_NAMES = {"pinyin": "拼音（数字按大小）", "stroke": "笔画（数字按大小）", "codepoint": "字符编码"}

_DIGITS = re.compile(r"(\d+)", re.ASCII)
# Common traditional forms -> simplified, so a mixed list keeps 張三 next to 张三.
_TRAD = dict(zip("張陳劉楊黃趙吳週孫馬葉許鄭謝韓馮鄧蕭許羅錢鐘賴盧蔣蘇葉呂魏東區華廣場長門書電",
                 "张陈刘杨黄赵吴周孙马叶许郑谢韩冯邓萧许罗钱钟赖卢蒋苏叶吕魏东区华广场长门书电"))
_CHAR_CACHE = {}
_TEXT_CACHE = {}
_CACHE_CAP = 200000


def check_mode(mode, where="sort"):
    """Normalise a sort mode (a few Chinese words accepted); raise ValueError with a Chinese text."""
    key = str(mode or "pinyin").strip().lower()
    key = {"拼音": "pinyin", "unicode": "codepoint", "编码": "codepoint", "code": "codepoint", "笔画": "stroke",
           "strokes": "stroke"}.get(key, key)
    if key not in MODES:
        raise ValueError("%s 只能是 pinyin（按拼音，数字按大小）、stroke（按笔画）或 codepoint（按字符编码），收到的是 %r" % (
            where, mode))
    return key


def _char_key(ch):
    """(class, rank) for one non-digit character; classes: 1 symbols, 2 Latin, 3 Chinese level 1,
    4 other Chinese / everything else in GB18030 order, 5 characters GB18030 cannot encode."""
    hit = _CHAR_CACHE.get(ch)
    if hit is not None:
        return hit
    o = ord(ch)
    if o < 0x80:
        low = ch.lower()
        hit = (2, ord(low) * 2 + (ch != low)) if low.isalpha() else (1, o)
    else:
        base = _TRAD.get(ch, ch)
        try:
            raw = base.encode("gb2312")
        except UnicodeEncodeError:
            raw = None
        if raw is not None and len(raw) == 2 and 0xB0 <= raw[0] <= 0xD7:
            hit = (3, raw[0] * 256 + raw[1])
        else:
            try:
                raw = base.encode("gb18030")
                if len(raw) == 2 and raw[0] == 0xA3 and 0xC1 <= raw[1] <= 0xFA:     # full-width letters
                    hit = _char_key(chr(raw[1] - 0x80))
                elif len(raw) == 2 and raw[0] in (0xA1, 0xA2, 0xA3, 0xA6, 0xA7, 0xA8, 0xA9):
                    hit = (1, 0x100 + int.from_bytes(raw, "big"))                      # CJK punctuation
                else:
                    hit = (4, int.from_bytes(raw, "big"))
            except UnicodeEncodeError:
                hit = (5, o)
    if len(_CHAR_CACHE) < _CACHE_CAP:
        _CHAR_CACHE[ch] = hit
    return hit


def _stroke_key(ch):
    """(class, strokes, pinyin rank) for one character in stroke mode: counted Chinese characters
    by their count, then the rest as in pinyin mode (uncounted Chinese after the counted ones)."""
    cls, rank = _char_key(ch)
    if cls in (3, 4):
        n = _strokes(ch)
        if n:
            return (3, n, cls * (1 << 40) + rank)
        return (4, 0, rank)
    return (cls, rank, 0)


def text_key(text, mode="pinyin"):
    """Sort key of a text (see the module docstring). Keys of one mode compare with each other."""
    if mode == "codepoint":
        return (text,)
    cache_key = text if mode != "stroke" else ("stroke", text)
    hit = _TEXT_CACHE.get(cache_key)
    if hit is not None:
        return hit
    parts = []
    for i, piece in enumerate(_DIGITS.split(text)):
        if not piece:
            continue
        if i % 2:                                # a digit run: by value, then shorter (no zeros) first
            parts.append((0, int(piece), len(piece)))
        else:
            if mode == "stroke":
                parts.extend(_stroke_key(ch) for ch in piece)
            else:
                parts.extend(_char_key(ch) + (0,) for ch in piece)
    hit = tuple(parts) + ((9, 0, 0), text)      # exact text breaks ties (a, A; 07, 7)
    if len(_TEXT_CACHE) < _CACHE_CAP:
        _TEXT_CACHE[cache_key] = hit
    return hit


def value_key(value, mode="pinyin"):
    """Sort key of a cell value or group key: numbers by value, then text (``text_key``), then
    booleans; None last. Dates shown as text (``2024-03``) order correctly as text."""
    if value is None:
        return (3, 0, ())
    if isinstance(value, bool):
        return (2, int(value), ())
    if isinstance(value, (int, float)):
        return (0, value, ())
    return (1, 0, text_key(str(value), mode))


def name_key(name, mode="pinyin"):
    """Sort key of a file or folder name."""
    return text_key(name, mode)


__all__ = ["MODES", "MODE_NAMES", "check_mode", "text_key", "value_key", "name_key"]
