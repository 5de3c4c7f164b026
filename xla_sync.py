"""Tag-based sync of the toolbox: keep ``~/.xla-tools`` on the newest released version, never a broken one.

Why tags: a release is a deliberate act (commit, push a ``vX.Y.Z`` tag), so the assistant never picks
up half-finished work from a branch. Why so careful: the assistant runs whatever is in the
destination, so every step that can fail (network, clone, fetch, checkout, a new version whose
tools.json does not validate) happens *before* the working copy changes, and a failure leaves the
previous version in place. A destination we did not create (not a git checkout of this remote, or
one with local edits) is never deleted; only ``force`` replaces it, and then it is renamed to
``DEST.bak-<timestamp>`` rather than removed.

How one sync runs (under a cross-process lock, so two assistants starting at once do not collide;
the second waits and then finds the copy current):

1. ``git ls-remote --tags`` on the remote; only ``vMAJOR.MINOR.PATCH`` tags count (peeled ``^{}``
   lines, pre-releases such as ``v2.0.0-rc1`` and other names are ignored); the highest by numbers
   wins (``v1.10.0`` > ``v1.9.9``).
2. No local copy: shallow clone of that tag into ``DEST.staging-<pid>`` next to the destination,
   validate its manifest with the *running* code's ``xla_manifest.check_manifest``, write
   ``.xla-tag``, then rename into place.
3. Local copy on another tag: shallow fetch of just that tag, check it out into a temporary git
   worktree and validate it there, and only then ``git checkout --detach`` in the destination.
   ``tools/pydeps/`` is ignored by git, so it survives the switch.
4. Local copy already on that tag's commit: nothing to do (only the ls-remote was run).

If the newest tag is broken, older tags that are still newer than the local copy are tried (at most
``MAX_CANDIDATES`` in all), so a fresh install still gets the best valid release.

Result (a dict; ``main`` prints it as one JSON object, exit 0 when ``ok`` is true, else 1):
``ok``, ``action``, ``tag`` (in use at ``path`` now), ``previous_tag``, ``latest`` (newest remote
release, when known), ``path``, ``message`` (Chinese); failures also carry ``error`` (same text).
Actions: ``cloned`` (fresh copy installed), ``updated`` (switched to another tag), ``current``
(already newest), ``offline`` (remote not reachable / no release tags / git missing; local copy
kept), ``kept`` (a newer version exists but could not be installed or failed validation; local
copy kept), ``local`` (``XLA_DEV=1`` or ``XLA_TOOLS_SYNC=0``: the remote is not touched, the
project's own working tree is used), and with ``ok: false``: ``refused`` (the destination is not
ours and ``force`` was not given) or ``failed`` (no usable version at all).

Without git (office PCs rarely have it) an HTTPS remote is synced from its release archives:
tags from git's smart-HTTP reference list, files from the forge's zip of the tag, verified by the
commit id ``git archive`` stores in it (``xlakit/sync_archive.py``); such a copy carries
``.xla-archive.json`` instead of ``.git`` and is updated the same way.

Git runs without any chance to prompt (``GIT_TERMINAL_PROMPT=0``, empty askpass, no credential
helper, stdin closed, its own session without a terminal) and with timeouts, so a remote that wants a password or
a dead network gives a Chinese message instead of a hung assistant.
"""
import argparse
import datetime
import glob
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import threading
import urllib.parse

ROOT = os.path.dirname(os.path.abspath(__file__))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from xlakit.fs import lock as xla_lock  # noqa: E402
from xlakit import manifest as xla_manifest  # noqa: E402
from xlakit.fs.paths import home_dir  # noqa: E402  (HOME first, also on Windows)
from xlakit.host import group_kwargs, kill_tree  # noqa: E402
from xlakit import sync_archive  # noqa: E402

DEFAULT_REMOTE = "https://gitee.com/empiror/xla-tools.git"
DEFAULT_DEST_NAME = ".xla-tools"
TAG_FILE = ".xla-tag"
SWITCH_MARKER = "xla-sync-switch"   # in .git/: an update was interrupted between checkout and tag file
NETWORK_TIMEOUT = 30                # seconds for ls-remote; clone/fetch get twice that (they move data)
LOCAL_TIMEOUT = 120                 # seconds for local git commands (checkout of a slow disk)
MAX_CANDIDATES = 3                  # newest tags tried when the newest one fails validation
TAG_RE = re.compile(r"^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")

ACTIONS = ("cloned", "updated", "current", "offline", "kept", "local", "refused", "failed")


# ---------------------------------------------------------------------------------------------
# Small helpers

def default_remote():
    return os.environ.get("XLA_TOOLS_REMOTE") or DEFAULT_REMOTE


def default_dest():
    return os.path.join(home_dir(), DEFAULT_DEST_NAME)


def _expand(path):
    path = str(path)
    if path == "~" or path.startswith("~/") or path.startswith("~\\"):
        path = home_dir() + path[1:]
    return os.path.abspath(path)


