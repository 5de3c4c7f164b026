"""find_files: find files and folders by NAME under a folder, newest first.

Why a tool: "帮我找一下上个月的报销单" needs a recursive search that finishes on a home folder with
hundreds of thousands of files, skips what nobody means (.git, node_modules, __pycache__, caches,
recycle bins, hidden folders), and accepts patterns the way models write them: ``*.xlsx``,
``*.XLSX``, ``**/*.xlsx``, ``*.{xlsx,csv}``, ``报表*``, or a bare word that is a case-insensitive
substring of the name. Names are compared normalised (a macOS NFD 报表 equals the NFC one the model
sends; full-width letters equal half-width). It matches names only, never file contents.

A time budget (about 20 s, below the host's 60 s) ends a huge walk with what was found so far and
``incomplete: true`` rather than being killed with nothing.

Parameters: pattern (required), path (root; default the home folder), type file/dir/symlink,
depth (levels below the root, default 6, at most 20), limit (default 50, at most 200),
skip_hidden (default true; the toolbox workspace ~/.xla/workspace is searched anyway).

Returns: path, pattern, pattern_kind glob/substring, matched (all matches seen), returned, entries
[{name, path, folder, type, size, size_text, mtime}], incomplete, depth_limited, scanned, and
dirs_skipped / dirs_unreadable counts.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.fs import filetools as ft  # noqa: E402

MAX_LIMIT = 200
MAX_DEPTH = 20
WALK_BUDGET = 20.0


def _never_searched():
    """The toolbox's own trash, backups, locks and logs: copies and leftovers, never what is meant."""
    return {os.path.normcase(paths.xla_dir(name)): False for name in ("trash", "backup", "locks", "logs")}


def _is_below(path, folder):
    path, folder = os.path.normcase(path), os.path.normcase(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _levels(path, folder):
    return len(os.path.relpath(path, folder).split(os.sep))


def main(params):
    root = paths.resolve_read(params.get("path") or "~", want="dir")
    matcher = ft.Matcher(params.get("pattern"))
    params.setdefault("limit", 50)
    params.setdefault("depth", 6)
    limit = rt.clamp(params, "limit", MAX_LIMIT, 1)
    depth = rt.clamp(params, "depth", MAX_DEPTH, 1)
    skip_hidden = params.get("skip_hidden", True)
    deadline = rt.deadline.sub(WALK_BUDGET)
    kw = dict(limit=limit, type_=params.get("type"), skip_hidden=skip_hidden, deadline=deadline,
              special=_never_searched())
    entries, stats = ft.find_files(root, matcher, depth=depth, **kw)
    # The workspace sits in the hidden ~/.xla: a search from the home (or above) still covers it.
    workspace = paths.workspace_dir()
    if skip_hidden and os.path.isdir(workspace) and not _is_below(root, workspace) and \
            _is_below(workspace, root) and _levels(workspace, root) < depth:
        more, extra = ft.find_files(workspace, matcher, depth=depth - _levels(workspace, root), **kw)
        for key in ("matched", "scanned", "dirs_scanned", "dirs_skipped", "dirs_unreadable"):
            stats[key] += extra[key]
        stats["incomplete"] = stats["incomplete"] or extra["incomplete"]
        stats["depth_limited"] = stats["depth_limited"] or extra["depth_limited"]
        entries = sorted(entries + more, key=lambda e: e["mtime"] or "", reverse=True)[:limit]
    if stats["incomplete"]:
        rt.warn("目录太大，约 %d 秒内只搜索了 %d 个文件夹（%d 个条目）；结果可能不全。"
                "请把 path 缩小到更具体的文件夹，或减小 depth" % (int(WALK_BUDGET), stats["dirs_scanned"],
                                                           stats["scanned"]))
    if stats["matched"] == 0:
        hint = "没有找到名字匹配 %s 的%s。" % (matcher.pattern, {"file": "文件", "dir": "文件夹", "symlink": "链接"}.get(
            params.get("type"), "文件或文件夹"))
        if stats["depth_limited"]:
            hint += "搜索只深入了 %d 层，可以加大 depth；" % depth
        if params.get("skip_hidden", True):
            hint += "隐藏文件夹没有搜索（skip_hidden=false 可包括）；"
        hint += "注意只按文件名匹配，不搜索文件内容"
        rt.warn(hint)
    out = {"path": root, "pattern": matcher.pattern, "pattern_kind": matcher.kind,
           "matched": stats["matched"], "incomplete": stats["incomplete"],
           "depth": depth, "depth_limited": stats["depth_limited"], "scanned": stats["scanned"],
           "dirs_scanned": stats["dirs_scanned"], "dirs_skipped": stats["dirs_skipped"],
           "dirs_unreadable": stats["dirs_unreadable"]}
    page = rt.page_items(entries, limit=limit, key="entries", base=out)
    page.pop("offset", None)
    page.pop("next_offset", None)
    page.pop("total", None)
    page["truncated"] = page["returned"] < stats["matched"]
    if page["returned"] < len(entries):
        rt.warn("结果太长，只返回了最新的 %d 条；请用更具体的 pattern 或 path" % page["returned"])
    return page


if __name__ == "__main__":
    rt.run(main)
