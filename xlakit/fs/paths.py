"""Where a tool may read and write: the home, the workspace, the folders users name, the deny list.

Every tool resolves its paths here, so the rules are the same in all of them:

- ``~`` expands from ``HOME`` (also on Windows, where ``os.path.expanduser`` ignores it, and the
  host passes only ``HOME``);
- a relative path lives in the workspace ``~/.xla/workspace`` (reads look there, writes land there);
- the folders people name in chat ("桌面/报表.xlsx", "下载", "Documents") map to the real ones,
  including OneDrive's Desktop on Windows and the localised XDG folders on Linux;
- **every writer** goes through :func:`resolve_write`, which refuses the places where a written file
  becomes code that runs later or a key that grants access: shell and login start-up files,
  ``~/.ssh``, autostart folders, git internals (any git directory at any depth, bare or not,
  found by its content), the toolbox itself and its libraries, every folder of the Python that
  runs the tools (``sys.path``, site-packages, ``.pth`` targets, the installation) and system
  folders. The check runs on the path as written *and* on where it really points, resolved the
  way the kernel does (``resolve.py`` walks it with directory descriptors for the writers; here a
  bounded ``lstat``/``readlink`` walk that refuses what it cannot follow), case-insensitively
  where the file system is. A prompt-injected model that asks to "save the notes to ~/.bashrc"
  gets a Chinese refusal that says why.
"""
import errno
import os
import stat
import sys

from .. import manifest
from . import resolve
from ..errors import InputError, ToolError, os_error
from . import winpath

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IS_WINDOWS = os.name == "nt"
IS_MAC = sys.platform == "darwin"


# ---------------------------------------------------------------------------------------------
# Home and the toolbox's own folders

def home_dir():
    """The user's home: ``HOME`` first (also on Windows, where Python's expanduser ignores it)."""
    home = os.environ.get("HOME") or os.environ.get("USERPROFILE")
    return home or os.path.expanduser("~")


def xla_dir(*parts):
    """``~/.xla/...``: the toolbox's data (workspace, backups, trash, logs, settings)."""
    return os.path.join(home_dir(), ".xla", *parts)


def workspace_dir(create=False):
    path = xla_dir("workspace")
    if create:
        os.makedirs(path, exist_ok=True)
    return path


def trash_dir(create=False):
    path = xla_dir("trash")
    if create:
        os.makedirs(path, exist_ok=True)
    return path


def backup_dir(create=False):
    path = xla_dir("backup")
    if create:
        os.makedirs(path, exist_ok=True)
    return path


# ---------------------------------------------------------------------------------------------
# Folders users name

# What people type -> the folder's key. English names are matched case-insensitively.
FOLDER_ALIASES = {
    "桌面": "desktop", "desktop": "desktop",
    "下载": "downloads", "downloads": "downloads", "download": "downloads",
    "文档": "documents", "我的文档": "documents", "documents": "documents",
    "图片": "pictures", "pictures": "pictures",
    "音乐": "music", "music": "music",
    "视频": "videos", "videos": "videos", "movies": "videos",
}
_XDG_KEYS = {"desktop": "XDG_DESKTOP_DIR", "downloads": "XDG_DOWNLOAD_DIR", "documents": "XDG_DOCUMENTS_DIR",
             "pictures": "XDG_PICTURES_DIR", "music": "XDG_MUSIC_DIR", "videos": "XDG_VIDEOS_DIR"}
_ENGLISH = {"desktop": "Desktop", "downloads": "Downloads", "documents": "Documents", "pictures": "Pictures",
            "music": "Music", "videos": "Movies" if IS_MAC else "Videos"}
_CHINESE = {"desktop": "桌面", "downloads": "下载", "documents": "文档", "pictures": "图片", "music": "音乐",
            "videos": "视频"}


def _xdg_dirs(home):
    """``~/.config/user-dirs.dirs`` (Linux desktops write localised names such as ``$HOME/桌面``)."""
    out = {}
    try:
        with open(os.path.join(home, ".config", "user-dirs.dirs"), encoding="utf-8") as fh:
            for line in fh:
                key, sep, value = line.strip().partition("=")
                if sep and key.startswith("XDG_"):
                    value = value.strip().strip('"').replace("$HOME", home)
                    out[key] = os.path.normpath(value)
    except (OSError, UnicodeDecodeError):
        pass
    return out


