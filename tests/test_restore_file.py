"""restore_file (issue 35): delete_file promised "可以恢复" and no tool restored. The trash is
listed with what/where/when, a file goes back where it was, an existing file is never overwritten
(a free name is offered), and the destination passes the deny list like every write."""
import os

from conftest import ok, fail, as_nobody  # noqa: F401


def _ws(home):
    ws = home / ".xla" / "workspace"
    (ws / "报告").mkdir(parents=True, exist_ok=True)
    return ws


def test_delete_list_restore(run, home):
    ws = _ws(home)
    target = ws / "报告" / "9月.docx"
    target.write_bytes(b"PK original bytes")
    os.utime(str(target), (1700000000, 1700000000))
    gone = ok(run("delete_file", {"path": "报告/9月.docx"}))
    assert not target.exists() and "restore_file" in gone["restore"] and gone["trash_id"] in gone["restore"]
    listing = ok(run("restore_file", {}))
    assert listing["total"] == 1 and listing["kept_days"] == 30
    item = listing["items"][0]
    assert item["id"] == gone["trash_id"] and item["name"] == "9月.docx" and item["original"] == str(target)
    assert item["size"] == 17 and item["days_left"] in (29, 30) and item["deleted_at"][:2] == "20"
    back = ok(run("restore_file", {"item": gone["trash_id"]}))
    assert back["path"] == str(target) and target.read_bytes() == b"PK original bytes"
    assert int(target.stat().st_mtime) == 1700000000              # the file as it was, its date too
    assert ok(run("restore_file", {}))["total"] == 0               # the trash entry is gone


def test_never_overwrites_and_offers_a_name(run, home):
    ws = _ws(home)
    target = ws / "名单.xlsx"
    target.write_bytes(b"old")
    ok(run("delete_file", {"path": "名单.xlsx"}))
    target.write_bytes(b"new one")                                # a new file took the name meanwhile
    res = run("restore_file", {"item": "名单.xlsx"})
    err = fail(res)
    assert "不会覆盖" in err and res.data["suggested_to"].endswith("名单_2.xlsx")
    assert target.read_bytes() == b"new one" and ok(run("restore_file", {}))["total"] == 1
    back = ok(run("restore_file", {"item": "名单.xlsx", "to": res.data["suggested_to"]}))
    assert open(back["path"], "rb").read() == b"old" and target.read_bytes() == b"new one"


def test_same_name_twice_asks_which(run, home):
    ws = _ws(home)
    ids = []
    for text in (b"first", b"second"):
        (ws / "a.txt").write_bytes(text)
        ids.append(ok(run("delete_file", {"path": "a.txt"}))["trash_id"])
    res = run("restore_file", {"item": "a.txt"})
    assert "2 个" in fail(res) and len(res.data["candidates"]) == 2
    ok(run("restore_file", {"item": ids[0]}))
    assert (ws / "a.txt").read_bytes() == b"first"
    assert "没有「b.txt」" in fail(run("restore_file", {"item": "b.txt"}))


def test_destination_goes_through_the_deny_list(run, home):
    ws = _ws(home)
    (ws / "keys").write_text("ssh-ed25519 AAAA attacker")
    gone = ok(run("delete_file", {"path": "keys"}))
    (home / ".ssh").mkdir(exist_ok=True)
    res = run("restore_file", {"item": gone["trash_id"], "to": str(home / ".ssh" / "authorized_keys")})
    fail(res)
    assert not (home / ".ssh" / "authorized_keys").exists()
    assert ok(run("restore_file", {}))["total"] == 1                  # still in the trash


def test_a_link_comes_back_as_a_link(run, home):
    ws = _ws(home)
    (ws / "real.txt").write_text("data")
    os.symlink("real.txt", str(ws / "link.txt"))
    ok(run("delete_file", {"path": "link.txt"}))
    ok(run("restore_file", {"item": "link.txt"}))
    assert os.readlink(str(ws / "link.txt")) == "real.txt" and (ws / "real.txt").read_text() == "data"
