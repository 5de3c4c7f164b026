"""The file tools' shared logic: entries, listing, walking, name matching, details and safe deletion
paths (read_text_file's line windows live in ``textwindow`` and are re-exported here).

Why one module: list_dir, find_files, file_info, delete_file and read_text_file must agree on what
a "hidden" entry is, how a size or a time is written, which names are equal (a Chinese name
written by macOS is NFD, the model sends NFC) and how long a walk may take. Everything here is pure
file-system code with an optional ``deadline`` (an object with ``expired()``), so it never imports
the runtime and can be unit-tested directly.

Platform notes: hidden means a leading dot everywhere, plus the hidden attribute on Windows
(``st_file_attributes``) and the ``UF_HIDDEN`` flag on macOS (``~/Library``); creation time is
``st_birthtime`` where the OS has it (macOS, BSD, Windows with Python 3.12+) and ``st_ctime`` on
Windows before that; Linux does not expose it through ``os.stat``. Owners resolve through
``pwd``/``grp`` where they exist and fall back to the numeric id.
"""
import datetime
import fnmatch
import heapq
import os
import re
import stat
import unicodedata
import urllib.parse

from .. import progress
from . import resolve
from ..errors import InputError, ToolError, os_error
from ..text import human_size  # noqa: F401 - also part of this module's API (list_dir, file_info)

IS_WINDOWS = os.name == "nt"
PROGRESS_ENTRIES = 5000      # find_files reports progress every this many entries looked at

# Directories a name search never descends into: version control, caches, package trees, recycle
# bins. Compared after case folding.
SKIP_DIRS = frozenset(x.casefold() for x in (
    ".git", ".svn", ".hg", ".bzr", "node_modules", "__pycache__", ".cache", ".venv", "venv", ".tox",
    ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".gradle", ".m2", ".npm", ".yarn",
    ".pnpm-store", ".cargo", ".rustup", "site-packages", "dist-packages", ".Trash", ".Trashes",
    "$RECYCLE.BIN", "System Volume Information", ".Spotlight-V100", ".fseventsd", ".DocumentRevisions-V100",
    ".idea", ".vscode", ".terraform", "bower_components", ".next", ".nuxt",
))

# ---------------------------------------------------------------------------------------------
# Small pieces


def fmt_time(ts):
    """Local time ``YYYY-MM-DD HH:MM:SS`` (what people read), or None."""
    if ts is None:
        return None
    try:
        return datetime.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S")
    except (OverflowError, OSError, ValueError):
        return None


def nfc(name):
    return unicodedata.normalize("NFC", name)


def fold(name):
    """The form names are compared in: NFKC (full-width letters, NFD accents), case-folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def entry_type(mode):
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "other"


def is_hidden(name, st=None):
    if name.startswith("."):
        return True
    if st is not None:
        if getattr(st, "st_file_attributes", 0) & 0x2:        # FILE_ATTRIBUTE_HIDDEN (Windows)
            return True
        if getattr(st, "st_flags", 0) & getattr(stat, "UF_HIDDEN", 0x8000):   # macOS chflags hidden
            return True
    return False


_NATURAL = re.compile(r"(\d+)")


def natural_key(name):
    """"第2章" before "第10章": digit runs compare as numbers, the rest case-insensitively."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, fold(p)) for p in _NATURAL.split(name) if p != ""]


from .textwindow import (BLOCK, WHOLE_FILE_LIMIT, _expired, _spaced, count_lines, json_len,  # noqa: E402,F401
                         newline_style, read_window, split_lines, tail_bytes)


# ---------------------------------------------------------------------------------------------
# One entry


