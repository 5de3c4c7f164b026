"""Office files to PDF through LibreOffice headless: write_document's ``format: "pdf"`` and the
convert_document tool.

Why LibreOffice: "发我个 PDF" is the next thing a user asks after a report, and a faithful PDF of
a docx/xlsx needs a real layout engine (fonts, tables, page breaks, charts); LibreOffice is free
on Windows, macOS and Linux and converts headless. Nothing is installed behind the user's back:
when it is missing, the error says how to install it (or to use Word/WPS's 另存为 PDF).

How: the source is converted inside a private scratch folder (``files.scratch``) with its own
LibreOffice profile there (``-env:UserInstallation``), so a LibreOffice the user has open is not
disturbed and two conversions at once do not meet; the whole process tree is killed when it runs
past its time (well under the host's 60 s; ``soffice.py``: on Windows a Job object, so the
``soffice.bin`` child of the ``soffice.exe`` launcher goes too); the PDF then reaches its target through
``files.atomic_write`` (backup of a PDF it replaces, deny list, lock).

Text documents (docx, doc, odt, rtf, wps) are not exported by ``--convert-to``: LibreOffice keeps
a table of contents exactly as the file stores it (Word writes the page numbers of Word's own
layout; we write an estimate), so 2 of 8 entries could point one page off. A Basic macro in the
private profile instead opens the document hidden, updates every index and field (the TOC now
counts the pages LibreOffice lays out, the same pages the PDF gets), and exports. LibreOffice
lists every outline level from 1 whatever the field's ``\\o "2-3"``, so the document title (a
``_XlaTitle`` bookmark, ``docx_extras``) is body text while the indexes update and a heading
again for the PDF's outline. The macro lives
in the profile we create (``My Macros`` are trusted without a prompt); ``ooSetupInstCompleted`` in
the profile's registry keeps LibreOffice from replacing that Basic library with its default on
first start. Should the macro not produce a PDF (an old LibreOffice), the plain conversion runs.

The same macro puts a 公文's 版记 at the foot of its last page (GB/T 9704-2012 7.4.1): the docx
floats that table to the page foot (tblpY, which Word and WPS follow) but LibreOffice lays a
floating table out inline, right after the date. The paragraph before it carries a bookmark
(``gongwen.SPACER``, not snapped to the line grid); the macro measures where that paragraph sits
on its page (view cursor, page style's text height less the footer) and gives it the top margin
that brings the table's last row onto the text block's last line, once, before the export lays
the pages out. The 版记 belongs on an even page (封四, GB/T 9704-2012 7.4/7.5): when the body ends
on an odd page, or on an even one without room, the record moves to the next even page (after a
blank page in the second case), and those pages get a page style without the footer, so they
carry no page number.

``XLA_SOFFICE`` (tests): the soffice program to use; ``none`` = behave as if none is installed.
"""
import os
import shutil
import subprocess
import sys
import time

from ..fs import files
from ..errors import ToolError
from .soffice import find_soffice  # noqa: F401 - also this module's public name
from . import soffice as office_app

MAX_SECONDS = 40.0          # one conversion; the tool still has time to write and answer
SOURCES = (".docx", ".doc", ".odt", ".rtf", ".wps", ".wpd", ".xlsx", ".xls", ".xlsm", ".ods", ".et", ".csv", ".pptx",
           ".ppt", ".odp", ".txt", ".html", ".htm")


WRITER_SOURCES = (".docx", ".doc", ".odt", ".rtf", ".wps", ".wpd")
# convert_document's other targets (text documents only): LibreOffice's export filter for each
TARGETS = {"pdf": "pdf", "docx": "docx:MS Word 2007 XML", "odt": "odt"}
_REGISTRY = ('<?xml version="1.0" encoding="UTF-8"?>\n<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
             'xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
             '<item oor:path="/org.openoffice.Setup/Office"><prop oor:name="ooSetupInstCompleted" oor:op="fuse">'
             '<value>true</value></prop></item>\n'
             '<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse">'
             '<value>false</value></prop></item>\n%s</oor:items>\n')
_LIBS = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE library:libraries PUBLIC "-//OpenOffice.org//DTD '
         'OfficeDocument 1.0//EN" "libraries.dtd">\n<library:libraries xmlns:library="http://openoffice.org/2000/library" '
         'xmlns:xlink="http://www.w3.org/1999/xlink">\n <library:library library:name="Standard" library:link="false"/>\n'
         '</library:libraries>\n')
_LIB = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE library:library PUBLIC "-//OpenOffice.org//DTD OfficeDocument '
        '1.0//EN" "library.dtd">\n<library:library xmlns:library="http://openoffice.org/2000/library" '
        'library:name="Standard" library:readonly="false" library:passwordprotected="false">%s</library:library>\n')
