"""The tools must run on Python 3.9 (the oldest the assistant's installer ships): checked with vermin."""
import os
import subprocess
import sys

from conftest import ROOT


def project_files():
    out = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in (".git", ".venv", "pydeps", "__pycache__", "data") and
                   not d.startswith("pydeps.")]
        out += [os.path.join(folder, f) for f in files if f.endswith(".py")]
    return out


def test_code_runs_on_python_39():
    files = project_files()
    assert len(files) > 5
    res = subprocess.run([sys.executable, "-c", "import sys, vermin; sys.exit(vermin.main())", "--no-tips", "--violations", "-t=3.9-",
                          "--backport", "typing", "--eval-annotations"] + files, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