def known_folder(name):
    """The real folder for a name users say ("桌面", "Downloads"...), or None when unknown.

    Order: an existing OneDrive Desktop/Documents on Windows (OneDrive moves them there), the XDG
    setting on Linux, an existing ``~/Desktop``-style English folder, an existing Chinese-named
    one, else the English default (it may not exist yet)."""
    key = FOLDER_ALIASES.get(name.strip().lower()) if isinstance(name, str) else None
    if key is None:
        return None
    home = home_dir()
    candidates = []
    if IS_WINDOWS:  # pragma: no cover - Windows only
        # Windows knows where it put the folder (moved to D:\\桌面, redirected into OneDrive)
        reported = winpath.known_folders().get(key)
        if reported:
            return reported
    if IS_WINDOWS and key in ("desktop", "documents", "pictures"):  # pragma: no cover - Windows only
        for var in ("OneDrive", "OneDriveConsumer", "OneDriveCommercial"):
            base = os.environ.get(var)
            if base:
                candidates += [os.path.join(base, _ENGLISH[key]), os.path.join(base, _CHINESE[key])]
    if not IS_WINDOWS and not IS_MAC:
        xdg = _xdg_dirs(home).get(_XDG_KEYS[key])
        if xdg and xdg != os.path.normpath(home):
            candidates.append(xdg)
    candidates += [os.path.join(home, _ENGLISH[key]), os.path.join(home, _CHINESE[key])]
    for path in candidates:
        if os.path.isdir(path):
            return path
    if IS_WINDOWS:  # pragma: no cover - never create a guessed Desktop that Windows does not show
        return None
    return os.path.join(home, _ENGLISH[key])


def _known_folder_prefix(path):
    """``桌面/a.xlsx`` or ``~/桌面/a.xlsx`` (when that folder does not exist as typed) -> real path."""
    parts = path.replace("\\", "/").split("/")
    if parts and parts[0] == "~" and len(parts) > 1:
        typed = os.path.join(home_dir(), parts[1])
        if os.path.isdir(typed):
            return None
        parts = parts[1:]
    if not parts or parts[0] == "" or os.path.isabs(path):
        return None
    folder = known_folder(parts[0])
    if folder is None:
        if IS_WINDOWS and FOLDER_ALIASES.get(parts[0].strip().lower()):  # pragma: no cover - Windows only
            raise ToolError("没能从 Windows 查到「%s」文件夹在哪里，为免写到看不见的位置，工具没有保存。"
                            "请写出完整路径（例如 D:\\桌面\\报表.xlsx），或只写文件名保存到工作空间" % parts[0])
        return None
    return os.path.join(folder, *parts[1:]) if len(parts) > 1 else folder


# ---------------------------------------------------------------------------------------------
# Turning what the model sent into an absolute path

def expand(path, param="path"):
    """Strip quotes, expand ``~`` from HOME and known folder names; refuse empty and NUL paths.
    Relative results stay relative (the caller anchors them in the workspace)."""
    if not isinstance(path, str) or not path.strip():
        raise InputError("参数 %s 不能为空，请给出文件路径（绝对路径、~ 开头，或工作空间里的文件名）" % param)
    if "\x00" in path:
        raise InputError("参数 %s 含有空字符，不是合法路径" % param)
    path = path.strip().strip('"').strip("'").strip()
    if path.lower().startswith("file://"):
        path = path[7:]
    known = _known_folder_prefix(path)
    if known is not None:
        return known
    if path == "~" or path.startswith("~/") or path.startswith("~\\"):
        # "~//.bashrc" must stay in the home: strip every separator after "~" before joining (a
        # joined absolute part would replace the home and point at "/.bashrc")
        rest = path[1:].lstrip("/\\")
        path = os.path.join(home_dir(), rest) if rest else home_dir()
    return path


