"""The Windows side of the lane's harness: runs under the lane's Windows CPython (in Wine) and
serves requests from ``winlane.py`` (Linux side), one JSON object per line on stdin, one answer per
line on stdout.

Why a long-lived driver: starting a Windows process from Linux through ``wine`` costs 2-3 s each,
while a Windows process started by another Windows process costs about 0.1 s. So each test worker
keeps one driver and the tools are started from inside Windows, by the project's own host code
(``xlakit.host.run_tool``) imported from the lane's copy of the toolbox: exactly the command line,
working folder and environment a Windows host gives a tool (``tool_env`` on ``os.name == "nt"``).

Requests (``op``):
- ``tool``: ``xlakit.host.run_tool`` with name, args, home, env, timeout, raw_input (base64);
- ``spawn``: any command with an exact environment (``env``) or the host's (``host_env``), a cwd,
  stdin bytes; answers exit code, stdout/stderr bytes (base64) and whether it timed out;
- ``hold`` / ``release``: open a file with ``CreateFileW`` and a chosen share mode, as Excel/WPS
  hold a workbook open (``FILE_SHARE_READ``: others may read it, nobody may write, rename or
  delete it), and close it again;
- ``ping``: the driver's Python, code page and environment names.
"""
import base64
import json
import os
import subprocess
import sys
import traceback

TOOLBOX = sys.argv[1]                     # the lane's copy of the toolbox (a Windows path)
sys.path.insert(0, TOOLBOX)

from xlakit import host as xla_host  # noqa: E402

HELD = {}


def _b64(data):
    return base64.b64encode(data or b"").decode("ascii")


def op_tool(req):
    raw = req.get("raw_input")
    if raw is not None:
        raw = base64.b64decode(raw)
    result = xla_host.run_tool(req["name"], req.get("args"), root=TOOLBOX, home=req["home"],
                               extra_env=req.get("env") or None, timeout=req.get("timeout") or xla_host.TIMEOUT,
                               python=sys.executable, raw_input=raw, log=req.get("log", True))
    return {"ok": result.ok, "data": result.data, "text": result.text, "error": result.error,
            "images": result.images, "exit_code": result.exit_code, "stdout": result.stdout,
            "stderr": result.stderr, "duration": result.duration, "timed_out": result.timed_out,
            "output_capped": result.output_capped, "cut": result.cut, "answer": result.answer()}


def op_spawn(req):
    if req.get("host_env"):
        env = xla_host.tool_env(TOOLBOX, req["host_env"], req.get("env"))
    elif req.get("extra_env") is not None:
        env = dict(os.environ, **req["extra_env"])
    else:
        env = req.get("env")
    if env is not None and "SYSTEMROOT" not in env and req.get("add_systemroot", False):
        env["SYSTEMROOT"] = os.environ.get("SYSTEMROOT", "C:\\windows")
    try:
        proc = subprocess.Popen(req["argv"], cwd=req.get("cwd"), env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0) if req.get("no_window") else 0)
    except OSError as exc:
        return {"exit_code": None, "stdout": "", "stderr": _b64(str(exc).encode("utf-8")), "timed_out": False,
                "start_error": str(exc)}
    timed_out = False
    try:
        out, err = proc.communicate(base64.b64decode(req.get("stdin") or ""), timeout=req.get("timeout", 60))
    except subprocess.TimeoutExpired:
        timed_out = True
        xla_host.kill_tree(proc)
        out, err = proc.communicate()
    return {"exit_code": proc.returncode, "stdout": _b64(out), "stderr": _b64(err), "timed_out": timed_out}


def op_hold(req):
    import ctypes
    from ctypes import wintypes
    k32 = ctypes.WinDLL("kernel32", use_last_error=True)
    k32.CreateFileW.restype = wintypes.HANDLE
    k32.CreateFileW.argtypes = [wintypes.LPCWSTR, wintypes.DWORD, wintypes.DWORD, ctypes.c_void_p,
                                wintypes.DWORD, wintypes.DWORD, wintypes.HANDLE]
    generic_read, generic_write, open_existing = 0x80000000, 0x40000000, 3
    handle = k32.CreateFileW(req["path"], generic_read | generic_write, int(req.get("share", 1)), None,
                             open_existing, 0x80, None)
    if handle in (None, wintypes.HANDLE(-1).value):
        return {"held": False, "winerror": ctypes.get_last_error()}
    HELD[req["path"]] = handle
    return {"held": True}


def op_release(req):
    import ctypes
    handle = HELD.pop(req["path"], None)
    if handle is not None:
        ctypes.WinDLL("kernel32").CloseHandle(handle)
    return {"released": handle is not None}


def op_ping(_req):
    import ctypes
    import platform
    k32 = ctypes.windll.kernel32
    return {"version": list(sys.version_info[:3]), "executable": sys.executable, "release": platform.release(),
            "ansi": "cp%d" % k32.GetACP(), "oem": "cp%d" % k32.GetOEMCP(), "env": sorted(os.environ), "toolbox": TOOLBOX}


OPS = {"tool": op_tool, "spawn": op_spawn, "hold": op_hold, "release": op_release, "ping": op_ping}


def main():
    stdin = sys.stdin.buffer
    stdout = sys.stdout.buffer
    while True:
        line = stdin.readline()
        if not line:
            break
        try:
            req = json.loads(line.decode("utf-8"))
            answer = {"reply": OPS[req["op"]](req)}
        except Exception:                          # noqa: BLE001 - reported to the test, never lost
            answer = {"driver_error": traceback.format_exc()}
        stdout.write(json.dumps(answer, ensure_ascii=True).encode("ascii") + b"\n")
        stdout.flush()


if __name__ == "__main__":
    main()
