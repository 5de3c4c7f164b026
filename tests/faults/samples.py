"""The users' files the fault tests start from, and the ``@name`` / ``~name`` shorthand of their
scenario tables (``@x`` is ``x`` in the work folder in a tool's arguments; a file name ``~x``
lives in ``~/.xla/workspace``, ``x`` in the work folder)."""
import csv
import io
import os
import tempfile

from . import harness


def csv_bytes(rows=5):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(["日期", "客户", "金额"])
    for i in range(rows):
        w.writerow(["2024-09-%02d" % (i % 28 + 1), "客户%d" % (i % 7), 100 + i])
    return buf.getvalue().encode("utf-8-sig")


def xlsx_bytes(rows=5):
    import openpyxl
    wb = openpyxl.Workbook(write_only=rows > 1000)
    ws = wb.create_sheet("Sheet") if rows > 1000 else wb.active
    ws.append(["日期", "客户", "金额"])
    for i in range(rows):
        ws.append(["2024-09-%02d" % (i % 28 + 1), "客户%d" % (i % 7), 100 + i])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def made_by(tool, name, args):
    """A file made by one of our own tools (a Word document, an .xls), so the appends go onto a
    real one: ``args`` without the path, which goes to ``name`` in a scratch folder."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, name)
        code, o, e, _ = harness.spawn(tool, dict(args, path=out), scratch)
        assert code == 0, (o, e)
        with open(out, "rb") as fh:
            return fh.read()


def docx_bytes(paragraphs=1):
    text = "# 原有的标题\n\n" + "\n\n".join("原有的第%d段，写一些内容让文件大一点。" % (i + 1) for i in range(paragraphs))
    return made_by("write_document", "底稿.docx", {"text": text})


def resolve(value, work):
    if isinstance(value, str) and value.startswith("@"):
        return os.path.join(str(work), value[1:])
    if isinstance(value, dict):
        return {k: resolve(v, work) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, work) for v in value]
    return value


def place(home, work, name):
    if name.startswith("~"):
        return home / ".xla" / "workspace" / name[1:]
    return work / name