def describe_entry(dir_entry_or_path, name=None):
    """A listing row: name, path, type, size (files), size_text, mtime; ``error`` when the entry's
    metadata cannot be read (it vanished, no permission) - the row is still returned."""
    if isinstance(dir_entry_or_path, os.DirEntry):
        path, name = dir_entry_or_path.path, dir_entry_or_path.name
        getter = lambda: dir_entry_or_path.stat(follow_symlinks=False)   # noqa: E731
    else:
        path = dir_entry_or_path
        name = name or os.path.basename(path)
        getter = lambda: os.lstat(path)   # noqa: E731
    row = {"name": nfc(name), "path": path}
    try:
        st = getter()
    except OSError as exc:
        row.update({"type": "unknown", "size": None, "size_text": None, "mtime": None,
                    "error": _os_error_text(exc)})
        return row, None
    kind = entry_type(st.st_mode)
    row["type"] = kind
    row["size"] = st.st_size if kind == "file" else None
    row["size_text"] = human_size(st.st_size) if kind == "file" else None
    row["mtime"] = fmt_time(st.st_mtime)
    if kind == "symlink":
        try:
            row["target"] = os.readlink(path)
        except OSError:
            row["target"] = None
        try:
            row["target_type"] = entry_type(os.stat(path).st_mode)
        except OSError:
            row["target_type"] = "missing"
    return row, st


def _os_error_text(exc):
    if isinstance(exc, PermissionError):
        return "没有权限读取"
    if isinstance(exc, FileNotFoundError):
        return "读取时已不存在"
    return "无法读取（%s）" % str(os_error(exc, action="读取")).split("：", 1)[-1].split("。")[0]


# ---------------------------------------------------------------------------------------------
# list_dir

SORT_KEYS = ("name", "time", "size")


def list_dir(folder, sort_by="name", hidden=False, deadline=None, collation="pinyin"):
    """All entries of ``folder`` (sorted) and a summary. Unreadable entries keep an ``error``;
    an unreadable folder raises ToolError. Stops early (``incomplete``) when the deadline passes.
    Names sort folders first, then by ``xlakit.collate`` (pinyin, digits by value; or codepoint)."""
    rows, stats = [], {}
    skipped_hidden = 0
    incomplete = False
    try:
        it = os.scandir(folder)
    except PermissionError:
        raise ToolError("没有权限读取文件夹 %s。请换一个文件夹，或检查它的权限" % folder)
    except NotADirectoryError:
        raise ToolError("%s 不是文件夹" % folder)
    except OSError as exc:
        raise os_error(exc, folder, "读取文件夹")
    with it:
        for i, entry in enumerate(it):
            if i % 500 == 0 and _expired(deadline):
                incomplete = True
                break
            row, st = describe_entry(entry)
            if not hidden and is_hidden(entry.name, st):
                skipped_hidden += 1
                continue
            rows.append(row)
            stats[id(row)] = st
    if sort_by == "time":
        rows.sort(key=lambda r: (stats[id(r)].st_mtime if stats[id(r)] else float("-inf")), reverse=True)
    elif sort_by == "size":
        rows.sort(key=lambda r: (r["size"] if r["size"] is not None else -1), reverse=True)
    else:
        from .. import collate
        rows.sort(key=lambda r: (r["type"] != "dir", collate.name_key(r["name"], collation)))
    files = sum(1 for r in rows if r["type"] == "file")
    dirs = sum(1 for r in rows if r["type"] == "dir")
    total = sum(r["size"] or 0 for r in rows if r["type"] == "file")
    summary = {"files": files, "dirs": dirs, "others": len(rows) - files - dirs,
               "total_size": total, "total_size_text": human_size(total), "hidden_skipped": skipped_hidden,
               "errors": sum(1 for r in rows if "error" in r)}
    return rows, summary, incomplete


# ---------------------------------------------------------------------------------------------
# find_files: patterns as models write them

_GLOB_CHARS = set("*?[")
_BRACES = re.compile(r"\{([^{}]*)\}")


def _expand_braces(pattern, limit=64):
    """``*.{xlsx,csv}`` -> ``*.xlsx``, ``*.csv`` (what shells do and models expect)."""
    out, todo = [], [pattern]
    while todo and len(out) + len(todo) <= limit:
        p = todo.pop()
        m = _BRACES.search(p)
        if not m or "," not in m.group(1):
            out.append(p)
            continue
        for alt in m.group(1).split(","):
            todo.append(p[:m.start()] + alt + p[m.end():])
    return out + todo


