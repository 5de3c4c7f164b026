"""The run_python fence's layers (see ``xla_guard.py``): ``hook`` (audit hook, every platform) and
``neuter`` (what it replaces before the script), ``ns`` and ``limits`` (Linux: the read-only mount
namespace, the per-run tmpfs and the task cap), ``landlock`` and ``seccomp`` (Linux kernel layers),
``winjob`` (Windows job object), ``policy`` (what is allowed, shared by all layers).

Why this file: without it ``xlaguard`` is a namespace folder that ``find_packages`` skips, so the
installed wheel lacked the fence and run_python answered ``No module named 'xlaguard'``."""
