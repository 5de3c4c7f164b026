"""Third-party libraries for the tools, installed on demand into ``tools/pydeps`` (for an installed
package or a read-only checkout the per-user ``~/.xla/pydeps``: ``manifest.pydeps_dir``).

``ensure("openpyxl")`` returns the imported module. When it is already there (the usual case, or an
installer's offline ``pydeps/``) nothing touches the network. Otherwise it runs
``pip install --target`` with a pinned version range into a private staging folder, under a
cross-process lock, within 50 s, and only then moves the result into ``pydeps/``: an interrupted or
failed install leaves nothing half-present, and two tools installing at once get one good copy.
On failure the Chinese error gives the exact command to run by hand.

``python3 pydeps_boot.py install-all`` (or ``python3 xla.py deps``) pre-installs every library.

Optional groups (``GROUPS``) are big and needed by few users, so ``install-all`` leaves them out:
the OCR engine (about 130 MB to download, 400 MB installed) is installed the first time a scan
arrives (``ensure_group``) or ahead of time with ``python3 xla.py install ocr``.
"""
import importlib
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from xlakit import progress  # noqa: E402
from xlakit.fs.lock import FileLock  # noqa: E402
from xlakit.manifest import pydeps_dir  # noqa: E402

PYDEPS = pydeps_dir(ROOT)
DEPS_PARENT = os.path.dirname(PYDEPS)     # staging and the lock sit beside pydeps (same disk: os.replace)
LOCK_PATH = os.path.join(DEPS_PARENT, ".pydeps.lock")
INSTALL_TIMEOUT = 50

# module name -> pip requirement. Ranges are the versions the tools are tested with.
PINS = {
    "openpyxl": "openpyxl>=3.1.2,<3.2",
    "xlrd": "xlrd>=2.0.1,<2.1",
    "xlwt": "xlwt>=1.3.0,<1.4",
    "pypdf": "pypdf>=4.0,<8",
    "olefile": "olefile>=0.46,<0.48",
    # Office open passwords (OOXML agile/standard, legacy doc/xls/ppt RC4); brings cryptography,
    # which also decrypts AES PDFs (xlakit.crypt.office, documents.pdf)
    "msoffcrypto": "msoffcrypto-tool>=5.4,<7",
    "cryptography": "cryptography>=42",
}

# Optional groups: name -> (modules that must import, requirements, what it is, size for people).
# OCR: RapidOCR's wheel carries the PP-OCR detection/direction/recognition models (3.x ships them,
# nothing is downloaded at run time); onnxruntime runs them; pypdfium2 (9 MB) renders PDF pages
# whose scan is not one plain picture. numpy, OpenCV and Pillow come as RapidOCR's own needs.
# Intel Macs: on macOS 10.15 the newest onnxruntime with a wheel is 1.16 (1.17+ need macOS 11)
# and OpenCV 4.6, both built against numpy 1, while pip picks numpy 2 beside them (import fails);
# numpy 1.26 is what works there, and onnxruntime 1.19 / OpenCV 4.10 on newer Intel Macs take it too.
GROUPS = {
    "ocr": (("rapidocr", "onnxruntime", "pypdfium2", "PIL", "numpy"),
            ("rapidocr>=3.10,<4", "onnxruntime>=1.16,<2", "pypdfium2>=4.20,<6",
             "numpy>=1.21,<2; sys_platform == 'darwin' and platform_machine == 'x86_64' and python_version < '3.13'"),
            "文字识别（OCR）引擎 RapidOCR + onnxruntime", "下载约 130 MB，安装后约 400 MB"),
}


class DependencyError(Exception):
    """The library is missing and could not be installed; the message is Chinese and actionable."""


def _add_path():
    if os.path.isdir(PYDEPS) and PYDEPS not in sys.path:
        sys.path.insert(0, PYDEPS)


def manual_command(requirements):
    """The pip command a person can run by hand, with this interpreter's pip (xlakit.pycmd)."""
    from xlakit import pycmd
    return "%s install --target \"%s\" %s" % (pycmd.pip_cmd(), PYDEPS, " ".join('"%s"' % r for r in requirements))


def _try_import(module):
    importlib.invalidate_caches()
    try:
        return importlib.import_module(module)
    except ImportError:
        sys.modules.pop(module, None)
        return None


def ensure(module, requirement=None):
    """Import ``module``, installing it into PYDEPS first if needed. Raises DependencyError."""
    _add_path()
    found = _try_import(module)
    if found is not None:
        return found
    requirement = requirement or PINS.get(module, module)
    install([requirement])
    _add_path()
    found = _try_import(module)
    if found is None:
        raise DependencyError("第三方库 %s 安装后仍无法导入。请手动执行：%s" % (module, manual_command([requirement])))
    return found


