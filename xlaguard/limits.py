"""Task limit for run_python (Linux): one script must not exhaust the machine's pids with threads
(issue 34; fork is refused by seccomp, so threads are all it can make).

- root: a pids cgroup of the run's own, ``xla-run-<pid>``, with ``pids.max`` = :data:`TASK_LIMIT`, made
  beside the cgroup the guard starts in (cgroup v2 where the parent already delegates ``pids``, else the
  v1 ``pids`` hierarchy). RLIMIT_NPROC cannot do it: the kernel never applies it to uid 0. The guard
  cannot remove its own cgroup, so whoever waited for it calls :func:`cleanup` with its pid
  (run_python does, and the escape suite's harness).
- other users: ``RLIMIT_NPROC``. Inside the guard's own user namespace (layer ``ns``) the kernel counts
  only the tasks of that namespace, so the cap is exactly :data:`TASK_LIMIT`; without one it counts every
  task of the uid on the machine, so the cap is what the uid runs now plus :data:`TASK_LIMIT`.

A thread past the cap fails with ``RuntimeError: can't start new thread``; the launcher reports it and
run_python answers in Chinese."""
import os

TASK_LIMIT = 256
PREFIX = "xla-run-"
CGROUP_ROOT = "/sys/fs/cgroup"


def _read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read().decode("ascii", "replace")
    except OSError:
        return ""


def cgroup_parents(pid="self"):
    """Folders where this process may make a pids cgroup, best first (the cgroup ``pid`` is in now)."""
    out = []
    for line in _read("/proc/%s/cgroup" % pid).splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        hid, controllers, path = parts
        if hid == "0" and controllers == "":
            d = os.path.join(CGROUP_ROOT, path.lstrip("/"))
            if "pids" in _read(os.path.join(d, "cgroup.subtree_control")).split():
                out.append(d)
        elif "pids" in controllers.split(","):
            for base in (os.path.join(CGROUP_ROOT, "pids"), os.path.join(CGROUP_ROOT, controllers)):
                d = os.path.join(base, path.lstrip("/"))
                if os.path.isdir(d) and d not in out:
                    out.append(d)
    return [d.rstrip("/") for d in out]


def join_pids_cgroup(limit=TASK_LIMIT):
    """Move this process into a new pids cgroup capped at ``limit`` tasks. Returns (done, detail)."""
    pid = os.getpid()
    why = "没有可写的 pids cgroup"
    for parent in cgroup_parents():
        d = os.path.join(parent, PREFIX + str(pid))
        try:
            os.mkdir(d)
        except FileExistsError:
            pass
        except OSError as exc:
            why = "不能建 pids cgroup（%s）" % exc.strerror
            continue
        try:
            for name, value in (("pids.max", limit), ("cgroup.procs", pid)):
                with open(os.path.join(d, name), "w") as fh:
                    fh.write("%d\n" % value)
            return True, "pids cgroup 上限 %d" % limit
        except OSError as exc:
            why = "不能加入 pids cgroup（%s）" % exc.strerror
            try:
                os.rmdir(d)
            except OSError:
                pass
    return False, why


def uid_tasks(uid):
    """Tasks (threads included) whose real uid is ``uid``: what RLIMIT_NPROC counts."""
    n = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        status = _read("/proc/%s/status" % name)
        real = threads = None
        for line in status.splitlines():
            if line.startswith("Uid:"):
                real = line.split()[1]
            elif line.startswith("Threads:"):
                threads = line.split()[1]
        if real == str(uid) and threads and threads.isdigit():
            n += int(threads)
    return n


def limit_nproc(own_namespace, limit=TASK_LIMIT):
    """RLIMIT_NPROC for a non-root script. Returns (done, detail)."""
    import resource
    value = limit if own_namespace else uid_tasks(os.getuid()) + limit
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        if hard != resource.RLIM_INFINITY and hard < value:
            value = hard
        resource.setrlimit(resource.RLIMIT_NPROC, (value, value))
    except (OSError, ValueError) as exc:
        return False, "RLIMIT_NPROC 设置失败（%s）" % exc
    if own_namespace:
        return True, "RLIMIT_NPROC %d（本次运行自己的用户命名空间）" % value
    return True, "RLIMIT_NPROC %d（本用户已有的任务数 + %d）" % (value, limit)


def limit_tasks(own_namespace, limit=TASK_LIMIT):
    """The task cap that fits this process: a cgroup for root, RLIMIT_NPROC otherwise."""
    if not hasattr(os, "getuid") or not os.path.isdir("/proc"):
        return False, "不是 Linux"
    if os.geteuid() == 0 and os.getuid() == 0:
        return join_pids_cgroup(limit)
    return limit_nproc(own_namespace, limit)


def cleanup(pid, parents=None):
    """Remove the pids cgroup the guard with process id ``pid`` made (empty once it has ended)."""
    for parent in (parents if parents is not None else cgroup_parents()):
        try:
            os.rmdir(os.path.join(parent, PREFIX + str(int(pid))))
        except OSError:
            pass
