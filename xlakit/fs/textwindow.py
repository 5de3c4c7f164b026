"""read_text_file's line windows: which lines of a text file fit one answer, read without loading
a big file whole (counting lines, reading the tail backwards, streaming the middle).

Split from ``filetools`` (the listing, finding, details and delete checks) along its seam: this part
only reads one text file; ``filetools`` re-exports its names, so callers use either.
"""
import os

from ..errors import InputError, ToolError  # noqa: F401 - used by the windows below
from ..text import human_size  # noqa: F401


def _expired(deadline):
    return deadline is not None and deadline.expired()



WHOLE_FILE_LIMIT = 8 * 1024 * 1024     # files up to this size are read whole
BLOCK = 64 * 1024


def count_lines(path, size, deadline=None):
    """Number of lines (a last line without newline counts); None if the deadline stopped it.
    Counting ``\\n`` bytes is exact for UTF-8 and GB18030 (0x0A never occurs inside a character)."""
    n = cr = 0
    last = b""
    with open(path, "rb") as fh:
        while True:
            if _expired(deadline):
                return None
            block = fh.read(1 << 20)
            if not block:
                break
            n += block.count(b"\n")
            if not n:
                cr += block.count(b"\r")
            last = block
    if size == 0:
        return 0
    if n == 0 and cr:
        return cr + (0 if last.endswith(b"\r") else 1)
    return n + (0 if last.endswith(b"\n") else 1)


