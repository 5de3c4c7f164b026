"""The error types and the time budget every layer shares.

They live apart from the runtime so that a format reader, the HTTP layer or a document converter
can raise a Chinese error or honour the deadline without importing the process runtime (which
reads stdin and owns the exit code) or the manifest.
"""
import time


class ToolError(Exception):
    """A failure the user can act on. ``str(exc)`` is the Chinese message shown to the model.

    ``extra`` is merged into the failure JSON (e.g. ``candidates`` for a retry)."""

    def __init__(self, message, **extra):
        super().__init__(message)
        self.extra = extra


class InputError(ToolError):
    """The call itself is wrong (bad JSON, bad parameter): exit code 2."""


class FormatError(ToolError):
    """The file is not what this reader handles. ``tool`` names the tool that can read it, so the
    caller can add a hint only when that tool exists in the manifest."""

    def __init__(self, message, tool=None, **extra):
        super().__init__(message, **extra)
        self.tool = tool


class TimeUp(ToolError):
    """The tool's time budget ran out. Loops that can return a partial answer catch it."""


class Deadline:
    """One time budget from a start point: every loop, reader and request asks the same clock.

    ``budget`` is seconds from ``start`` (``time.monotonic()`` when omitted). The runtime makes one
    at import with a budget a little under the host's 60 s; domain code receives it as a
    ``deadline`` argument (``None`` meaning no limit), so it never imports the runtime."""

    def __init__(self, budget, start=None):
        self.start = time.monotonic() if start is None else start
        self.budget = float(budget)

    @property
    def at(self):
        return self.start + self.budget

    def remaining(self):
        return max(0.0, self.at - time.monotonic())

    def elapsed(self):
        return time.monotonic() - self.start

    def expired(self):
        return time.monotonic() >= self.at

    def timeout(self, cap=None, floor=0.05):
        """A timeout for one blocking call: the time left, at most ``cap``, never below ``floor``
        (a zero timeout would mean "block forever" to some APIs)."""
        left = self.remaining()
        if cap is not None:
            left = min(left, cap)
        return max(floor, left)

    def sub(self, budget):
        """A deadline of at most ``budget`` seconds from now that never outlives this one."""
        return Deadline(min(budget, self.remaining()))

    def check(self, what=""):
        if self.expired():
            raise TimeUp("%s超过时间上限（约 %d 秒）。请缩小范围（分段、筛选或更具体的条件）后重试" % (
                (what + "时") if what else "处理", int(self.budget)))


def remaining(deadline, default=None):
    """Seconds left on an optional deadline (``default`` when there is none)."""
    return default if deadline is None else deadline.remaining()


# ---------------------------------------------------------------------------------------------
# Operating-system errors in Chinese: one place for every reader and writer

# errno name -> (is the caller's input at fault, what happened, what to do). Names, not numbers:
# the numbers differ between Linux, macOS and Windows; a name the platform lacks is skipped.
_OS_ERRORS = (
    ("ENAMETOOLONG", True, "文件名或路径太长", "请把文件名缩短（建议不超过 80 个汉字），或换一个层级浅一些的文件夹"),
    ("ENOSPC", False, "磁盘空间不足", "请清理磁盘（例如清空回收站、删除不需要的大文件）后重试，或换一个有空间的磁盘保存"),
    ("EDQUOT", False, "磁盘配额已用完", "请删除一些文件释放配额，或换一个位置保存"),
    ("EROFS", False, "所在的磁盘或分区是只读的", "请换一个可写的位置保存（例如工作空间或桌面）"),
    ("EISDIR", True, "这是一个文件夹，不是文件", "请给出文件夹里具体的文件名"),
    ("ENOTDIR", True, "路径中间有一段不是文件夹（是一个文件）", "请检查路径的每一级是否都是文件夹"),
    ("ENOENT", True, "找不到这个文件或文件夹", "请确认路径和文件名是否正确"),
    ("EEXIST", False, "同名的文件或文件夹已经存在", "请换一个名字"),
    ("EACCES", False, "没有权限", "请检查文件和所在文件夹的权限，或确认没有被其他程序占用；也可以换一个位置保存"),
    ("EPERM", False, "操作系统不允许这个操作（文件可能被锁定、设为不可更改，或权限不足）",
     "请检查文件的权限和锁定标记，或换一个位置保存"),
    ("ELOOP", True, "路径里的快捷方式（符号链接）层层指向自己，形成了循环", "请改用真实的文件路径"),
    ("EMFILE", False, "同时打开的文件太多", "请稍后重试；若反复出现，请关闭一些程序"),
    ("ENFILE", False, "系统同时打开的文件太多", "请稍后重试；若反复出现，请关闭一些程序"),
    ("EBUSY", False, "文件或设备正忙（正在被其他程序使用）", "请关闭正在使用它的程序后重试"),
    ("ETXTBSY", False, "文件正在被作为程序运行", "请关闭那个程序后重试"),
    ("EIO", False, "读写磁盘时出现硬件或网络错误", "请检查磁盘、U 盘或网络盘的连接后重试，或先把文件复制到本机"),
    ("EFBIG", False, "文件超过了这个磁盘或系统允许的最大大小", "请换一个磁盘保存，或把数据分成几个文件"),
    ("EXDEV", False, "不能跨磁盘直接移动", "请先复制再删除原文件"),
    ("ENOTEMPTY", False, "文件夹不是空的", "请先处理里面的文件"),
    ("EINVAL", True, "文件名或参数不合法（可能含有系统不允许的字符，如 Windows 下的 < > : \" | ? *）",
     "请换一个只含常见字符的文件名"),
    ("ETIMEDOUT", False, "访问网络盘或设备超时", "请检查网络连接后重试，或先把文件复制到本机"),
    ("ESTALE", False, "网络盘上的文件句柄已失效", "请重新连接网络盘后重试"),
)
# Windows error codes that arrive as OSError.winerror.
_WINERRORS = {
    32: (False, "文件正被另一个程序使用（共享冲突）", "请在 Excel / WPS / Word 等程序里关闭这个文件后重试"),
    33: (False, "文件的一部分被另一个程序锁定", "请关闭正在使用它的程序后重试"),
    5: (False, "没有权限（拒绝访问）", "文件可能正在 Excel/WPS 中打开，请先关闭它再试；或文件是只读的/没有权限，请检查文件属性，或换一个位置保存"),
    112: (False, "磁盘空间不足", "请清理磁盘后重试，或换一个有空间的磁盘保存"),
    206: (True, "文件名或路径太长", "请把文件名缩短，或换一个层级浅一些的文件夹"),
    123: (True, "文件名含有 Windows 不允许的字符（如 < > : \" | ? *）", "请换一个只含常见字符的文件名"),
    1224: (False, "文件已被映射到内存（正被程序使用）", "请关闭正在使用它的程序后重试"),
}


