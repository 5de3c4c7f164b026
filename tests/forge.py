"""A code forge played by tests/netserver.py for the git-less sync (xlakit/sync_archive.py): git's
smart-HTTP reference list and the forge's release zips, both produced by real git from a test
repository (``test_sync.Remote``), served as Gitee serves them (``https://gitee.com/<o>/<r>.git``)."""
import subprocess

from netserver import Reply

REMOTE = "https://gitee.com/xla/xla-tools.git"


def _pkt(data):
    data = data.encode("utf-8") if isinstance(data, str) else data
    return b"%04x" % (len(data) + 4) + data


class Forge:
    """``Forge(serve, remote, env)``; ``env()`` gives XLA_NET_MAP for the sync process;
    ``tamper(tag)`` serves the zip of another commit under that tag's name."""

    def __init__(self, serve, remote, gitenv):
        self.serve, self.remote, self.gitenv = serve, remote, gitenv
        self.swapped = {}
        serve.handler("/xla/xla-tools.git/info/refs", self._refs, host="gitee.com")
        serve.handler("*", self._archive, host="gitee.com")

    def _git(self, *args):
        return subprocess.run(["git"] + list(args), cwd=str(self.remote.bare), env=self.gitenv, capture_output=True,
                              timeout=60, check=True).stdout

    def _refs(self, req):
        lines = self._git("ls-remote", str(self.remote.bare)).decode().splitlines()
        body = _pkt("# service=git-upload-pack\n") + b"0000"
        for i, line in enumerate(lines):
            sha, ref = line.split("\t")
            body += _pkt("%s %s%s\n" % (sha, ref, "\0multi_ack side-band-64k ofs-delta" if i == 0 else ""))
        return Reply(body + b"0000", content_type="application/x-git-upload-pack-advertisement")

    def _archive(self, req):
        prefix = "/xla/xla-tools/repository/archive/"
        if not (req.path.startswith(prefix) and req.path.endswith(".zip")):
            return Reply("not found", status=404)
        tag = req.path[len(prefix):-4]
        target = self.swapped.get(tag, tag)
        try:
            data = self._git("archive", "--format=zip", "--prefix=xla-tools-%s/" % tag, target)
        except subprocess.CalledProcessError:
            return Reply("not found", status=404)
        return Reply(data, content_type="application/zip")

    def tamper(self, tag, other):
        self.swapped[tag] = other

    def env(self):
        return self.serve.env("https://gitee.com")
