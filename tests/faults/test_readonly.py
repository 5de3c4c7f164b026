"""Read-only: a disk that turns read-only (``mount -o remount,ro`` of the tmpfs, in the private
mount namespace of ``space.in_tmpfs``) and a folder the user may not write (mode bits, as the
unprivileged user 65534: root writes through mode bits).

Two disks: the whole tmpfs holding HOME and the user's folder read-only (``~/.xla`` with its locks
and backups cannot be written either), and the user's folder alone as its own read-only tmpfs
while HOME stays writable (a write-protected USB stick). Every writer of ``test_disk.SCENARIOS``
answers a Chinese refusal naming the cause (只读 / 没有权限), exits non-zero, changes nothing
(every byte on both disks compared) and leaves no temp file.
"""
import os
import shutil

import pytest

from conftest import CJK, NOBODY, as_nobody, nobody_dir

from . import harness, samples, space, tally
from .test_disk import SCENARIOS, _answer, _files_before, _paths, _reset

IN_HOME = {"draw_chart", "delete_file"}      # their targets live in ~/.xla/workspace


def _refused(sid, data, code, err, want):
    if data.get("ok") is not False:
        return ["%s: not refused: %s" % (sid, str(data)[:400])]
    msg = data.get("error", "")
    if want not in msg or not CJK.search(msg) or code == 0 or "Traceback" in err:
        return ["%s: not the Chinese %s refusal: %r (exit %s) %s" % (sid, want, msg, code, err[-600:])]
    return []


def _ro_sweep(mount, sids):
    failures, counts = [], dict.fromkeys(tally.ORDER, 0)
    home, work = _paths(mount)
    space.mount_tmpfs(str(work), 4 << 20)
    for sid in sids:
        tool, raw, _target, _before, _promised = SCENARIOS[sid]
        args = samples.resolve(raw, work)
        for case in ("whole disk", "user's folder") if sid not in IN_HOME else ("whole disk",):
            _reset(mount, sid, _files_before(sid))
            before = harness.snapshot(mount)
            point = mount if case == "whole disk" else str(work)
            space.remount(point, True)
            counts["scenarios"] += 1
            try:
                code, out, err, _ = harness.spawn(tool, args, home)
            finally:
                space.remount(point, False)
            failures += ["%s (%s read-only)" % (p, case) for p in _refused(sid, _answer(out), code, err, "只读")]
            after = harness.snapshot(mount)
            counts["files_checked"] += len(before)
            lost = sum(len(v) for k, v in before.items() if after.get(k) != v)
            counts["bytes_lost"] += lost
            left = harness.stray_temps(home, work)
            counts["stray_temp_files"] += len(left)
            new = sorted(k for k in set(after) - set(before)      # the per-file lock (empty) is fine
                         if not (k.startswith(os.path.join("home", ".xla", "locks", "")) and not after[k]))
            if lost or left or new:
                failures.append("%s (%s read-only): changed %s, new %s" % (
                    sid, case, [k for k, v in before.items() if after.get(k) != v], new))
    return {"failures": failures, "counts": counts}


@pytest.mark.parametrize("part", [0, 1])
def test_read_only_disk(part, disk):
    sids = sorted(SCENARIOS)[part::2]
    for sid in sids:
        _files_before(sid)
    got = disk.in_tmpfs(8 << 20, lambda mount: _ro_sweep(mount, sids))
    assert "child_error" not in got, got.get("child_error")
    for key, n in got["counts"].items():
        tally.add(key, n)
    assert not got["failures"], "\n".join(got["failures"])


NOBODY_CASES = ("csv_append", "xlsx_append", "docx_append", "text_append", "text_new", "filter_table", "xls_new")


def test_folder_without_write_permission_as_nobody():
    """Mode bits: the user's folder is 0555 (its files 0644, owned by that user), HOME writable."""
    base = nobody_dir("xla-faults-ro-")
    home, work = base / "home", base / "work"
    for sid in NOBODY_CASES:
        _files_before(sid)

    def child():
        out = []
        for sid in NOBODY_CASES:
            tool, raw, _t, _b, _p = SCENARIOS[sid]
            for p in (home, work):
                if p.exists():
                    os.chmod(str(p), 0o755)
            shutil.rmtree(str(home), ignore_errors=True)
            shutil.rmtree(str(work), ignore_errors=True)
            home.mkdir()
            work.mkdir()
            for name, data in _files_before(sid).items():
                samples.place(home, work, name).write_bytes(data)
            os.chmod(str(work), 0o555)
            before = harness.snapshot(work)
            code, o, e, _ = harness.spawn(tool, samples.resolve(raw, work), home)
            after = harness.snapshot(work)
            out.append({"sid": sid, "code": code, "out": o, "err": e[-600:], "same": before == after,
                        "files": len(before), "bytes": sum(len(v) for v in before.values()),
                        "left": harness.stray_temps(home, work), "uid": os.getuid()})
            os.chmod(str(work), 0o755)
        return out

    try:
        got = as_nobody(child)
    finally:
        shutil.rmtree(str(base), ignore_errors=True)
    assert "child_error" not in got, got
    failures = []
    for r in got:
        tally.scenario()
        tally.checked(r["files"])
        assert r["uid"] == NOBODY or os.geteuid() != 0
        failures += _refused(r["sid"], _answer(r["out"]), r["code"], r["err"], "没有权限")
        if not r["same"]:
            tally.add("bytes_lost", r["bytes"])
            failures.append("%s: the folder changed" % r["sid"])
        tally.add("stray_temp_files", len(r["left"]))
        if r["left"]:
            failures.append("%s: temp files left %s" % (r["sid"], r["left"]))
    assert not failures, "\n".join(failures)
