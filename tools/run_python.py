"""run_python: run a Python script the model wrote, on the user's machine, behind a write fence.

Why: bulk jobs (hundreds of files, a big sheet processed in passes, a multi-step calculation) are
slow and error-prone when every value travels through the conversation; one script does them in a
second. But the script is model-written, possibly prompt-injected, and runs with the user's rights,
so it runs inside ``xla_guard.py``: it may read anything, may write only under the workspace
(``~/.xla/workspace``) and the temp directory, and may not start programs. ``xla_guard`` explains the
two layers (audit hook everywhere, Landlock on Linux) and their limits; this script reports which
layers were active and every operation the fence refused, in Chinese, so the model can fix the
script instead of guessing from a traceback.

Parameters:
    path     the script (absolute, ``~``, or a name in the workspace); any extension.
    args     command-line arguments for the script (strings).
    timeout  seconds (default 55); never beyond what the host's 60 s leave.

The script runs as ``python3 -X utf8 -u`` (plus ``-I -B`` and the guard) with its own folder as the
working directory and ``sys.path[0]``, and ``tools/pydeps`` importable. Both pipes are drained by
threads however much the script prints; the head and the tail of each are kept and the answer says
how much was left out. On timeout the whole process tree is killed.

Returns ``exit_code``, ``timed_out``, ``duration``, ``stdout``/``stderr`` (+ ``*_truncated`` and
``*_bytes``), ``fence`` (``active``, ``layers``, ``landlock``, ``allowed_dirs``), ``blocked`` (what
was refused, by which layer) and ``summary`` (one Chinese sentence for the model).
"""
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit import pyrun  # noqa: E402
from xlakit.fs import paths  # noqa: E402
from xlakit.errors import ToolError  # noqa: E402

HOST_TIMEOUT = 60
DEFAULT_TIMEOUT = 55
REPORT_TIME = 2.5           # seconds kept free after the script for killing, joining and printing
RESERVE = 3500              # characters of the answer kept for everything except stdout/stderr


def main(params):
    script = paths.resolve_read(params["path"], "path", want="file")
    args = [a if isinstance(a, str) else str(a) for a in (params.get("args") or [])]
    timeout = params.get("timeout")
    timeout = DEFAULT_TIMEOUT if timeout is None else float(timeout)
    if timeout <= 0:
        raise ToolError("timeout 必须大于 0 秒（默认 %d）" % DEFAULT_TIMEOUT)
    # The script may use more than rt.deadline's 50 s (the seed's default is 55 s); the clock is
    # still the runtime's: what the host's 60 s leave after our own start-up and the report.
    room = HOST_TIMEOUT - REPORT_TIME - rt.deadline.elapsed()
    if timeout > room:
        rt.warn("timeout %g 秒超出了主程序 60 秒的上限，已改为 %d 秒" % (timeout, int(room)))
        timeout = max(1.0, float(int(room)))

    ran = pyrun.run(script, args, timeout)

    result = {"path": script, "args": args, "exit_code": ran["exit_code"], "timed_out": ran["timed_out"],
              "duration": round(ran["duration"], 2), "fence": ran["fence"], "blocked": ran["blocked"]}
    count = ran["blocked_total"]
    if count > len(ran["blocked"]):
        result["blocked_total"] = count
    out, err = ran["out"], ran["err"]
    out_parts, err_parts = out.text(), err.text()
    budget = rt.budget(result, reserve=RESERVE)
    for _ in range(8):      # share the output cap between stdout and stderr, head and tail of each
        need_out = len(out_parts[0]) + len(out_parts[1] or "")
        need_err = len(err_parts[0]) + len(err_parts[1] or "")
        err_room = min(need_err, max(budget // 4, budget - need_out))
        out_room = max(0, budget - err_room)
        stdout, out_cut = pyrun.clip(out_parts, out_room)
        stderr, err_cut = pyrun.clip(err_parts, err_room)
        result.update(stdout=stdout, stderr=stderr, stdout_truncated=out_cut, stderr_truncated=err_cut,
                      stdout_bytes=out.total, stderr_bytes=err.total)
        cut = [name for name, flag in (("stdout", out_cut), ("stderr", err_cut)) if flag]
        result["summary"] = pyrun.summarize(result["exit_code"], ran["timed_out"], timeout, ran["duration"],
                                            ran["blocked"], count, cut, ran["fence"], ran.get("extra"))
        if rt.text_size(result) <= rt.OUTPUT_LIMIT - 1200:
            break
        budget = int(budget * 0.75)
    return result


if __name__ == "__main__":
    rt.run(main)