class Matcher:
    """A lenient name pattern.

    - glob when it has ``* ? [`` (case-insensitive, also for ``*.XLSX``), else a case-insensitive
      substring of the name;
    - ``**/*.xlsx``, ``./报表*``, ``**/*报表*`` lose their leading directory wildcards: the walk is
      recursive anyway; a pattern that still holds ``/`` (``2024/*.xlsx``) matches the end of the
      path relative to the search root;
    - ``*.{xlsx,csv}``, ``*.xlsx|*.csv``, ``*.xlsx;*.csv`` and ``*.xlsx *.csv`` are alternatives;
    - names compare in NFKC + case-folded form, so a macOS NFD name and a full-width letter match.
    """

    def __init__(self, pattern):
        if not isinstance(pattern, str) or not pattern.strip():
            raise InputError("pattern 不能为空：请给出文件名的一部分（如 报表）或通配符（如 *.xlsx）")
        raw = pattern.strip().strip("\"'").strip()
        parts = [p for p in re.split(r"[|;；]", raw) if p.strip()]
        if len(parts) == 1 and " " in raw.strip():
            tokens = raw.split()
            if all(_GLOB_CHARS & set(t) for t in tokens):
                parts = tokens
        alts = []
        for part in parts:
            alts.extend(_expand_braces(part.strip()))
        self.alternatives = []
        for alt in alts:
            alt = alt.replace("\\", "/")
            while alt.startswith("./"):
                alt = alt[2:]
            while alt.startswith("**/"):
                alt = alt[3:]
            alt = alt.strip("/")
            if alt in ("", "**"):
                alt = "*"
            alt = fold(alt)
            is_glob = bool(_GLOB_CHARS & set(alt))
            if "/" in alt:
                self.alternatives.append(("path", self._path_regex(alt)))
            elif is_glob:
                self.alternatives.append(("glob", re.compile(fnmatch.translate(alt.replace("**", "*")), re.S)))
            else:
                self.alternatives.append(("sub", alt))
        self.pattern = raw
        self.kind = "glob" if any(k != "sub" for k, _ in self.alternatives) else "substring"

    @staticmethod
    def _path_regex(pattern):
        out = []
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out.append("(?:.*/)?")
                i += 3
            elif pattern.startswith("**", i):
                out.append(".*")
                i += 2
            elif pattern[i] == "*":
                out.append("[^/]*")
                i += 1
            elif pattern[i] == "?":
                out.append("[^/]")
                i += 1
            elif pattern[i] == "[":
                j = pattern.find("]", i + 1)
                if j < 0:
                    out.append(re.escape("["))
                    i += 1
                else:
                    body = pattern[i + 1:j]
                    if body.startswith("!"):
                        body = "^" + body[1:]
                    out.append("[" + body.replace("\\", "\\\\") + "]")
                    i = j + 1
            else:
                out.append(re.escape(pattern[i]))
                i += 1
        return re.compile("(?:^|.*/)" + "".join(out) + r"\Z", re.S)

    def match(self, name, rel=None):
        key = fold(name)
        for kind, pat in self.alternatives:
            if kind == "sub":
                if pat in key:
                    return True
            elif kind == "glob":
                if pat.match(key):
                    return True
            elif rel is not None and pat.match(fold(rel.replace(os.sep, "/"))):
                return True
        return False


def _skip_dir(name):
    return fold(name) in SKIP_DIRS