def install(requirements, timeout=INSTALL_TIMEOUT):
    """pip-install ``requirements`` into pydeps/ (staging + move, under the lock)."""
    try:
        lock = FileLock(LOCK_PATH, timeout=timeout).acquire()
    except TimeoutError:
        raise DependencyError("另一个工具正在安装第三方库，等待超时。请稍后重试，或手动执行：%s" % manual_command(requirements))
    try:
        _add_path()
        # Someone else may have installed it while we waited for the lock.
        missing = [r for r in requirements if _module_for(r) is None or _try_import(_module_for(r)) is None]
        if not missing:
            return
        _clean_stale_staging()
        os.makedirs(DEPS_PARENT, exist_ok=True)
        staging = os.path.join(DEPS_PARENT, "pydeps.staging-%d" % os.getpid())
        shutil.rmtree(staging, ignore_errors=True)
        # One progress line (a download can take most of the time budget): clients show it.
        progress.report(0, None, "正在安装第三方库 %s（只在第一次用到时下载）" % "、".join(missing))
        cmd = [sys.executable, "-m", "pip", "install", "--target", staging, "--disable-pip-version-check",
               "--no-input", "--no-warn-script-location", "--retries", "1", "--timeout", "15"] + missing
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env["PIP_NO_INPUT"] = "1"
        try:
            proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            shutil.rmtree(staging, ignore_errors=True)
            raise DependencyError("自动安装 %s 超过 %d 秒未完成（网络慢或不通）。请手动执行：%s" % (
                "、".join(missing), timeout, manual_command(missing)))
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise DependencyError("无法启动 pip（%s）。请手动执行：%s" % (exc, manual_command(missing)))
        if proc.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            raise DependencyError("自动安装 %s 失败：%s。请确认网络可用后手动执行：%s" % (
                "、".join(missing), _pip_reason(proc.stderr.decode("utf-8", "replace")), manual_command(missing)))
        _move_into_place(staging)
    finally:
        lock.release()


def _module_for(requirement):
    for module, req in PINS.items():
        if req == requirement:
            return module
    name = requirement
    for sep in "<>=!~;[ ":
        name = name.split(sep)[0]
    return name.replace("-", "_") or None


def _pip_reason(stderr):
    text = stderr.strip()
    if "No module named pip" in text:
        return "本机 Python 没有 pip"
    for needle, reason in (("No matching distribution", "找不到匹配的版本"),
                           ("Could not find a version", "找不到匹配的版本"),
                           ("NewConnectionError", "连不上软件源"), ("Connection refused", "连不上软件源"),
                           ("Name or service not known", "网络不可用"), ("Temporary failure", "网络不可用"),
                           ("timed out", "网络超时"), ("SSLError", "HTTPS 证书校验失败"),
                           ("Permission denied", "没有写入权限")):
        if needle in text:
            return reason
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return (lines[-1] if lines else "pip 没有给出原因")[:300]


def _move_into_place(staging):
    """Move each top-level entry of the staging folder into pydeps/. Packages first, metadata last,
    so a half-finished move is seen as "not installed" and redone, never as a broken import."""
    os.makedirs(PYDEPS, exist_ok=True)
    entries = sorted(os.listdir(staging), key=lambda n: n.endswith((".dist-info", ".egg-info")))
    for name in entries:
        if name in ("bin", "__pycache__"):
            continue
        src, dst = os.path.join(staging, name), os.path.join(PYDEPS, name)
        if os.path.exists(dst):
            old = dst + ".old-%d" % os.getpid()
            os.replace(dst, old)
            os.replace(src, dst)
            shutil.rmtree(old, ignore_errors=True) if os.path.isdir(old) else os.unlink(old)
        else:
            os.replace(src, dst)
    shutil.rmtree(staging, ignore_errors=True)


def _clean_stale_staging():
    folder = DEPS_PARENT
    for name in (os.listdir(folder) if os.path.isdir(folder) else ()):
        if name.startswith("pydeps.staging-"):
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
    if os.path.isdir(PYDEPS):
        for name in os.listdir(PYDEPS):
            if ".old-" in name:
                path = os.path.join(PYDEPS, name)
                shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.unlink(path)


def group_ready(name):
    """True when every module of group ``name`` can be found (cheap: nothing is imported)."""
    import importlib.util
    _add_path()
    importlib.invalidate_caches()
    for module in GROUPS[name][0]:
        try:
            if importlib.util.find_spec(module) is None:
                return False
        except (ImportError, ValueError):
            return False
    return True


def group_command(name):
    """The one command a person runs to install group ``name`` ahead of time."""
    from xlakit import pycmd
    return "%s install %s" % (pycmd.xla_cmd(), name)


def ensure_group(name, timeout=INSTALL_TIMEOUT):
    """Install optional group ``name`` unless it is there; raises DependencyError (Chinese)."""
    if group_ready(name):
        return
    modules, requirements, _what, _size = GROUPS[name]
    install(list(requirements), timeout=timeout)
    if not group_ready(name):
        raise DependencyError("%s 安装后仍不完整。请手动执行：%s" % (GROUPS[name][2], group_command(name)))


def install_all():
    """Pre-install every pinned library (CI, and the installer's offline pydeps/)."""
    _add_path()
    missing = [req for mod, req in PINS.items() if _try_import(mod) is None or
               not os.path.exists(os.path.join(PYDEPS, mod))]
    if missing:
        install(missing, timeout=300)
    return sorted(PINS)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["install"] and len(argv) == 2 and argv[1] in GROUPS:
        _modules, _reqs, what, size = GROUPS[argv[1]]
        print("正在安装%s（%s），请稍候……" % (what, size), flush=True)
        try:
            ensure_group(argv[1], timeout=1800)
        except DependencyError as exc:
            print(str(exc), file=sys.stderr)
            return 1
        print("已就绪：%s（%s）" % (what, PYDEPS))
        return 0
    if argv[:1] != ["install-all"]:
        from xlakit import pycmd
        print("用法：%s pydeps_boot.py install-all | install %s" % (pycmd.python_cmd(), "|".join(sorted(GROUPS))))
        return 2
    try:
        names = install_all()
    except DependencyError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    print("已就绪：%s（%s）" % ("、".join(names), PYDEPS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
