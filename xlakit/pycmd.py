"""How to name this Python in a command a person is told to type (fix-it hints, usage screens).

Why not ``python3`` / ``pip3``: on Windows ``python3`` is usually the Microsoft Store alias (it
opens the Store instead of running anything) and ``pip3`` may belong to another Python than the
one the host runs, so a library would land where the tools never look. The interpreter running
now (``sys.executable``) is the one that must get the fix: it is named by its short name when
that name on PATH is this very interpreter, else by its full path (quoted when it has spaces)."""
import os
import shutil
import sys


def _quote(path):
    if os.name == "nt":
        return '"%s"' % path if any(ch in path for ch in ' &()^%!') else path
    import shlex
    return shlex.quote(path)


def _same(a, b):
    try:
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))
    except (OSError, ValueError):
        return False


def python_cmd():
    """``python3``/``python`` when that is this interpreter on PATH, else its quoted full path."""
    exe = sys.executable
    if not exe:
        return "python" if os.name == "nt" else "python3"
    for name in (("python",) if os.name == "nt" else ("python3", "python")):
        found = shutil.which(name)
        if found and _same(found, exe):
            return name
    return _quote(exe)


def pip_cmd():
    """pip of this interpreter: ``<python> -m pip`` (never a ``pip3`` of unknown origin)."""
    return python_cmd() + " -m pip"


def xla_cmd(root=None):
    """``<python> xla.py`` as typed in the xla-tools folder."""
    return python_cmd() + " xla.py"
