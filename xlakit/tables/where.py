"""Conditions (``where``): ``[{"column", "op", "value"}]`` compiled once into a row test.

A condition's value is parsed once (number unless it is identifier text, else date, else text);
cells compare by number, then date, then as normalised text (NFKC, trimmed, case-folded). Cells
that cannot be compared (text in a ``gt 100`` column) do not match and are counted, so the tool
can say how many there were.
"""
import datetime
import unicodedata

from ..errors import ToolError
from .values import (Decimal, INVALID, as_datetime, display_text, is_empty, is_identifier_text, parse_date,
                     to_decimal)

# =============================================================================================
# Conditions

OPS = ("eq", "ne", "contains", "not_contains", "starts_with", "ends_with", "gt", "gte", "lt", "lte",
       "in", "not_in", "empty", "not_empty")
_OP_ALIASES = {"=": "eq", "==": "eq", "equals": "eq", "is": "eq", "!=": "ne", "<>": "ne", "neq": "ne",
               ">": "gt", ">=": "gte", "ge": "gte", "<": "lt", "<=": "lte", "le": "lte",
               "like": "contains", "包含": "contains", "不包含": "not_contains", "等于": "eq", "不等于": "ne",
               "大于": "gt", "大于等于": "gte", "小于": "lt", "小于等于": "lte", "为空": "empty",
               "不为空": "not_empty", "非空": "not_empty", "is_empty": "empty", "notempty": "not_empty",
               "nin": "not_in", "startswith": "starts_with", "endswith": "ends_with"}
OPS_HELP = ("eq 等于 / ne 不等于 / contains 包含 / not_contains 不包含 / starts_with 开头是 / ends_with 结尾是 / "
            "gt 大于 / gte 大于等于 / lt 小于 / lte 小于等于 / in 在列表中 / not_in 不在列表中 / "
            "empty 为空 / not_empty 非空")


MEMO_CAP = 50000             # distinct text/date cells whose verdict a condition remembers
_MEMO_CLASSES = frozenset([str, datetime.date, datetime.datetime])
UNCOMPARABLE = object()      # a verdict: the cell cannot be compared (no match, counted)


def _norm_text(value):
    return unicodedata.normalize("NFKC", display_text(value)).strip().casefold()


class _Operand(object):
    """A condition's value, pre-parsed once: number (unless identifier text), date, text."""

    def __init__(self, value):
        self.raw = value
        self.number = None
        self.date = None
        if not isinstance(value, bool) and not is_identifier_text(value):
            number = to_decimal(value)
            self.number = number if isinstance(number, Decimal) else None
        try:
            self.near = float(self.number) if self.number is not None else None   # the nearest float
        except (ValueError, OverflowError):
            self.near = None
        if self.number is None:
            self.date = parse_date(value, compact=False)
        # 20240301 given as a number still means a day when the cell is a real date
        self.compact_date = parse_date(value, compact=True) if self.number is not None else None
        self.text = _norm_text(value)
        self.date_only = self.date is not None and self.date.__class__ is datetime.date


def _cell_vs(operand, cell):
    """-1/0/1 comparing ``cell`` to ``operand`` by number, then date; None when not comparable."""
    if operand.number is not None:
        if cell.__class__ is float and cell - cell == 0.0 and cell != operand.near and operand.near is not None:
            # a finite float that is not the operand's nearest float: the float order is the
            # order of the decimals they stand for (rounding to nearest is monotonic), so the
            # exact ``Decimal(repr(cell))`` comparison below would give the same answer
            return (cell > operand.near) - (cell < operand.near)
        if is_identifier_text(cell):
            return None
        n = to_decimal(cell)
        if n is None or n is INVALID:
            if operand.compact_date is not None and cell.__class__ in (datetime.date, datetime.datetime):
                d = cell.date() if cell.__class__ is datetime.datetime else cell
                return (d > operand.compact_date) - (d < operand.compact_date)
            return None
        return (n > operand.number) - (n < operand.number)
    if operand.date is not None:
        d = parse_date(cell, compact=True)
        if d is None:
            return None
        if operand.date_only:
            d = d.date() if d.__class__ is datetime.datetime else d
            return (d > operand.date) - (d < operand.date)
        d = as_datetime(d)
        return (d > operand.date) - (d < operand.date)
    return None


