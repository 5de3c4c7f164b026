"""delete_file: remove ONE file from the workspace - recoverably, into the toolbox trash.

Why so strict: a model can be talked into "clean up" anything, and a deleted file is the one
mistake a user cannot undo. So this tool accepts only a relative path inside the workspace
``~/.xla/workspace`` and refuses, before touching anything: absolute paths (POSIX and Windows
drive/UNC forms), ``~``, ``..`` (also percent-encoded or spelled with look-alike dots/slashes such
as ``．．／``), wildcards, NUL and control characters, environment variables, Windows stream and
device names; then, on disk: parents that are links or junctions leading out, a target link
pointing outside, folders (no recursive delete) and special files - every link followed the way
the kernel follows it (``xlakit.fs.resolve``), at any depth. The file is then MOVED, through the
descriptor of the folder that walk reached, to
``~/.xla/trash/<time>-<id>/`` (kept for xlakit.fs.files.TRASH_DAYS days) and the answer says where it
went and how to put it back.

Parameters: path (required), relative to the workspace, e.g. ``报告/9月.docx``.

Returns: deleted (name), path, size, size_text, type (file or symlink - a link is removed, never
its target), trash_path, trash_id (restore_file's ``item``), restore (how to undo), kept_days.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths, files  # noqa: E402
from xlakit.fs import filetools as ft  # noqa: E402


def main(params):
    workspace = paths.workspace_dir()
    path, st, kind, real_ws = ft.resolve_delete(params.get("path"), workspace)
    name = os.path.basename(path)
    if kind == "file" and not name.startswith(("~$", ".~lock.")):
        files.check_not_open(path)           # an open document would be saved back by its program
    # walked again the kernel's way, the deny list on its real place, renamed through the walked
    # folder's descriptor, and only if it still really lies in the workspace
    moved = files.move_to_trash(path, within=real_ws)
    out = {"deleted": ft.nfc(os.path.basename(path)), "path": path, "type": kind,
           "size": st.st_size if kind == "file" else None,
           "size_text": ft.human_size(st.st_size) if kind == "file" else None,
           "trash_path": moved["trash_path"], "trash_id": os.path.basename(os.path.dirname(moved["trash_path"])),
           "kept_days": moved["kept_days"]}
    out["restore"] = "已移到 %s；要放回 %s，调用 restore_file，item 填「%s」（回收站保留 %d 天）" % (
        moved["trash_path"], path, out["trash_id"], moved["kept_days"])
    if kind == "symlink":
        out["note"] = "删除的是链接本身，它指向的文件没有改动"
    return out


if __name__ == "__main__":
    rt.run(main)
