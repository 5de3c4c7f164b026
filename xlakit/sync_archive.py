"""The sync without git: release tags and release archives over plain HTTPS (``xla_sync.py``).

Why: office PCs, Windows ones above all, rarely have git, and the sync used to stop at "install
Git". Everything the sync needs is also served over plain HTTP by the forges:

- the tags: git's smart-HTTP reference list (``<remote>/info/refs?service=git-upload-pack``, what
  ``git ls-remote`` itself reads), parsed here (pkt-lines) into the same ``{tag: commit}`` map;
- the files: the forge's archive of that tag (Gitee ``/repository/archive/<tag>.zip``, GitHub
  ``/archive/refs/tags/<tag>.zip``, Gitea/GitLab forms as fallbacks). Such a zip is made by
  ``git archive``, which stores the commit id as the zip's comment: the archive is **verified**
  by that id matching the tag's commit from the reference list (an archive without it, or of
  another commit, is refused), then by the manifest check, as with git.

The copy records where it came from in ``.xla-archive.json`` (remote, tag, commit, and the
SHA-256 of every file), so the next sync knows it is ours and can tell local edits (changed,
added or removed files; ``tools/pydeps`` and caches ignored) from a clean copy, as ``git status``
does for a checkout. Network access goes through ``xlakit.http`` (proxy settings, the
``XLA_NET_MAP`` test seam, Chinese errors).
"""
import hashlib
import io
import json
import os
import re
import shutil
import stat
import urllib.parse
import zipfile

RECORD = ".xla-archive.json"
MAX_ARCHIVE = 80_000_000            # bytes; the toolbox archive is a few MB
IGNORED_TOP = ("tools/pydeps/", ".git/")
SHA_RE = re.compile(r"^[0-9a-f]{40}$")


