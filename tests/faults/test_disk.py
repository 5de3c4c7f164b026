"""Full disk and read-only disk: every writer, on a small tmpfs of its own (``space.in_tmpfs``, a
private mount namespace) holding both HOME (so ``~/.xla/backup``) and the user's folder.

Full disk: one undisturbed run learns the sizes (the new version, the old one), then each run
starts from the same files with the disk filled to exactly N bytes free (whole pages), N swept
over: 0; half the new file (the temp file cut short); exactly the new file (the temp file fits,
the backup of the old one does not); the new file plus the backup less one page. After every run:

- an answer that failed says 「磁盘空间不足」 and what to do (clean the disk, or another disk);
- the target is byte-identical to before, or (the run succeeded) the complete new version with
  the promised backup beside it; every other file is unchanged;
- no temp file is left anywhere on the disk, and every file in ``~/.xla/backup`` is whole;
- at 0 bytes free, and whenever the backup cannot be written, the write is refused (a write
  without its backup is never done; the old backups are not pruned to make room either);
- once the space is back (the filler removed) the call refused at 0 bytes free succeeds at once.

delete_file moves the file to the trash with a rename, which needs no free space: it must succeed
on a full disk, and the file must be whole in the trash.

Read-only: the same tmpfs remounted read-only (``mount -o remount,ro``) and, as the unprivileged
user 65534 (root writes through mode bits), a folder without write permission: a Chinese refusal
(只读 / 没有权限), nothing changed, nothing left behind.
"""
import json
import os
import shutil

import pytest

from . import harness, samples, space, tally

PAGE = space.PAGE
DISK = 8 * 1024 * 1024
ROWS = [["2024-10-01", "新客户", 999], ["2024-10-02", "新客户二", 1000]]
BIG_TEXT = "".join("第%04d行：原有的内容，写长一点好让文件占好几页。\n" % i for i in range(900)).encode("utf-8")


def _xls():
    return samples.made_by("write_spreadsheet", "旧.xls", {"rows": [["日期", "客户", "金额"]] + [
        ["2024-09-%02d" % (i % 28 + 1), "客户%d" % (i % 7), 100 + i] for i in range(1500)]})


WHERE = [{"column": "金额", "op": ">", "value": 101}]
# id -> (tool, args ("@" = in the work folder), target, files before, backup promised)
SCENARIOS = {
    "csv_new": ("write_spreadsheet", {"path": "@新.csv", "rows": [["甲", "乙"]] + ROWS * 400}, "新.csv", {}, False),
    "csv_overwrite": ("write_spreadsheet", {"path": "@账.csv", "rows": [["甲", "乙"]] + ROWS * 400}, "账.csv",
                      {"账.csv": lambda: samples.csv_bytes(1500)}, True),
    "csv_append": ("write_spreadsheet", {"path": "@账.csv", "rows": ROWS, "mode": "append"}, "账.csv",
                   {"账.csv": lambda: samples.csv_bytes(1500)}, True),
    "xlsx_new": ("write_spreadsheet", {"path": "@新.xlsx", "rows": [["甲", "乙"]] + ROWS * 400}, "新.xlsx", {}, False),
    "xlsx_append": ("write_spreadsheet", {"path": "@账.xlsx", "rows": ROWS, "mode": "append"}, "账.xlsx",
                    {"账.xlsx": lambda: samples.xlsx_bytes(1500)}, True),
    "xls_new": ("write_spreadsheet", {"path": "@新.xls", "rows": [["甲", "乙"]] + ROWS * 400}, "新.xls", {}, False),
    "xls_overwrite": ("write_spreadsheet", {"path": "@旧.xls", "rows": [["甲", "乙"]] + ROWS * 400}, "旧.xls",
                      {"旧.xls": _xls}, True),
    "docx_new": ("write_document", {"path": "@报告.docx", "text": "# 标题\n\n" + "正文一段。\n\n" * 300}, "报告.docx",
                 {}, False),
    "docx_append": ("write_document", {"path": "@报告.docx", "text": "追加的一段", "mode": "append"}, "报告.docx",
                    {"报告.docx": lambda: samples.docx_bytes(300)}, True),
    "text_new": ("write_text", {"path": "@说明.txt", "text": BIG_TEXT.decode("utf-8")}, "说明.txt", {}, False),
    "text_append": ("write_text", {"path": "@说明.txt", "text": "追加一行\n", "mode": "append"}, "说明.txt",
                    {"说明.txt": lambda: BIG_TEXT}, True),
    "filter_table": ("filter_table", {"path": "@源.csv", "where": WHERE, "out_path": "@筛.xlsx"}, "筛.xlsx",
                     {"源.csv": lambda: samples.csv_bytes(1500)}, False),
    "pivot_table_over_old": ("pivot_table", {"path": "@源.csv", "row": {"column": "日期"}, "col": {"column": "客户"},
                                             "value": "金额", "out_path": "@透.xlsx"}, "透.xlsx",
                             {"源.csv": lambda: samples.csv_bytes(1500), "透.xlsx": lambda: samples.xlsx_bytes(1500)},
                             True),
    "dedupe_table": ("dedupe_table", {"path": "@源.csv", "keys": ["日期", "客户"], "mode": "remove",
                                      "out_path": "@去重.csv"}, "去重.csv",
                     {"源.csv": lambda: samples.csv_bytes(1500)}, False),
    "clean_table": ("clean_table", {"path": "@源.csv", "out_path": "@清.xlsx"}, "清.xlsx",
                    {"源.csv": lambda: samples.csv_bytes(1500)}, False),
    "draw_chart": ("draw_chart", {"type": "bar", "labels": ["一", "二", "三"], "values": [3, 1, 2],
                                  "file_name": "图"}, "~图.png", {}, False),
    "delete_file": ("delete_file", {"path": "旧.csv"}, "~旧.csv", {"~旧.csv": lambda: samples.csv_bytes(1500)}, False),
}

