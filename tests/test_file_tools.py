"""list_dir, find_files, file_info, delete_file and read_text_file, spawned as the host runs them,
on real files made in the test's private HOME (no fixtures from outside the repository)."""
import json
import os
import shutil
import sys
import unicodedata
import zipfile

import pytest

from conftest import ROOT, ok, fail
from xlakit.fs import filetools as ft

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
SAMPLE_XLSX = os.path.join(ROOT, "examples", "示例台账.xlsx")


def write(path, data=b"x", mtime=None):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "wb") as fh:
        fh.write(data if isinstance(data, bytes) else data.encode("utf-8"))
    if mtime is not None:
        os.utime(str(path), (mtime, mtime))
    return str(path)


@pytest.fixture
def ws(home):
    path = home / ".xla" / "workspace"
    path.mkdir(parents=True)
    return path


# ------------------------------------------------------------------------------------------------
# Pure helpers

def test_human_size():
    assert [ft.human_size(n) for n in (0, 512, 1024, 3174, 10 * 1024 ** 2, 5 * 1024 ** 4)] == \
        ["0B", "512B", "1KB", "3.1KB", "10MB", "5TB"]


def test_natural_order():
    names = ["第10章.docx", "第2章.docx", "第1章.docx", "B.txt", "a.txt"]
    assert sorted(names, key=ft.natural_key) == ["a.txt", "B.txt", "第1章.docx", "第2章.docx", "第10章.docx"]


@pytest.mark.parametrize("pattern,name,rel,expected", [
    ("*.xlsx", "报表.XLSX", None, True), ("*.XLSX", "报表.xlsx", None, True),
    ("**/*.xlsx", "a.xlsx", "x/y/a.xlsx", True), ("报表", "9月报表汇总.xlsx", None, True),
    ("报表", "合同.docx", None, False), ("*.{xlsx,csv}", "a.csv", None, True),
    ("*.xlsx|*.csv", "a.csv", None, True), ("*.xlsx *.csv", "a.csv", None, True),
    ("2024/*.xlsx", "a.xlsx", "docs/2024/a.xlsx", True), ("2024/*.xlsx", "a.xlsx", "docs/2023/a.xlsx", False),
    ("\"*.pdf\"", "x.PDF", None, True), ("ＲＥＰＯＲＴ", "report.txt", None, True),
    (unicodedata.normalize("NFC", "报表é"), unicodedata.normalize("NFD", "报表é.txt"), None, True),
    ("data?.csv", "data1.csv", None, True), ("[ab].txt", "b.txt", None, True),
])
def test_lenient_patterns(pattern, name, rel, expected):
    assert ft.Matcher(pattern).match(name, rel or name) is expected


# ------------------------------------------------------------------------------------------------
# list_dir

@pytest.fixture
def folder(home):
    base = home / "资料"
    write(base / "第10章.docx", b"a" * 3000, mtime=1_600_000_000)
    write(base / "第2章.docx", b"a" * 10, mtime=1_700_000_000)
    write(base / "大文件.bin", b"a" * 50000, mtime=1_500_000_000)
    write(base / ".隐藏.txt", b"h")
    (base / "子文件夹").mkdir()
    os.symlink(str(base / "第2章.docx"), str(base / "链接.docx"))
    os.symlink(str(base / "不存在"), str(base / "坏链接"))
    return base


def test_list_dir_by_name(run, folder):
    data = ok(run("list_dir", {"path": "~/资料"}))
    names = [e["name"] for e in data["entries"]]
    assert names[0] == "子文件夹"                                     # folders first
    assert names.index("第2章.docx") < names.index("第10章.docx")     # numbers as numbers
    assert ".隐藏.txt" not in names and data["summary"]["hidden_skipped"] == 1
    big = [e for e in data["entries"] if e["name"] == "大文件.bin"][0]
    assert big["size"] == 50000 and big["size_text"] == "48.8KB" and big["type"] == "file"
    link = [e for e in data["entries"] if e["name"] == "链接.docx"][0]
    assert link["type"] == "symlink" and link["target"].endswith("第2章.docx") and link["target_type"] == "file"
    broken = [e for e in data["entries"] if e["name"] == "坏链接"][0]
    assert broken["target_type"] == "missing"
    s = data["summary"]
    assert (s["files"], s["dirs"], s["others"], s["total_size"]) == (3, 1, 2, 53010)
    assert s["total_size_text"] == "51.8KB" and data["omitted"] == 0 and data["truncated"] is False


