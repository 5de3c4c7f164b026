"""The fault suite's marker and its summary line.

Every test under ``tests/faults/`` carries the ``faults`` marker (added here at collection), so CI
and ``xla.py selftest`` run it with everything else and a developer can leave it out with
``-m "not faults"``.

The counts (``tally.COUNTS``) live in each test process. Under pytest-xdist every worker writes its
own to a shared folder at the end of the session and the last one to finish prints the total line
on stderr (which xdist passes through); without xdist, or when this conftest is loaded by the
controlling process too (``pytest tests/faults``), the terminal summary prints it."""
import json
import os
import tempfile
import uuid

import pytest

from . import tally

HERE = os.path.dirname(os.path.abspath(__file__))
_ENV = "XLA_FAULTS_TALLY"


def pytest_configure(config):
    config.addinivalue_line("markers", "faults: the fault suite of tests/faults (kills, full disk, network, "
                                       "MCP client and concurrency faults); deselect with -m 'not faults'")
    worker = getattr(config, "workerinput", None)
    if worker is None:
        # the controlling (or only) process: its workers, started after this, inherit the folder
        folder = os.environ.get(_ENV) or os.path.join(tempfile.gettempdir(), "xla-faults-%s" % uuid.uuid4().hex[:12])
        os.environ[_ENV] = folder
        config._xla_faults_controller = True
    os.makedirs(_folder(config), exist_ok=True)


def _folder(config):
    if os.environ.get(_ENV):
        return os.environ[_ENV]
    worker = getattr(config, "workerinput", None) or {}
    return os.path.join(tempfile.gettempdir(), "xla-faults-%s" % worker.get("testrunuid", "solo"))


@pytest.fixture(scope="session")
def disk():
    """``space`` (the private tmpfs) where this machine can mount one. As root on Linux (CI) it
    must: a failure to mount there fails the test instead of skipping it."""
    from . import space
    why_not = space.available()
    if why_not:
        if os.name == "posix" and os.geteuid() == 0:
            pytest.fail("no private tmpfs although running as root: %s" % why_not)
        pytest.skip(why_not)
    return space


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.path).startswith(HERE + os.sep):
            item.add_marker(pytest.mark.faults)


def _total(folder):
    total = dict.fromkeys(tally.ORDER, 0)
    for name in os.listdir(folder):
        if name.endswith(".json"):
            try:
                with open(os.path.join(folder, name), encoding="utf-8") as fh:
                    part = json.load(fh)
            except (OSError, ValueError):
                continue
            for key in tally.ORDER:
                total[key] += int(part.get(key, 0))
    return total


def pytest_sessionfinish(session):
    config = session.config
    worker = getattr(config, "workerinput", None)
    if worker is None:
        return                                   # the controller prints in the terminal summary
    import fcntl                                 # the suite is POSIX-only (strace, unshare, mounts)
    folder = _folder(config)
    with open(os.path.join(folder, ".lock"), "a") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX)
        with open(os.path.join(folder, "%s.json" % worker.get("workerid", "w")), "w", encoding="utf-8") as fh:
            json.dump(tally.COUNTS, fh)
        done = [n for n in os.listdir(folder) if n.endswith(".json")]
        want = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1)
        controller_prints = bool(os.environ.get(_ENV))
        if len(done) == want and not controller_prints:
            total = _total(folder)
            if total["scenarios"]:
                os.write(2, ("\n" + tally.line(total) + "\n").encode("utf-8"))
            import shutil
            shutil.rmtree(folder, ignore_errors=True)


def pytest_terminal_summary(terminalreporter, config):
    if not getattr(config, "_xla_faults_controller", False):
        return
    folder = _folder(config)
    with open(os.path.join(folder, "solo.json"), "w", encoding="utf-8") as fh:
        json.dump(tally.COUNTS, fh)
    total = _total(folder)
    if total["scenarios"]:
        terminalreporter.write_line(tally.line(total))
    import shutil
    shutil.rmtree(folder, ignore_errors=True)
