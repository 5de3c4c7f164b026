"""The toolbox trash read back: what delete_file put there, and putting a file back.

delete_file promises "可以恢复" (``files.move_to_trash`` writes ``~/.xla/trash/<stamp>-<key>/<name>``
plus a ``.xla-trash.json`` note of where it came from); without a tool to undo it the model would
have to move files by hand, through run_python. So this lists the trash (what, from where, when,
days left) and restores one entry: the destination is the original place (or a name the caller
gives) resolved by ``paths.resolve_write`` (the deny list judges where it really leads), an
existing file there is never overwritten (the answer offers a free name instead), and the bytes are
written by ``files.atomic_write`` under the target's lock, so a crash leaves either nothing or the
whole file. Only then is the trash entry removed. Links deleted as links come back as links.
"""
import datetime
import json
import os
import shutil
import stat
import time

from ..errors import InputError, ToolError
from ..text import human_size
from . import files, paths

NOTE = ".xla-trash.json"


def _entry(slot_dir, now):
    """One trash entry as a dict, or None for something that is not ours."""
    try:
        names = [n for n in os.listdir(slot_dir) if n != NOTE]
        st_slot = os.stat(slot_dir)
    except OSError:
        return None
    if len(names) != 1:
        return None
    full = os.path.join(slot_dir, names[0])
    try:
        st = os.lstat(full)
    except OSError:
        return None
    info = {}
    try:
        with open(os.path.join(slot_dir, NOTE), encoding="utf-8") as fh:
            info = json.load(fh)
    except (OSError, ValueError):
        pass
    deleted = info.get("deleted_at") or datetime.datetime.fromtimestamp(st_slot.st_mtime).isoformat(timespec="seconds")
    left = files.TRASH_DAYS - (now - st_slot.st_mtime) / 86400.0
    is_link = stat.S_ISLNK(st.st_mode)
    return {"id": os.path.basename(slot_dir), "name": names[0], "original": info.get("original"),
            "deleted_at": deleted, "type": "symlink" if is_link else "file",
            "size": None if is_link else st.st_size, "size_text": None if is_link else _size_text(st.st_size),
            "days_left": max(0, int(left)), "trash_path": full, "_mtime": st_slot.st_mtime}


def _size_text(size):
    return human_size(size)


def entries():
    """Every entry in the trash, newest first."""
    folder = paths.trash_dir()
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    now = time.time()
    out = [e for e in (_entry(os.path.join(folder, n), now) for n in names
                       if os.path.isdir(os.path.join(folder, n))) if e]
    out.sort(key=lambda e: (e["_mtime"], e["id"]), reverse=True)
    for e in out:
        del e["_mtime"]
    return out


def find(item):
    """The one entry ``item`` names: its id, or its file name / original path (newest wins only
    when the caller passes the id; a name deleted twice is a question back)."""
    item = (item or "").strip()
    if not item:
        raise InputError("没有给出要恢复哪个文件。请先不带 item 调用一次，看回收站里有什么，再用其中的 id 或文件名作为 item")
    every = entries()
    by_id = [e for e in every if e["id"] == item]
    if by_id:
        return by_id[0]
    norm = os.path.normcase(os.path.normpath(item))
    hits = [e for e in every if e["name"] == item or (e["original"] and (
        os.path.normcase(os.path.normpath(e["original"])) == norm
        or os.path.normcase(os.path.normpath(e["original"])).endswith(os.sep + norm)))]
    if not hits:
        names = "、".join("「%s」" % e["name"] for e in every[:10])
        raise ToolError("回收站里没有「%s」。%s" % (item, ("现在回收站里有：%s。请用其中的 id 或文件名重试" % names)
                                                   if every else "回收站是空的（删除超过 %d 天的文件已被清除）" % files.TRASH_DAYS),
                        candidates=[_public(e) for e in every[:10]])
    if len(hits) > 1:
        raise ToolError("回收站里有 %d 个「%s」（删除时间不同）。请用 id 指明要恢复哪一个：%s" % (
            len(hits), item, "；".join("%s（%s 删除）" % (e["id"], e["deleted_at"].replace("T", " ")) for e in hits[:5])),
            candidates=[_public(e) for e in hits[:10]])
    return hits[0]


def _public(e):
    return {k: e[k] for k in ("id", "name", "original", "deleted_at", "size_text", "days_left")}


def restore(item, to=None):
    """Put entry ``item`` back at its original place, or at ``to``. Returns (entry, destination)."""
    entry = find(item)
    dest = to or entry["original"]
    if not dest:
        raise InputError("回收站里的「%s」没有记下原来的位置。请用 to 参数给出要恢复到的路径（如 报告/%s）" % (
            entry["name"], entry["name"]), candidates=[_public(entry)])
    dest = paths.resolve_write(dest, "to" if to else "path")
    with files.locked(dest):
        if os.path.lexists(dest):
            free = files.unique_path(dest)
            raise ToolError("「%s」那里已经有一个同名文件，恢复不会覆盖它。要并存，请用 to 参数换个名字恢复，例如 %s；"
                            "要替换，请先确认旧文件不需要了，用 delete_file 删掉它再恢复。两个文件都没有改动" % (dest, free),
                            suggested_to=free)
        src = entry["trash_path"]
        if entry["type"] == "symlink":
            os.symlink(os.readlink(src), dest)
        else:
            st = os.stat(src)

            def _write(tmp):
                with open(src, "rb") as fin, open(tmp, "wb") as fout:
                    shutil.copyfileobj(fin, fout, 1024 * 1024)
            files.atomic_write(dest, _write, backup=False, lock=False)
            try:
                os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))   # the file as it was, dates too
            except OSError:
                pass
    shutil.rmtree(os.path.dirname(src), ignore_errors=True)
    return entry, dest