def _os_error_table():
    import errno
    table = {}
    for name, is_input, what, todo in _OS_ERRORS:
        code = getattr(errno, name, None)
        if code is not None and code not in table:
            table[code] = (is_input, what, todo)
    return table


def os_error(exc, path=None, action="访问"):
    """The Chinese error (an :class:`InputError` when the caller's path is at fault, e.g. a name
    too long, else a :class:`ToolError`) for an ``OSError`` met while reading or writing ``path``.

    Every layer maps operating-system errors here so no English ``strerror`` reaches an answer and
    the same failure reads the same way in every tool."""
    what = todo = None
    is_input = False
    winerror = getattr(exc, "winerror", None)
    if winerror in _WINERRORS:
        is_input, what, todo = _WINERRORS[winerror]
    else:
        found = _os_error_table().get(getattr(exc, "errno", None))
        if found:
            is_input, what, todo = found
    target = path or getattr(exc, "filename", None)
    where = "「%s」" % target if target else ""
    if what is None:
        code = getattr(exc, "errno", None)
        what = "操作系统报告了错误（错误码 %s）" % code if code is not None else "操作系统报告了错误"
        todo = "请确认文件没有被其他程序占用、磁盘可以正常访问后重试，或换一个位置"
    message = "%s%s时出错：%s。%s" % (action, where, what, todo)
    if action in ("写入", "删除", "创建文件夹"):    # the files layer's promise on every failed change
        message += "。已有的文件没有被改动"
    return (InputError if is_input else ToolError)(message)


# What a library's exception means, in Chinese. Readers used to append ``str(exc)`` to their Chinese
# message ("（MSAT: invalid sector id: -97）", "JSON（Expecting property name…）"): English the user
# cannot act on. ``what_broke`` names the damage instead; the library's own text is kept in
# ``DETAILS``, which the runtime writes to ~/.xla/logs/details-*.jsonl when the call fails.
DETAILS = []


def what_broke(exc):
    """A short Chinese phrase for what ``exc`` (raised while parsing a file or input) means."""
    name = type(exc).__name__
    text = str(exc)
    DETAILS.append("%s: %s" % (name, text[:500]))
    low = text.lower()
    if isinstance(exc, OSError) and getattr(exc, "errno", None):
        return str(os_error(exc)).rstrip("。")
    if name == "JSONDecodeError":
        return "第 %d 行第 %d 列附近不是合法的 JSON 写法，可能少了引号、逗号或括号" % (exc.lineno, exc.colno)
    if name in ("ParseError", "ExpatError", "XMLSyntaxError", "SAXParseException"):
        pos = getattr(exc, "position", None) or (getattr(exc, "lineno", None), getattr(exc, "offset", None))
        if pos and pos[0]:
            return "XML 内容在第 %s 行第 %s 列附近不完整或有错" % (pos[0], (pos[1] or 0) + 1)
        return "XML 内容不完整或有错"
    if name in ("BadZipFile", "BadZipfile", "LargeZipFile") or "zip" in low and "crc" not in low:
        return "压缩结构损坏或不完整"
    if name == "error" and type(exc).__module__ == "zlib" or "crc" in low or "decompress" in low:
        return "压缩数据损坏（校验不通过）"
    if "msat" in low or "sector" in low or "compdoc" in name.lower() or "olefile" in type(exc).__module__:
        return "OLE 复合文件的扇区表损坏"
    if "unsupported format" in low or "not a known" in low or "expected bof" in low:
        return "开头不是能识别的工作簿记录"
    if isinstance(exc, EOFError) or "truncat" in low or "unexpected end" in low:
        return "文件在中途被截断"
    if isinstance(exc, UnicodeError):
        return "文字编码与声明的不符"
    if isinstance(exc, KeyError):
        return "缺少必要的部件或记录"
    if name == "error" and type(exc).__module__ == "struct" or isinstance(exc, (IndexError, OverflowError)):
        return "记录的长度与内容对不上"
    if isinstance(exc, (ValueError, TypeError, AssertionError, AttributeError)):
        return "数据格式不对"
    return "内容无法解析"