def absolute(path, param="path", create_workspace=False):
    """Absolute, normalised path; relative ones live in the workspace."""
    path = expand(path, param)
    if IS_WINDOWS:  # pragma: no cover - Windows only: \\?\, UNC admin shares, 8.3 names -> one drive path
        path = winpath.long_path(winpath.canonical(path))[0]
    if not os.path.isabs(path):
        path = os.path.join(workspace_dir(create=create_workspace), path)
    return os.path.normpath(path)


def _hint(name, text):
    # Imported late: the manifest is plumbing below us, but reading it costs a file read.
    from ..manifest import declared_tools
    return text if name in declared_tools() else ""


def resolve_read(path, param="path", want="file"):
    """Absolute path of an existing input. Relative names are looked up in the workspace.

    ``want`` is "file", "dir" or "any"; a wrong kind or a missing path is a Chinese ToolError that
    says what to do next."""
    raw = path
    path = absolute(path, param)
    if not os.path.exists(path):
        raise ToolError("找不到%s：%s。请确认路径和文件名%s；相对路径按工作空间 %s 解析" % (
            "文件夹" if want == "dir" else "文件", raw, _hint("find_files", "（可先用 find_files 按名字查找）"),
            workspace_dir()))
    if want == "file" and os.path.isdir(path):
        raise ToolError("%s 是一个文件夹，不是文件。请给出文件夹里的具体文件%s" % (
            raw, _hint("list_dir", "（可先用 list_dir 查看）")))
    if want == "dir" and not os.path.isdir(path):
        raise ToolError("%s 是文件，不是文件夹" % raw)
    if want == "file":
        _check_regular(path, raw)
    if want == "file" and not os.access(path, os.R_OK):
        raise ToolError("没有读取 %s 的权限。请检查文件权限，或先把它复制到工作空间再试" % raw)
    return path


