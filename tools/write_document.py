"""write_document: write markdown-style text into a real Word document (.docx).

Why a tool: a user asking for "a report in Word" wants a file that opens in Word, WPS and
LibreOffice with real heading styles (navigation pane, table of contents), bold, lists and bordered
tables, in Chinese fonts on A4, not a .txt renamed .docx. The OOXML is written by hand
(xlakit.documents.docx_write, no third-party library).

Parameters:
    path   target, .docx (or .pdf); a bare name goes to the workspace ~/.xla/workspace.
    text   the content: blank lines between paragraphs; ``#``..``######`` headings, ``**粗体**``,
           ``*斜体*``, ``-``/``1.`` lists, ``|`` tables, ``---`` a horizontal rule, ``\\newpage`` a
           page break, ``![说明](图片){width=60%}`` a picture with a numbered caption, ``[TOC]`` a
           table of contents, ``<!-- landscape -->`` / ``<!-- portrait -->`` a section turned.
    mode   "overwrite" (default: a new document replaces the file) or "append" (added at the end of
           the existing document; everything already in it, images, tables, headers, section
           settings, comments, is kept byte-for-byte).
    page_numbers, header, style ("default" | "gongwen": GB/T 9704-2012), orientation: the page
           furniture of a new document (``xlakit.documents.docx_layout``).
    gongwen {issuer, number, signer, signature, date, cc, printer, print_date}: the 公文's 红头,
           署名/成文日期 and 版记 (``xlakit.documents.gongwen``); implies style gongwen.
    format "docx" (default) or "pdf" (a path ending in .pdf means pdf too): the document is
           written and checked as a docx in a scratch folder and LibreOffice headless turns it
           into the PDF (``xlakit.documents.pdf_out``; a Chinese message says how to install
           LibreOffice when it is missing). Not with append.

    preview true: the answer also holds a PNG of the first page (``images``) and ``preview`` facts:
           pages, the fonts the PDF embeds, characters running off a page (``xlakit.documents.preview``;
           a docx is looked at through LibreOffice's PDF of it in a scratch folder).

Every write is atomic, the previous file is backed up (~/.xla/backup), and the result is read
back with read_document's converter: every paragraph written must be there, else a clear error.
Returns path, mode, action, counts of headings/paragraphs/list items/tables, backup, message
(pdf: format, pages, bytes).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit import documents  # noqa: E402
from xlakit.fs import paths, files  # noqa: E402
from xlakit.documents import docx_layout, docx_media, docx_write, gongwen, pdf_out, preview  # noqa: E402
from xlakit.errors import InputError, ToolError, FormatError  # noqa: E402
from xlakit.sniff import sniff  # noqa: E402

MAX_EXISTING = 200 << 20


def _norm(text):
    text = re.sub(r"【[^】]{1,20}】", "", text)
    return re.sub(r"[\s#|*`>\-•]+", "", text)


def _expected(blocks):
    """Plain text of every written block, in order, as read_document gives it back."""
    for block in blocks:
        kind = block[0]
        if kind in ("h", "p", "quote"):
            yield docx_write.plain(block[2] if kind == "h" else block[1])
        elif kind == "li":
            yield docx_write.plain(block[3])
        elif kind == "table":
            for row in block[1]:
                for cell in row:
                    yield docx_write.plain(cell)
        elif kind == "img" and block[1]:
            yield block[1]              # the caption (图 N 说明): the number is a field, the text is checked


def _pictures(blocks, target):
    """Every picture the text names, read and checked before anything is written. A relative path
    is looked up in the workspace (where draw_chart saves), then next to the document."""
    out = {}
    for block in blocks:
        if block[0] != "img" or block[2] in out:
            continue
        shown = block[2]
        beside = os.path.join(os.path.dirname(target), os.path.expanduser(shown))
        try:
            real = paths.resolve_read(shown, param="图片路径")
        except ToolError as exc:
            if os.path.isabs(os.path.expanduser(shown)) or not os.path.isfile(beside):
                missing = "找不到" in str(exc)
                raise ToolError("图片「%s」（![%s](%s)）%s。文档没有写入" % (
                    shown, block[1], shown,
                    "找不到：工作空间 %s 和文档所在的文件夹里都没有这个文件。请确认路径，或先用 draw_chart 生成图表图片"
                    % paths.workspace_dir() if missing else "无法读取：%s" % exc))
            real = paths.resolve_read(beside, param="图片路径")
        try:
            out[shown] = docx_media.load(real, shown)
        except FormatError as exc:
            raise ToolError("%s。文档没有写入" % exc)
    return out


def _layout(params, mode):
    style = params.get("style") or "default"
    if style not in ("default", "gongwen"):
        raise InputError("style 只能是 default（普通文档）或 gongwen（党政机关公文格式 GB/T 9704-2012），现在是 %r" % style)
    orientation = params.get("orientation") or "portrait"
    if orientation not in ("portrait", "landscape"):
        raise InputError("orientation 只能是 portrait（纵向）或 landscape（横向），现在是 %r" % orientation)
    header = params.get("header")
    if header is not None and not isinstance(header, str):
        raise InputError("header 是页眉文字，要给一个字符串")
    page_numbers = params.get("page_numbers")
    if page_numbers is not None and not isinstance(page_numbers, bool):
        raise InputError("page_numbers 只能是 true 或 false")
    if mode == "append" and (style != "default" or header or page_numbers or orientation != "portrait"):
        raise InputError("header、page_numbers、style、orientation 只在新建文档时设置；追加（mode=append）沿用原文档的"
                         "页面、页眉页脚和格式。要横向页面请在 text 里写单独一行 <!-- landscape -->")
    header = docx_write.strip_invalid(header.strip())[0] if header else None
    parts = params.get("gongwen")
    if parts is not None:
        problem = gongwen.check(parts)
        if problem:
            raise InputError(problem)
        if mode == "append":
            raise InputError("gongwen（红头、署名、版记）只在新建文档时设置")
        style = "gongwen"
        parts = dict((k, docx_write.strip_invalid(v.strip())[0]) for k, v in parts.items() if v and v.strip())
    return docx_layout.Layout(style=style, orientation=orientation, header=header, page_numbers=bool(page_numbers),
                              gongwen_parts=parts)


def _verify(path, blocks, appended):
    try:
        doc = documents.read(path)
    except FormatError as exc:
        raise ToolError("写入前读回校验失败：生成的文档无法解析（%s），所以没有保存，原文件没有改动。请重试或换个文件名" % exc)
    got = _norm(doc.text)
    pos = 0
    for piece in _expected(blocks):
        want = _norm(piece)
        if not want:
            continue
        found = got.find(want, pos)
        if found < 0:
            raise ToolError("写入前读回校验失败：生成的文档里找不到这段内容「%s」，所以没有保存，原文件没有改动。请重试" % piece[:40])
        pos = found + len(want)
    return doc


def _target(raw, fmt, mode):
    """(path as given, "docx" | "pdf"): the suffix decides unless ``format`` says pdf."""
    raw = str(raw)
    low = raw.lower()
    fmt = fmt or ("pdf" if low.endswith(".pdf") else "docx")
    if fmt not in ("docx", "pdf"):
        raise InputError("format 只能是 docx（Word 文档，默认）或 pdf，现在是 %r" % (fmt,))
    if fmt == "pdf":
        if mode == "append":
            raise InputError("PDF 不能追加内容。请先追加到 .docx 文档（format=docx），再用 convert_document 把它转成 PDF")
        if low.endswith(".docx"):
            raw = raw[:-5] + ".pdf"
        elif not low.endswith(".pdf"):
            raise InputError("format=pdf 时 path 要以 .pdf 结尾（现在是 %s）" % (os.path.splitext(raw)[1] or "（无后缀）"))
        return raw, fmt
    if not low.endswith(".docx"):
        ext = os.path.splitext(raw)[1] or "（无后缀）"
        hint = rt.tool_hint("write_text", "；纯文本、Markdown、网页或代码文件请用 write_text")
        raise InputError("write_document 只写 Word 文档，path 必须以 .docx 结尾（现在是 %s；要 PDF 请传 format=pdf）%s" % (
            ext, hint))
    return raw, fmt


def main(params):
    text = params["text"]
    mode = params.get("mode") or "overwrite"
    raw, fmt = _target(params["path"], params.get("format"), mode)
    text, removed = docx_write.strip_invalid(text)
    if removed:
        rt.warn("正文里有 %d 个 Word 文档无法保存的控制字符（如 \\x00），已去掉" % removed)
    if not text.strip():
        raise InputError("text 是空的，没有可写入的内容")
    path = paths.resolve_write(raw)
    # the whole read-change-write cycle holds the file's lock: two appends at once must both land
    with files.locked(path):
        if fmt == "pdf":
            return _write_pdf(params, text, path)
        return _write(params, raw, text, mode, path)


def _write_pdf(params, text, path):
    """The document written and checked as a docx in a scratch folder, then LibreOffice's PDF of
    it at ``path`` (``pdf_out``): the same pages the docx would print."""
    layout = _layout(params, "overwrite")
    pictures = _pictures(docx_write.parse(text), path)
    notes = []
    data, blocks = docx_write.new_document(text, layout, pictures, notes)
    existed = os.path.isfile(path)
    with files.scratch("xla-doc-") as work:
        docx = os.path.join(work, "document.docx")
        with open(docx, "wb") as fh:
            fh.write(data)
        _verify(docx, blocks, False)
        done = pdf_out.convert(docx, path, deadline=rt.deadline, label=os.path.basename(path), lock=False)
    counts = _counts(blocks)
    pages = "共 %d 页，" % done["pages"] if done["pages"] else ""
    message = "%s PDF「%s」：%s写入 %s（由 LibreOffice 从 Word 版式转换）" % (
        "已覆盖" if existed else "已生成", os.path.basename(path), pages, _written(blocks, counts) or "内容")
    if done["backup"]:
        message += "；原文件已备份到 %s" % done["backup"]
    message += "".join("；" + n for n in notes)
    out = dict({"path": path, "format": "pdf", "mode": "overwrite", "action": "overwritten" if existed else "created",
                "pages": done["pages"], "bytes": done["bytes"], "backup": done["backup"],
                "message": message + "。"}, **counts)
    if params.get("preview"):
        _add_preview(out, path)
    return out


def _add_preview(out, pdf):
    """``preview``: the first page(s) as PNG (images convention) and the layout facts
    (``xlakit.documents.preview``), so the model sees what it made."""
    facts, images = preview.preview(pdf, os.path.splitext(os.path.basename(out["path"]))[0])
    out["preview"] = facts
    if images:
        out["images"] = images
    if facts.get("overflow"):
        out["message"] += "注意：第 %s 页有文字超出页面，请检查表格宽度或改用横向页面。" % "、".join(
            str(p) for p in sorted(facts["overflow"]))


def _docx_preview(out, path):
    """A docx's preview: LibreOffice's PDF of it in a scratch folder, looked at, removed."""
    if pdf_out.find_soffice() is None:
        out["preview"] = {"note": "没有找到 LibreOffice，无法生成预览（文档已正常写入）"}
        return
    with files.scratch("xla-preview-") as work:
        pdf = os.path.join(work, "preview.pdf")
        pdf_out.convert(path, pdf, deadline=rt.deadline, label=os.path.basename(path), lock=False)
        _add_preview(out, pdf)


def _counts(blocks):
    return {"headings": sum(1 for b in blocks if b[0] == "h"),
            "paragraphs": sum(1 for b in blocks if b[0] in ("p", "quote")),
            "list_items": sum(1 for b in blocks if b[0] == "li"),
            "tables": sum(1 for b in blocks if b[0] == "table"),
            "pictures": sum(1 for b in blocks if b[0] == "img")}


def _written(blocks, counts):
    parts = ["%d 个标题" % counts["headings"] if counts["headings"] else "",
             "%d 段正文" % counts["paragraphs"] if counts["paragraphs"] else "",
             "%d 个列表项" % counts["list_items"] if counts["list_items"] else "",
             "%d 个表格" % counts["tables"] if counts["tables"] else "",
             "%d 张图片" % counts["pictures"] if counts["pictures"] else "",
             "目录" if any(b[0] == "toc" for b in blocks) else ""]
    return "、".join(p for p in parts if p)


def _write(params, raw, text, mode, path):
    exists = os.path.isfile(path)
    notes = []          # what the writer decided for the user (a wide table turned landscape)
    if mode == "append" and exists:
        kind = sniff(path)
        if kind.kind != "docx":
            raise ToolError("无法追加：%s 实际上不是 docx 文档（%s）。请换一个新文件名，或用 mode=overwrite 覆盖（会先备份）" % (
                os.path.basename(path), kind.detail))
        if kind.damaged:
            raise ToolError("无法追加：原文档不完整或已损坏（%s）。请换一个新文件名写入" % kind.detail)
        if os.path.getsize(path) > MAX_EXISTING:
            raise ToolError("原文档超过 200 MB，无法安全追加。请换一个新文件名写入")
        _layout(params, "append")
        pictures = _pictures(docx_write.parse(text), path)
        with open(path, "rb") as fh:
            data, blocks = docx_write.append_document(fh.read(), text, pictures, notes)
        action = "appended"
    else:
        layout = _layout(params, "overwrite")
        pictures = _pictures(docx_write.parse(text), path)
        data, blocks = docx_write.new_document(text, layout, pictures, notes)
        action = "overwritten" if exists else "created"
    checked = {}

    def write_and_verify(tmp):
        # read back the temp file BEFORE it replaces anything: a failed check leaves the user's file
        # (or the empty place where a new one would go) exactly as it was
        with open(tmp, "wb") as fh:
            fh.write(data)
        checked["doc"] = _verify(tmp, blocks, action == "appended")

    backup = files.atomic_write(path, write_and_verify, backup=True, lock=False)
    doc = checked["doc"]
    counts = _counts(blocks)
    verb = {"created": "已新建", "overwritten": "已覆盖", "appended": "已追加到"}[action]
    written = _written(blocks, counts)
    message = "%s Word 文档「%s」：写入%s，读回校验通过" % (verb, os.path.basename(path), " " + written if written else "内容")
    if action == "appended":
        message += "；原有内容（图片、表格、页眉页脚等）原样保留"
    if backup:
        message += "；原文件已备份到 %s" % backup
    message += "".join("；" + n for n in notes)
    out = dict({"path": path, "mode": mode, "action": action, "backup": backup,
                "total_chars": len(doc.text), "message": message + "。"}, **counts)
    if params.get("preview"):
        _docx_preview(out, path)
    return out


if __name__ == "__main__":
    rt.run(main)