def dev_mode():
    """True when the developer asked to run the project's own tree instead of a synced copy."""
    dev = os.environ.get("XLA_DEV", "").strip().lower()
    sync_flag = os.environ.get("XLA_TOOLS_SYNC", "").strip().lower()
    return dev not in ("", "0", "false", "no", "off") or sync_flag in ("0", "false", "no", "off")


def parse_tag(name):
    """``"v1.10.0"`` -> (1, 10, 0); anything that is not a plain release tag -> None."""
    m = TAG_RE.match(name or "")
    return tuple(int(x) for x in m.groups()) if m else None


def release_tags(ls_remote_output):
    """{tag: commit sha} for release tags in ``git ls-remote --tags`` output.

    An annotated tag appears twice: ``refs/tags/v1`` (the tag object) and ``refs/tags/v1^{}`` (the
    commit it points to). We want the commit, so a peeled line wins over the plain one."""
    commits, peeled = {}, {}
    for line in ls_remote_output.splitlines():
        parts = line.strip().split("\t")
        if len(parts) != 2 or not parts[1].startswith("refs/tags/"):
            continue
        sha, name = parts[0].strip(), parts[1][len("refs/tags/"):]
        if name.endswith("^{}"):
            name = name[:-3]
            if parse_tag(name):
                peeled[name] = sha
        elif parse_tag(name):
            commits[name] = sha
    commits.update(peeled)
    return commits


def newest_first(tags):
    return sorted(tags, key=parse_tag, reverse=True)


def normalize_remote(url):
    """A comparable form of a remote address: ``x.git`` == ``x/`` == ``x``; local paths resolved."""
    url = (url or "").strip()
    if url.lower().startswith("file://"):
        url = urllib.parse.unquote(url[7:])        # Path.as_uri() percent-encodes spaces and Chinese
        if re.match(r"^/[A-Za-z]:", url):          # file:///C:/... on Windows
            url = url[1:]
    if "://" in url:
        scheme, rest = url.split("://", 1)
        host, _, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1].lower()       # drop user:password@
        url = "%s://%s/%s" % (scheme.lower(), host, path)
    elif not re.match(r"^[\w.-]+@[\w.-]+:", url):   # not scp-like user@host:path, so a local path
        url = os.path.normcase(os.path.realpath(url))
    url = url.rstrip("/\\")
    if url.endswith(".git"):
        url = url[:-4]
    return url.rstrip("/\\")


def _same_path(a, b):
    return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _rmtree(path):
    """Delete a folder git made: on Windows git's object files are read-only, so clear that first."""
    def retry(func, p, _exc):
        try:
            os.chmod(p, stat.S_IWRITE)
            func(p)
        except OSError:
            pass
    if os.path.isdir(path) and not os.path.islink(path):
        # Python 3.12 renamed the hook (onerror is deprecated there); both take (func, path, exc).
        hook = {"onexc": retry} if sys.version_info >= (3, 12) else {"onerror": retry}
        shutil.rmtree(path, **hook)
    elif os.path.lexists(path):
        os.remove(path)


def _read_tag(folder):
    try:
        with open(os.path.join(folder, TAG_FILE), "r", encoding="utf-8") as fh:
            tag = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return tag if parse_tag(tag) else None


