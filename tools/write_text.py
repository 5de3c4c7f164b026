"""write_text: write text verbatim into a text or code file (txt, md, html, csv, json, py, js, ...).

Why a tool and not write_document: code and configuration must come out exactly as given:
indentation, blank lines, tabs and symbols untouched, no paragraph handling. The suffix decides
what the file is; only text suffixes are accepted (a .docx or .xlsx written as text would be a
broken file: those have their own tools).

Safety: the path goes through the deny list of ``xlakit.fs.paths`` (shell and login start-up files,
~/.ssh, autostart folders, git hooks, the toolbox itself, system folders: places where a prompt-
injected model could take over the machine), the write is an atomic replace through
``xlakit.fs.files`` with a backup of the previous file, and the file is read back and compared.

Parameters:
    path      target file; a bare name goes to the workspace ~/.xla/workspace.
    text      the full content, written as given.
    mode      "overwrite" (default) or "append" (a newline is added first when the old content does
              not end with one, so two pieces never run together; the old file's encoding is kept).
    encoding  utf-8 (default; .csv defaults to utf-8-sig so Excel shows Chinese), utf-8-sig, gbk,
              gb18030, utf-16.

Returns path, mode, action, encoding, chars_written, total_chars, bytes, backup, message.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit import text as textlib  # noqa: E402
from xlakit.fs import paths, files  # noqa: E402
from xlakit.errors import InputError, ToolError  # noqa: E402
from xlakit.sniff import sniff  # noqa: E402

ENCODINGS = {"utf-8": "utf-8", "utf8": "utf-8", "utf-8-sig": "utf-8-sig", "utf-8-bom": "utf-8-sig",
             "gbk": "gbk", "gb2312": "gbk", "gb18030": "gb18030", "utf-16": "utf-16", "ansi": "gbk"}
BINARY_SUFFIXES = {
    ".docx": "write_document", ".doc": "write_document", ".xlsx": "write_spreadsheet",
    ".xls": "write_spreadsheet", ".xlsm": "write_spreadsheet", ".pptx": None, ".ppt": None, ".pdf": None,
    ".png": None, ".jpg": None, ".jpeg": None, ".gif": None, ".bmp": None, ".webp": None, ".zip": None,
    ".rar": None, ".7z": None, ".gz": None, ".exe": None, ".dll": None, ".so": None, ".odt": None,
    ".ods": None, ".wps": None, ".et": None, ".mp3": None, ".mp4": None, ".wav": None,
}
TEXT_KINDS = ("text", "empty", "html", "xml", "rtf", "mhtml")
MAX_APPEND_BASE = 50 << 20


def main(params):
    raw = params["path"]
    text = params["text"]
    mode = params.get("mode") or "overwrite"
    suffix = os.path.splitext(str(raw))[1].lower()
    if suffix in BINARY_SUFFIXES:
        tool = BINARY_SUFFIXES[suffix]
        hint = rt.tool_hint(tool, "，请改用 %s" % tool) if tool else ""
        raise InputError("write_text 只写文本文件，%s 不是文本格式，按文本写入会得到打不开的文件%s" % (suffix, hint))
    path = paths.resolve_write(raw)
    # the whole read-change-write cycle holds the file's lock: two appends at once must both land
    with files.locked(path):
        return _write(params, path, text, mode, suffix)


def _write(params, path, text, mode, suffix):
    exists = os.path.isfile(path)
    old = b""
    old_encoding = None
    if exists:
        kind = sniff(path)
        if kind.kind not in TEXT_KINDS:
            raise ToolError("%s 现在是%s，不是文本文件；用文本覆盖会毁掉它。请换一个文件名" % (
                os.path.basename(path), kind.detail))
        if mode == "append":
            if os.path.getsize(path) > MAX_APPEND_BASE:
                raise ToolError("原文件超过 50 MB，无法安全追加。请写入新文件")
            with open(path, "rb") as fh:
                old = fh.read()
            if old:
                old_encoding = textlib.detect(old)[0]
    wanted = params.get("encoding")
    if wanted:
        encoding = ENCODINGS.get(str(wanted).strip().lower().replace("_", "-"))
        if not encoding:
            raise InputError("不支持的编码 %r。可用 utf-8（默认）、utf-8-sig（带 BOM）、gbk、gb18030、utf-16" % wanted)
    elif old_encoding:
        encoding = {"utf-32": "utf-8", "ascii": "utf-8"}.get(old_encoding, old_encoding)
    else:
        encoding = "utf-8-sig" if suffix in (".csv", ".tsv") else "utf-8"
    if mode == "append" and old:
        old_text = old.decode(old_encoding, "replace")
        if old_text.startswith("\ufeff"):
            old_text = old_text[1:]
        glue = ""
        if old_text and not old_text.endswith(("\n", "\r")) and text:
            glue = "\r\n" if "\r\n" in old_text[-4096:] else "\n"
        full = old_text + glue + text
        action = "appended"
    else:
        full = text
        action = "overwritten" if exists else "created"
    try:
        data = full.encode(encoding)
    except UnicodeEncodeError as exc:
        raise ToolError("有字符「%s」无法用编码 %s 保存。请改用 utf-8，或去掉这些字符" % (
            exc.object[exc.start:exc.end], encoding))
    backup = files.write_bytes(path, data, backup=exists, lock=False)
    with open(path, "rb") as fh:
        back = fh.read()
    if back != data or back.decode(encoding) != full:
        raise ToolError("写入后读回校验失败：文件内容与要写入的不一致（可能磁盘已满或被其他程序改动）。"
                        "原文件已备份%s，请重试" % ("到 %s" % backup if backup else ""))
    verb = {"created": "已新建", "overwritten": "已覆盖", "appended": "已追加到"}[action]
    message = "%s「%s」：写入 %d 个字符（%s 编码），读回校验一致" % (verb, os.path.basename(path), len(text),
                                                        textlib.label(encoding))
    if backup:
        message += "；原文件已备份到 %s" % backup
    return {"path": path, "mode": mode, "action": action, "encoding": encoding, "chars_written": len(text),
            "total_chars": len(full), "bytes": len(data), "backup": backup, "message": message + "。"}


if __name__ == "__main__":
    rt.run(main)