def _check_regular(path, raw):
    """A reader opens only ordinary files: a FIFO would block until the 60 s kill, a device such as
    /dev/zero would be read as "0 bytes" or forever, a socket cannot be read at all."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise os_error(exc, raw, "读取")
    if stat.S_ISREG(mode):
        return
    if stat.S_ISFIFO(mode):
        kind = "命名管道（FIFO），读取它会一直等待另一个程序写入"
    elif stat.S_ISSOCK(mode):
        kind = "套接字（程序之间通信用的特殊文件）"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        kind = "设备文件"
    else:
        kind = "特殊文件"
    raise ToolError("%s 是%s，不是普通文件，工具不读取它。请给出一个普通的文档或表格文件" % (raw, kind))


def resolve_write(path, param="path"):
    """Absolute path for an output: relative names go to the workspace, the path is followed the
    way the kernel follows it (``resolve.walk``), the deny list judges where it really leads, and
    only then are missing parent folders created, one by one inside the walk. Returns the path as
    asked (absolute); every write then walks it again and writes through the folder's descriptor
    (``files.atomic_write``)."""
    path = absolute(path, param, create_workspace=True)
    with open_for_write(path, create=True) as target:
        if target.name is None or (target.st is not None and stat.S_ISDIR(target.st.st_mode)):
            raise ToolError("%s 是一个已存在的文件夹，不能当作文件写入。请换一个文件名" % path)
    return path


def open_for_write(path, create=False, follow_final=True):
    """``resolve.walk`` of absolute ``path`` with the deny list applied to where it really leads;
    returns the open :class:`resolve.Walked` (a context manager). With ``create``, missing parent
    folders are made only after the check, and the walk that makes them must end where the
    checked one did (else someone changed the path meanwhile: refused)."""
    _check_windows_form(path)           # before the walk: CON, a data stream... are not paths to follow
    target = resolve.walk(path, follow_final=follow_final)
    try:
        check_write_allowed(path, real=target.real)
        if create and target.missing:
            checked = target.real
            target.close()
            target = resolve.walk(path, create=True, follow_final=follow_final)
            if target.real != checked:
                raise ToolError("路径 %s 在检查的同时被改动了（现在指向 %s），工具没有写入。请稍后重试" % (path, target.real))
            check_write_allowed(path, real=target.real)
    except BaseException:
        target.close()
        raise
    return target


# ---------------------------------------------------------------------------------------------
# The deny list

# Files in the home folder that a shell, a login or a desktop session runs or reads as settings.
_STARTUP_FILES = (
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".bash_aliases",
    ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".login", ".logout",
    ".kshrc", ".mkshrc", ".inputrc", ".xprofile", ".xinitrc", ".xsession", ".xsessionrc", ".Xresources",
    ".pam_environment", ".gitconfig", ".npmrc", ".pypirc", ".netrc", ".curlrc", ".wgetrc", ".vimrc",
    ".exrc", ".pythonrc", ".pythonstartup", ".lesskey", ".screenrc", ".tmux.conf", ".selected_editor",
)
# Folders under the home whose content runs later, grants access or holds the toolbox.
_HOME_FOLDERS = (
    (".ssh", "SSH 密钥和登录配置"),
    (".gnupg", "GPG 密钥"),
    (".aws", "云服务凭据"),
    (".kube", "集群凭据"),
    (".docker", "Docker 凭据"),
    (".config/autostart", "登录后自动启动的程序"),
    (".config/systemd", "用户级后台服务"),
    (".config/environment.d", "登录环境变量"),
    (".config/fish", "fish shell 启动配置"),
    (".config/git", "git 配置（可以让 git 执行命令）"),
    (".config/pip", "pip 配置（可以把安装源换成恶意地址）"),
    (".local/share/applications", "桌面程序启动项"),
    (".local/bin", "命令行程序目录（放进去的程序会被当作命令执行）"),
    (".local/lib", "Python 用户库（.pth 文件会在每次启动 Python 时执行）"),
    ("Library/LaunchAgents", "macOS 登录后自动启动的程序"),
    ("Library/LaunchDaemons", "macOS 后台服务"),
    ("Library/Preferences/com.apple.loginitems.plist", "macOS 登录项"),
    ("Library/Application Support/com.apple.backgroundtaskmanagementagent", "macOS 登录项"),
    ("Library/Python", "Python 用户库（.pth 文件会在每次启动 Python 时执行）"),
    ("AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup", "Windows 开机启动文件夹"),
    ("AppData/Roaming/Python", "Python 用户库（.pth 文件会在每次启动 Python 时执行）"),
    ("Documents/WindowsPowerShell", "PowerShell 启动配置"),
    ("Documents/PowerShell", "PowerShell 启动配置"),
    ("文档/WindowsPowerShell", "PowerShell 启动配置"),
    (".xla-tools", "工具箱本身"),
)
# System folders (POSIX and Windows); compared case-insensitively on Windows and macOS.
_SYSTEM_POSIX = ("/etc", "/bin", "/sbin", "/usr", "/boot", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
                 "/var", "/root", "/sys", "/proc", "/dev", "/snap", "/run", "/srv", "/System", "/Library",
                 "/private/etc", "/private/var", "/Applications", "/Users/Shared/Library")
# Windows' system folders, Startup and AppData: winpath.deny_reason (asked from Windows, not guessed).
# Folders under /var and similar that are ordinary places to write.
_SYSTEM_EXCEPTIONS = ("/var/tmp", "/var/folders", "/private/var/folders", "/private/var/tmp")
# Removable drives are mounted under /run/media/<user> on Fedora/Arch desktops: users save there.
_MOUNT_EXCEPTIONS = ("/run/media",)


def _norm(path):
    """Comparable form: forward slashes, no trailing slash, case folded where the FS ignores case."""
    if IS_WINDOWS:  # pragma: no cover - Windows only: every spelling of a path compares as one
        return winpath.comparable(path)
    path = os.path.normpath(path).replace("\\", "/")
    if len(path) > 1:
        path = path.rstrip("/")
    if IS_WINDOWS or IS_MAC:
        path = path.lower()
    return path


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _real(path):
    """Where ``path`` really points: the realpath of its deepest existing ancestor plus the rest,
    so a link anywhere in the chain (including the target itself) is followed."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path)


_TOOLBOX = {}


