"""Matching keys the way people mean them: the one key normalisation behind lookup_table and
dedupe_table (and anything else that asks "is this the same 编号 / 姓名 / 单号?").

Why a module of its own: a VLOOKUP that misses because one table has ``"1001 "`` and the other
``1001``, or ``１００１`` typed with a Chinese input method, or a zero-width space pasted from a web
page, is the most common reason people distrust a lookup. The same rules must decide what a
duplicate is, so ``张三 `` and ``张三`` are one person in both tools.

``norm_key(value)`` gives a canonical *text* (or None for an empty cell):

- invisible characters (zero-width spaces and joiners, BOM, soft hyphen, word joiner) are
  removed; NBSP, full-width and other Unicode spaces count as spaces; the text is trimmed and
  inner runs of spaces become one space;
- full-width ASCII (``１００１``, ``ＡＢ``, ``－``) becomes half-width;
- letters are compared without case unless ``case_sensitive`` (``ab01`` = ``AB01``);
- numbers: the number ``1001``, the float ``1001.0`` and the texts ``"1001"`` / ``"1001.0"`` all
  give ``"1001"``. Text goes through ``Decimal`` (never a float), so long digit strings (ID-card,
  bank-card, order numbers) and codes with a leading zero (``007``) are kept exactly as typed and
  compared as text: ``007`` is not ``7``;
- dates (cells or date text such as ``2024/3/1``) give ``YYYY-MM-DD`` (with the time when not
  midnight), so a date cell matches the same date typed as text;
- ``TRUE`` / ``FALSE`` for booleans.

A number cell of 16+ digits has already lost its last digits inside Excel (15 significant
digits): ``lossy_number`` tells the tools to warn that it cannot match the ID text exactly.
Pure functions; no file access, no runtime.
"""
import datetime
import decimal
import re

from .values import display, is_identifier_text, parse_date

Decimal = decimal.Decimal

_INVISIBLE = "\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u00ad\u180e\u2061\u2062\u2063\u2064"
_SPACES = "\u00a0\u3000\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\t\r\n\x0b\x0c"
_TRANSLATE = {ord(ch): None for ch in _INVISIBLE}
_TRANSLATE.update({ord(ch): " " for ch in _SPACES})
_TRANSLATE.update({cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)})     # full-width ASCII -> ASCII
_INNER_SPACES = re.compile(r" {2,}")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)\Z", re.ASCII)
_MEMO_CAP = 200000
_EXACT_FLOAT = 2 ** 53


def clean_text(text):
    """Text with invisible characters removed, every kind of space made ASCII, full-width ASCII
    made half-width, trimmed, inner space runs collapsed (no case change)."""
    text = text.translate(_TRANSLATE).strip()
    if "  " in text:
        text = _INNER_SPACES.sub(" ", text)
    return text


def spelling_key(text):
    """What is left of a text once spaces (anywhere, any width), invisible characters and the
    full/half-width difference are taken out: two category values with the same spelling key
    differ only in ways a reader does not see (``"C001 "``, ``"Ｃ００１"``, ``"C 001"``)."""
    return clean_text(text).replace(" ", "")


def _decimal_text(number):
    """Canonical text of a Decimal: no exponent, no trailing zeros, ``-0`` -> ``0``."""
    if number == 0:
        return "0"
    number = number.normalize()
    text = format(number, "f")
    return text


def _number_key(value):
    cls = value.__class__
    if cls is int:
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if value.is_integer() and abs(value) < _EXACT_FLOAT:
        return str(int(value))
    return _decimal_text(Decimal(repr(value)))


def _text_key(text, fold):
    text = clean_text(text)
    if not text:
        return None
    if text.isdigit() and text.isascii():
        return text                          # 1001, 007, 110101199001011234: exactly as typed
    if _PLAIN_NUMBER.match(text) and not is_identifier_text(text):
        number = Decimal(text)
        digits = len(number.as_tuple().digits)
        if digits <= 40:
            return _decimal_text(number)
    if len(text) >= 8 and text[0].isdigit():
        day = parse_date(text)
        if day is not None:
            return display(day)
    return text.casefold() if fold else text


class KeyMaker(object):
    """``KeyMaker(case_sensitive=False)``: ``key(value)`` -> canonical text or None; ``row_key(values,
    indexes)`` -> a tuple (None when every part is empty). Text results are memoised, because the
    same names and codes repeat down a column. Counts lossy long numbers in ``lossy`` (with up to
    3 ``lossy_examples``) so the tool can warn."""

    def __init__(self, case_sensitive=False):
        self.fold = not case_sensitive
        self.memo = {}
        self.lossy = 0
        self.lossy_examples = []

    def key(self, value):
        cls = value.__class__
        if cls is str:
            memo = self.memo
            hit = memo.get(value, memo)
            if hit is not memo:
                return hit
            hit = _text_key(value, self.fold)
            if len(memo) < _MEMO_CAP:
                memo[value] = hit
            return hit
        if value is None:
            return None
        if cls is int or cls is float:
            if cls is float and abs(value) >= 1e15 and value == value:
                self.lossy += 1
                if len(self.lossy_examples) < 3:
                    self.lossy_examples.append(display(value))
            return _number_key(value)
        if cls is bool:
            return "TRUE" if value else "FALSE"
        if isinstance(value, (datetime.date, datetime.time)):
            return display(value)
        if isinstance(value, Decimal):
            return _decimal_text(value)
        if isinstance(value, (int, float)):
            return _number_key(float(value) if isinstance(value, float) else int(value))
        return self.key(str(value))

    def row_key(self, values, indexes):
        n = len(values)
        key = self.key
        if len(indexes) == 1:                   # the common shapes, without a generator per row
            i = indexes[0]
            parts = (key(values[i]) if i < n else None,)
            return None if parts[0] is None else parts
        if len(indexes) == 2:
            i, j = indexes
            parts = (key(values[i]) if i < n else None, key(values[j]) if j < n else None)
            return None if parts[0] is None and parts[1] is None else parts
        parts = tuple([key(values[i]) if i < n else None for i in indexes])
        for part in parts:
            if part is not None:
                return parts
        return None

    def lossy_note(self, where):
        """Chinese warning about 16+ digit number cells (None when there were none)."""
        if not self.lossy:
            return None
        return ("%s有 %d 个 16 位以上的数字单元格（如 %s）：Excel 只保留 15 位有效数字，末几位已经变成 0，"
                "无法和文本形式的编号精确对上。请在原系统里把该列导出为文本，或在 Excel 里设为文本格式后重新录入" % (
                    where, self.lossy, "、".join(str(x) for x in self.lossy_examples)))


def norm_key(value, case_sensitive=False):
    """One cell -> canonical key text or None (see the module docstring)."""
    return KeyMaker(case_sensitive).key(value)


def show_key(parts):
    """A key tuple as a person reads it: one part as itself, several joined with " | "."""
    if parts is None:
        return None
    if len(parts) == 1:
        return parts[0]
    return " | ".join("" if p is None else p for p in parts)


def strip_zeros(key):
    """``007`` -> ``7`` (for the "did you mean" hint when codes lost their leading zeros)."""
    if key and key.isdigit() and key.isascii() and key[0] == "0" and len(key) < 12:
        return key.lstrip("0") or "0"
    return key