def _write_tag(folder, tag, git_dir=None):
    """Write ``.xla-tag`` atomically (temp file inside .git so a crash leaves no stray file)."""
    tmp_dir = git_dir if git_dir and os.path.isdir(git_dir) else folder
    tmp = os.path.join(tmp_dir, TAG_FILE + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(tag + "\n")
    os.replace(tmp, os.path.join(folder, TAG_FILE))


def _timestamp():
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


# ---------------------------------------------------------------------------------------------
# Running git

class GitError(Exception):
    """A git command failed. ``kind``: missing / timeout / auth / network / notfound / failed."""

    def __init__(self, kind, message, detail=""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.detail = detail


GIT_MISSING = ("没有找到 git 命令。请先安装 Git（https://git-scm.com/downloads），"
               "安装后重新打开助手即可自动同步工具集")


def _git_env():
    env = dict(os.environ)
    # Variables a git hook or an outer repository may have set would redirect our commands.
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
                "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX"):
        env.pop(key, None)
    env["GIT_TERMINAL_PROMPT"] = "0"       # never ask for a user name / password on the terminal
    env["GIT_ASKPASS"] = ""                # empty = no askpass program (git checks for non-empty)
    env["SSH_ASKPASS"] = ""
    env["GCM_INTERACTIVE"] = "never"       # Git Credential Manager on Windows: no login window
    env["LC_ALL"] = "C"                    # English messages, so failures can be classified
    env["LANGUAGE"] = "C"
    return env


def _reason(stderr):
    """The telling line of git's stderr: the first ``fatal:``/``error:`` line (git often ends with
    generic advice such as "and the repository exists."), else the last line."""
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    for line in lines:
        for prefix in ("fatal:", "error:"):
            if line.lower().startswith(prefix):
                return line[len(prefix):].strip()
    return lines[-1] if lines else "git 没有给出原因"


def _classify(stderr, what):
    """A Chinese, actionable message for a failed network command (``what``: the remote address)."""
    low = stderr.lower()
    last = _reason(stderr)
    if any(s in low for s in ("could not read username", "could not read password", "terminal prompts disabled",
                              "authentication failed", "permission denied (publickey", "http 401",
                              "error: 401", "error: 403", "returned error: 403", "access denied",
                              "host key verification failed")):
        return GitError("auth", "远程仓库 %s 要求登录或拒绝访问。工具仓库应当是公开的：请确认地址是否正确"
                                "（--remote 或环境变量 XLA_TOOLS_REMOTE）；私有仓库需先在本机配置好 git 凭据" % what,
                        last)
    if any(s in low for s in ("could not resolve host", "failed to connect", "connection timed out",
                              "connection refused", "network is unreachable", "operation timed out",
                              "couldn't connect", "could not connect", "unable to access",
                              "ssl", "proxy", "connection reset", "early eof", "the remote end hung up")):
        return GitError("network", "无法连接远程仓库 %s（%s）。请检查网络连接或代理设置后重试" % (what, last), last)
    if "remote branch" in low and "not found" in low:
        return GitError("notfound", "远程仓库 %s 里找不到这个版本标签（可能刚被删除或改名）：%s。请稍后重试"
                        % (what, last), last)
    if any(s in low for s in ("does not appear to be a git repository", "repository not found", "not found",
                              "no such file or directory", "could not read from remote repository")):
        return GitError("notfound", "远程仓库 %s 不存在或无法读取（%s）。请检查地址是否正确"
                                    "（--remote 或环境变量 XLA_TOOLS_REMOTE）" % (what, last), last)
    return GitError("failed", "git 操作失败（%s）" % last, last)


def run_git(args, cwd=None, timeout=LOCAL_TIMEOUT, verbose=False, remote_label=None):
    """Run ``git <args>`` and return stdout (text). Raises GitError; never prompts, never hangs.

    stdout and stderr are read by two threads so a chatty git cannot block on a full pipe, and in
    verbose mode stderr (git's progress) is mirrored live to our stderr while still being kept for
    the error message."""
    cmd = ["git", "-c", "credential.helper=", "-c", "core.askPass=", "-c", "advice.detachedHead=false"] + list(args)
    if verbose:
        _say("$ " + " ".join(cmd[7:]) + ("   (in %s)" % cwd if cwd else ""))
    try:   # own process group: a timeout kills git's helpers (git-remote-https, ssh) too
        proc = subprocess.Popen(cmd, cwd=cwd, env=_git_env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, **group_kwargs())
    except FileNotFoundError:
        raise GitError("missing", GIT_MISSING)
    except OSError as exc:
        raise GitError("failed", "无法启动 git（%s）" % (exc.strerror or exc))

    out, err = [], []

    def pump(stream, sink, mirror):
        reader = getattr(stream, "read1", stream.read)
        while True:
            chunk = reader(65536)
            if not chunk:
                break
            sink.append(chunk)
            if mirror:
                try:
                    sys.stderr.write(chunk.decode("utf-8", "replace"))
                    sys.stderr.flush()
                except (OSError, ValueError):
                    pass
        stream.close()

    threads = [threading.Thread(target=pump, args=(proc.stdout, out, False), daemon=True),
               threading.Thread(target=pump, args=(proc.stderr, err, verbose), daemon=True)]
    for t in threads:
        t.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(proc)
        proc.wait()
        for t in threads:
            t.join(5)
        if remote_label:
            raise GitError("timeout", "连接远程仓库 %s 超过 %d 秒没有完成：网络可能太慢或不通。"
                                      "请检查网络或代理设置后重试" % (remote_label, timeout))
        raise GitError("timeout", "git %s 超过 %d 秒没有完成：磁盘可能太慢或文件被占用，请稍后重试"
                       % (args[0], timeout))
    for t in threads:
        t.join(5)
    stdout = b"".join(out).decode("utf-8", "replace")
    stderr = b"".join(err).decode("utf-8", "replace")
    if proc.returncode != 0:
        if remote_label:
            raise _classify(stderr, remote_label)
        raise GitError("failed", "git %s 失败（%s，退出码 %d）" % (args[0], _reason(stderr), proc.returncode),
                       stderr)
    return stdout


def _say(text):
    try:
        sys.stderr.write("[xla sync] %s\n" % text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


# ---------------------------------------------------------------------------------------------
# The destination

class Local:
    """What is at the destination now. ``kind``: missing / empty / ours / foreign."""

    def __init__(self, kind, tag=None, head=None, reason=""):
        self.kind = kind
        self.tag = tag
        self.head = head
        self.reason = reason


class _Invalid(Exception):
    """A candidate version was fetched fine but its manifest does not validate."""

    def __init__(self, tag, problems):
        super().__init__(tag)
        self.tag = tag
        self.problems = problems


class _Syncer:
    def __init__(self, remote, dest, force, verbose, timeout):
        self.remote = remote
        self.dest = dest
        self.force = force
        self.verbose = verbose
        self.timeout = timeout
        self.git_dir = os.path.join(dest, ".git")
        self.latest = None

    # -- output ----------------------------------------------------------------------------
    def result(self, ok, action, message, tag=None, previous_tag=None, **extra):
        out = {"ok": ok, "action": action, "tag": tag, "previous_tag": previous_tag,
               "latest": self.latest, "path": self.dest, "message": message}
        if not ok:
            out["error"] = message
        out.update(extra)
        return out

    def log(self, text):
        if self.verbose:
            _say(text)

    def git(self, args, cwd=None, timeout=LOCAL_TIMEOUT, network=False):
        return run_git(args, cwd=cwd, timeout=timeout, verbose=self.verbose,
                       remote_label=self.remote if network else None)

    # -- inspection ------------------------------------------------------------------------
    def cleanup_leftovers(self):
        """Remove staging/check folders of a sync that crashed (we hold the lock: none is live)."""
        parent, base = os.path.split(self.dest)
        for suffix in (".staging-*", ".check-*", ".old-*"):
            for path in glob.glob(os.path.join(glob.escape(parent), glob.escape(base) + suffix)):
                self.log("清理上次中断留下的 %s" % path)
                _rmtree(path)

    def inspect(self):
        dest = self.dest
        if not os.path.lexists(dest):
            return Local("missing")
        if not os.path.isdir(dest):
            return Local("foreign", reason="%s 是一个文件，不是工具集文件夹" % dest)
        if not os.listdir(dest):
            return Local("empty")
        record = sync_archive.read_record(dest)
        if record is not None and not os.path.exists(self.git_dir):
            if normalize_remote(record.get("remote", "")) != normalize_remote(self.remote):
                return Local("foreign", reason="%s 是另一个仓库（%s）的副本，不是 %s 的" % (
                    dest, record.get("remote") or "来源不明", self.remote))
            return Local("archive", tag=_read_tag(dest), head=record.get("commit"))
        if not os.path.exists(self.git_dir):
            return Local("foreign", reason="%s 不是 git 仓库（不是由同步创建的）" % dest)
        self.finish_interrupted_switch()
        try:
            lines = self.git(["rev-parse", "--show-toplevel", "HEAD"], cwd=dest).split()
        except GitError as exc:
            if exc.kind == "missing":
                raise
            return Local("foreign", reason="%s 的 git 仓库无法读取（%s）" % (dest, exc.detail.strip()[-200:] or exc))
        if len(lines) != 2 or not _same_path(lines[0], dest):
            return Local("foreign", reason="%s 不是一个独立的 git 仓库" % dest)
        try:
            origin = self.git(["config", "--get", "remote.origin.url"], cwd=dest).strip()
        except GitError:
            origin = ""
        if normalize_remote(origin) != normalize_remote(self.remote):
            return Local("foreign", reason="%s 是另一个仓库（%s）的副本，不是 %s 的" % (
                dest, origin or "没有 origin", self.remote))
        return Local("ours", tag=_read_tag(dest), head=lines[1])

    def local_edits(self):
        """Paths ``git status`` reports (ignored files such as tools/pydeps/ excluded; our tag file too).

        ``-z`` gives raw paths (no quoting of Chinese names); a rename is followed by its old path."""
        entries = self.git(["status", "--porcelain", "-z"], cwd=self.dest).split("\0")
        edits = []
        i = 0
        while i < len(entries):
            entry = entries[i]
            i += 1
            if len(entry) < 4:
                continue
            if entry[0] in "RC":
                i += 1                          # skip the "renamed from" path
            path = entry[3:]
            if path != TAG_FILE:
                edits.append(path)
        return edits

    def finish_interrupted_switch(self):
        """An update killed mid-checkout leaves a marker with the commit we came from: go back to it,
        so the copy is the last validated version again (the next sync retries the update)."""
        marker = os.path.join(self.git_dir, SWITCH_MARKER)
        if not os.path.isfile(marker):
            return
        try:
            with open(marker, "r", encoding="utf-8") as fh:
                fields = fh.read().split()
            previous = fields[0]
            self.log("上次更新被中断，恢复到 %s" % previous[:12])
            self.git(["checkout", "--force", "--detach", previous], cwd=self.dest)
            if len(fields) > 1 and parse_tag(fields[1]):
                _write_tag(self.dest, fields[1], self.git_dir)
            os.remove(marker)
        except (OSError, IndexError, GitError):
            pass

    def usable(self, folder):
        return os.path.isfile(os.path.join(folder, "tools.json")) and not xla_manifest.check_manifest(folder)

    # -- the sync --------------------------------------------------------------------------
    def run(self):
        self.cleanup_leftovers()
        try:
            run_git(["--version"], timeout=LOCAL_TIMEOUT)
            local = self.inspect()
        except GitError as exc:
            if exc.kind != "missing":
                raise
            return self.without_git()
        if local.kind == "archive":
            return self.run_archive(local)
        if local.kind == "foreign" and not self.force:
            return self.result(False, "refused", "%s。为避免误删你的文件，同步没有改动它。"
                               "如果确定要用工具集替换它，请加 --force（原文件夹会改名为 %s.bak-<时间> 保留），"
                               "或用 --dest 换一个目录" % (local.reason, self.dest))
        try:
            tags = release_tags(self.git(["ls-remote", "--tags", self.remote], timeout=self.timeout,
                                         network=True))
        except GitError as exc:
            return self.offline(local, exc.message)
        if not tags:
            return self.offline(local, "远程仓库 %s 里没有 vX.Y.Z 形式的版本标签" % self.remote)
        order = newest_first(tags)
        self.latest = order[0]
        self.log("远程最新版本：%s（共 %d 个版本标签）" % (self.latest, len(order)))

        if local.kind == "ours":
            if local.head == tags[self.latest]:
                return self.current(local)
            edits = self.local_edits()
            if edits:
                if not self.force:
                    shown = "、".join(edits[:5]) + ("等 %d 项" % len(edits) if len(edits) > 5 else "")
                    return self.result(False, "refused", "%s 里有本地改动（%s），同步不会覆盖它们；当前仍是 %s。"
                                       "如果这些改动不需要保留，请加 --force（原文件夹会改名为 %s.bak-<时间> 保留）"
                                       % (self.dest, shown, local.tag or "未知版本", self.dest),
                                       tag=local.tag, previous_tag=local.tag, local_edits=edits[:50])
                return self.install_fresh(local, tags, order)
            return self.update(local, tags, order)
        return self.install_fresh(local, tags, order)

    def candidates(self, local, order):
        """Tags to try, newest first: the newest always; older ones only while still newer than ours."""
        floor = parse_tag(local.tag) if local.kind in ("ours", "archive") and local.tag else None
        picked = [order[0]]
        for tag in order[1:MAX_CANDIDATES]:
            if floor is not None and parse_tag(tag) <= floor:
                break
            picked.append(tag)
        return picked

    def current(self, local):
        if local.tag != self.latest:          # tag file missing or stale (e.g. crash after checkout)
            _write_tag(self.dest, self.latest, self.git_dir)
        problems = xla_manifest.check_manifest(self.dest)
        if problems:
            return self.result(False, "failed", "%s 已是最新版本 %s，但它的工具清单无法使用：%s。"
                               "请加 --force 重新下载" % (self.dest, self.latest, "；".join(problems[:5])),
                               tag=self.latest, previous_tag=local.tag, problems=problems)
        return self.result(True, "current", "工具集已是最新版本 %s，无需更新" % self.latest,
                           tag=self.latest, previous_tag=local.tag)

    def offline(self, local, why):
        if local.kind in ("ours", "archive") and self.usable(self.dest):
            return self.result(True, "offline", "%s；继续使用本地已有的版本 %s（%s）" % (
                why, local.tag or "未知版本", self.dest), tag=local.tag, previous_tag=local.tag)
        if local.kind == "foreign":
            why += "；目标目录 %s 未改动" % self.dest
        return self.result(False, "failed", "%s；本地还没有可用的工具集，解决后请重新同步" % why)

    def without_git(self):
        """git is missing: an HTTPS remote is synced from its release archives (no git needed;
        a git checkout at the destination stays as it is); otherwise a synced copy on disk is
        still usable."""
        if sync_archive.is_http(self.remote) and not os.path.exists(self.git_dir):
            return self.run_archive(self.inspect())        # no .git: inspect() needs no git
        tag = _read_tag(self.dest) if os.path.isdir(self.dest) else None
        if tag and self.usable(self.dest):
            return self.result(True, "offline", "%s。暂时继续使用本地已有的版本 %s" % (GIT_MISSING, tag),
                               tag=tag, previous_tag=tag)
        return self.result(False, "failed", GIT_MISSING + "。本地还没有可用的工具集")

    def fallback(self, why):
        """An unexpected failure part-way: report whatever version is on disk and usable."""
        tag = _read_tag(self.dest) if os.path.isdir(self.dest) else None
        if tag and self.usable(self.dest):
            return self.result(True, "kept", "%s；继续使用当前版本 %s" % (why, tag), tag=tag, previous_tag=tag)
        return self.result(False, "failed", "%s；本地没有可用的工具集，请稍后重试" % why)

    def kept(self, local, why, **extra):
        if local.kind in ("ours", "archive") and self.usable(self.dest):
            return self.result(True, "kept", "%s；继续使用当前版本 %s，本地副本未改动" % (why, local.tag or "未知版本"),
                               tag=local.tag, previous_tag=local.tag, **extra)
        if local.kind in ("foreign", "ours", "archive"):
            why += "；目标目录 %s 未改动" % self.dest
        return self.result(False, "failed", "%s；本地还没有可用的工具集" % why, previous_tag=local.tag, **extra)

    # -- without git: release archives over HTTPS (xlakit/sync_archive.py) -------------------
    def run_archive(self, local):
        if local.kind == "foreign" and not self.force:
            return self.result(False, "refused", "%s。为避免误删你的文件，同步没有改动它。"
                               "如果确定要用工具集替换它，请加 --force（原文件夹会改名为 %s.bak-<时间> 保留），"
                               "或用 --dest 换一个目录" % (local.reason, self.dest))
        try:
            tags = release_tags(sync_archive.ls_remote(self.remote, self.timeout))
        except sync_archive.ArchiveError as exc:
            return self.offline(local, exc.message)
        if not tags:
            return self.offline(local, "远程仓库 %s 里没有 vX.Y.Z 形式的版本标签" % self.remote)
        order = newest_first(tags)
        self.latest = order[0]
        if local.kind == "archive" and local.head == tags[self.latest]:
            return self.current(local)
        edits = sync_archive.local_edits(self.dest, sync_archive.read_record(self.dest)) if local.kind == "archive" else []
        if edits and not self.force:
            shown = "、".join(edits[:5]) + ("等 %d 项" % len(edits) if len(edits) > 5 else "")
            return self.result(False, "refused", "%s 里有本地改动（%s），同步不会覆盖它们；当前仍是 %s。"
                               "如果这些改动不需要保留，请加 --force（原文件夹会改名为 %s.bak-<时间> 保留）"
                               % (self.dest, shown, local.tag or "未知版本", self.dest),
                               tag=local.tag, previous_tag=local.tag, local_edits=edits[:50])
        invalid = []
        for tag in self.candidates(local, order):
            if local.kind == "archive" and tags[tag] == local.head:
                break
            staging = "%s.staging-%d" % (self.dest, os.getpid())
            try:
                self.log("下载 %s 的压缩包" % tag)
                data = sync_archive.download(self.remote, tag, tags[tag], 2 * self.timeout)
                sync_archive.extract(data, staging)
                problems = xla_manifest.check_manifest(staging)
                if problems:
                    raise _Invalid(tag, problems)
                _write_tag(staging, tag)
                sync_archive.write_record(staging, self.remote, tag, tags[tag])
            except _Invalid as exc:
                _rmtree(staging)
                invalid.append(exc)
                continue
            except sync_archive.ArchiveError as exc:
                _rmtree(staging)
                return self.kept(local, exc.message)
            try:
                backup = self.move_into_place(local if edits or local.kind != "archive" else Local("archive"), staging)
            except OSError as exc:
                _rmtree(staging)
                return self.kept(local, "无法把新版本放到 %s（%s），请确认没有程序正在使用该文件夹"
                                         % (self.dest, exc.strerror or exc))
            extra = {"via": "archive"}
            msg = ("已把工具集从 %s 更新到 %s" % (local.tag or "未知版本", tag) if local.kind == "archive"
                   else "已下载工具集 %s 到 %s" % (tag, self.dest))
            if backup:
                msg += "；原来的文件夹已改名为 %s 保留" % backup
                extra["backup"] = backup
            msg += "（本机没有 git：用的是发布压缩包，已核对它与版本标签的提交一致）" + self.skipped_note(invalid)
            return self.result(True, "updated" if local.kind == "archive" else "cloned", msg, tag=tag,
                               previous_tag=local.tag if local.kind == "archive" else None, **extra)
        return self.kept(local, "可安装的版本都没有通过校验：%s" % (self.invalid_list(invalid) or "没有更新的版本"),
                                 problems=invalid[0].problems if invalid else [])

    # -- fresh install ---------------------------------------------------------------------
    def install_fresh(self, local, tags, order):
        invalid = []
        for tag in self.candidates(local, order):
            staging = "%s.staging-%d" % (self.dest, os.getpid())
            try:
                self.clone(tag, staging)
            except _Invalid as exc:
                _rmtree(staging)
                invalid.append(exc)
                continue
            except GitError as exc:
                _rmtree(staging)
                return self.kept(local, "下载版本 %s 失败：%s" % (tag, exc.message))
            try:
                backup = self.move_into_place(local, staging)
            except OSError as exc:
                _rmtree(staging)
                return self.kept(local, "无法把新版本放到 %s（%s），请确认没有程序正在使用该文件夹"
                                 % (self.dest, exc.strerror or exc))
            note = self.skipped_note(invalid)
            msg = "已下载工具集 %s 到 %s" % (tag, self.dest)
            extra = {}
            if backup:
                msg += "；原来的文件夹已改名为 %s 保留" % backup
                extra["backup"] = backup
            return self.result(True, "cloned", msg + note, tag=tag,
                               previous_tag=local.tag if local.kind == "ours" else None, **extra)
        return self.kept(local, "可安装的版本都没有通过校验：%s" % self.invalid_list(invalid),
                         problems=invalid[0].problems if invalid else [])

    @staticmethod
    def invalid_list(invalid):
        return "；".join("%s 的工具清单校验失败（%s）" % (e.tag, "；".join(e.problems[:3])) for e in invalid)

    def skipped_note(self, invalid):
        """Appended to a success that had to pass over broken newer releases."""
        return "（更新的 %s，已跳过）" % self.invalid_list(invalid) if invalid else ""

    def clone(self, tag, staging):
        self.log("下载 %s 到 %s" % (tag, staging))
        args = ["clone", "--depth", "1", "--branch", tag]
        if self.verbose:
            args.append("--progress")
        self.git(args + ["--", self.remote, staging], timeout=2 * self.timeout, network=True)
        problems = xla_manifest.check_manifest(staging)
        if problems:
            raise _Invalid(tag, problems)
        git_dir = os.path.join(staging, ".git")
        _write_tag(staging, tag, git_dir)
        # Keep our tag file out of `git status`, so the copy stays "clean" for the next update.
        exclude = os.path.join(git_dir, "info", "exclude")
        try:
            os.makedirs(os.path.dirname(exclude), exist_ok=True)
            with open(exclude, "a", encoding="utf-8") as fh:
                fh.write("\n/%s\n" % TAG_FILE)
        except OSError:
            pass

    def move_into_place(self, local, staging):
        """Rename staging -> dest; a foreign/edited dest (only with force) is renamed to a backup first."""
        backup = None
        old_copy = None
        if local.kind == "empty":
            os.rmdir(self.dest)
        elif local.kind == "archive" and local.tag is None and local.head is None:
            # a clean archive copy being updated: swapped out, its libraries kept, then removed
            old_copy = "%s.old-%d" % (self.dest, os.getpid())
            os.replace(self.dest, old_copy)
        elif local.kind in ("foreign", "ours", "archive"):
            backup = "%s.bak-%s" % (self.dest, _timestamp())
            n = 2
            while os.path.lexists(backup):
                backup = "%s.bak-%s-%d" % (self.dest, _timestamp(), n)
                n += 1
            os.replace(self.dest, backup)
        try:
            os.replace(staging, self.dest)
        except OSError:
            if backup or old_copy:
                os.replace(backup or old_copy, self.dest)
            raise
        if old_copy:
            old_deps = os.path.join(old_copy, "tools", "pydeps")
            if os.path.isdir(old_deps) and not os.path.exists(os.path.join(self.dest, "tools", "pydeps")):
                try:
                    os.replace(old_deps, os.path.join(self.dest, "tools", "pydeps"))
                except OSError:
                    pass
            _rmtree(old_copy)
        if backup and local.kind in ("ours", "archive"):
            # Our own copy replaced because of local edits: its installed libraries are still good,
            # carry them over rather than re-downloading (best effort; the backup keeps the rest).
            old_deps = os.path.join(backup, "tools", "pydeps")
            new_deps = os.path.join(self.dest, "tools", "pydeps")
            if os.path.isdir(old_deps) and not os.path.exists(new_deps):
                try:
                    os.replace(old_deps, new_deps)
                except OSError:
                    pass
        return backup

    # -- update in place -------------------------------------------------------------------
    def update(self, local, tags, order):
        invalid = []
        for tag in self.candidates(local, order):
            if tags[tag] == local.head:        # a broken newer tag sent us back to what we have
                break
            try:
                self.fetch_and_validate(tag)
            except _Invalid as exc:
                invalid.append(exc)
                continue
            except GitError as exc:
                return self.kept(local, "获取版本 %s 失败：%s" % (tag, exc.message))
            try:
                self.switch(local, tag)
            except GitError as exc:
                return self.kept(local, "切换到版本 %s 失败（%s），已恢复原版本" % (tag, exc.message))
            older = parse_tag(local.tag) and parse_tag(tag) < parse_tag(local.tag)
            msg = "已把工具集从 %s %s到 %s" % (local.tag or "未知版本", "回退" if older else "更新", tag)
            if older:
                msg += "（远程已撤下 %s，最新发布版本是 %s）" % (local.tag, tag)
            return self.result(True, "updated", msg + self.skipped_note(invalid), tag=tag, previous_tag=local.tag)
        return self.kept(local, "新版本没有通过校验：%s" % (self.invalid_list(invalid) or "没有可安装的新版本"),
                         problems=invalid[0].problems if invalid else [])

    def fetch_and_validate(self, tag):
        """Fetch one tag shallowly and validate it in a throw-away worktree; dest is not touched."""
        self.log("获取 %s" % tag)
        args = ["fetch", "--depth", "1", "--no-tags"]
        if self.verbose:
            args.append("--progress")
        self.git(args + ["origin", "+refs/tags/%s:refs/tags/%s" % (tag, tag)], cwd=self.dest,
                 timeout=2 * self.timeout, network=True)
        check = "%s.check-%d" % (self.dest, os.getpid())
        try:
            self.git(["worktree", "add", "--detach", check, "refs/tags/%s" % tag], cwd=self.dest)
            problems = xla_manifest.check_manifest(check)
        finally:
            try:
                self.git(["worktree", "remove", "--force", check], cwd=self.dest)
            except GitError:
                pass
            if os.path.lexists(check):
                _rmtree(check)
            try:
                self.git(["worktree", "prune"], cwd=self.dest)
            except GitError:
                pass
        if problems:
            raise _Invalid(tag, problems)

    def switch(self, local, tag):
        """Check out ``tag`` in dest. A marker in .git records where we came from until the tag
        file is written, so a crash in between is rolled back by the next sync."""
        marker = os.path.join(self.git_dir, SWITCH_MARKER)
        with open(marker, "w", encoding="utf-8") as fh:
            fh.write("%s %s\n" % (local.head, local.tag or ""))
        try:
            self.git(["checkout", "--detach", "refs/tags/%s" % tag], cwd=self.dest)
            problems = xla_manifest.check_manifest(self.dest)
            if problems:                        # cannot happen after the worktree check, but be sure
                raise GitError("failed", "切换后清单校验失败：%s" % "；".join(problems[:3]))
        except GitError:
            try:
                self.git(["checkout", "--force", "--detach", local.head], cwd=self.dest)
                os.remove(marker)
            except (GitError, OSError):
                pass                            # the marker stays: the next sync retries the rollback
            raise
        _write_tag(self.dest, tag, self.git_dir)
        os.remove(marker)


# ---------------------------------------------------------------------------------------------
# Entry points

def sync(remote=None, dest=None, force=False, verbose=False, timeout=NETWORK_TIMEOUT, lock_timeout=None):
    """Bring ``dest`` to the newest release of ``remote``; returns the result dict (see module doc).

    ``timeout``: seconds for ``git ls-remote`` (clone/fetch get twice as long).
    ``lock_timeout``: how long to wait for another sync of the same dest (default: long enough for
    that sync to finish its network steps)."""
    remote = remote or default_remote()
    dest = _expand(dest) if dest else default_dest()
    if dev_mode():
        return {"ok": True, "action": "local", "tag": _read_tag(ROOT), "previous_tag": None, "latest": None,
                "path": ROOT, "message": "开发模式（XLA_DEV=1 或 XLA_TOOLS_SYNC=0）：直接使用本地工程目录 %s，"
                                         "没有访问远程仓库" % ROOT}
    syncer = _Syncer(remote, dest, force, verbose, timeout)
    if lock_timeout is None:
        lock_timeout = 5 * timeout + 30
    lock = xla_lock.FileLock(dest + ".lock", timeout=lock_timeout)
    try:
        lock.acquire()
    except TimeoutError:
        local_tag = _read_tag(dest) if os.path.isdir(dest) else None
        why = "另一个助手正在同步 %s，等待 %d 秒仍未结束" % (dest, lock_timeout)
        if local_tag and syncer.usable(dest):
            return syncer.result(True, "kept", why + "；暂时使用当前版本 %s" % local_tag,
                                 tag=local_tag, previous_tag=local_tag)
        return syncer.result(False, "failed", why + "；请稍后重试")
    except OSError as exc:
        return syncer.result(False, "failed", "无法在 %s 旁边创建锁文件（%s）：请确认该位置可写，或用 --dest 换一个目录"
                             % (dest, exc.strerror or exc))
    try:
        return syncer.run()
    except GitError as exc:                      # a local git step failed (status, rev-parse, ...)
        return syncer.fallback(exc.message)
    except OSError as exc:
        return syncer.fallback("同步时读写文件出错（%s：%s）" % (exc.strerror or exc, exc.filename or dest))
    finally:
        lock.release()


class _ArgParser(argparse.ArgumentParser):
    """argparse, but a bad option becomes our JSON failure instead of English usage text."""

    def error(self, message):
        raise ValueError(message)


def main(argv=None):
    """``python3 xla.py sync [--remote URL] [--dest DIR] [--force] [--verbose]``: print one JSON object."""
    parser = _ArgParser(prog="xla.py sync", description="按版本标签同步工具集")
    parser.add_argument("--remote", help="远程仓库地址（默认 XLA_TOOLS_REMOTE 或 %s）" % DEFAULT_REMOTE)
    parser.add_argument("--dest", help="本地工具集目录（默认 ~/%s）" % DEFAULT_DEST_NAME)
    parser.add_argument("--force", action="store_true", help="目标目录不是同步副本或有本地改动时，改名备份后替换")
    parser.add_argument("--verbose", action="store_true", help="在标准错误输出里显示 git 的进度")
    parser.add_argument("--timeout", type=int, default=NETWORK_TIMEOUT, help="联网步骤的超时秒数")
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
        if args.timeout <= 0:
            raise ValueError("--timeout 必须是正整数")
    except ValueError as exc:
        result = {"ok": False, "action": "failed", "error": "参数有误：%s。用法：xla.py sync [--remote 地址] "
                  "[--dest 目录] [--force] [--verbose]" % exc}
        result["message"] = result["error"]
        return _emit(result, 2)
    try:
        result = sync(remote=args.remote, dest=args.dest, force=args.force, verbose=args.verbose,
                      timeout=args.timeout)
    except Exception as exc:    # a bug must still produce the JSON contract, not a traceback
        if os.environ.get("XLA_DEBUG") == "1":
            import traceback
            traceback.print_exc()
        msg = "同步时出现内部错误（%s：%s）；已有的版本未改动。可设置 XLA_DEBUG=1 查看详情" % (
            type(exc).__name__, str(exc)[:300])
        result = {"ok": False, "action": "failed", "message": msg, "error": msg}
    return _emit(result, 0 if result.get("ok") else 1)


def _emit(result, code):
    text = json.dumps(result, ensure_ascii=False)
    try:
        sys.stdout.write(text + "\n")
    except UnicodeEncodeError:                   # a legacy console code page: stay readable as JSON
        sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()
    if not result.get("ok"):
        try:
            sys.stderr.write(result.get("error", result.get("message", "")) + "\n")
        except UnicodeEncodeError:
            sys.stderr.write(json.dumps(result.get("error", "")) + "\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