def _toolbox_folders():
    """This checkout and its libraries' folder (``manifest.pydeps_dir``: ``tools/pydeps``, which may
    be a link to a shared copy, or an installed package's ``~/.xla/pydeps``), as written and real.
    Computed once per HOME: the run_python fence's first (warm-up) call fixes it before any
    script runs."""
    home = home_dir()
    if home not in _TOOLBOX:
        out = []
        for folder in (ROOT, manifest.pydeps_dir(ROOT, home)):
            for cand in (_norm(folder), _norm(_real(folder))):
                if cand not in out:
                    out.append(cand)
        _TOOLBOX[home] = tuple(out)
    return _TOOLBOX[home]


def _interpreter_paths():
    """Every folder the Python running this code loads code from or is installed in: ``sys.path``,
    site-packages (``site.getsitepackages``, the user site), the folders ``.pth`` files there add,
    and ``sys.prefix`` / ``exec_prefix`` / ``base_prefix``. Read once, at import, as
    (folder, from_sys_path_only) pairs: the run_python fence imports this module before its audit
    hook is up, and reading ``.pth`` files from inside the hook would raise events of its own."""
    import site
    found = []

    def add(folder, plain=False):
        if isinstance(folder, str) and folder and os.path.isabs(folder):
            found.append((folder, plain))
    for entry in sys.path:
        add(entry, plain=True)
    sites = []
    try:
        sites += list(site.getsitepackages())
    except (AttributeError, OSError):       # an old virtualenv's site.py has no getsitepackages
        pass
    try:
        sites.append(site.getusersitepackages())
    except (AttributeError, OSError):
        pass
    for folder in sites:
        add(folder)
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".pth"))
        except OSError:
            continue
        for name in names[:200]:
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as fh:
                    lines = fh.read(65536).splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if line and not line.startswith(("#", "import ", "import\t")):
                    add(os.path.normpath(os.path.join(folder, line)))
    for attr in ("prefix", "exec_prefix", "base_prefix", "base_exec_prefix"):
        add(getattr(sys, attr, None))
    out = []
    for folder, plain in found:
        for cand in (folder, _real(folder)):
            if (cand, plain) not in out:
                out.append((cand, plain))
    return tuple(out)


_INTERPRETER = _interpreter_paths()


def _python_folders(home, workspace):
    """The folders of :func:`_interpreter_paths` that are refused for ``home``: never the root, a
    drive, the home itself or a folder holding the home or the workspace (a Python installed with
    the home as its prefix must not make the whole home unwritable: its ``lib`` folder still is),
    nothing inside the workspace, and plain ``sys.path`` entries in the temp folders (a script's
    own folder there is no installation)."""
    out = []
    temp = _temp_roots()
    homes = [home, _norm(_real(home_dir()))]
    for folder, plain in _INTERPRETER:
        norm = _norm(folder)
        if len(norm) <= 3 or norm in out:
            continue
        if any(_inside(h, norm) for h in homes) or any(_inside(w, norm) for w in workspace):
            continue
        if any(_inside(norm, w) for w in workspace):
            continue
        if plain and any(_inside(norm, t) for t in temp):
            continue
        out.append(norm)
    return out


def _temp_roots():
    import tempfile
    roots = {_norm(tempfile.gettempdir()), _norm(_real(tempfile.gettempdir()))}
    for folder in _SYSTEM_EXCEPTIONS:
        roots.add(_norm(folder))
    return roots


def deny_reason(path, real=None):
    """Why writing ``path`` is refused (Chinese), or None when it is allowed.

    ``path`` is absolute. Both the path as written and its real target are checked; ``real`` is
    that target when the caller has walked it already (``resolve.walk``), else it is found here
    with :func:`_strict_real`, which refuses what it cannot follow. The git rule then looks at
    the real path's folders on disk (:func:`_git_reason`). On Windows a form that cannot be
    written safely (a data stream, a device name, ``\\\\.\\``) is refused first, and where the
    kernel says the path leads (:func:`winpath.final_path`) is checked too."""
    final = None
    if IS_WINDOWS:  # pragma: no cover - Windows only
        # the kernel's final path has long names only, so 8.3 names are checked through it
        final = winpath.final_path(path)
        form = winpath.refusal(path, short_names_expanded=final is not None)
        if form:
            return form
    if real is None:
        real, problem = _strict_real(path)
        if problem:
            return problem
    for candidate in dict.fromkeys(c for c in (os.path.normpath(path), real, final) if c):
        reason = _deny_one(candidate)
        if reason:
            return reason
    return _git_reason(real)