def test_list_dir_sort_and_limit(run, folder):
    data = ok(run("list_dir", {"path": str(folder), "sort_by": "size", "limit": 2}))
    assert [e["name"] for e in data["entries"]] == ["大文件.bin", "第10章.docx"]
    assert data["omitted"] == 4 and data["next_offset"] == 2 and data["total"] == 6
    rest = ok(run("list_dir", {"path": str(folder), "sort_by": "size", "limit": 10, "offset": 2}))
    assert rest["returned"] == 4
    by_time = ok(run("list_dir", {"path": str(folder), "sort_by": "time", "hidden": True}))
    files = [e["name"] for e in by_time["entries"] if e["name"].endswith((".docx", ".bin")) and e["type"] == "file"]
    assert files == ["第2章.docx", "第10章.docx", "大文件.bin"]
    assert ".隐藏.txt" in [e["name"] for e in by_time["entries"]]


def test_list_dir_nfd_names_come_back_nfc(run, home):
    nfd = unicodedata.normalize("NFD", "Café报表.txt")
    write(home / "d" / nfd)
    data = ok(run("list_dir", {"path": "~/d"}))
    assert data["entries"][0]["name"] == unicodedata.normalize("NFC", "Café报表.txt")


def test_list_dir_big_folder_stays_within_the_cap(run, home):
    base = home / "big"
    base.mkdir()
    for i in range(1500):
        (base / ("文件名比较长的一个文件_%04d.txt" % i)).write_bytes(b"")
    data = ok(run("list_dir", {"path": "~/big", "limit": 1000}))
    assert data["truncated"] is True and 0 < data["returned"] < 1000 and data["total"] == 1500
    assert data["next_offset"] == data["returned"] and any("offset" in w for w in data["warnings"])


def test_list_dir_default_is_home_and_workspace_names(run, home, ws):
    write(ws / "报告" / "a.txt")
    assert ok(run("list_dir", {}))["path"] == str(home)
    data = ok(run("list_dir", {"path": "报告"}))
    assert data["path"] == str(ws / "报告") and data["entries"][0]["name"] == "a.txt"


def test_list_dir_errors(run, folder):
    assert "不是文件夹" in fail(run("list_dir", {"path": str(folder / "第2章.docx")}))
    assert "找不到" in fail(run("list_dir", {"path": "~/没有这个文件夹"}))


@pytest.mark.skipif(IS_ROOT or os.name == "nt", reason="root reads every folder")
def test_list_dir_unreadable_folder(run, home):
    locked = home / "锁住"
    locked.mkdir()
    os.chmod(str(locked), 0)
    try:
        assert "权限" in fail(run("list_dir", {"path": "~/锁住"}))
    finally:
        os.chmod(str(locked), 0o755)


# ------------------------------------------------------------------------------------------------
# find_files

@pytest.fixture
def tree(home):
    base = home / "项目"
    write(base / "2024" / "九月报表.xlsx", mtime=1_700_000_300)
    write(base / "2024" / "十月报表.XLSX", mtime=1_700_000_400)
    write(base / "2023" / "报表.xlsx", mtime=1_600_000_000)
    write(base / "a" / "b" / "c" / "d" / "e" / "f" / "g" / "深处报表.xlsx", mtime=1_700_000_000)
    write(base / ".git" / "报表.xlsx")
    write(base / "node_modules" / "pkg" / "报表.xlsx")
    write(base / "__pycache__" / "报表.xlsx")
    write(base / ".hidden" / "报表.xlsx")
    write(base / "说明.txt", mtime=1_700_000_500)
    write(base / unicodedata.normalize("NFD", "résumé报表.csv"), mtime=1_700_000_200)
    return base


def test_find_files_glob_newest_first(run, tree):
    data = ok(run("find_files", {"path": "~/项目", "pattern": "*.xlsx"}))
    names = [e["name"] for e in data["entries"]]
    assert names == ["十月报表.XLSX", "九月报表.xlsx", "报表.xlsx"]           # skipped dirs and depth 6
    assert data["matched"] == 3 and data["pattern_kind"] == "glob" and data["incomplete"] is False
    assert data["depth_limited"] is True and data["dirs_skipped"] >= 4
    assert data["entries"][0]["folder"].endswith("2024") and data["entries"][0]["mtime"]


