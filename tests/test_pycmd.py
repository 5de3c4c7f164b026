"""Fix-it hints and usage screens name the interpreter that runs, never ``python3`` / ``pip3``
(on Windows ``python3`` is the Microsoft Store alias, and ``pip3`` may be another Python's)."""
import os
import subprocess
import sys

from conftest import ROOT


def _run(code, path_dirs):
    env = {"PATH": os.pathsep.join(path_dirs), "HOME": os.environ.get("HOME", "/root"), "PYTHONPATH": ROOT}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, timeout=60,
                          check=True).stdout.decode()


def test_hints_name_the_running_interpreter_when_python3_on_path_is_another(tmp_path):
    # a "python3" on PATH that is not this interpreter (the Store alias on Windows)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "python3").write_text("#!/bin/sh\nexit 9\n")
    (fake / "python3").chmod(0o755)
    out = _run("import pydeps_boot;print(pydeps_boot.manual_command(['openpyxl>=3']));"
               "print(pydeps_boot.group_command('ocr'))", [str(fake), "/usr/bin", "/bin"])
    pip_line, group_line = out.splitlines()
    assert pip_line.startswith(sys.executable + " -m pip install --target ") and "pip3" not in pip_line
    assert group_line == sys.executable + " xla.py install ocr"


def test_short_name_when_it_is_this_interpreter(tmp_path):
    link = tmp_path / "bin"
    link.mkdir()
    os.symlink(sys.executable, str(link / "python3"))
    out = _run("from xlakit import pycmd;print(pycmd.python_cmd());print(pycmd.pip_cmd())", [str(link), "/usr/bin"])
    assert out.splitlines() == ["python3", "python3 -m pip"]


def test_usage_screens_name_the_interpreter(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for args in ([], ["run"], ["mcp", "--no-such-option"]):
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "xla.py")] + args, cwd=ROOT, env=env,
                              capture_output=True, timeout=60)
        text = (proc.stdout + proc.stderr).decode()
        if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
            assert "python3 xla.py" not in text and sys.executable + " xla.py" in text, text