class Where(object):
    """Compiled ``where`` list: ``where.match(values)`` is True when every condition holds.

    ``uncomparable`` counts, per condition, cells that could not be compared (e.g. text in a
    ``gt 100`` column): such rows do not match, and ``warnings()`` says how many there were."""

    def __init__(self, table, where, param="where"):
        self.conditions = []
        self.uncomparable = []
        if where is None:
            where = []
        if isinstance(where, dict):
            where = [where]
        if not isinstance(where, list):
            raise ToolError("参数 %s 应是条件数组，例如 [{\"column\":\"金额\",\"op\":\"gt\",\"value\":100}]" % param)
        for i, cond in enumerate(where):
            where_i = "%s[%d]" % (param, i)
            if not isinstance(cond, dict):
                raise ToolError("%s 应是对象，例如 {\"column\":\"金额\",\"op\":\"gt\",\"value\":100}，收到的是 %r" % (
                    where_i, cond))
            column = table.column(cond.get("column"), where_i + ".column")
            op_raw = cond.get("op", "eq")
            op = _OP_ALIASES.get(str(op_raw).strip().lower(), str(op_raw).strip().lower())
            if op not in OPS:
                raise ToolError("%s.op 不支持 %r。可用：%s" % (where_i, op_raw, OPS_HELP))
            value = cond.get("value")
            if op in ("in", "not_in"):
                if not isinstance(value, list):
                    if value is None:
                        raise ToolError("%s：op=%s 需要 value 为数组，例如 [\"北京\",\"上海\"]" % (where_i, op))
                    value = [value]
                operand = [_Operand(v) for v in value]
            elif op in ("empty", "not_empty"):
                operand = None
            else:
                if value is None or isinstance(value, (list, dict)):
                    raise ToolError("%s：op=%s 需要一个 value（数字、文字或日期），例如 {\"column\":\"%s\",\"op\":\"%s\","
                                       "\"value\":100}" % (where_i, op, column.name, op))
                operand = _Operand(value)
                if op in ("gt", "gte", "lt", "lte") and operand.number is None and operand.date is None:
                    pass                         # text comparison (lexicographic), allowed
            self.conditions.append((column.index, op, operand, column.name))
            self.uncomparable.append(0)
        self.test = self._build()

    def _build(self):
        tests = []
        for i, (idx, op, operand, _name) in enumerate(self.conditions):
            tests.append(self._one(i, idx, op, operand))
        if not tests:
            return lambda values: True
        if len(tests) == 1:
            return tests[0]
        if len(tests) == 2:                     # the common case, without a generator per row
            first, second = tests
            return lambda values: first(values) and second(values)
        return lambda values: all(t(values) for t in tests)

    def _one(self, i, idx, op, operand):
        """The row test of condition ``i``: its cell judged by ``_judge``; text and date cells
        are judged once per distinct value (the same 区域 / 日期 repeat down a column), numbers
        every time (1 == 1.0 == True as dict keys, and most amounts are distinct anyway)."""
        uncomparable = self.uncomparable
        judge = self._judge(op, operand)
        memo = {}

        def test(values):
            value = values[idx] if idx < len(values) else None
            if value.__class__ in _MEMO_CLASSES:
                verdict = memo.get(value)
                if verdict is None:
                    verdict = judge(value)
                    if len(memo) < MEMO_CAP:
                        memo[value] = verdict
            else:
                verdict = judge(value)
            if verdict is UNCOMPARABLE:
                uncomparable[i] += 1
                return False
            return verdict
        return test

    @staticmethod
    def _judge(op, operand):
        """cell -> True / False / UNCOMPARABLE (does not match, and is counted) for one condition."""
        if op == "empty":
            return is_empty
        if op == "not_empty":
            return lambda value: not is_empty(value)
        if op in ("eq", "ne"):
            want = op == "eq"
            return lambda value: _equals(operand, value) == want
        if op in ("in", "not_in"):
            want = op == "in"
            return lambda value: any(_equals(o, value) for o in operand) == want
        if op in ("contains", "not_contains", "starts_with", "ends_with"):
            needle = operand.text
            if op == "contains":
                return lambda value: needle in _norm_text(value)
            if op == "not_contains":
                return lambda value: needle not in _norm_text(value)
            if op == "starts_with":
                return lambda value: _norm_text(value).startswith(needle)
            return lambda value: _norm_text(value).endswith(needle)
        accept = {"gt": (1,), "gte": (0, 1), "lt": (-1,), "lte": (-1, 0)}[op]

        def compare(value):
            if is_empty(value):
                return False
            if operand.number is None and operand.date is None:
                text = _norm_text(value)
                return ((text > operand.text) - (text < operand.text)) in accept
            result = _cell_vs(operand, value)
            if result is None:
                return UNCOMPARABLE
            return result in accept
        return compare

    def match(self, values):
        return self.test(values)

    def warnings(self):
        out = []
        for (idx, op, operand, name), n in zip(self.conditions, self.uncomparable):
            if n:
                kind = "数字" if operand.number is not None else "日期"
                out.append("条件「%s %s %s」：有 %d 行的「%s」不是%s，无法比较，按不满足处理" % (
                    name, op, display_text(operand.raw), n, name, kind))
        return out


def _equals(operand, value):
    if is_empty(value):
        return operand.text == ""
    if operand.number is not None and not is_identifier_text(value):
        if value.__class__ is float and value - value == 0.0 and value != operand.near and operand.near is not None:
            return False                   # see _cell_vs: not the operand's float, not its number
        n = to_decimal(value)
        if isinstance(n, Decimal):
            return n == operand.number
        if operand.compact_date is not None and value.__class__ in (datetime.date, datetime.datetime):
            return (value.date() if value.__class__ is datetime.datetime else value) == operand.compact_date
    elif operand.date is not None:
        d = parse_date(value, compact=True)
        if d is not None:
            if operand.date_only:
                return (d.date() if d.__class__ is datetime.datetime else d) == operand.date
            return as_datetime(d) == operand.date
    return _norm_text(value) == operand.text


def compile_where(table, where, param="where"):
    """``Where`` for a list of ``{"column", "op", "value"}`` (see ``OPS_HELP``)."""
    return Where(table, where, param)