def find_files(root, matcher, limit=50, type_=None, depth=6, skip_hidden=True, deadline=None,
               special=None):
    """Walk ``root`` breadth-first to ``depth`` levels, never following directory links.

    Returns ``(entries newest first (at most limit), stats)`` where stats has ``matched`` (all
    matches seen), ``scanned`` entries, ``dirs_scanned``, ``dirs_skipped`` (by name),
    ``dirs_unreadable``, ``incomplete`` (the deadline ended the walk) and ``depth_limited``.

    ``special`` maps real folder paths to True for hidden folders that are still searched (the
    toolbox workspace ``~/.xla/workspace``) or False for folders never searched (its trash and
    backups)."""
    special = special or {}
    heap = []          # (mtime, counter, row): the newest ``limit`` matches
    counter = 0
    stats = {"matched": 0, "scanned": 0, "dirs_scanned": 0, "dirs_skipped": 0, "dirs_unreadable": 0,
             "incomplete": False, "depth_limited": False}
    level = [(root, 0)]
    while level:
        nxt = []
        for folder, lvl in level:
            if _expired(deadline):
                stats["incomplete"] = True
                level, nxt = [], []
                break
            try:
                it = os.scandir(folder)
            except OSError:
                stats["dirs_unreadable"] += 1
                continue
            stats["dirs_scanned"] += 1
            with it:
                for n, entry in enumerate(it):
                    if n and n % 2000 == 0 and _expired(deadline):
                        stats["incomplete"] = True
                        break
                    stats["scanned"] += 1
                    if not stats["scanned"] % PROGRESS_ENTRIES:
                        progress.report(stats["scanned"], None, "已查看 %d 个文件和文件夹" % stats["scanned"])
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    kind = entry_type(st.st_mode)
                    name = entry.name
                    hidden = is_hidden(name, st)
                    if kind == "dir":
                        verdict = special.get(os.path.normcase(entry.path))
                        descend = verdict if verdict is not None else not (
                            _skip_dir(name) or (skip_hidden and hidden))
                        if not descend:
                            stats["dirs_skipped"] += 1
                        elif lvl + 1 >= depth:
                            stats["depth_limited"] = True
                        else:
                            nxt.append((entry.path, lvl + 1))
                    if skip_hidden and hidden and special.get(os.path.normcase(entry.path)) is not True:
                        continue
                    if type_ and kind != type_:
                        continue
                    rel = os.path.relpath(entry.path, root)
                    if not matcher.match(name, rel):
                        continue
                    stats["matched"] += 1
                    counter += 1
                    item = (st.st_mtime, -counter, entry.path, name, st, kind)
                    if len(heap) < limit:
                        heapq.heappush(heap, item)
                    elif limit and item > heap[0]:
                        heapq.heapreplace(heap, item)
            if stats["incomplete"]:
                level, nxt = [], []
                break
        level = nxt
    rows = []
    for mtime, _c, path, name, st, kind in sorted(heap, reverse=True):
        row = {"name": nfc(name), "path": path, "type": kind,
               "size": st.st_size if kind == "file" else None,
               "size_text": human_size(st.st_size) if kind == "file" else None,
               "mtime": fmt_time(mtime), "folder": os.path.dirname(path)}
        if kind == "symlink":
            try:
                row["target"] = os.readlink(path)
            except OSError:
                row["target"] = None
        rows.append(row)
    return rows, stats


# ---------------------------------------------------------------------------------------------
# file_info

# What each suffix should be by content (sniff kinds); a mismatch is reported.
SUFFIX_KINDS = {
    ".xlsx": {"xlsx"}, ".xlsm": {"xlsm", "xlsx"}, ".xlsb": {"xlsb"}, ".docx": {"docx"}, ".docm": {"docx"},
    ".pptx": {"pptx"}, ".xls": {"xls", "et"}, ".doc": {"doc", "wps"}, ".ppt": {"ppt"}, ".wps": {"wps", "doc"},
    ".et": {"et", "xls"}, ".pdf": {"pdf"}, ".rtf": {"rtf"}, ".odt": {"odt"}, ".ods": {"ods"}, ".odp": {"odp"},
    ".zip": {"zip", "xlsx", "docx", "pptx"}, ".png": {"png"}, ".jpg": {"jpeg"}, ".jpeg": {"jpeg"},
    ".gif": {"gif"}, ".bmp": {"bmp"}, ".tif": {"tiff"}, ".tiff": {"tiff"}, ".webp": {"webp"},
    ".gz": {"gzip"}, ".rar": {"rar"}, ".7z": {"7z"}, ".html": {"html", "text"}, ".htm": {"html", "text"},
    ".csv": {"text", "empty"}, ".txt": {"text", "empty"}, ".json": {"text", "empty"}, ".md": {"text", "empty"},
    ".xml": {"xml", "text"},
}


