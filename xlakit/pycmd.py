"""How to name this Python in a command a person is told to type (fix-it hints, usage screens).

Why not ``python3`` / ``pip3``: on Windows ``python3`` is usually the Microsoft Store alias (it
opens the Store instead of running anything) and ``pip3`` may belong to another Python than the
one the host runs, so a library would land where the tools never look. The interpreter running
now (``sys.executable``) is the one that must get the fix: it is named by its short name when
that name on PATH is this very interpreter, else by its full path (quoted when it has spaces).

The toolbox's own command (``xla_cmd``) is ``<python> xla.py`` in a checkout; an installed
package has no folder to type it in, so there it is the package's ``xla-tools`` command (or the
runner that made it: ``uvx xla-tools``), which is what an OCR-needed answer must name."""
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


def _root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def installed(root=None):
    """True when the toolbox runs from an installed package (pip / pipx / uvx), not a checkout."""
    from . import manifest
    return manifest.installed_package(root or _root())


def throwaway_runner(prefix=None):
    """"uvx" or "pipx" when this interpreter lives in the throwaway environment ``uvx xla-tools``
    / ``pipx run xla-tools`` made in their cache (a later cache clean or upgrade deletes it, and a
    command or block naming its paths stops working), else None."""
    path = os.path.realpath(prefix or sys.prefix).replace("\\", "/").lower() + "/"
    uv_cache = (os.environ.get("UV_CACHE_DIR") or "").replace("\\", "/").lower().rstrip("/")
    if (uv_cache and path.startswith(uv_cache + "/")) or ("/uv/" in path and "/archive-v" in path):
        return "uvx"
    if "/pipx/" in path and "/.cache/" in path:
        return "pipx"
    return None


def _console_script():
    """The package's ``xla-tools`` script beside this interpreter (a venv's bin/ or Scripts/), or
    None."""
    folder = os.path.dirname(sys.executable or "")
    for name in (("xla-tools.exe", "xla-tools-script.py") if os.name == "nt" else ("xla-tools",)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


def _script_runs_this_python(path):
    """Does the console script at ``path`` start this interpreter? (its ``#!`` line; a Windows
    launcher .exe beside this python.exe does)."""
    if os.name == "nt":
        return _same(os.path.dirname(path), os.path.dirname(sys.executable or ""))
    try:
        with open(path, "rb") as fh:
            first = fh.readline(4096).decode("utf-8", "replace").strip()
    except OSError:
        return False
    if not first.startswith("#!"):
        return False
    exe = first[2:].strip().split()[0] if first[2:].strip() else ""
    return bool(exe) and _same(exe, sys.executable or "")


def package_cmd():
    """How a person starts the installed package's command line: ``xla-tools`` when that name on
    PATH is this package (pipx's link, a venv's script), ``uvx xla-tools`` / ``pipx run xla-tools``
    under those runners, else the script's full path, else ``<python> -m xla_tools.xla``."""
    runner = throwaway_runner()
    if runner is not None:
        return "uvx xla-tools" if runner == "uvx" else "pipx run xla-tools"
    script = _console_script()
    found = shutil.which("xla-tools")
    if found and ((script and _same(found, script)) or _script_runs_this_python(found)):
        return "xla-tools"
    if script:
        return _quote(script)
    return python_cmd() + " -m xla_tools.xla"


def xla_cmd(root=None):
    """The toolbox's command line as a person types it: ``<python> xla.py`` in the xla-tools
    folder of a checkout, the package's own command (``package_cmd``) when installed."""
    if installed(root):
        return package_cmd()
    return python_cmd() + " xla.py"


def run_where(root=None):
    """Where that command is typed: the xla-tools folder (a checkout) or any command line."""
    return "在命令行" if installed(root) else "在 xla-tools 目录"
