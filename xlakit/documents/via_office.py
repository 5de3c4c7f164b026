"""Formats we have no reader for but LibreOffice has: WordPerfect (.wpd) and Word for Windows
1.0/2.0 .doc files (issue 36). Read through LibreOffice, or said plainly which program opens them.

Why through LibreOffice: these files are rare (an archive from the 1990s, a file from a foreign
partner) and their formats are large; LibreOffice (libwpd, its Word 2 import) reads both well,
and many of our users have it. Why not refuse: a refusal leaves the user with a file nobody
reads, and LibreOffice is what the refusal would recommend anyway.

How: the file is converted to ODT inside a private scratch folder with its own LibreOffice
profile (as ``pdf_out`` does: a LibreOffice the user has open is not disturbed, two conversions
do not meet; ``soffice.run`` ends the whole tree on time), then read by our ODT reader, so
headings, lists and tables come out as for any .odt. The conversion gets the time the call has
left minus what reading needs; without LibreOffice, or out of time, the error says which
program opens the file and how to make it readable (save as .docx).
"""
import os
import shutil
import subprocess

from ..fs import files
from .base import FormatError
from . import soffice as office_app

NAME = "wpd"
LABEL = "WordPerfect 文档（.wpd）"
READ_RESERVE = 5.0        # seconds kept for reading the converted file
MIN_CONVERT = 6.0         # LibreOffice with a new profile needs a few seconds to start at all
MAX_SECONDS = 45.0

# What each kind is and which programs open it, for the messages.
PROGRAMS = {
    "wpd": (" WordPerfect 文档", "WordPerfect Office 或 LibreOffice（免费）"),
    "word2": (" Word 1.0/2.0 文档（1990 年代初的 Word for Windows 格式）", "LibreOffice（免费）或 Word 97–2003 版"),
}


def accepts(kind):
    if kind.kind == "wpd":
        return True, None
    return False, "不是 WordPerfect 文档"


def convert(path, kind, out, deadline=None):
    read(path, "wpd", out, deadline)


def read(path, what, out, deadline=None):
    """Read ``path`` (a ``what`` of :data:`PROGRAMS`) through LibreOffice into ``out``."""
    label, programs = PROGRAMS[what]
    soffice = office_app.find_soffice()
    if soffice is None:
        raise FormatError("这是%s，本机读取它需要 LibreOffice（免费办公软件），但没有找到。请用 %s打开后另存为 .docx 再试；"
                          "装好 LibreOffice 后也可以直接再读一次" % (label, programs))
    left = MAX_SECONDS if deadline is None else min(MAX_SECONDS, deadline.remaining() - READ_RESERVE)
    if left < MIN_CONVERT:
        raise FormatError("这是%s，要借助 LibreOffice 转换后才能读取，剩下的时间不够了。请重试一次" % label)
    with files.scratch("xla-read-") as work:
        ext = os.path.splitext(path)[1].lower()
        src = os.path.join(work, "source" + (ext if ext.isascii() and len(ext) <= 5 else ""))
        shutil.copyfile(path, src)      # a plain ASCII name: LibreOffice mangles some non-ASCII paths
        out_dir = os.path.join(work, "out")
        profile = "file://" + ("/" if not work.startswith("/") else "") + os.path.join(work, "profile").replace("\\", "/")
        cmd = [soffice, "-env:UserInstallation=%s" % profile, "--headless", "--norestore", "--nologo",
               "--nodefault", "--nolockcheck", "--convert-to", "odt", "--outdir", out_dir, src]
        env = dict(os.environ)
        env.setdefault("HOME", work)
        try:
            office_app.run(cmd, left, cwd=work, env=env)
        except OSError:
            raise FormatError("这是%s，要借助 LibreOffice 读取，但 LibreOffice 无法启动。请确认它安装完整，"
                              "或用 %s打开后另存为 .docx 再试" % (label, programs))
        except subprocess.TimeoutExpired:
            raise FormatError("这是%s，LibreOffice 转换它超过 %d 秒还没完成，已停止。请用 %s打开后另存为 .docx 再试" % (
                label, int(left), programs))
        odt = os.path.join(out_dir, os.path.splitext(os.path.basename(src))[0] + ".odt")
        if not os.path.isfile(odt) or os.path.getsize(odt) < 100:
            raise FormatError("这是%s，但 LibreOffice 也没能打开它（文件可能已损坏）。请用 %s打开试试" % (label, programs))
        from ..sniff import sniff
        from . import odt as odt_reader
        odt_reader.convert(odt, sniff(odt), out, deadline)
    out.warnings.append("这是%s，由 LibreOffice 转换后读出，版式可能与原软件略有不同" % label)
