"""file_info: everything about one file, folder or link without opening it as a document.

Why a tool: before reading, overwriting or deleting, the model needs to know what a path really is:
its type, size (bytes and 3.1KB-style), times, permissions as ``-rw-r--r--`` and ``0o644``, owner and
group (names on Unix, numeric ids elsewhere), whether this user may read or write it, whether it is
a link (described with lstat, never followed, its target named) and - for files - what the bytes
say it is (xlsx/docx/pdf/xls/...), because suffixes lie: a ``.xls`` that is really HTML, an
``.xlsx`` that is really an old binary workbook.

Parameters: path (required; ``~``, 桌面/下载 and workspace-relative names work; a broken link is
still described).

Returns: name, path, type file/dir/symlink/other, size, size_text, modified, created (null where the
OS does not record it), accessed, changed (POSIX), permissions, mode_octal, owner, group, uid, gid,
readable, writable, executable, hidden, is_symlink, link_target/real_path/target_type for links,
entries for folders, content_kind/content_detail/extension/suffix_mismatch for files, and read_with:
the tool that reads it, chosen by the readers' own content sniffing (an HTML or SpreadsheetML ".xls",
a .fods, a GBK csv -> read_spreadsheet; see ``reader_for``).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.fs import filetools as ft  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402
from xlakit.sniff import sniff  # noqa: E402

READERS = {"read_spreadsheet": ("xlsx", "xlsm", "xlsb", "xls", "et", "ods"),
           "read_document": ("docx", "doc", "wps", "odt", "pdf", "rtf", "pptx", "ppt", "odp"),
           "read_text_file": ("text", "html", "xml")}
TABLE_SUFFIXES = (".csv", ".tsv", ".xls", ".xlsx", ".et", ".ods", ".fods")


def reader_for(path, kind):
    """The tool that reads this file, by the same content sniffing the readers use: markup and
    text go to read_spreadsheet when the table readers take them (SpreadsheetML 2003, flat ODS,
    an HTML page with a <table> such as a system's ".xls" export, delimited text in any encoding
    with a table suffix or a consistent delimiter), otherwise to read_text_file."""
    for tool, kinds in READERS.items():
        if kind in kinds:
            break
    else:
        return None
    if tool != "read_text_file":
        return tool
    from xlakit.tables import formats
    try:
        table_kind = formats.sniff(path)
    except (formats.FormatError, OSError):
        return tool
    if table_kind in ("spreadsheetml", "fods"):
        return "read_spreadsheet"
    if table_kind == "html":
        # a web page with a table is a spreadsheet only when it is named like one (.xls export);
        # a saved .html article with a layout table is read as text
        return "read_spreadsheet" if path.lower().endswith(TABLE_SUFFIXES) else tool
    if table_kind == "csv" and (path.lower().endswith(TABLE_SUFFIXES) or _delimited(path)):
        return "read_spreadsheet"
    return tool


def _delimited(path):
    """True when the first lines of a text file are records: the delimiter the csv reader would
    pick splits at least 3 of 4 non-blank lines (and at least two) into the same 2+ fields."""
    import csv
    import io
    from xlakit import text as xtext
    from xlakit.tables.formats.delimited import sniff_delimiter
    try:
        with open(path, "rb") as fh:
            raw = fh.read(65536)
    except OSError:
        return False
    sample = xtext.decode_prefix(raw, xtext.detect_encoding(raw), "replace").lstrip("\ufeff")
    lines = [ln for ln in sample.splitlines()[:40] if ln.strip()]
    if len(lines) < 2:
        return False
    delim = sniff_delimiter("\n".join(lines))
    counts = [len(rec) for rec in csv.reader(io.StringIO("\n".join(lines)), delimiter=delim) if rec]
    if not counts:
        return False
    best = max(set(counts), key=counts.count)
    return best >= 2 and counts.count(best) >= max(2, 0.75 * len(counts))


def main(params):
    raw = params.get("path")
    path = paths.absolute(raw)
    if not os.path.lexists(path):
        raise ToolError("找不到 %s。请确认路径和文件名%s；相对路径按工作空间 %s 解析" % (
            raw, rt.tool_hint("find_files", "（可先用 find_files 按名字查找）"), paths.workspace_dir()))
    info = ft.file_details(path, sniff=sniff, deadline=rt.deadline)
    tool = reader_for(path, info.get("content_kind")) if info.get("type") != "dir" else None
    if tool:
        hint = rt.tool_hint(tool, tool)
        if hint:
            info["read_with"] = hint
    if info.get("note"):
        rt.warn(info["note"])
    return info


if __name__ == "__main__":
    rt.run(main)
