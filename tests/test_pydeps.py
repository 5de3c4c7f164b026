"""pydeps_boot: on-demand installs into tools/pydeps, safe under concurrency, clear when offline.

A tiny wheel is built in the test and served from a local folder (pip's own PIP_FIND_LINKS /
PIP_NO_INDEX settings), so pip really runs and really installs."""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile

from conftest import ROOT


def make_wheel(folder, name="xlafake", version="1.0"):
    files = {"%s/__init__.py" % name: "import time\ntime.sleep(0.3)\nVALUE = 42\n",
             "%s-%s.dist-info/METADATA" % (name, version): "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version),
             "%s-%s.dist-info/WHEEL" % (name, version): "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (path, digest, len(text.encode())))
    record.append("%s-%s.dist-info/RECORD,," % (name, version))
    files["%s-%s.dist-info/RECORD" % (name, version)] = "\n".join(record) + "\n"
    path = os.path.join(folder, "%s-%s-py3-none-any.whl" % (name, version))
    with zipfile.ZipFile(path, "w") as zf:
        for name_, text in files.items():
            zf.writestr(name_, text)
    return path


def sandbox(tmp_path):
    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True)
    (root / "xlakit" / "fs").mkdir(parents=True)
    for name in ("pydeps_boot.py", "xlakit/__init__.py", "xlakit/fs/__init__.py", "xlakit/fs/lock.py", "xlakit/manifest.py",
                 "xlakit/progress.py", "xlakit/pycmd.py"):
        shutil.copy(os.path.join(ROOT, name), str(root / name))
    return root


def pip_env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update({"PIP_CONFIG_FILE": os.devnull, "PYTHONPATH": ""}, **extra)
    return env


CALL = "import sys; sys.path.insert(0, %r); import pydeps_boot; m = pydeps_boot.ensure(%r, %r); print(m.VALUE)"


def test_two_processes_installing_at_once_both_succeed_with_one_good_copy(tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    make_wheel(str(wheels))
    root = sandbox(tmp_path)
    env = pip_env(tmp_path, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels))
    code = CALL % (str(root), "xlafake", "xlafake>=1.0")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for proc, (out, err) in zip(procs, outs):
        assert proc.returncode == 0, err.decode()
        assert out.decode().strip() == "42"
    entries = sorted(os.listdir(str(root / "tools" / "pydeps")))
    assert entries == ["xlafake", "xlafake-1.0.dist-info"], entries
    assert [n for n in os.listdir(str(root / "tools")) if "staging" in n] == []
    # Present now: a third call does not run pip at all (no index is even configured).
    again = subprocess.run([sys.executable, "-c", code], env=pip_env(tmp_path), capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout.strip() == "42"


def test_unreachable_registry_names_the_manual_command(tmp_path):
    root = sandbox(tmp_path)
    env = pip_env(tmp_path, PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_RETRIES="0", PIP_TIMEOUT="3")
    code = ("import sys; sys.path.insert(0, %r); import pydeps_boot\n"
            "try:\n    pydeps_boot.ensure('xlanothere', 'xlanothere>=1')\n"
            "except pydeps_boot.DependencyError as e:\n    print(e)\n") % str(root)
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert " -m pip install --target" in res.stdout and "pip3" not in res.stdout and str(root / "tools" / "pydeps") in res.stdout
    assert "自动安装" in res.stdout and "Traceback" not in res.stdout + res.stderr
    assert '[xla-progress] {"done": 0, "total": null, "note": "正在安装第三方库 xlanothere>=1' in res.stderr
    assert not (root / "tools" / "pydeps" / "xlanothere").exists()
    assert [n for n in os.listdir(str(root / "tools")) if "staging" in n] == []


def test_missing_pip_or_python_gives_the_manual_command(tmp_path, monkeypatch):
    root = sandbox(tmp_path)
    sys.path.insert(0, str(root))
    try:
        import importlib
        import pydeps_boot as boot
        importlib.reload(boot)
        assert boot.ROOT == str(root)
        monkeypatch.setattr(boot.sys, "executable", str(tmp_path / "no-python"))
        try:
            boot.ensure("xlanothere2", "xlanothere2>=1")
        except boot.DependencyError as exc:
            assert "无法启动 pip" in str(exc) and str(tmp_path / "no-python") + " -m pip install --target" in str(exc)
        else:
            raise AssertionError("expected DependencyError")
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("pydeps_boot", None)


def test_the_pinned_libraries_import_from_pydeps():
    """CI pre-installs every pinned library (xla.py deps); each must import through ensure()."""
    import pydeps_boot
    for module in pydeps_boot.PINS:
        assert pydeps_boot.ensure(module) is not None