class ArchiveError(Exception):
    """``kind``: network / notfound / unsupported / invalid / unverified; message is Chinese."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind
        self.message = message


def is_http(remote):
    return (remote or "").lower().startswith(("https://", "http://"))


def _base(remote):
    return remote.rstrip("/")


def _session(timeout):
    from . import http
    return http.Session(timeout=timeout), http


def ls_remote(remote, timeout):
    """``git ls-remote`` output (``sha\\tref`` lines) read over smart HTTP, without git."""
    session, http = _session(timeout)
    url = _base(remote) + ("" if remote.rstrip("/").endswith(".git") else ".git") + "/info/refs?service=git-upload-pack"
    try:
        resp = session.request("GET", url, headers={"User-Agent": "git/2.43.0", "Accept": "*/*"}, _warm=False,
                               max_bytes=5_000_000, timeout=timeout)
    except http.NetError as exc:
        raise ArchiveError("notfound" if exc.kind == "http" else "network",
                           "无法读取远程仓库 %s 的版本列表（%s）" % (remote, exc))
    finally:
        session.close()
    return parse_refs(resp.content)


def parse_refs(data):
    """pkt-line reference advertisement (protocol v0) -> ``sha\\tref`` lines."""
    lines, pos = [], 0
    while pos + 4 <= len(data):
        try:
            size = int(data[pos:pos + 4], 16)
        except ValueError:
            raise ArchiveError("invalid", "远程仓库返回的版本列表格式不对（不是 git 的智能 HTTP 应答）")
        if size == 0:
            pos += 4
            continue
        payload = data[pos + 4:pos + size]
        pos += size
        text = payload.split(b"\0", 1)[0].decode("utf-8", "replace").rstrip("\n")
        if text.startswith("#"):
            continue
        sha, _, ref = text.partition(" ")
        if SHA_RE.match(sha) and ref:
            lines.append("%s\t%s" % (sha, ref))
    return "\n".join(lines)


def archive_urls(remote, tag):
    """Where forges serve the zip of ``tag`` (best guess first)."""
    parts = urllib.parse.urlsplit(_base(remote))
    path = parts.path[:-4] if parts.path.endswith(".git") else parts.path
    origin = "%s://%s" % (parts.scheme, parts.netloc)
    name = path.rstrip("/").rsplit("/", 1)[-1]
    host = parts.hostname or ""
    quoted = urllib.parse.quote(tag)
    forms = {"gitee": "%s%s/repository/archive/%s.zip" % (origin, path, quoted),
             "github": "%s%s/archive/refs/tags/%s.zip" % (origin, path, quoted),
             "gitea": "%s%s/archive/%s.zip" % (origin, path, quoted),
             "gitlab": "%s%s/-/archive/%s/%s-%s.zip" % (origin, path, quoted, name, quoted)}
    order = ["gitee", "github", "gitea", "gitlab"]
    if "github" in host:
        order = ["github", "gitea", "gitee", "gitlab"]
    elif "gitlab" in host:
        order = ["gitlab", "gitea", "gitee", "github"]
    return [forms[k] for k in order]


def download(remote, tag, commit, timeout):
    """The verified zip of ``tag`` (bytes): its comment is the commit id ``git archive`` stored."""
    session, http = _session(timeout)
    problems = []
    try:
        for url in archive_urls(remote, tag):
            try:
                resp = session.request("GET", url, _warm=False, max_bytes=MAX_ARCHIVE, timeout=timeout,
                                       headers={"Accept": "application/zip, */*"})
            except http.NetError as exc:
                if exc.kind != "http":
                    raise ArchiveError("network", "下载版本 %s 的压缩包失败（%s）" % (tag, exc))
                problems.append("%s：HTTP %s" % (url, getattr(exc, "status", "?")))
                continue
            data = resp.content
            if not data.startswith(b"PK"):
                problems.append("%s：不是 zip 压缩包" % url)
                continue
            verify(data, tag, commit)
            return data
    finally:
        session.close()
    raise ArchiveError("notfound", "远程仓库没有提供版本 %s 的压缩包（%s）" % (tag, "；".join(problems[:4])))


def verify(data, tag, commit):
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            comment = zf.comment.decode("ascii", "replace").strip()
            zf.testzip()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ArchiveError("invalid", "版本 %s 的压缩包已损坏（%s），请稍后重试" % (tag, exc))
    if not SHA_RE.match(comment):
        raise ArchiveError("unverified", "版本 %s 的压缩包里没有提交号，无法核对它就是这个版本，没有安装" % tag)
    if comment != commit:
        raise ArchiveError("unverified", "版本 %s 的压缩包对应提交 %s，而版本标签指向 %s：内容对不上，没有安装"
                           % (tag, comment[:12], commit[:12]))


def extract(data, staging):
    """Unpack into ``staging`` (the zip's single top folder dropped); refuses paths leaving it."""
    os.makedirs(staging)
    root = os.path.realpath(staging)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = [i.filename for i in zf.infolist()]
        tops = {n.split("/", 1)[0] for n in names if n.strip("/")}
        strip = (tops.pop() + "/") if len(tops) == 1 and all("/" in n or n.endswith("/") for n in names) else ""
        for info in zf.infolist():
            rel = info.filename[len(strip):] if info.filename.startswith(strip) else info.filename
            if not rel or rel.endswith("/"):
                continue
            target = os.path.realpath(os.path.join(staging, *rel.split("/")))
            if not target.startswith(root + os.sep):
                raise ArchiveError("invalid", "压缩包里有指向外面的路径（%s），没有安装" % info.filename[:200])
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                continue                        # no links from an archive (the toolbox has none)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
            if os.name == "posix" and mode & 0o111:
                os.chmod(target, 0o755)


def _walk(folder):
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        rel_dir = os.path.relpath(dirpath, folder).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not (rel_dir + d + "/").startswith(IGNORED_TOP)]
        for name in filenames:
            rel = rel_dir + name
            if rel in (RECORD, ".xla-tag") or name.endswith(".pyc"):
                continue
            with open(os.path.join(dirpath, name), "rb") as fh:
                out[rel] = hashlib.sha256(fh.read()).hexdigest()
    return out


def write_record(folder, remote, tag, commit):
    record = {"remote": remote, "tag": tag, "commit": commit, "files": _walk(folder)}
    tmp = os.path.join(folder, RECORD + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(record, fh, ensure_ascii=False)
    os.replace(tmp, os.path.join(folder, RECORD))


def read_record(folder):
    try:
        with open(os.path.join(folder, RECORD), encoding="utf-8") as fh:
            record = json.load(fh)
        return record if isinstance(record, dict) and isinstance(record.get("files"), dict) else None
    except (OSError, ValueError):
        return None


def local_edits(folder, record):
    """Files changed, added or removed since the archive was installed (like ``git status``)."""
    now = _walk(folder)
    before = record.get("files", {})
    return sorted([p for p, h in now.items() if before.get(p) != h] + [p for p in before if p not in now])