def test_find_files_lenient_forms(run, tree):
    for pattern in ("**/*.XLSX", "*.{xlsx,csv}", "报表"):
        data = ok(run("find_files", {"path": "~/项目", "pattern": pattern, "depth": 20}))
        assert "深处报表.xlsx" in [e["name"] for e in data["entries"]], pattern
    data = ok(run("find_files", {"path": "~/项目", "pattern": "报表", "depth": 20}))
    assert data["pattern_kind"] == "substring" and data["matched"] == 5
    assert unicodedata.normalize("NFC", "résumé报表.csv") in [e["name"] for e in data["entries"]]
    data = ok(run("find_files", {"path": "~/项目", "pattern": "2024/*报表*"}))
    assert sorted(e["name"] for e in data["entries"]) == ["九月报表.xlsx", "十月报表.XLSX"]


def test_find_files_limit_type_and_hidden(run, tree):
    data = ok(run("find_files", {"path": "~/项目", "pattern": "报表", "limit": 2, "depth": 20}))
    assert data["returned"] == 2 and data["matched"] == 5 and data["truncated"] is True
    dirs = ok(run("find_files", {"path": "~/项目", "pattern": "20*", "type": "dir"}))
    assert sorted(e["name"] for e in dirs["entries"]) == ["2023", "2024"]
    hidden = ok(run("find_files", {"path": "~/项目", "pattern": "*.xlsx", "skip_hidden": False}))
    assert str(tree / ".hidden" / "报表.xlsx") in [e["path"] for e in hidden["entries"]]
    assert str(tree / ".git" / "报表.xlsx") not in [e["path"] for e in hidden["entries"]]


def test_find_files_searches_the_workspace_not_the_trash(run, home, ws):
    write(ws / "输出" / "汇总.xlsx")
    write(home / ".xla" / "trash" / "20250101-x" / "汇总.xlsx")
    write(home / ".xla" / "backup" / "汇总.xlsx")
    data = ok(run("find_files", {"pattern": "汇总"}))
    assert [e["path"] for e in data["entries"]] == [str(ws / "输出" / "汇总.xlsx")]


def test_find_files_nothing_found_says_names_only(run, tree):
    data = ok(run("find_files", {"path": "~/项目", "pattern": "发票"}))
    assert data["matched"] == 0 and data["entries"] == []
    assert any("文件名" in w and "内容" in w for w in data["warnings"])


def test_find_files_time_budget_returns_incomplete(run, tree):
    # A deadline that is already over when the walk starts: the answer is still a success.
    data = ok(run("find_files", {"path": "~/项目", "pattern": "*"}, extra_env={"XLA_DEADLINE": "0.001"}))
    assert data["incomplete"] is True and any("不全" in w for w in data["warnings"])


def test_find_files_does_not_follow_directory_links(run, home, tree):
    os.symlink(str(tree), str(tree / "2024" / "环"))          # a loop
    data = ok(run("find_files", {"path": "~/项目", "pattern": "环", "depth": 20}))
    assert data["matched"] == 1 and data["entries"][0]["type"] == "symlink"


def test_find_files_errors(run, tree):
    assert "pattern" in fail(run("find_files", {"path": "~/项目", "pattern": "  "}))
    assert "找不到" in fail(run("find_files", {"path": "~/没有", "pattern": "a"}))
    assert "不是文件夹" in fail(run("find_files", {"path": "~/项目/说明.txt", "pattern": "a"}))


# ------------------------------------------------------------------------------------------------
# file_info

def test_file_info_regular_file(run, home):
    path = write(home / "说明.txt", "你好，世界\n")
    os.chmod(path, 0o640)
    data = ok(run("file_info", {"path": "~/说明.txt"}))
    assert data["type"] == "file" and data["size"] == len("你好，世界\n".encode()) and data["size_text"] == "16B"
    assert data["permissions"] == "-rw-r-----" and data["mode_octal"] == "0o640"
    assert data["readable"] and data["writable"] and not data["is_symlink"]
    assert data["content_kind"] == "text" and data["extension"] == ".txt" and not data.get("suffix_mismatch")
    assert data["modified"] and data["accessed"]
    if sys.platform.startswith("linux"):
        assert data["created"] is None and data["created_note"]
    if hasattr(os, "getuid"):
        import pwd
        assert data["owner"] == pwd.getpwuid(os.getuid()).pw_name and data["uid"] == os.getuid()


