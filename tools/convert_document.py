"""convert_document: turn an office file (docx/doc/odt/rtf/wps, xlsx/xls/ods/et/csv, pptx/ppt/odp)
into a PDF with LibreOffice headless.

Why a tool: "发我个 PDF" follows nearly every report, for a file the assistant wrote (a
write_document docx, a write_spreadsheet workbook with its chart) or one the user already has.
A faithful PDF needs a real layout engine, so this asks LibreOffice (free, on every desktop) and,
when it is not installed, says in Chinese how to install it (or to use 另存为 PDF in Word/WPS).
The conversion runs in a private scratch folder with its own LibreOffice profile and a time limit
well under the host's 60 s; the PDF is written through the files layer (atomic, backup of a file
it replaces, the deny list). All of it lives in ``xlakit.documents.pdf_out``.

Parameters:
    path      the source file (workspace-relative names, ~, 桌面/下载/文档 are understood).
    out_path  where the PDF goes; default: the workspace, ``<source name>.pdf`` (``_2``... when
              that name is taken).
    format    "pdf" (the only target for now).

Returns path (the PDF), source, pages, bytes, backup, seconds, and a short Chinese message.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import files, paths  # noqa: E402
from xlakit.documents import pdf_out  # noqa: E402
from xlakit.errors import InputError  # noqa: E402


def main(params):
    if (params.get("format") or "pdf") != "pdf":
        raise InputError("format 目前只能是 pdf")
    source = paths.resolve_read(params.get("path"), "path")
    ext = os.path.splitext(source)[1].lower()
    name = os.path.basename(source)
    if ext == ".pdf":
        raise InputError("「%s」已经是 PDF，不需要转换" % name)
    if ext not in pdf_out.SOURCES:
        raise InputError("「%s」（%s）不是能转换成 PDF 的办公文件。支持 Word（docx/doc/odt/rtf/wps）、Excel（xlsx/xls/ods/et/csv）、"
                         "PowerPoint（pptx/ppt/odp）、txt、html" % (name, ext or "无后缀"))
    pdf_out.check_source(source)
    stem = os.path.splitext(name)[0]
    if params.get("out_path"):
        target = paths.resolve_write(params["out_path"], "out_path")
        if not target.lower().endswith(".pdf"):
            raise InputError("out_path 要以 .pdf 结尾（现在是 %s）" % (os.path.splitext(target)[1] or "无后缀"))
    else:
        target = files.unique_path(os.path.join(paths.workspace_dir(create=True), stem + ".pdf"))
    done = pdf_out.convert(source, target, deadline=rt.deadline, label=name)
    pages = "共 %d 页，" % done["pages"] if done["pages"] else ""
    message = "已把「%s」转换成 PDF「%s」（%s%.1f 秒）" % (name, os.path.basename(target), pages, done["seconds"])
    if done["backup"]:
        message += "；原来的同名 PDF 已备份到 %s" % done["backup"]
    return {"path": target, "source": source, "pages": done["pages"], "bytes": done["bytes"],
            "backup": done["backup"], "seconds": done["seconds"], "message": message + "。"}


if __name__ == "__main__":
    rt.run(main)
