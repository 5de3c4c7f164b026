"""The suite's counts: what the fault tests ran and what they found.

Every test adds to :data:`COUNTS` (``scenario()``, ``checked()``, ``lost()``...); the conftest writes
each process's counts at the end of the session and prints one summary line over all of them, so a
CI log shows scenarios run, files checked, bytes lost, stray temp files, hung tools and leaked
processes (these four must be 0: a test that sees one fails, and the count says how many), and
how many kills left a temp file beside the user's file at all (on Linux none may: the complete
unnamed file is named in ``~/.xla/staging`` on its way over the target, and test_kill asserts it)."""

COUNTS = {"scenarios": 0, "files_checked": 0, "bytes_lost": 0, "stray_temp_files": 0,
          "hung_tools": 0, "leaked_processes": 0, "kills_leaving_a_temp": 0}
ORDER = ("scenarios", "files_checked", "bytes_lost", "stray_temp_files", "hung_tools", "leaked_processes",
         "kills_leaving_a_temp")


def add(key, n=1):
    COUNTS[key] += n
    return n


def scenario(n=1):
    return add("scenarios", n)


def checked(n=1):
    return add("files_checked", n)


def line(counts):
    return "fault suite: %s" % ", ".join("%s %d" % (k.replace("_", " "), counts.get(k, 0)) for k in ORDER)
