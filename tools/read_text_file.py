"""read_text_file: a window of lines of any text file (log, json, csv, md, code, html...).

Why a tool: text files come in UTF-8, UTF-8 with BOM, GBK/GB18030 (Chinese Windows "ANSI") and
UTF-16; a reader that assumes UTF-8 hands the model mojibake. Logs are huge and the interesting part
is the end. A minified JS file or a one-line JSON is one enormous line. So: the encoding is detected
(and reported with the reason), a NUL byte means binary (documents are pointed to their reader),
the window is start_line/max_lines from the top or the last max_lines with ``tail``, files over
8 MiB are read only as far as needed (the tail backwards in blocks), each long line is cut with a
marker saying how long it was, and the answer never exceeds the output cap.

Parameters: path (required), start_line (1-based, default 1; past the end gives an empty window),
max_lines (default 1000, at most 5000), tail (the last max_lines lines), max_chars (default 12000,
at most 16000), line_numbers (prefix ``N| ``), encoding (force one; default automatic).

Returns: path, encoding (codec), encoding_label, encoding_reason, newline, size, size_text,
total_lines, start_line, end_line (1-based, inclusive), returned_lines, content, truncated,
next_start_line (where to continue), lines_cut.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.fs import filetools as ft  # noqa: E402

MAX_LINES = 5000
MAX_CHARS = 16000


def main(params):
    path = paths.resolve_read(params.get("path"), want="file")
    params.setdefault("start_line", 1)
    params.setdefault("max_lines", 1000)
    params.setdefault("max_chars", 12000)
    max_lines = rt.clamp(params, "max_lines", MAX_LINES, 1)
    max_chars = rt.clamp(params, "max_chars", MAX_CHARS, 200)
    start = rt.clamp(params, "start_line", None, 1)
    tail = bool(params.get("tail"))
    if tail and start != 1:
        rt.warn("tail=true 时读取文件末尾，start_line 已忽略")
    base = {"path": path, "encoding": "", "encoding_label": "", "encoding_reason": "x" * 80, "newline": "CRLF",
            "size": 0, "size_text": "000.0MB", "total_lines": 10 ** 9, "start_line": 10 ** 9, "end_line": 10 ** 9,
            "returned_lines": 5000, "truncated": True, "next_start_line": 10 ** 9, "lines_cut": 5000,
            "partial_read": True, "content": ""}
    room = rt.budget(base, reserve=400)
    out = ft.read_window(path, start_line=start, max_lines=max_lines, tail=tail, max_chars=max_chars,
                         line_numbers=bool(params.get("line_numbers")), room=room,
                         encoding=params.get("encoding") or None, deadline=rt.deadline)
    result = {"path": path}
    result.update(out)
    total = out["total_lines"]
    if not tail and total is not None and start > total:
        rt.warn("文件只有 %d 行，第 %d 行之后没有内容" % (total, start))
    if out["lines_cut"]:
        rt.warn("有 %d 行太长，已截断显示；要看一整行长内容可用 max_lines=1、max_chars=%d 单独读那一行"
                % (out["lines_cut"], MAX_CHARS))
    if out["next_start_line"]:
        rt.warn("还有更多内容：用 start_line=%d 继续读取" % out["next_start_line"])
    if tail and out["truncated"] and out["start_line"] and out["start_line"] > 1:
        prev = max(1, out["start_line"] - max_lines)
        result["previous_start_line"] = prev
    return result


if __name__ == "__main__":
    rt.run(main)