def _strict_real(path):
    """(real path, None) or (None, why not): ``path`` followed as the kernel follows it, by
    ``lstat``/``readlink`` only (the run_python fence calls the deny rule from its audit hook,
    where opening anything would raise another event). Unlike ``os.path.realpath`` it never
    guesses: a component it cannot look up for any reason but "missing" (too long, a loop,
    no permission) is refused, so a path built past PATH_MAX cannot hide where it leads."""
    if IS_WINDOWS:  # pragma: no cover - Windows only (resolve.windows_real is the seam)
        return resolve.windows_real(path), None
    todo = [c for c in reversed(os.path.abspath(path).split("/"))]
    real, links, missing = [], 0, False
    while todo:
        comp = todo.pop()
        if comp in ("", "."):
            continue
        if comp == "..":
            if real:
                real.pop()
            continue
        if missing:
            real.append(comp)
            continue
        here = "/" + "/".join(real + [comp])
        if len(os.fsencode(here)) >= resolve.PATH_MAX:
            return None, _unfollowable(path, errno.ENAMETOOLONG)
        try:
            st = os.lstat(here)
        except (FileNotFoundError, NotADirectoryError):
            missing = True          # nothing below can exist; what a writer creates is plain folders
            real.append(comp)
            continue
        except OSError as exc:
            return None, _unfollowable(path, exc.errno)
        if not stat.S_ISLNK(st.st_mode):
            real.append(comp)
            continue
        links += 1
        if links > resolve.MAX_LINKS:
            return None, _unfollowable(path, errno.ELOOP)
        try:
            target = os.readlink(here)
        except OSError as exc:
            return None, _unfollowable(path, exc.errno)
        if target.startswith("/"):
            real = []
        todo.extend(reversed(target.split("/")))
    return "/" + "/".join(real), None


def _unfollowable(path, code):
    why = {errno.ENAMETOOLONG: "路径太长或经过的文件夹太深", errno.ELOOP: "经过的链接太多或互相指向"}.get(
        code, "路径中的某一级无法查看")
    return "无法确认这个路径真正指向哪里（%s），工具不会写入或删除它" % why


def _git_reason(real):
    """Git internals found by content on the real path, at any depth: a folder that holds ``HEAD``
    and ``objects/`` + ``refs/`` (a bare repository such as ``site.git``, or a ``.git`` folder) or
    ``HEAD`` + ``commondir`` (a worktree's git folder) is a git directory, and nothing inside it
    may be written: its ``hooks/`` run and its ``config`` can name programs to run. A ``.git``
    *file* (the ``gitdir:`` pointer of a worktree or submodule) is refused by name in
    :func:`_deny_one`. The check is ``lstat`` only, one folder at a time up to the root: no scan
    with a bound."""
    if not real:
        return None
    probe = real
    while True:
        if _is_git_dir(probe):
            return "这是 git 仓库的内部目录（%s：钩子脚本和配置会在执行 git 命令时运行）" % probe
        up = os.path.dirname(probe)
        if up == probe:
            return None
        probe = up


def _is_git_dir(folder):
    def kind(name):
        try:
            return stat.S_IFMT(os.lstat(os.path.join(folder, name)).st_mode)
        except (OSError, ValueError):
            return None
    if kind("HEAD") != stat.S_IFREG:
        return False
    return (kind("objects") == stat.S_IFDIR and kind("refs") == stat.S_IFDIR) or kind("commondir") == stat.S_IFREG


