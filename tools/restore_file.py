"""restore_file: see what delete_file put in the toolbox trash, and put a file back.

Why: delete_file moves a file to ``~/.xla/trash`` and says it can be restored; this is the tool
that does it (``xlakit.fs.trash``). Without ``item`` it lists the trash, newest first: id, file
name, where it came from, when it was deleted, size, days left. With ``item`` (an id from that
list, or the file name) it puts the file back where it was - or at ``to`` - and refuses to
overwrite a file that is there now (the answer offers a free name, ``suggested_to``). The
destination goes through the same deny list as every write.

Parameters: item (optional; id or file name), to (optional; another path to restore to),
limit (list size, default 50).

Returns: listing - items [{id, name, original, deleted_at, type, size, size_text, days_left}],
total, kept_days; restoring - restored (name), path (where it is now), original, deleted_at, size.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from xlakit import runtime as rt  # noqa: E402
from xlakit.fs import files, trash  # noqa: E402

FIELDS = ("id", "name", "original", "deleted_at", "type", "size", "size_text", "days_left")


def main(params):
    item = params.get("item")
    if not item:
        every = trash.entries()
        limit = rt.clamp(params, "limit", 200, 1) or 50
        out = {"items": [{k: e[k] for k in FIELDS} for e in every[:limit]], "total": len(every),
               "kept_days": files.TRASH_DAYS}
        if not every:
            out["note"] = "回收站是空的（delete_file 删除的文件保留 %d 天）" % files.TRASH_DAYS
        elif len(every) > limit:
            out["note"] = "只列出最新的 %d 个，共 %d 个" % (limit, len(every))
        return out
    entry, dest = trash.restore(item, params.get("to"))
    return {"restored": entry["name"], "path": dest, "original": entry["original"],
            "deleted_at": entry["deleted_at"], "type": entry["type"], "size": entry["size"],
            "size_text": entry["size_text"]}


if __name__ == "__main__":
    rt.run(main)
