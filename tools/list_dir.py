"""list_dir: what is in one folder, with sizes people can read and a summary.

Why a tool: the model must see what a folder holds before it reads, finds or deletes anything,
and a raw directory listing of a Downloads folder is thousands of entries. This one sorts (name
with folders first and numbers in names compared as numbers, or newest / largest first), hides
dot-files and Windows/macOS hidden items unless asked, keeps going when a single entry cannot be
read (that row carries ``error``), and pages within the output cap.

Parameters: path (folder; default the home folder; ``~``, 桌面/下载/文档 and workspace-relative names
work), sort_by name/time/size, sort (how names are ordered: pinyin, the default -- Chinese names by
pinyin, digits by value, ``第2章`` before ``第10章`` -- or codepoint), limit (default 100, at most 1000), offset (continue a long listing),
hidden (include hidden entries).

Returns: path, entries [{name, path, type file/dir/symlink/other, size, size_text, mtime, target
for links, error}], summary {files, dirs, others, total_size, total_size_text, hidden_skipped,
errors}, total, returned, omitted (left out by limit/paging), next_offset, truncated.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.fs import filetools as ft  # noqa: E402
from xlakit import collate  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402

MAX_LIMIT = 1000


def main(params):
    folder = paths.resolve_read(params.get("path") or "~", want="dir")
    params.setdefault("limit", 100)
    limit = rt.clamp(params, "limit", MAX_LIMIT, 1)
    try:
        collation = collate.check_mode(params.get("sort"))
    except ValueError as exc:
        raise ToolError(str(exc))
    rows, summary, incomplete = ft.list_dir(folder, params.get("sort_by", "name"), bool(params.get("hidden")),
                                            deadline=rt.deadline, collation=collation)
    if incomplete:
        rt.warn("文件夹里的条目太多，在时间上限内只列出了 %d 个" % len(rows))
    base = {"path": folder, "sort_by": params.get("sort_by", "name"), "summary": summary}
    if incomplete:
        base["incomplete"] = True
    page = rt.page_items(rows, offset=params.get("offset", 0), limit=limit, key="entries", base=base)
    page["omitted"] = page["total"] - page["returned"]
    if summary["hidden_skipped"] and not params.get("hidden"):
        page["hidden_note"] = "另有 %d 个隐藏项未列出（hidden=true 可显示）" % summary["hidden_skipped"]
    if page["truncated"]:
        rt.warn("共 %d 项，这次返回第 %d-%d 项；用 offset=%d 继续查看，或改用 find_files 按名字查找" % (
            page["total"], page["offset"] + 1, page["offset"] + page["returned"], page["next_offset"]))
    return page


if __name__ == "__main__":
    rt.run(main)
