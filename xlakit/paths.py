"""Where a tool may read and write: the home, the workspace, the folders users name, the deny list.

Every tool resolves its paths here, so the rules are the same in all of them:

- ``~`` expands from ``HOME`` (also on Windows, where ``os.path.expanduser`` ignores it, and the
  host passes only ``HOME``);
- a relative path lives in the workspace ``~/.xla/workspace`` (reads look there, writes land there);
- the folders people name in chat ("桌面/报表.xlsx", "下载", "Documents") map to the real ones,
  including OneDrive's Desktop on Windows and the localised XDG folders on Linux;
- **every writer** goes through :func:`resolve_write`, which refuses the places where a written file
  becomes code that runs later or a key that grants access: shell and login start-up files,
  ``~/.ssh``, autostart folders, git internals (hooks, config), the toolbox itself and system
  folders. The check runs on the path as written *and* on where it really points (symlinks in
  any parent, ``..``), case-insensitively where the file system is. A prompt-injected model that
  asks to "save the notes to ~/.bashrc" gets a Chinese refusal that says why.
"""
import os
import sys

from .errors import InputError, ToolError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
        path = os.path.join(home_dir(), path[2:]) if len(path) > 1 else home_dir()
    return path


def absolute(path, param="path", create_workspace=False):
    """Absolute, normalised path; relative ones live in the workspace."""
    path = expand(path, param)
    if not os.path.isabs(path):
        path = os.path.join(workspace_dir(create=create_workspace), path)
    return os.path.normpath(path)


def _hint(name, text):
    # Imported late: the manifest is plumbing below us, but reading it costs a file read.
    from .manifest import declared_tools
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
    if want == "file" and not os.access(path, os.R_OK):
        raise ToolError("没有读取 %s 的权限。请检查文件权限，或先把它复制到工作空间再试" % raw)
    return path


def resolve_write(path, param="path"):
    """Absolute path for an output: relative names go to the workspace, parents are created, and
    the deny list is applied (before anything is created)."""
    path = absolute(path, param, create_workspace=True)
    check_write_allowed(path)
    if os.path.isdir(path):
        raise ToolError("%s 是一个已存在的文件夹，不能当作文件写入。请换一个文件名" % path)
    parent = os.path.dirname(path)
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise ToolError("无法创建目录 %s：%s" % (parent, exc.strerror or exc))
    check_write_allowed(path)      # a parent just created cannot be a link, but the target may be
    return path


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
                 "/var", "/root", "/sys", "/proc", "/dev", "/snap", "/System", "/Library", "/private/etc",
                 "/private/var", "/Applications")
_SYSTEM_WINDOWS_VARS = ("SYSTEMROOT", "WINDIR", "PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432",
                        "PROGRAMDATA")
_SYSTEM_WINDOWS = ("C:/Windows", "C:/Program Files", "C:/Program Files (x86)", "C:/ProgramData")
# Folders under /var and similar that are ordinary places to write.
_SYSTEM_EXCEPTIONS = ("/var/tmp", "/var/folders", "/private/var/folders", "/private/var/tmp")


def _norm(path):
    """Comparable form: forward slashes, no trailing slash, case folded where the FS ignores case."""
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


def _temp_roots():
    import tempfile
    roots = {_norm(tempfile.gettempdir()), _norm(_real(tempfile.gettempdir()))}
    for folder in _SYSTEM_EXCEPTIONS:
        roots.add(_norm(folder))
    return roots


def deny_reason(path):
    """Why writing ``path`` is refused (Chinese), or None when it is allowed.

    ``path`` is absolute. Both the path as written and its real target are checked."""
    for candidate in dict.fromkeys([os.path.normpath(path), _real(path)]):
        reason = _deny_one(candidate)
        if reason:
            return reason
    return None


def _deny_one(path):
    norm = _norm(path)
    home = _norm(home_dir())
    homes = {home, _norm(_real(home_dir()))}
    parts = norm.split("/")
    if ".git" in parts[:-1] or (parts and parts[-1] == ".git"):
        return "这是 git 仓库的内部目录（.git：钩子脚本和配置会在执行 git 命令时运行）"
    # The toolbox itself: this checkout (tools, package, manifest, pydeps) and ~/.xla outside the workspace.
    toolbox = {_norm(ROOT), _norm(_real(ROOT))}
    for root in toolbox:
        if _inside(norm, root):
            return "这是工具箱本身的文件（%s），改动它会破坏或篡改工具" % ROOT
    for h in homes:
        xla = h + "/.xla"
        if _inside(norm, xla) and not _inside(norm, xla + "/workspace"):
            return "这是工具箱的数据目录（~/.xla 下只有 workspace 可以写入；备份、回收站、设置和日志由工具箱自己管理）"
        if _inside(norm, h):
            rel = norm[len(h):].lstrip("/")
            first = rel.split("/")[0] if rel else ""
            if "/" not in rel and first in {_norm_name(n) for n in _STARTUP_FILES}:
                return "这是 shell / 登录启动或程序配置文件（%s），写进去的内容会在下次登录或打开终端时执行" % first
            for folder, why in _HOME_FOLDERS:
                if _inside(rel, _norm_name(folder)):
                    return "这是%s所在的位置（~/%s）" % (why, folder)
    if IS_WINDOWS:  # pragma: no cover - Windows only
        roots = set(_norm(p) for p in _SYSTEM_WINDOWS)
        for var in _SYSTEM_WINDOWS_VARS:
            if os.environ.get(var):
                roots.add(_norm(os.environ[var]))
        appdata = os.environ.get("APPDATA")
        if appdata:
            startup = _norm(os.path.join(appdata, "Microsoft", "Windows", "Start Menu", "Programs", "Startup"))
            if _inside(norm, startup):
                return "这是 Windows 开机启动文件夹，放进去的文件会在开机时运行"
        for root in roots:
            if _inside(norm, root):
                return "这是系统文件夹（%s）" % root
        return None
    temp = _temp_roots()
    if any(_inside(norm, t) for t in temp):
        return None
    for folder in _SYSTEM_POSIX:
        folder = _norm(folder)
        if _inside(norm, folder):
            if any(_inside(h, folder) for h in homes) and any(_inside(norm, h) for h in homes):
                continue      # a home under /var or /root (containers, CI) is still a home
            return "这是系统文件夹（%s）" % folder
    return None


def _norm_name(name):
    return name.lower() if (IS_WINDOWS or IS_MAC) else name


def check_write_allowed(path):
    """Raise a Chinese ToolError when ``path`` (absolute) lies in a denied place."""
    reason = deny_reason(path)
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