def _owner(uid, gid):
    owner = group = None
    try:
        import pwd
        owner = pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError, OverflowError):
        owner = None
    try:
        import grp
        group = grp.getgrgid(gid).gr_name
    except (ImportError, KeyError, OverflowError):
        group = None
    return (owner if owner is not None else str(uid)), (group if group is not None else str(gid))


def _birthtime(st):
    value = getattr(st, "st_birthtime", None)
    if value:
        return value
    if IS_WINDOWS:   # pragma: no cover - before Python 3.12 st_ctime is the creation time there
        return st.st_ctime
    return None


def file_details(path, sniff=None, deadline=None):
    """Everything about one path, using lstat (a link is described, and its target named)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise ToolError("找不到 %s。请确认路径和文件名" % path)
    except PermissionError:
        raise ToolError("没有权限查看 %s 的信息" % path)
    except OSError as exc:
        raise os_error(exc, path, "读取文件信息")
    kind = entry_type(st.st_mode)
    name = os.path.basename(path.rstrip("/\\")) or path
    owner, group = _owner(st.st_uid, st.st_gid)
    out = {
        "name": nfc(name), "path": path, "type": kind,
        "size": st.st_size, "size_text": human_size(st.st_size),
        "modified": fmt_time(st.st_mtime), "created": fmt_time(_birthtime(st)),
        "accessed": fmt_time(st.st_atime),
        "permissions": stat.filemode(st.st_mode), "mode_octal": "0o%03o" % stat.S_IMODE(st.st_mode),
        "owner": owner, "group": group, "uid": st.st_uid, "gid": st.st_gid,
        "readable": os.access(path, os.R_OK), "writable": os.access(path, os.W_OK),
        "executable": kind == "file" and os.access(path, os.X_OK),
        "hidden": is_hidden(name, st), "is_symlink": kind == "symlink",
    }
    if not IS_WINDOWS:
        out["changed"] = fmt_time(st.st_ctime)      # POSIX ctime: last metadata change
    if out["created"] is None:
        out["created_note"] = "此系统的文件接口不提供创建时间"
    if kind == "symlink":
        try:
            out["link_target"] = os.readlink(path)
        except OSError:
            out["link_target"] = None
        out["real_path"] = os.path.realpath(path)
        try:
            tst = os.stat(path)
            out["target_type"] = entry_type(tst.st_mode)
            if out["target_type"] == "file":
                out["target_size"] = tst.st_size
                out["target_size_text"] = human_size(tst.st_size)
        except OSError:
            out["target_type"] = "missing"
            out["note"] = "这是一个失效的链接：它指向的目标不存在"
    if kind == "dir":
        out["size"] = None
        out["size_text"] = None
        count, complete = 0, True
        try:
            with os.scandir(path) as it:
                for count, _entry in enumerate(it, 1):
                    if count >= 100000 or (count % 1000 == 0 and _expired(deadline)):
                        complete = False
                        break
            out["entries"] = count
            if not complete:
                out["entries_note"] = "条目很多，只数到 %d 个" % count
        except OSError:
            out["entries"] = None
    real_file = kind == "file" or (kind == "symlink" and out.get("target_type") == "file")
    if real_file and sniff is not None and out["readable"]:
        try:
            k = sniff(path)
            out["content_kind"] = k.kind
            out["content_detail"] = k.detail
            if getattr(k, "encrypted", False):
                out["encrypted"] = True
            if getattr(k, "encoding", None) and k.kind in ("text", "html", "xml"):
                out["text_encoding"] = k.encoding
            ext = os.path.splitext(name)[1].lower()
            out["extension"] = ext or None
            expected = SUFFIX_KINDS.get(ext)
            if expected and k.kind not in expected and k.kind != "empty":
                out["suffix_mismatch"] = True
                out["note"] = "后缀是 %s，但内容其实是%s；按内容选择读取方式" % (ext, _spaced(k.detail))
        except OSError:
            pass
    return out


# ---------------------------------------------------------------------------------------------
# delete_file: which names may be deleted

_LOOKALIKE_SLASHES = "\u2215\u2044\u29f8\u29f9\u2571\u2572\uff0f\uff3c\u2216\u244a\u3033\u30fb\u2afd\u2f03"
_LOOKALIKE_DOTS = "\u2024\u2025\u2026\uff0e\ufe52\u3002\uff61\u00b7\u0701\u0702\u2e2e\ua4f8\u2e31"
_RESERVED_WINDOWS = {"con", "prn", "aux", "nul", "clock$", "conin$", "conout$"} | {
    "com%d" % i for i in range(10)} | {"lpt%d" % i for i in range(10)}
_DRIVE = re.compile(r"^[A-Za-z]:")
_ENV = re.compile(r"^\$(\{|[A-Za-z_])|%[A-Za-z_][A-Za-z0-9_()]*%")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")


def _refuse(why, raw):
    raise InputError("拒绝删除 %s：%s。delete_file 只删除工作空间里的单个文件，路径要写成工作空间内的相对路径，"
                     "如 报告/9月.docx" % (raw, why))


def check_delete_name(raw):
    """Validate the text of a delete path (before touching the file system); returns its parts.

    Refuses: empty, NUL and control characters, ``~``, absolute POSIX and Windows paths (drive,
    UNC, leading slash), ``file://`` and environment variables, ``..`` (also percent-encoded or
    written with look-alike dots and slashes), wildcards ``* ? [``, Windows stream names (``:``),
    device names (CON, NUL...) and components ending in a dot or space."""
    if not isinstance(raw, str) or not raw.strip():
        raise InputError("path 不能为空：请给出工作空间里要删除的文件的相对路径，如 报告/9月.docx")
    shown = raw if len(raw) <= 200 else raw[:200] + "…"
    if "\x00" in raw or any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in raw):
        _refuse("路径里有空字符或控制字符", repr(shown))
    text = raw.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    if text.lower().startswith("file:"):
        _refuse("不接受 file:// 这样的地址", shown)
    if re.match(r"~[A-Za-z0-9._-]*(?:[/\\]|$)", text):      # ~, ~/x, ~user/x (not Office's ~$x owner files)
        _refuse("不接受 ~ 开头的路径（那是主目录，不是工作空间）", shown)
    if text.startswith(("/", "\\")) or _DRIVE.match(text) or os.path.isabs(text):
        _refuse("不接受绝对路径", shown)
    if _ENV.search(text):
        _refuse("不展开环境变量（$HOME、%USERPROFILE% 之类）", shown)
    if _GLOB_CHARS & set(text):
        _refuse("路径含通配符 * ? [，一次只能删一个明确的文件，不会展开通配符", shown)
    decoded = text
    for _ in range(3):                      # %252e%252e is %2e%2e once decoded
        if not _PERCENT.search(decoded):
            break
        decoded = urllib.parse.unquote(decoded)
    lookalike = unicodedata.normalize("NFKC", decoded)
    lookalike = lookalike.translate({ord(c): "/" for c in _LOOKALIKE_SLASHES})
    lookalike = lookalike.translate({ord(c): "." for c in _LOOKALIKE_DOTS})
    seps = len(re.findall(r"[/\\]", text))
    for variant, why in ((decoded, "百分号编码（%2e、%2f 之类）"), (lookalike, "外形像 / 或 . 的特殊字符")):
        if variant == text:
            continue
        vparts = re.split(r"[/\\]", variant)
        if len(re.findall(r"[/\\]", variant)) > seps or variant.startswith(("~", "/", "\\")) or \
                _DRIVE.match(variant) or any(p.strip() == ".." or (p.strip(". ") == "" and ".." in p)
                                             for p in vparts):
            _refuse("路径用%s拼出了目录穿越、分隔符或别的位置" % why, shown)
    parts = [p for p in re.split(r"[/\\]", text) if p not in ("", ".")]
    if not parts:
        _refuse("这指的是工作空间本身，不是一个文件", shown)
    for p in parts:
        if p == ".." or (p.strip(". ") == "" and ".." in p):
            _refuse("路径里有 ..（不能跳出工作空间）", shown)
        if ":" in p:
            _refuse("文件名里不能有冒号（Windows 会把它当成驱动器或隐藏的数据流）", shown)
        if p != p.rstrip(". "):
            _refuse("文件名或文件夹名以点或空格结尾（Windows 会悄悄去掉它们，指向的可能是另一个文件）", shown)
        if p.split(".")[0].strip().lower() in _RESERVED_WINDOWS:
            _refuse("%s 是 Windows 的设备名，不是普通文件" % p, shown)
    return parts


def _inside(path, folder):
    path, folder = os.path.normcase(path), os.path.normcase(folder)
    return path == folder or path.startswith(folder.rstrip("\\/") + os.sep)


def workspace_relative(raw, workspace):
    """``raw`` with a leading workspace prefix taken off: the other tools answer with absolute
    paths (``/home/u/.xla/workspace/报表.xlsx``) and the model passes them back as it got them.
    Only the text is cut (no normalising, so ``…/workspace/../x`` keeps its ``..`` and is refused
    by :func:`check_delete_name` like any other); everything else is left for the checks."""
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        text = text[1:-1].strip()
    prefixes = {workspace, os.path.realpath(workspace), "~/.xla/workspace", "~\\.xla\\workspace"}
    for prefix in sorted(prefixes, key=len, reverse=True):
        for form in {prefix, prefix.replace("\\", "/"), prefix.replace("/", "\\")}:
            head, rest = text[:len(form)], text[len(form):]
            same = head.lower() == form.lower() if os.name == "nt" else head == form
            if same and rest[:1] in ("/", "\\") and rest.strip("/\\"):
                return rest.lstrip("/\\")
    return raw


def resolve_delete(raw, workspace):
    """(absolute path, lstat, kind, real workspace) to move to the trash, after every check;
    raises InputError/ToolError.

    Checks on disk, each walked the way the kernel follows it (``resolve.walk``: by descriptor,
    every link, at any depth; what cannot be followed is refused): the parent really lies inside
    the (real) workspace - a link or junction among the parents must point inside too; the target
    exists; a link to outside is refused; folders and special files are refused. The move itself
    walks the path again and checks it is still inside (``files.move_to_trash(within=...)``)."""
    parts = check_delete_name(workspace_relative(raw, workspace))
    if not os.path.isdir(workspace):
        raise ToolError("工作空间 %s 还不存在，里面没有可以删除的文件" % workspace)
    with resolve.walk(workspace) as ws:
        real_ws = ws.real
    path = os.path.join(workspace, *parts)
    with resolve.walk(path, follow_final=False) as entry:
        real_parent, st = entry.folder, entry.st
    if not _inside(real_parent, real_ws):
        _refuse("路径经过的文件夹链接指向工作空间之外（%s）" % real_parent, raw)
    if st is None:
        raise ToolError("工作空间里没有 %s。请先用 list_dir 或 find_files 查看工作空间（%s）里的文件名" % (
            "/".join(parts), workspace))
    kind = entry_type(st.st_mode)
    junction = getattr(st, "st_reparse_tag", 0) == 0xA0000003     # IO_REPARSE_TAG_MOUNT_POINT
    if kind == "symlink" or junction:
        with resolve.walk(path) as pointed:
            real, target_st = pointed.real, pointed.st
        if not _inside(real, real_ws):
            _refuse("它是一个链接，指向工作空间之外（%s）" % real, raw)
        if target_st is not None and stat.S_ISDIR(target_st.st_mode):
            _refuse("它是指向文件夹的链接，不是文件", raw)
        return path, st, "symlink", real_ws
    if kind == "dir":
        _refuse("它是文件夹。delete_file 不删除文件夹（也不递归删除），请逐个删除里面的文件", raw)
    if kind != "file":
        _refuse("它不是普通文件（设备、管道或套接字）", raw)
    return path, st, kind, real_ws