# opens hidden, updates indexes (twice around the fields: a TOC's own page numbers are fields), exports
_MACRO = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE script:module PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "module.dtd">
<script:module xmlns:script="http://openoffice.org/2000/script" script:name="XlaPdf" script:language="StarBasic">
Sub Export(src As String, dst As String)
  On Error Goto Done
  Dim args(0) As New com.sun.star.beans.PropertyValue
  args(0).Name = &quot;Hidden&quot;
  args(0).Value = True
  doc = StarDesktop.loadComponentFromURL(src, &quot;_blank&quot;, 0, args())
  Dim title As Object
  If doc.getBookmarks().hasByName(&quot;_XlaTitle&quot;) Then
    title = doc.getBookmarks().getByName(&quot;_XlaTitle&quot;).getAnchor()
    level = title.OutlineLevel
    title.OutlineLevel = 0
  End If
  idx = doc.getDocumentIndexes()
  For i = 0 To idx.getCount() - 1
    idx.getByIndex(i).update()
  Next i
  doc.getTextFields().refresh()
  For i = 0 To idx.getCount() - 1
    idx.getByIndex(i).update()
  Next i
  If Not IsNull(title) Then title.OutlineLevel = level
  PushRecord(doc)
  Dim f(0) As New com.sun.star.beans.PropertyValue
  f(0).Name = &quot;FilterName&quot;
  f(0).Value = &quot;writer_pdf_Export&quot;
  doc.storeToURL(dst, f())
  doc.close(True)
Done:
  StarDesktop.terminate()
End Sub

Sub PushRecord(doc)
  On Error Goto Out
  If Not doc.getBookmarks().hasByName(&quot;_XlaRecordSpacer&quot;) Then Exit Sub
  spacer = doc.getBookmarks().getByName(&quot;_XlaRecordSpacer&quot;).getAnchor()
  Dim para As Object, tbl As Object, prev As Object
  en = doc.getText().createEnumeration()
  Do While en.hasMoreElements()
    el = en.nextElement()
    If el.supportsService(&quot;com.sun.star.text.TextTable&quot;) Then
      If Not IsNull(prev) And Not IsNull(para) Then
        If EqualUnoObjects(prev, para) Then tbl = el
      End If
    ElseIf el.supportsService(&quot;com.sun.star.text.Paragraph&quot;) Then
      If doc.getText().compareRegionStarts(el, spacer) = 0 Then para = el
    End If
    prev = el
  Loop
  If IsNull(tbl) Then Exit Sub
  rows = tbl.getRows()
  h = 0
  For k = 0 To rows.getCount() - 1
    h = h + rows.getByIndex(k).Height
  Next k
  vc = doc.getCurrentController().getViewCursor()
  vc.gotoRange(para.getStart(), False)
  y = vc.getPosition().Y
  page = vc.getPage()
  styles = doc.getStyleFamilies().getByName(&quot;PageStyles&quot;)
  ps = styles.getByName(vc.PageStyleName)
  vc.jumpToStartOfPage()
  top = vc.getPosition().Y
  full = ps.Height - ps.TopMargin - ps.BottomMargin - h - 70 - 150
  If ps.FooterIsOn Then full = full - ps.FooterHeight
  room = full - (y - top)
  If room &gt; 0 And page Mod 2 = 0 Then
    para.ParaTopMargin = room
    Exit Sub
  End If
  &apos; the record belongs on an even page: the next page when this one is odd, else after a blank
  &apos; odd page; those pages carry no page number (a page style without the footer)
  If Not styles.hasByName(&quot;XlaRecordPage&quot;) Then
    rp = doc.createInstance(&quot;com.sun.star.style.PageStyle&quot;)
    styles.insertByName(&quot;XlaRecordPage&quot;, rp)
    For Each prop In Array(&quot;Width&quot;, &quot;Height&quot;, &quot;LeftMargin&quot;, &quot;RightMargin&quot;, &quot;TopMargin&quot;, &quot;BottomMargin&quot;)
      rp.setPropertyValue(prop, ps.getPropertyValue(prop))
    Next prop
    rp.FooterIsOn = False
    rp.HeaderIsOn = False
    rp.FollowStyle = &quot;XlaRecordPage&quot;
  End If
  para.PageDescName = &quot;XlaRecordPage&quot;
  If page Mod 2 = 1 Then
    para.ParaTopMargin = full
  Else
    tbl.BreakType = com.sun.star.style.BreakType.PAGE_BEFORE
    tbl.TopMargin = full + 35
  End If
