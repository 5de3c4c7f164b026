"""What the fence refuses and how it says so: the audit events it watches, the imports it refuses,
and the Chinese sentences a refusal raises (run_python reports the same sentences)."""

MARK = "@@XLA_GUARD@@"
SEP = "\x1f"
UNRESTRICTED_ENV = "XLA_RUNPY_UNRESTRICTED"
# The script's own traceback, headed in Chinese (the answer is read by a Chinese assistant).
TRACEBACK_HEADER = "脚本出错，调用栈（最近的调用在最后）：\n"

# Imports refused outright: modules that write or start processes without audit events, run code in
# an interpreter without hooks, or exist only to poke at interpreter internals.
DENIED_IMPORTS = frozenset((
    "_testcapi", "_testinternalcapi", "_testmultiphase", "_testsinglephase", "_testimportmultiple",
    "_testbuffer", "_testclinic", "_xxtestfuzz", "_ctypes_test", "xxsubtype", "_xxsubinterpreters",
    "_interpreters", "_xxinterpchannels", "_interpchannels", "_interpqueues", "_tkinter", "readline",
    "_cffi_backend", "_posixshmem", "_gdbm", "_dbm", "_lsprof",
))
# Modules the fence relies on or has neutered: loaded before the hook, so an import event for one of
# them means the script removed it from sys.modules to get a fresh, unneutered copy.
PINNED_IMPORTS = frozenset(("posix", "nt", "_posixsubprocess", "_signal", "_io", "marshal", "_imp", "os",
                            "subprocess", "signal", "_thread", "_winapi", "sys", "builtins"))

PROCESS_EVENTS = frozenset((
    "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.forkpty", "subprocess.Popen",
    "pty.spawn", "os.startfile", "os.startfile/2", "_winapi.CreateProcess", "webbrowser.open",
    "ensurepip.bootstrap", "_posixsubprocess.fork_exec", "sys.remote_exec",
))
NATIVE_EVENTS = frozenset((
    "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata", "ctypes.cdata/buffer", "ctypes.addressof",
    "ctypes.string_at", "ctypes.wstring_at", "ctypes.call_function", "ctypes.PyObj_FromPtr", "ctypes.set_errno",
    "sqlite3.enable_load_extension", "sqlite3.load_extension", "os.add_dll_directory",
    "cpython.PyInterpreterState_New", "_winapi.CreateJunction",
))
SELF_EVENTS = frozenset((
    "sys.addaudithook", "sys.settrace", "sys.setprofile", "sys.monitoring.register_callback",
    "sys._current_frames", "sys._current_exceptions", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
))
REGISTRY_EVENTS = frozenset((
    "winreg.CreateKey", "winreg.DeleteKey", "winreg.DeleteValue", "winreg.SaveKey", "winreg.SetValue",
    "winreg.LoadKey", "winreg.ConnectRegistry", "winreg.DisableReflectionKey", "winreg.EnableReflectionKey",
))
# event -> ((argument index, dir_fd index or -1, follow final symlink), ...)
PATH_EVENTS = {
    "os.mkdir": ((0, 2, False),),
    "os.remove": ((0, 1, False),),
    "os.rmdir": ((0, 1, False),),
    "os.rename": ((0, 2, False), (1, 3, False)),
    "os.link": ((0, 2, True), (1, 3, False)),
    "os.symlink": ((1, 2, False),),
    "os.chmod": ((0, 2, True),),
    "os.chown": ((0, 3, True),),
    "os.utime": ((0, 3, True),),
    "os.truncate": ((0, -1, True),),
    "os.setxattr": ((0, -1, True),),
    "os.removexattr": ((0, -1, True),),
    "os.chflags": ((0, -1, True),),
    "shutil.copyfile": ((1, -1, True),),
    "shutil.copymode": ((1, -1, True),),
    "shutil.copystat": ((1, -1, True),),
    "shutil.copytree": ((1, -1, False),),
    "shutil.move": ((0, -1, False), (1, -1, False)),
    "shutil.rmtree": ((0, 1, False),),
    "shutil.chown": ((0, -1, True),),
    "shutil.unpack_archive": ((1, -1, False),),
    "shutil.make_archive": ((0, -1, False),),
    "_winapi.CopyFile2": ((1, -1, True),),
}

def allowed_text(roots):
    return "、".join(roots)


def block_message(kind, target, roots):
    """The Chinese sentence a refused operation raises (and run_python reports)."""
    if kind == "process":
        return ("xla_guard 已拦截：脚本试图启动其他程序（%s）。run_python 里的脚本不能启动子进程，"
                "请在脚本里直接用 Python 完成这一步。" % target)
    if kind == "native":
        return ("xla_guard 已拦截：脚本试图加载或调用本机代码（%s）。这在 run_python 里不允许，"
                "请改用纯 Python 或 pydeps 里的库。" % target)
    if kind == "self":
        return "xla_guard 已拦截：脚本试图修改或绕过写入围栏（%s）。" % target
    if kind == "import":
        return "xla_guard 已拦截：run_python 里不能导入模块 %s（它能绕过写入围栏）。" % target
    if kind == "connect":
        return ("xla_guard 已拦截：脚本试图连接本机服务的套接字 %s。run_python 里的脚本只能连网络地址，"
                "不能连本机的 unix 套接字。" % target)
    if kind == "sqlite":
        return ("xla_guard 已拦截：sqlite3 以读写方式打开 %s，但只允许写入：%s。只读请用 "
                "sqlite3.connect(\"file:路径?mode=ro\", uri=True)，要修改请先复制到工作空间。"
                % (target, allowed_text(roots)))
    return ("xla_guard 已拦截：脚本试图写入 %s，但只允许写入这些目录（及其子目录）：%s。"
            "请把结果写到工作空间里。" % (target, allowed_text(roots)))