def split_lines(text):
    """Lines without their endings (\\r\\n, \\n, \\r); a trailing newline adds no empty line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def newline_style(raw):
    if b"\r\n" in raw:
        return "CRLF"
    if b"\n" in raw:
        return "LF"
    if b"\r" in raw:
        return "CR"
    return None


def tail_bytes(path, size, want_lines, deadline=None, max_bytes=32 << 20):
    """The bytes of the last ``want_lines`` lines, read backwards in 64 KiB blocks from the end
    (at most ``max_bytes``); the result starts at a line start unless one line is longer."""
    with open(path, "rb") as fh:
        if size == 0:
            return b""
        fh.seek(size - 1)
        # A trailing newline ends the last line; it does not start another.
        need = want_lines + (1 if fh.read(1) == b"\n" else 0)
        pos, chunks, newlines, got = size, [], 0, 0
        while pos > 0 and newlines < need and got < max_bytes:
            if _expired(deadline):
                break
            step = min(BLOCK, pos)
            pos -= step
            fh.seek(pos)
            block = fh.read(step)
            chunks.append(block)
            got += step
            newlines += block.count(b"\n")
        data = b"".join(reversed(chunks))
    if pos > 0:                 # drop the partial first line
        cut = data.find(b"\n")
        if cut >= 0:
            data = data[cut + 1:]
    return data


def json_len(s):
    """Characters ``s`` takes inside a JSON string (escapes counted), without building JSON."""
    n = len(s)
    for ch in s:
        if ch in "\"\\\b\f\n\r\t":
            n += 1
        elif ord(ch) < 32:
            n += 5
    return n


# Content kinds that are documents, not text, and the tool that reads them.
DOCUMENT_TOOLS = {"xlsx": "read_spreadsheet", "xlsm": "read_spreadsheet", "xlsb": "read_spreadsheet",
                  "xls": "read_spreadsheet", "et": "read_spreadsheet", "ods": "read_spreadsheet",
                  "docx": "read_document", "doc": "read_document", "wps": "read_document",
                  "odt": "read_document", "pdf": "read_document", "rtf": "read_document",
                  "pptx": "read_document", "ppt": "read_document", "odp": "read_document"}
_WIDE = ("utf-16", "utf-32")
MAX_WIDE_BYTES = 64 << 20          # UTF-16/32 files are decoded whole, up to this size


def _spaced(phrase):
    """``phrase`` with a space before it when it starts with a Latin letter or digit ("是 Excel
    工作簿"), as Chinese typesetting puts one on both sides of a Latin word."""
    return " " + phrase if phrase[:1].isascii() and phrase[:1].isalnum() else phrase


def _check_binary(path, head, codec):
    from .. import sniff as _sniff
    from ..errors import FormatError
    kind = _sniff.sniff(path)
    if kind.kind in DOCUMENT_TOOLS:
        raise FormatError("%s 是%s，不是纯文本文件" % (os.path.basename(path), _spaced(kind.detail)),
                          tool=DOCUMENT_TOOLS[kind.kind])
    if codec.startswith(_WIDE):
        return
    if b"\x00" in head[:BLOCK] or kind.kind in ("png", "jpeg", "gif", "bmp", "tiff", "webp", "zip", "gzip",
                                                 "rar", "7z", "ole"):
        raise ToolError("%s 可能是二进制文件（%s，内容里有空字节），不能按文本读取。"
                        "可以先用 file_info 查看它是什么文件" % (os.path.basename(path), kind.detail))


def _lines_streamed(path, codec, start, count, cap, deadline):
    """Lines ``start``..``start+count-1`` (1-based) of a big file, read only as far as needed,
    each at most ``cap`` characters (the rest of a long line is skipped, its length counted).
    Returns [(text, full_length)] and whether the file goes on after them."""
    import io
    out = []
    with open(path, "rb") as raw:
        fh = io.TextIOWrapper(raw, encoding=codec, errors="replace", newline=None)
        n = 0
        while True:
            if n % 5000 == 0 and _expired(deadline):
                return out, True, True
            piece = fh.readline(cap)
            if piece == "":
                return out, False, False
            length = len(piece)
            ended = piece.endswith("\n")
            while not ended:            # skip the rest of a long line
                more = fh.readline(1 << 20)
                if more == "":
                    break
                length += len(more)
                ended = more.endswith("\n")
            n += 1
            if n >= start:
                line = piece[:-1] if piece.endswith("\n") else piece
                out.append((line, length - (1 if ended else 0)))
                if len(out) >= count:
                    has_more = fh.read(1) != ""
                    return out, has_more, False


def read_window(path, start_line=1, max_lines=1000, tail=False, max_chars=12000, line_numbers=False,
                room=None, encoding=None, deadline=None):
    """A window of lines of a text file, sized to ``max_chars`` characters and ``room`` characters
    of JSON (the caller's output budget).

    Files up to 8 MiB are read and decoded whole; bigger ones are read only as far as the window
    needs (the tail backwards from the end) and their lines counted by scanning bytes. A line longer
    than ``line_cap`` is cut with a marker saying how long it was, so one minified line cannot use
    up the answer; a window of one line may use the whole ``max_chars``."""
    from .. import text as _text
    size = os.path.getsize(path)
    whole = size <= WHOLE_FILE_LIMIT
    with open(path, "rb") as fh:
        head = fh.read(size if whole else (1 << 20))
    if encoding:
        try:
            import codecs
            codecs.lookup(encoding)
        except LookupError:
            raise InputError("不认识的编码 %r。可用 utf-8、gb18030（含 GBK）、utf-16 等，不填则自动判断" % encoding)
        codec, reason = encoding, "按指定的编码 %s 解码" % encoding
    else:
        codec, reason = _text.detect(head)
    _check_binary(path, head, codec)
    if codec.startswith(_WIDE) and not whole:
        if size > MAX_WIDE_BYTES:
            raise ToolError("%s 是 %s 编码的大文件（%s），超过 %s 的处理上限。请先另存为 UTF-8" % (
                os.path.basename(path), _text.label(codec), human_size(size), human_size(MAX_WIDE_BYTES)))
        with open(path, "rb") as fh:
            head = fh.read()
        whole = True
    line_cap = max_chars if max_lines == 1 else max(1000, max_chars // 4)
    total = None
    # Counting the lines of a huge file is a bonus, not worth the user's wait: at most ~10 s.
    count_deadline = deadline.sub(10.0) if hasattr(deadline, "sub") else deadline
    if whole:
        body = head.decode(codec, "replace")
        bad = body.count("\ufffd") - head.decode(codec, "ignore").count("\ufffd") if "\ufffd" in body else 0
        if bad:
            reason += "；有 %d 处无法解码的字节已替换为 �" % bad
        if body.startswith("\ufeff"):
            body = body[1:]
        all_lines = split_lines(body)
        total = len(all_lines)
        if tail:
            first = max(1, total - max_lines + 1)
        else:
            first = start_line
        chosen = all_lines[first - 1:first - 1 + max_lines] if first <= total else []
        picked = [(ln, len(ln)) for ln in chosen]
        more_after = first - 1 + len(picked) < total
    elif tail:
        data = tail_bytes(path, size, max_lines, deadline)
        lines = split_lines(data.decode(codec, "replace"))[-max_lines:]
        picked = [(ln, len(ln)) for ln in lines]
        total = count_lines(path, size, count_deadline)
        first = (total - len(picked) + 1) if total is not None else None
        more_after = False
    else:
        picked, more_after, timed_out = _lines_streamed(path, codec, start_line, max_lines, line_cap + 1, deadline)
        first = start_line
        if timed_out:
            reason += "；读取超时，只返回了已读到的部分"
        total = count_lines(path, size, count_deadline)
    # Cut long lines, then fit into max_chars / room (tail keeps the end, a head read the start).
    lines_cut = 0
    rendered = []
    for i, (line, full) in enumerate(picked):
        number = (first + i) if first is not None else None
        if full > line_cap or len(line) > line_cap:
            line = line[:line_cap] + "…（此行共 %d 字，省略 %d 字）" % (full, full - min(line_cap, len(line)))
            lines_cut += 1
        if line_numbers and number is not None:
            line = "%d| %s" % (number, line)
        rendered.append(line)
    limit_chars = max_chars
    limit_json = room if room is not None else None
    order = range(len(rendered) - 1, -1, -1) if tail else range(len(rendered))
    keep, chars, jchars = [], 0, 0
    cut_by_size = False
    for i in order:
        line = rendered[i]
        add_c, add_j = len(line) + 1, json_len(line) + 2
        if keep and (chars + add_c > limit_chars or (limit_json is not None and jchars + add_j > limit_json)):
            cut_by_size = True
            break
        if not keep:            # the first line always comes, cut to the budget if need be
            budget_c = limit_chars
            if limit_json is not None:
                budget_c = min(budget_c, limit_json // 2)
            if len(line) > budget_c:
                if "省略" not in line:
                    lines_cut += 1
                line = line[:max(0, budget_c - 20)] + "…（此行过长已截断）"
                add_c, add_j = len(line) + 1, json_len(line) + 2
        keep.append(i)
        rendered[i] = line
        chars += add_c
        jchars += add_j
    keep.sort()
    content = "\n".join(rendered[i] for i in keep)
    n = len(keep)
    if first is not None and n:
        start = first + keep[0]
        end = first + keep[-1]
    else:
        start, end = (first if first is not None else None), None
    if tail:
        truncated = start is None or start > 1 or cut_by_size
        next_start = None
    else:
        truncated = cut_by_size or more_after
        next_start = (end + 1) if (truncated and end is not None) else None
    result = {
        "encoding": codec, "encoding_label": _text.label(codec), "encoding_reason": reason,
        "newline": newline_style(head[:BLOCK]), "size": size, "size_text": human_size(size),
        "total_lines": total, "start_line": start, "end_line": end, "returned_lines": n,
        "content": content, "truncated": bool(truncated), "next_start_line": next_start,
        "lines_cut": lines_cut,
    }
    if not whole:
        result["partial_read"] = True
    return result