Out:
End Sub
</script:module>
"""


def _file_url(path):
    import pathlib
    return pathlib.Path(os.path.abspath(path)).as_uri()


def _macro_profile(profile_dir):
    """A new LibreOffice profile that holds the export macro (Standard.XlaPdf.Export) and a font
    replacement table for the Chinese faces missing here (``cjk_fonts``)."""
    basic = os.path.join(profile_dir, "user", "basic")
    os.makedirs(os.path.join(basic, "Standard"))
    from . import cjk_fonts
    for name, text in (("registrymodifications.xcu", _REGISTRY % cjk_fonts.registry_items(cjk_fonts.replacements())),):
        with open(os.path.join(profile_dir, "user", name), "w", encoding="utf-8") as fh:
            fh.write(text)
    for name, text in (("script.xlc", _LIBS), ("dialog.xlc", _LIBS),
                       (os.path.join("Standard", "script.xlb"), _LIB % '\n <library:element library:name="XlaPdf"/>\n'),
                       (os.path.join("Standard", "dialog.xlb"), _LIB % ""),
                       (os.path.join("Standard", "XlaPdf.xba"), _MACRO)):
        with open(os.path.join(basic, name), "w", encoding="utf-8") as fh:
            fh.write(text)


OFFICE_KINDS = {"docx", "xlsx", "xlsm", "pptx", "odt", "ods", "odp", "xls", "doc", "wps", "et", "ppt", "rtf", "wpd"}
TEXT_SOURCES = {".txt": ("text",), ".csv": ("text",), ".html": ("html", "text"), ".htm": ("html", "text")}


def legacy_kind(kind):
    """"wpd" or "word2" (``via_office.PROGRAMS``) for a file only LibreOffice among our helpers
    opens, else None: its messages name the programs that open it."""
    if kind.kind == "wpd":
        return "wpd"
    if kind.kind == "doc" and "worddocument" not in kind.names and not kind.damaged:
        return "word2"          # Word for Windows 1.0/2.0: not an OLE file
    return None


def check_source(path, target="PDF"):
    """Refuse, in Chinese, what LibreOffice would turn into a page of garbage: a file whose bytes
    are not the office document its name says (``xlakit.sniff``), an encrypted or empty one."""
    from ..sniff import sniff, LABELS
    name = os.path.basename(path)
    ext = os.path.splitext(path)[1].lower()
    kind = sniff(path)
    if kind.kind == "empty":
        raise ToolError("「%s」是空文件，没有可转换的内容" % name)
    if kind.encrypted:
        raise ToolError("「%s」设置了打开密码，无法转换。请在 Office/WPS 里去掉密码另存后再试" % name)
    wanted = TEXT_SOURCES.get(ext)
    if (kind.kind in wanted) if wanted else (kind.kind in OFFICE_KINDS):
        return kind
    raise ToolError("「%s」的内容不是%s，实际是%s，无法转换成 %s。请确认选对了文件" % (
        name, "文本" if wanted else "办公文档", kind.detail or LABELS.get(kind.kind, kind.kind), target))


def missing_error(legacy=None, target="PDF"):
    """LibreOffice is not installed: how to install it. ``legacy`` ("wpd", "word2"): the file is
    one Word/WPS cannot save as PDF either, so the message names the programs that open it."""
    if sys.platform == "win32":
        how = "从 LibreOffice 官网（libreoffice.org）下载 Windows 版安装"
    elif sys.platform == "darwin":
        how = "从 LibreOffice 官网（libreoffice.org）下载 macOS 版安装，或在终端运行「brew install --cask libreoffice」"
    else:
        how = ("在终端运行「sudo apt install libreoffice-writer libreoffice-calc」（Debian/Ubuntu/统信/麒麟），"
               "或「sudo dnf install libreoffice」（Fedora/openEuler）")
    if legacy:
        from .via_office import PROGRAMS
        label, programs = PROGRAMS[legacy]
        return ToolError("这是%s，转换成 %s 要用 LibreOffice（免费办公软件），这台电脑上没有找到。请安装：%s；装好后重试。"
                         "也可以用 %s打开它，再另存为 %s" % (label, target, how, programs, target))
    return ToolError("转换 PDF 要用 LibreOffice（免费办公软件），这台电脑上没有找到。请安装：%s；装好后重试。"
                     "也可以先生成 Word/Excel 文件，在 Word、WPS 或 Excel 里用「另存为 PDF」" % how)


def convert(source, target, deadline=None, label=None, lock=True, fmt="pdf", legacy=None):
    """``source`` (an office file) as a PDF at ``target`` (through ``files.atomic_write``, with a
    backup of a file it replaces). Returns {"pages": int or None, "bytes": int, "backup", "seconds"}.
    ``label``: the file name the user knows (a temp docx has none); ``lock=False`` when the caller
    holds the target's lock already. ``fmt`` "docx" / "odt" (a text document, convert_document):
    LibreOffice's plain conversion to that format instead (no index update: nothing is laid out).
    ``legacy``: ``legacy_kind`` of the source, for the message when LibreOffice is missing."""
    soffice = find_soffice()
    if soffice is None:
        raise missing_error(legacy, fmt.upper() if fmt == "pdf" else "." + fmt)
    name = label or os.path.basename(source)
    started = time.monotonic()
    with files.scratch("xla-pdf-") as work:
        # a plain ASCII copy: LibreOffice mangles some non-ASCII paths on some systems
        ext = os.path.splitext(source)[1].lower()
        src = os.path.join(work, "source" + ext)
        shutil.copyfile(source, src)
        out_dir = os.path.join(work, "out")
        profile = "file://" + ("/" if not work.startswith("/") else "") + os.path.join(work, "profile").replace("\\", "/")
        left = MAX_SECONDS if deadline is None else min(MAX_SECONDS, deadline.remaining() - 4)
        if left < 5:
            raise ToolError("剩下的时间不够转换 PDF 了。请重试一次（单独转换：convert_document）")
        common = [soffice, "-env:UserInstallation=%s" % profile, "--headless", "--norestore", "--nologo",
                  "--nodefault", "--nolockcheck"]
        pdf = os.path.join(out_dir, "source." + fmt)
        err = b""
        if ext in WRITER_SOURCES and fmt == "pdf":
            # indexes and fields updated before the export (see the module's docstring)
            _macro_profile(os.path.join(work, "profile"))
            os.makedirs(out_dir)
            err = _run(common + ['macro:///Standard.XlaPdf.Export("%s","%s")' % (_file_url(src), _file_url(pdf))],
                       soffice, work, left, name)
            left = MAX_SECONDS - (time.monotonic() - started)
            if deadline is not None:
                left = min(left, deadline.remaining() - 4)
        if not os.path.isfile(pdf) or os.path.getsize(pdf) < 100:
            if left < 5:
                raise ToolError("剩下的时间不够转换 PDF 了。请重试一次（单独转换：convert_document）")
            err = _run(common + ["--convert-to", TARGETS[fmt], "--outdir", out_dir, src], soffice, work, left, name)
        if not os.path.isfile(pdf) or os.path.getsize(pdf) < 100:
            detail = (err or b"").decode("utf-8", "replace").strip().splitlines()[-1:] or ["没有生成文件"]
            if legacy:
                from .via_office import PROGRAMS
                label_, programs = PROGRAMS[legacy]
                raise ToolError("这是%s，但 LibreOffice 没能转换它（%s，文件可能已损坏）。请用 %s打开试试" % (
                    label_, detail[0][:200], programs))
            raise ToolError("LibreOffice 没能把「%s」转换成 %s（%s）。请确认文件能用 Office/WPS 正常打开；"
                            "也可以在 Word/WPS/Excel 里用「另存为」" % (name, fmt.upper(), detail[0][:200]))
        with open(pdf, "rb") as fh:
            data = fh.read()
    backup = files.atomic_write(target, lambda tmp: _put(tmp, data), backup=True, lock=lock)
    return {"pages": _pages(data) if fmt == "pdf" else None, "bytes": len(data), "backup": backup,
            "seconds": round(time.monotonic() - started, 1)}


def _run(cmd, soffice, work, left, name):
    """Run one soffice command in ``work`` within ``left`` seconds; its stderr bytes. ``soffice.run``
    kills the whole tree on time (on Windows through a Job object, so ``soffice.bin`` goes too)."""
    env = dict(os.environ)
    env.setdefault("HOME", work)
    try:
        _code, _out, err = office_app.run(cmd, left, cwd=work, env=env)
    except OSError as exc:
        raise ToolError("无法启动 LibreOffice（%s）：%s。请确认 LibreOffice 安装完整，或重新安装后重试" % (soffice, exc))
    except subprocess.TimeoutExpired:
        raise ToolError("LibreOffice 转换「%s」超过 %d 秒还没完成，已停止。文件可能太大或太复杂；可以在 Word/WPS/Excel 里"
                        "用「另存为 PDF」，或把内容拆小后重试" % (name, int(left)))
    return err


def _put(tmp, data):
    with open(tmp, "wb") as fh:
        fh.write(data)


def _pages(data):
    """Pages of a PDF LibreOffice wrote (its page tree root's /Count), None when not found."""
    import re
    counts = [int(m) for m in re.findall(rb"/Type\s*/Pages\b[^>]*?/Count\s+(\d+)", data)]
    counts += [int(m) for m in re.findall(rb"/Count\s+(\d+)[^>]*?/Type\s*/Pages\b", data)]
    return max(counts) if counts else None