def test_file_info_suffix_lies(run, home):
    shutil.copy(SAMPLE_XLSX, str(home / "报表.xls"))
    data = ok(run("file_info", {"path": "~/报表.xls"}))
    assert data["content_kind"] == "xlsx" and data["suffix_mismatch"] is True
    assert data["read_with"] == "read_spreadsheet" and any(".xls" in w for w in data["warnings"])
    write(home / "网页.xls", "<html><body><table><tr><td>1</td></tr></table></body></html>")
    assert ok(run("file_info", {"path": "~/网页.xls"}))["content_kind"] == "html"
    write(home / "其实是PDF.docx", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n")
    data = ok(run("file_info", {"path": "~/其实是PDF.docx"}))
    assert data["content_kind"] == "pdf" and data["suffix_mismatch"] is True


def test_file_info_folder_and_links(run, home):
    write(home / "夹" / "a.txt")
    write(home / "夹" / "b.txt")
    data = ok(run("file_info", {"path": "~/夹"}))
    assert data["type"] == "dir" and data["entries"] == 2 and data["permissions"].startswith("d")
    os.symlink(str(home / "夹" / "a.txt"), str(home / "链接"))
    data = ok(run("file_info", {"path": "~/链接"}))
    assert data["type"] == "symlink" and data["is_symlink"] and data["link_target"] == str(home / "夹" / "a.txt")
    assert data["real_path"] == os.path.realpath(str(home / "夹" / "a.txt")) and data["target_type"] == "file"
    os.symlink(str(home / "没有"), str(home / "坏链接"))
    data = ok(run("file_info", {"path": "~/坏链接"}))
    assert data["target_type"] == "missing" and "失效" in data["note"]


def test_file_info_missing(run):
    assert "找不到" in fail(run("file_info", {"path": "~/没有这个文件.txt"}))


# ------------------------------------------------------------------------------------------------
# delete_file

def test_delete_moves_to_trash_and_says_how_to_restore(run, home, ws):
    path = write(ws / "报告" / "9月.docx", b"content-123")
    data = ok(run("delete_file", {"path": "报告/9月.docx"}))
    assert not os.path.exists(path) and os.path.isdir(str(ws / "报告"))
    assert data["deleted"] == "9月.docx" and data["size"] == 11 and data["kept_days"] >= 1
    assert data["trash_path"].startswith(str(home / ".xla" / "trash"))
    with open(data["trash_path"], "rb") as fh:
        assert fh.read() == b"content-123"
    assert data["trash_path"] in data["restore"] and path in data["restore"]
    # the same name again is gone now
    assert "没有" in fail(run("delete_file", {"path": "报告/9月.docx"}))


def test_delete_backslash_separator_and_dot_segments(run, ws):
    write(ws / "报告" / "a.txt")
    ok(run("delete_file", {"path": "./报告\\a.txt"}))
    assert not os.path.exists(str(ws / "报告" / "a.txt"))


ESCAPES = [
    "..", "../秘密.txt", "报告/../../秘密.txt", "..\\秘密.txt", "....//秘密.txt", "%2e%2e/秘密.txt",
    "%2e%2e%2f秘密.txt", "%252e%252e/秘密.txt", "..%2f秘密.txt", "/etc/passwd", "{outside}",
    "C:\\Windows\\win.ini", "C:/Users/x/秘密.txt", "c:秘密.txt", "\\\\server\\share\\秘密.txt",
    "//server/share/秘密.txt", "\\秘密.txt", "~/秘密.txt", "~root/秘密.txt", "~", "$HOME/秘密.txt",
    "${HOME}/秘密.txt", "%USERPROFILE%\\秘密.txt", "file:///etc/passwd", "*.txt", "报告/*", "a?.txt",
    "[ab].txt", "a.txt\x00.docx", "a\nb.txt", "．．／秘密.txt", "‥/秘密.txt", "..∕秘密.txt", "..／秘密.txt",
    "\uff0e\uff0e\\秘密.txt", "．．", "a.txt:stream", "CON", "nul.txt", "COM1.log", "a.txt.", "报告 /x.txt",
    "", "   ", ".", "./", "报告/.",
]


@pytest.mark.parametrize("attempt", ESCAPES, ids=[repr(a) for a in ESCAPES])
def test_delete_refuses_escapes(run, home, ws, attempt):
    secret = write(home / "秘密.txt", b"keep me")
    write(ws / "a.txt", b"in workspace")
    write(ws / "报告" / "x.txt")
    attempt = attempt.replace("{outside}", secret)
    raw = json.dumps({"path": attempt}, ensure_ascii=False)
    error = fail(run("delete_file", None, raw_input=raw))
    assert "拒绝" in error or "不能为空" in error or "不能" in error, error
    assert os.path.exists(secret) and os.path.exists(str(ws / "a.txt")) and os.path.isdir(str(ws / "报告"))
    assert not os.path.exists(str(home / ".xla" / "trash")) or not os.listdir(str(home / ".xla" / "trash"))


def test_delete_refuses_links_out(run, home, ws):
    secret = write(home / "秘密.txt", b"keep me")
    outside = home / "外面"
    write(outside / "机密.txt", b"keep")
    os.symlink(secret, str(ws / "链接.txt"))                     # a file link pointing out
    os.symlink(str(outside), str(ws / "外链目录"))                 # a folder link (junction-like) out
    assert "工作空间之外" in fail(run("delete_file", {"path": "链接.txt"}))
    assert "工作空间之外" in fail(run("delete_file", {"path": "外链目录/机密.txt"}))
    assert "工作空间之外" in fail(run("delete_file", {"path": "外链目录"}))
    assert os.path.exists(secret) and os.path.exists(str(outside / "机密.txt"))
    assert os.path.islink(str(ws / "链接.txt"))


def test_delete_link_inside_removes_only_the_link(run, ws):
    target = write(ws / "真文件.txt", b"data")
    os.symlink(target, str(ws / "快捷方式.txt"))
    data = ok(run("delete_file", {"path": "快捷方式.txt"}))
    assert data["type"] == "symlink" and "链接本身" in data["note"]
    assert os.path.exists(target) and not os.path.lexists(str(ws / "快捷方式.txt"))


def test_delete_office_owner_files_and_open_documents(run, ws):
    write(ws / "报告.docx", b"doc")
    write(ws / "~$报告.docx", b"owner")
    assert "打开" in fail(run("delete_file", {"path": "报告.docx"}))     # Word has it open
    assert os.path.exists(str(ws / "报告.docx"))
    ok(run("delete_file", {"path": "~$报告.docx"}))                     # a stale owner file can go
    ok(run("delete_file", {"path": "报告.docx"}))


def test_delete_refuses_folders_and_special_files(run, ws):
    write(ws / "报告" / "a.txt")
    assert "文件夹" in fail(run("delete_file", {"path": "报告"}))
    assert os.path.exists(str(ws / "报告" / "a.txt"))
    if hasattr(os, "mkfifo"):
        os.mkfifo(str(ws / "管道"))
        assert "不是普通文件" in fail(run("delete_file", {"path": "管道"}))


def test_delete_missing_and_no_workspace(run, home):
    assert "还不存在" in fail(run("delete_file", {"path": "a.txt"}))
    (home / ".xla" / "workspace").mkdir(parents=True)
    error = fail(run("delete_file", {"path": "没有.txt"}))
    assert "没有" in error and "list_dir" in error


def test_delete_when_the_workspace_itself_is_a_link(run, home):
    """A user may point the workspace elsewhere: files there are still deletable, escapes are not."""
    real = home / "真正的工作区"
    write(real / "a.txt")
    (home / ".xla").mkdir()
    os.symlink(str(real), str(home / ".xla" / "workspace"))
    secret = write(home / "秘密.txt")
    ok(run("delete_file", {"path": "a.txt"}))
    assert not os.path.exists(str(real / "a.txt"))
    fail(run("delete_file", {"path": "../秘密.txt"}))
    assert os.path.exists(secret)


# ------------------------------------------------------------------------------------------------
# read_text_file

def test_read_encodings(run, home):
    text = "第一行\n第二行 ABC\n第三行\n"
    cases = {"u8.txt": (text.encode("utf-8"), "utf-8"), "bom.txt": (text.encode("utf-8-sig"), "utf-8-sig"),
             "gbk.txt": (text.encode("gb18030"), "gb18030"), "u16.txt": (text.encode("utf-16"), "utf-16"),
             "crlf.txt": (text.replace("\n", "\r\n").encode("gb18030"), "gb18030")}
    for name, (data, codec) in cases.items():
        write(home / name, data)
        got = ok(run("read_text_file", {"path": "~/" + name}))
        assert got["content"] == "第一行\n第二行 ABC\n第三行", name
        assert got["encoding"] == codec and got["encoding_reason"], name
        assert got["total_lines"] == 3 and got["end_line"] == 3 and got["truncated"] is False
    assert ok(run("read_text_file", {"path": "~/crlf.txt"}))["newline"] == "CRLF"


def test_read_windows_and_numbers(run, home):
    write(home / "log.txt", "".join("line %d\n" % i for i in range(1, 101)))
    data = ok(run("read_text_file", {"path": "~/log.txt", "start_line": 10, "max_lines": 5, "line_numbers": True}))
    assert data["content"] == "\n".join("%d| line %d" % (i, i) for i in range(10, 15))
    assert (data["start_line"], data["end_line"], data["returned_lines"], data["total_lines"]) == (10, 14, 5, 100)
    assert data["truncated"] is True and data["next_start_line"] == 15
    tail = ok(run("read_text_file", {"path": "~/log.txt", "tail": True, "max_lines": 3}))
    assert tail["content"] == "line 98\nline 99\nline 100" and tail["start_line"] == 98 and tail["end_line"] == 100
    past = ok(run("read_text_file", {"path": "~/log.txt", "start_line": 500}))
    assert past["content"] == "" and past["returned_lines"] == 0 and past["truncated"] is False
    assert any("100 行" in w for w in past["warnings"])
    write(home / "empty.txt", b"")
    empty = ok(run("read_text_file", {"path": "~/empty.txt"}))
    assert empty["content"] == "" and empty["total_lines"] == 0


def test_read_long_single_line_is_cut(run, home):
    write(home / "min.js", "var a=" + "1234567890" * 100000 + ";")          # one 1,000,007-char line
    data = ok(run("read_text_file", {"path": "~/min.js"}))
    assert data["returned_lines"] == 1 and data["lines_cut"] == 1 and "此行共 1000007 字" in data["content"]
    assert len(data["content"]) < 12000
    write(home / "mixed.txt", "short\n" + "x" * 50000 + "\nend\n")
    data = ok(run("read_text_file", {"path": "~/mixed.txt"}))
    assert data["content"].startswith("short\n") and data["content"].endswith("\nend") and data["lines_cut"] == 1


def test_read_never_exceeds_the_output_cap(run, home):
    # quotes and backslashes double in JSON; control characters become \u00XX
    write(home / "esc.txt", ('"\\' * 40 + "\x01\x02") * 2000 + "\n" + ("\"\\\t" * 300 + "\n") * 200)
    for args in ({"max_chars": 16000}, {"max_chars": 16000, "max_lines": 1}, {"tail": True, "max_chars": 16000}):
        data = ok(run("read_text_file", dict(args, path="~/esc.txt")))     # ok() asserts stdout <= 20,000
        assert data["returned_lines"] >= 1


def test_read_big_file_partially(run, home):
    path = str(home / "big.log")
    with open(path, "wb") as fh:
        for i in range(1, 400001):
            fh.write(("%07d 这是一行日志内容，用来把文件撑大\n" % i).encode("utf-8"))
    assert os.path.getsize(path) > ft.WHOLE_FILE_LIMIT
    head = ok(run("read_text_file", {"path": path, "max_lines": 3}))
    assert head["partial_read"] is True and head["content"].startswith("0000001 ") and head["end_line"] == 3
    assert head["total_lines"] == 400000 and head["next_start_line"] == 4
    mid = ok(run("read_text_file", {"path": path, "start_line": 200000, "max_lines": 2}))
    assert mid["content"].split("\n")[0].startswith("0200000 ")
    tail = ok(run("read_text_file", {"path": path, "tail": True, "max_lines": 2, "line_numbers": True}))
    assert tail["content"] == "399999| 0399999 这是一行日志内容，用来把文件撑大\n400000| 0400000 这是一行日志内容，用来把文件撑大"


def test_read_refuses_binary_and_documents(run, home):
    write(home / "a.bin", b"\x00\x01\x02binary\x00" * 10)
    assert "二进制" in fail(run("read_text_file", {"path": "~/a.bin"}))
    shutil.copy(SAMPLE_XLSX, str(home / "表.txt"))
    error = fail(run("read_text_file", {"path": "~/表.txt"}))
    assert "Excel" in error and "read_spreadsheet" in error


def test_read_errors(run, home):
    (home / "夹").mkdir()
    assert "文件夹" in fail(run("read_text_file", {"path": "~/夹"}))
    assert "找不到" in fail(run("read_text_file", {"path": "~/没有.txt"}))
    write(home / "a.txt", "x")
    assert "编码" in fail(run("read_text_file", {"path": "~/a.txt", "encoding": "klingon"}))


def test_zip_based_docx_detected(run, home):
    path = str(home / "x.docx")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("[Content_Types].xml", '<Types><Override PartName="/word/document.xml" '
                   'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
        z.writestr("word/document.xml", "<w:document/>")
    data = ok(run("file_info", {"path": path}))
    assert data["content_kind"] == "docx" and not data.get("suffix_mismatch")
