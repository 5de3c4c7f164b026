"""convert_document: turn an office file (docx/doc/odt/rtf/wps, xlsx/xls/ods/et/csv, pptx/ppt/odp)
into a PDF with LibreOffice headless; a text document (WordPerfect .wpd and Word 1.0/2.0 .doc
among them) also into .docx or .odt.

Why a tool: "发我个 PDF" follows nearly every report, for a file the assistant wrote (a
write_document docx, a write_spreadsheet workbook with its chart) or one the user already has.
A faithful PDF needs a real layout engine, so this asks LibreOffice (free, on every desktop) and,
when it is not installed, says in Chinese how to install it (or to use 另存为 PDF in Word/WPS).
WordPerfect and Word 1.0/2.0 files (issue 36): read_document reads them through LibreOffice, and
the next thing a user wants is a file Word/WPS opens, so they convert like any Word file (to PDF,
or to .docx / .odt); without LibreOffice the message names the programs that open them.
The conversion runs in a private scratch folder with its own LibreOffice profile and a time limit
well under the host's 60 s; the result is written through the files layer (atomic, backup of a
file it replaces, the deny list). All of it lives in ``xlakit.documents.pdf_out``.

Parameters:
    path      the source file (workspace-relative names, ~, 桌面/下载/文档 are understood).
    out_path  where the result goes; default: the workspace, ``<source name>.<format>`` (``_2``...
              when that name is taken).
    format    "pdf" (default); "docx" or "odt" for text documents (Word, WordPerfect, RTF, WPS).

Returns path (the new file), source, format, pages (PDF), bytes, backup, seconds, and a short
Chinese message.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import files, paths  # noqa: E402
from xlakit.documents import pdf_out  # noqa: E402
from xlakit.errors import InputError  # noqa: E402

FORMATS = ("pdf", "docx", "odt")


def main(params):
    fmt = (params.get("format") or "pdf").lower().lstrip(".")
    if fmt not in FORMATS:
        raise InputError("format 只能是 pdf、docx 或 odt（现在是 %s）" % fmt)
    source = paths.resolve_read(params.get("path"), "path")
    ext = os.path.splitext(source)[1].lower()
    name = os.path.basename(source)
    if ext == "." + fmt:
        raise InputError("「%s」已经是 %s，不需要转换" % (name, fmt.upper()))
    if ext == ".pdf":
        raise InputError("「%s」是 PDF，不能转换成 %s（要读其中的文字用 read_document）" % (name, fmt))
    if ext not in pdf_out.SOURCES:
        raise InputError("「%s」（%s）不是能转换的办公文件。支持 Word（docx/doc/odt/rtf/wps，以及 WordPerfect 的 wpd）、"
                         "Excel（xlsx/xls/ods/et/csv）、PowerPoint（pptx/ppt/odp）、txt、html" % (name, ext or "无后缀"))
    if fmt != "pdf" and ext not in pdf_out.WRITER_SOURCES:
        raise InputError("「%s」不是文字文档，只能转换成 PDF；转成 docx/odt 只支持 Word、WordPerfect、RTF、WPS 文档" % name)
    kind = pdf_out.check_source(source, fmt.upper())
    stem = os.path.splitext(name)[0]
    if params.get("out_path"):
        target = paths.resolve_write(params["out_path"], "out_path")
        if not target.lower().endswith("." + fmt):
            raise InputError("out_path 要以 .%s 结尾（现在是 %s）" % (fmt, os.path.splitext(target)[1] or "无后缀"))
    else:
        target = files.unique_path(os.path.join(paths.workspace_dir(create=True), stem + "." + fmt))
    done = pdf_out.convert(source, target, deadline=rt.deadline, label=name, fmt=fmt, legacy=pdf_out.legacy_kind(kind))
    pages = "共 %d 页，" % done["pages"] if done["pages"] else ""
    message = "已把「%s」转换成 %s「%s」（%s%.1f 秒）" % (name, fmt.upper(), os.path.basename(target), pages, done["seconds"])
    if done["backup"]:
        message += "；原来的同名文件已备份到 %s" % done["backup"]
    return {"path": target, "source": source, "format": fmt, "pages": done["pages"], "bytes": done["bytes"],
            "backup": done["backup"], "seconds": done["seconds"], "message": message + "。"}


if __name__ == "__main__":
    rt.run(main)