_BYTES = {}


def _files_before(sid):
    if sid not in _BYTES:
        _BYTES[sid] = {name: make() for name, make in SCENARIOS[sid][3].items()}
    return _BYTES[sid]


def _reset(mount, sid, files):
    home, work = _paths(mount)
    space.unfill(mount)
    for p in (home, work):        # emptied, not removed: the user's folder may be a mount point
        p.mkdir(parents=True, exist_ok=True)
        for child in p.iterdir():
            shutil.rmtree(str(child)) if child.is_dir() and not child.is_symlink() else child.unlink()
    (home / ".xla" / "backup").mkdir(parents=True)   # a user who has written before
    for name, data in files.items():
        p = samples.place(home, work, name)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return home, work


def _paths(mount):
    import pathlib
    return pathlib.Path(mount) / "home", pathlib.Path(mount) / "work"


def _answer(out):
    try:
        return json.loads(out)
    except ValueError:
        return {"ok": None, "raw": out[-2000:]}


def _pages(n):
    return -(-n // PAGE)


def _levels(new_size, old_size, promised):
    """The free-space points of the sweep (bytes, whole pages)."""
    new_p, old_p = _pages(new_size), _pages(old_size)
    levels = {0, (new_p // 2) * PAGE}
    if promised and old_size:
        levels.add(new_p * PAGE)                      # the temp file fits, its backup does not
        levels.add((new_p + old_p - 1) * PAGE)
    return sorted(levels)


def _sweep(sid, mount):
    """The whole full-disk sweep of one scenario, in the child that owns the tmpfs. Returns
    ``{"failures": [...], "counts": {...}, "refused_at": [...]}``."""
    tool, raw, target_name, _before, promised = SCENARIOS[sid]
    files = _files_before(sid)
    counts = dict.fromkeys(tally.ORDER, 0)
    failures, refused_at = [], []
    home, work = _reset(mount, sid, files)
    args = samples.resolve(raw, work)
    target = samples.place(home, work, target_name)
    old = target.read_bytes() if target.exists() else None
    code, out, err, _ = harness.spawn(tool, args, home)
    if code != 0:
        return {"failures": ["%s: the undisturbed run failed: %s %s" % (sid, out, err[-500:])], "counts": counts}
    new = harness.canon(str(target)) if target.exists() else None
    new_size = target.stat().st_size if target.exists() else 0
    levels = _levels(new_size, len(old or b""), promised)
    for free in levels:
        home, work = _reset(mount, sid, files)
        space.fill(mount, free)
        counts["scenarios"] += 1
        code, out, err, _ = harness.spawn(tool, args, home)
        data = _answer(out)
        space.unfill(mount)
        where = "%s at %d bytes free" % (sid, free)
        problems = _check(sid, data, code, err, home, work, target, old, new, promised, counts)
        if tool == "delete_file":
            if not data.get("ok"):
                problems.append("delete_file failed on a full disk (a rename needs no space): %s" % data)
        elif not data.get("ok"):
            refused_at.append(free)
        if tool != "delete_file" and data.get("ok") and (free == 0 or (promised and old and free < _pages(new_size) * PAGE + len(old))):
            problems.append("succeeded without room for the new file and its backup: %s" % str(data)[:300])
        if not problems and not data.get("ok") and free == 0:
            code2, out2, err2, _ = harness.spawn(tool, args, home)   # the space is back: it just works
            if code2 != 0:
                problems.append("the same call failed once the space was back: %s %s" % (out2, err2[-300:]))
        failures += ["%s: %s" % (where, p) for p in problems]
    no_backup = _pages(new_size) * PAGE if promised and old else None
    return {"failures": failures, "counts": counts, "refused_at": refused_at, "levels": levels, "no_backup": no_backup}


def _check(sid, data, code, err, home, work, target, old, new, promised, counts):
    problems = []
    if data.get("ok") is None:
        return ["no JSON answer (exit %s): %s %s" % (code, data.get("raw"), err[-1000:])]
    if not data["ok"]:
        msg = data.get("error", "")
        if "磁盘空间不足" not in msg or "清理" not in msg or "Traceback" in err or code == 0:
            problems.append("not the Chinese full-disk error: %r (exit %s) %s" % (msg, code, err[-800:]))
    counts["files_checked"] += 1
    if target.exists():
        now = harness.canon(str(target))
        if old is not None and target.read_bytes() == old:
            pass
        elif new is not None and now == new:
            if not data["ok"]:
                problems.append("failed, yet the target is the new version")
            elif old is not None and promised:
                counts["files_checked"] += 1
                if not any(open(p, "rb").read() == old for p in harness.backups_of(home)):
                    problems.append("new version in place without the backup of the old one")
        else:
            counts["bytes_lost"] += len(old or b"")
            problems.append("the target is neither the old nor the new version")
    elif old is not None and sid != "delete_file":
        counts["bytes_lost"] += len(old)
        problems.append("the old file is gone")
    elif sid == "delete_file":
        trash = home / ".xla" / "trash"
        counts["files_checked"] += 1
        if not any(open(os.path.join(d, n), "rb").read() == old for d, _s, ns in os.walk(str(trash)) for n in ns
                   if not n.startswith(".xla-")):
            counts["bytes_lost"] += len(old)
            problems.append("the deleted file is not whole in the trash")
        for d, _s, ns in os.walk(str(trash)):
            for n in ns:
                if n == ".xla-trash.json":
                    try:
                        json.load(open(os.path.join(d, n), encoding="utf-8"))
                    except ValueError:
                        problems.append("a half-written trash note (where the file came from) is left")
    for name, data_before in _files_before(sid).items():
        p = samples.place(home, work, name)
        if p != target:
            counts["files_checked"] += 1
            if p.read_bytes() != data_before:
                counts["bytes_lost"] += len(data_before)
                problems.append("%s changed" % name)
    for p in harness.backups_of(home):
        counts["files_checked"] += 1
        if old is None or open(p, "rb").read() != old:
            problems.append("%s is not a whole backup" % os.path.basename(p))
    left = harness.stray_temps(home, work)
    counts["stray_temp_files"] += len(left)
    if left:
        problems.append("temp files left: %s" % [os.path.basename(p) for p in left])
    return problems


@pytest.mark.parametrize("sid", sorted(SCENARIOS))
def test_full_disk(sid, disk):
    _files_before(sid)                       # made outside the namespace, before the fork
    got = disk.in_tmpfs(DISK, lambda mount: _sweep(sid, mount))
    assert "child_error" not in got, got.get("child_error")
    for key, n in got["counts"].items():
        tally.add(key, n)
    assert not got["failures"], "\n".join(got["failures"])
    tool, _a, _t, before, promised = SCENARIOS[sid]
    if tool != "delete_file":
        assert 0 in got["refused_at"], "%s: not refused at 0 bytes free" % sid
    if got["no_backup"] is not None:     # the temp file fits, its backup does not: refused
        assert got["no_backup"] in got["refused_at"], (sid, got["levels"], got["refused_at"])
