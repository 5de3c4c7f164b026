"""Issue 19: run_python's allowed places (workspace, temp) are intersected with the writers' deny
list. A toolbox checked out under the temp folder, its pydeps, a git repository's hooks there: the
audit hook refuses them with the deny list's reason, and on Linux the kernel layer holds the
toolbox and ``.git`` folders too (Landlock rules granted around them), so a script that gets past
the hook still cannot write them. Runs as root (CI) like everything else."""
import json
import os
import shutil
import sys
import textwrap

import pytest

from conftest import ROOT, CJK, assert_contract

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the scripts use POSIX paths")
LINUX = sys.platform.startswith("linux")


def copy_toolbox(dest):
    """The parts of this checkout that run_python needs, under ``dest`` (no pydeps content)."""
    os.makedirs(os.path.join(dest, "tools", "pydeps"))
    for name in os.listdir(os.path.join(ROOT, "tools")):
        if name.endswith(".py"):
            shutil.copy(os.path.join(ROOT, "tools", name), os.path.join(dest, "tools", name))
    shutil.copytree(os.path.join(ROOT, "xlakit"), os.path.join(dest, "xlakit"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in os.listdir(ROOT):
        if name.endswith(".py") or name == "tools.json":
            shutil.copy(os.path.join(ROOT, name), os.path.join(dest, name))
    if os.path.isdir(os.path.join(ROOT, "xlaguard")):
        shutil.copytree(os.path.join(ROOT, "xlaguard"), os.path.join(dest, "xlaguard"),
                        ignore=shutil.ignore_patterns("__pycache__"))
    os.makedirs(os.path.join(dest, ".git", "hooks"))


@pytest.fixture
def temp_checkout(tmp_path, home):
    """A toolbox checkout and a git project inside an allowed place. Since issue 34 run_python may
    write only the workspace and a temp folder of the run's own (not the whole temp folder), so the
    workspace is where a checkout can sit inside the fence; ``T`` stays the system temp folder."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    ws = home / ".xla" / "workspace"
    ws.mkdir(parents=True)
    box = ws / "xla-tools"
    copy_toolbox(str(box))
    repo = ws / "project"
    (repo / ".git" / "hooks").mkdir(parents=True)
    return {"T": str(tmp), "BOX": str(box), "REPO": str(repo), "WS": str(ws)}


ATTACKS = [
    ("toolbox_tool", "open({BOX!r} + '/tools/evil.py', 'w').write('import os')", "{BOX}/tools/evil.py"),
    ("toolbox_xlakit", "open({BOX!r} + '/xlakit/fs/paths.py', 'a').write('#')", None),
    ("toolbox_pydeps", "import os; os.makedirs({BOX!r} + '/tools/pydeps/evil')", "{BOX}/tools/pydeps/evil"),
    ("toolbox_git_hook", "open({BOX!r} + '/.git/hooks/pre-commit', 'w').write('#!/bin/sh')",
     "{BOX}/.git/hooks/pre-commit"),
    ("repo_git_hook", "open({REPO!r} + '/.git/hooks/pre-commit', 'w').write('#!/bin/sh')",
     "{REPO}/.git/hooks/pre-commit"),
    ("toolbox_rename", "import os; os.rename({BOX!r} + '/tools', {WS!r} + '/moved')", "{WS}/moved"),
    # past the hook: native code writes with no audit event; only the kernel layer holds it
    ("native_write_tool", "import sqlite3\nc = sqlite3.connect(':memory:')\n"
                          "c.execute('ATTACH DATABASE ? AS x', ({BOX!r} + '/tools/evil.db',))\n"
                          "c.execute('create table x.t(a)')", "{BOX}/tools/evil.db"),
]


def run_in_copy(names, code, layers=None):
    from xlakit import host
    script = os.path.join(names["WS"], "attack.py")
    with open(script, "w", encoding="utf-8") as f:
        f.write(textwrap.dedent(code.format(**names)) + "\n")
    env = {"TMPDIR": names["T"]}
    if layers:
        env["XLA_GUARD_LAYERS"] = layers
    home = os.path.dirname(os.path.dirname(names["WS"]))
    result = host.run_tool("run_python", {"path": script, "timeout": 30}, root=names["BOX"], home=home,
                           extra_env=env, log=False)
    data = assert_contract(result)
    assert data["ok"], data
    return data


def tree(path):
    out = []
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]   # the tool process's own imports
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            out.append((p, os.path.getsize(p) if os.path.isfile(p) else -1))
    return sorted(out)


@pytest.mark.parametrize("name,code,created", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_the_deny_list_holds_inside_the_temp_folder(temp_checkout, name, code, created):
    names = temp_checkout
    before = tree(names["BOX"]), tree(names["REPO"])
    data = run_in_copy(names, code)
    assert (tree(names["BOX"]), tree(names["REPO"])) == before, json.dumps(data, ensure_ascii=False)[:2000]
    if created:
        assert not os.path.exists(created.format(**names))
    assert data["blocked"] and "拦截" in data["summary"], json.dumps(data, ensure_ascii=False)[:2000]
    assert all(CJK.search(b["message"]) for b in data["blocked"])
    if name.startswith("native"):
        if LINUX and "landlock" in data["fence"]["layers"]:
            assert data["exit_code"] != 0
        return
    audit = [b for b in data["blocked"] if b["layer"] == "audit_hook"]
    assert audit and ("工具箱本身" in audit[0]["message"] or ".git" in audit[0]["message"]), audit


@pytest.mark.parametrize("name,code,created", [a for a in ATTACKS if not a[0].startswith("native")],
                         ids=[a[0] for a in ATTACKS if not a[0].startswith("native")])
def test_the_audit_hook_alone_applies_the_deny_list(temp_checkout, name, code, created):
    names = temp_checkout
    before = tree(names["BOX"]), tree(names["REPO"])
    data = run_in_copy(names, code, layers="audit")
    assert (tree(names["BOX"]), tree(names["REPO"])) == before
    assert data["fence"]["layers"] == ["audit_hook"] and data["blocked"]


def test_ordinary_work_in_the_temp_folder_still_works(temp_checkout):
    """Next to the carved-out checkout: existing folders stay writable (the folders on the way to a
    carved-out one take no new entries: Landlock grants around it), tempfile works (in the run's own
    temp folder, removed afterwards), and the system temp folder outside it is not writable any more."""
    names = temp_checkout
    os.mkdir(os.path.join(names["WS"], "other"))
    code = ("import os, tempfile\n"
            "open({WS!r} + '/other/out.txt', 'w').write('1')\n"
            "os.makedirs({WS!r} + '/other/src/deep')\n"
            "open({WS!r} + '/other/src/deep/x.txt', 'w').write('2')\n"
            "with tempfile.NamedTemporaryFile('w', delete=False) as f:\n    f.write('y')\n"
            "print(open(f.name).read())\n"
            "assert os.path.dirname(f.name) != {T!r}, f.name\n"
            "try:\n    open({T!r} + '/loose.txt', 'w')\nexcept PermissionError:\n    print('temp root refused')\n")
    data = run_in_copy(names, code)
    assert data["exit_code"] == 0, json.dumps(data, ensure_ascii=False)[:3000]
    assert data["stdout"].split() == ["y", "temp", "root", "refused"], data
    assert os.path.exists(os.path.join(names["WS"], "other", "out.txt"))
    assert not os.path.exists(os.path.join(names["T"], "loose.txt"))
    assert [n for n in os.listdir(names["T"]) if n.startswith("xla-run-")] == []   # removed after the run