def _deny_one(path):
    norm = _norm(path)
    home = _norm(home_dir())
    homes = {home, _norm(_real(home_dir()))}
    if IS_WINDOWS and winpath.known_folders().get("profile"):  # pragma: no cover - the real profile too
        homes.add(_norm(winpath.known_folders()["profile"]))
    parts = norm.split("/")
    if ".git" in parts[:-1] or (parts and parts[-1] == ".git"):
        return "这是 git 仓库的内部目录（.git：钩子脚本和配置会在执行 git 命令时运行）"
    # The toolbox itself: this checkout (tools, package, manifest), its libraries wherever they
    # really live (tools/pydeps may be a link; an installed package's ~/.xla/pydeps), and ~/.xla
    # outside the workspace.
    for root in _toolbox_folders():
        if _inside(norm, root):
            return "这是工具箱本身的文件（%s），改动它会破坏或篡改工具" % root
    workspace = [_norm(workspace_dir()), _norm(_real(workspace_dir()))]
    in_workspace = any(_inside(norm, w) for w in workspace)
    if not in_workspace:
        if norm.endswith(".pth"):
            return ("这是 Python 的 .pth 启动文件（%s）：放在库目录里的 .pth 每次启动 Python 都会执行；这类文件只能保存在"
                    "工作空间里" % norm.rsplit("/", 1)[-1])
        for folder in _python_folders(home, workspace):
            if _inside(norm, folder):
                return ("这是运行工具的 Python 自己的文件夹（%s：库目录、sys.path 或安装目录），放进去的文件会在每次启动 "
                        "Python 时被加载执行" % folder)
    for h in homes:
        xla = h + "/.xla"
        if _inside(norm, xla) and not in_workspace:
            return "这是工具箱的数据目录（~/.xla 下只有 workspace 可以写入；备份、回收站、设置和日志由工具箱自己管理）"
        if _inside(norm, h) and not in_workspace:
            rel = norm[len(h):].lstrip("/")
            first = rel.split("/")[0] if rel else ""
            if "/" not in rel and first in {_norm_name(n) for n in _STARTUP_FILES}:
                return "这是 shell / 登录启动或程序配置文件（%s），写进去的内容会在下次登录或打开终端时执行" % first
            for folder, why in _HOME_FOLDERS:
                if _inside(rel, _norm_name(folder)):
                    return "这是%s所在的位置（~/%s）" % (why, folder)
            if first.startswith("."):
                # by rule, not by list: every dot-file and dot-folder of the home holds some
                # program's settings, and a list of the ones that run code always misses the next
                return ("这是主目录下的隐藏文件或隐藏文件夹（~/%s）：程序的配置和启动脚本都放在这类位置，"
                        "写进去的内容可能在以后被当作程序执行" % first)
            for folder, why in _HOME_RULE_FOLDERS:
                if _inside(rel, _norm_name(folder)):
                    return "这是" + why
    if not in_workspace:
        reason = _deny_by_kind(norm)
        if reason:
            return reason
        for folder in _path_folders():
            if _inside(norm, folder):
                return "这是命令搜索路径 PATH 里的文件夹（%s）：放进去的文件会被当作命令执行" % folder
    if IS_WINDOWS:  # pragma: no cover - Windows only: system, Startup and AppData as Windows reports them
        return winpath.deny_reason(norm, winpath.known_folders())
    temp = _temp_roots()
    if any(_inside(norm, t) for t in temp):
        return None
    if any(_inside(norm, _norm(m)) for m in _MOUNT_EXCEPTIONS):
        return None
    for folder in _SYSTEM_POSIX:
        folder = _norm(folder)
        if _inside(norm, folder):
            if any(_inside(h, folder) for h in homes) and any(_inside(norm, h) for h in homes):
                continue      # a home under /var or /root (containers, CI) is still a home
            return "这是系统文件夹（%s）" % folder
    return None


