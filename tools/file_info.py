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
entries for folders, content_kind/content_detail/extension/suffix_mismatch for files.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit import paths  # noqa: E402
from xlakit import filetools as ft  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402
from xlakit.sniff import sniff  # noqa: E402

READERS = {"read_spreadsheet": ("xlsx", "xlsm", "xlsb", "xls", "et", "ods"),
           "read_document": ("docx", "doc", "wps", "odt", "pdf", "rtf", "pptx", "ppt", "odp"),
           "read_text_file": ("text", "html", "xml")}


def main(params):
    raw = params.get("path")
    path = paths.absolute(raw)
    if not os.path.lexists(path):
        raise ToolError("找不到 %s。请确认路径和文件名%s；相对路径按工作空间 %s 解析" % (
            raw, rt.tool_hint("find_files", "（可先用 find_files 按名字查找）"), paths.workspace_dir()))
    info = ft.file_details(path, sniff=sniff, deadline=rt.deadline)
    kind = info.get("content_kind")
    for tool, kinds in READERS.items():
        if kind in kinds:
            hint = rt.tool_hint(tool, tool)
            if hint:
                info["read_with"] = hint
            break
    if info.get("note"):
        rt.warn(info["note"])
    return info


if __name__ == "__main__":
    rt.run(main)