# Folders of the home that run or configure programs although their names have no dot.
_HOME_RULE_FOLDERS = (
    ("bin", "个人命令目录 ~/bin：Debian/Ubuntu 的 .profile 会把它加进 PATH，放进去的文件会被当作命令执行"),
    ("Library", "macOS 的程序库目录 ~/Library：登录项、后台服务、程序配置都在这里"),
    ("AppData", "Windows 的程序数据目录 AppData：开机启动项、程序配置都在这里"),
)
# Files that run when opened or at login wherever they lie (shortcuts, scripts, desktop entries),
# programs and libraries Windows loads from the folder they sit in (a DLL beside an installer in
# Downloads is loaded by it), installers, and the types Windows Script Host, Java, the Python
# launcher, the control panel and MMC run on a double click. Ordinary office files (.xlsx .docx
# .csv .txt .md .pdf, macro workbooks too) stay writable everywhere: they open in an editor.
_RUNNABLE_SUFFIXES = (".lnk", ".url", ".desktop", ".bat", ".cmd", ".ps1", ".psm1", ".psd1", ".ps1xml", ".psc1",
                      ".vbs", ".vbe", ".vb", ".vbscript", ".js", ".jse", ".wsf", ".wsh", ".wsc", ".ws", ".sct",
                      ".hta", ".scr", ".pif", ".scf", ".command", ".reg", ".inf", ".ins", ".isp", ".job",
                      ".exe", ".com", ".msi", ".msp", ".mst", ".dll", ".sys", ".cpl", ".msc", ".ocx", ".xll",
                      ".jar", ".py", ".pyw", ".pyc", ".pyo", ".pyz", ".pyzw", ".chm", ".gadget", ".application",
                      ".appref-ms", ".library-ms", ".settingcontent-ms", ".searchconnector-ms", ".search-ms",
                      ".shb", ".shs", ".msh", ".msh1", ".msh2", ".mshxml", ".msh1xml", ".msh2xml",
                      ".appx", ".appxbundle", ".msix", ".msixbundle")
_RUNNABLE_NAMES = ("autorun.inf", "desktop.ini")
# PowerShell reads its profile from these folders inside the (possibly moved) Documents folder.
_POWERSHELL_FOLDERS = ("windowspowershell", "powershell")


def _deny_by_kind(norm):
    name = norm.rsplit("/", 1)[-1].lower()
    if name.endswith(_RUNNABLE_SUFFIXES) or name in _RUNNABLE_NAMES:
        return ("这是快捷方式、脚本、程序或启动项类型的文件（%s），双击打开、登录或被别的程序加载时会被执行；"
                "这类文件只能保存在工作空间里" % name)
    parts = norm.lower().split("/")
    docs = _norm(known_folder("documents") or "").lower()
    for i, part in enumerate(parts[:-1]):
        if part in _POWERSHELL_FOLDERS and "/".join(parts[:i]) in (docs, docs.rstrip("/")):
            return "这是 PowerShell 启动配置所在的位置（文档/%s）" % part
    return None


def _path_folders():
    """The folders on PATH (absolute ones): a file written there becomes a command. The home
    itself, the root and the temp folders are never treated so, even if PATH names them."""
    out = []
    home = _norm(home_dir())
    temp = _temp_roots()
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        entry = entry.strip().strip('"')
        if not entry or not os.path.isabs(entry):
            continue
        for cand in {_norm(entry), _norm(_real(entry))}:
            if cand in ("/", home) or cand in temp or len(cand) <= 3:
                continue
            out.append(cand)
    return out


def _norm_name(name):
    return name.lower() if (IS_WINDOWS or IS_MAC) else name


def _check_windows_form(path):
    """On Windows, refuse a name Windows reads as something else (a device, a data stream, a
    device or volume path) as an input error, before anything tries to follow it."""
    if IS_WINDOWS:  # pragma: no cover - Windows only
        form = winpath.refusal(path, short_names_expanded=winpath.final_path(path) is not None)
        if form:
            raise InputError("不能写入 %s：%s" % (path, form))


def check_write_allowed(path, real=None):
    """Raise a Chinese ToolError when ``path`` (absolute) lies in a denied place (``real``: where
    it really leads, when the caller walked it)."""
    _check_windows_form(path)
    reason = deny_reason(path, real)
    if reason:
        raise ToolError("不允许写入 %s：%s。为了保护你的电脑，工具不会改动这类位置。请换一个位置保存，"
                        "例如工作空间（只写文件名即可，保存到 %s）或桌面" % (path, reason, workspace_dir()))
    return path


def display(path):
    """``path`` with the home folder shown as ``~`` (shorter in answers)."""
    home = home_dir().rstrip("/\\")
    if path == home:
        return "~"
    if path.startswith(home + os.sep) or path.startswith(home + "/"):
        return "~" + path[len(home):]
    return path
