"""Shared test helpers: every tool test spawns the real script the way the assistant does."""
import os
import re
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from xlakit import host as xla_host  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures")
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def home(tmp_path):
    """A private HOME for the tool (workspace, backups and logs land here, never in the real one)."""
    path = tmp_path / "home"
    path.mkdir()
    return path


_VALIDATORS = {}


def check_output_schema(result):
    """Every answer a test sees also matches its tool's MCP outputSchema (xlakit/mcp/schema.py),
    so the schemas MCP clients validate against stay true to what the tools return. Needs the
    test-only jsonschema (xla.py TEST_REQUIREMENTS); without it nothing is checked."""
    if result.tool not in _VALIDATORS:
        try:
            import jsonschema
            from xlakit.mcp import schema as mcpschema
            schema = mcpschema.output_schema(result.tool)
            _VALIDATORS[result.tool] = jsonschema.validators.validator_for(schema)(schema)
        except ImportError:
            _VALIDATORS[result.tool] = None
    validator = _VALIDATORS[result.tool]
    if validator is not None:
        errors = sorted(validator.iter_errors(result.answer()), key=str)
        assert not errors, "%s: the answer does not match its outputSchema (xlakit/mcp/schema.py): %s" % (
            result.tool, errors[0].message[:500])
    return result


# test_package.py reruns the tool suites on the installed wheel: the tools then come from the
# package folder, started by the venv's interpreter, as a user of ``pip install xla-tools`` has them.
PACKAGE_ROOT = os.environ.get("XLA_TEST_PACKAGE_ROOT") or None
PACKAGE_PYTHON = os.environ.get("XLA_TEST_PACKAGE_PYTHON") or None


def _package_home(home):
    """An installed package keeps its libraries in ~/.xla/pydeps: the checkout's, linked (the
    rerun must not download them again for every test's fresh HOME)."""
    deps = os.path.join(str(home), ".xla", "pydeps")
    if not os.path.lexists(deps):
        os.makedirs(os.path.dirname(deps), exist_ok=True)
        os.symlink(os.path.realpath(os.path.join(ROOT, "tools", "pydeps")), deps)


@pytest.fixture
def run(home):
    """``run("calc_table", {...})`` -> xla_host.RunResult, spawned as the assistant does; the
    answer is checked against the tool's outputSchema on the way."""
    def _run(name, args=None, **kwargs):
        kwargs.setdefault("home", str(home))
        reader = os.environ.get("XLA_XLSX_READER")
        if reader:   # test_reader_paths.py reruns the table tests on the openpyxl path
            kwargs["extra_env"] = dict({"XLA_XLSX_READER": reader}, **(kwargs.get("extra_env") or {}))
        if PACKAGE_ROOT and kwargs.get("root") in (None, ROOT):
            kwargs["root"] = PACKAGE_ROOT
            kwargs.setdefault("python", PACKAGE_PYTHON)
            _package_home(kwargs["home"])
        result = xla_host.run_tool(name, args, **kwargs)
        return check_output_schema(result) if kwargs.get("root") in (None, ROOT, PACKAGE_ROOT) else result
    return _run


def assert_contract(result, limit=20000):
    """The host contract, for any answer: one JSON object with boolean ok; failures are Chinese,
    exit non-zero, the same message on stderr; no traceback; within the output cap."""
    assert not result.timed_out, "tool timed out"
    # images are taken out before the output cap (rules.md: the images convention)
    body = result.text if getattr(result, "images", None) else result.stdout
    assert len(body) <= limit and not getattr(result, "cut", False), "stdout is %d chars" % len(body)
    assert "Traceback (most recent call last)" not in result.stdout + result.stderr, result.stderr[-2000:]
    import json
    try:
        data = json.loads(result.stdout)
    except ValueError:
        # say what the process did instead of answering (a crash, a kill, a lane hiccup)
        raise AssertionError("stdout is not one JSON object: exit %r, stdout %r, stderr %r" % (
            result.exit_code, result.stdout[:300], result.stderr[-1500:]))
    assert isinstance(data, dict) and isinstance(data.get("ok"), bool), result.stdout[:500]
    if data["ok"]:
        assert result.exit_code == 0
    else:
        assert result.exit_code != 0
        assert isinstance(data.get("error"), str) and CJK.search(data["error"]), data
        assert data["error"].strip() in result.stderr
    return data


def ok(result):
    """The answer of a run that must succeed (contract checked)."""
    data = assert_contract(result)
    assert data["ok"], data
    return data


def fail(result):
    """The Chinese error of a run that must fail (contract checked)."""
    data = assert_contract(result)
    assert not data["ok"], data
    return data["error"]


def alive(pid):
    """True if process ``pid`` runs; a zombie (killed, not yet reaped by init) counts as gone."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        with open("/proc/%d/status" % pid) as fh:
            return not any(ln.startswith("State:") and "Z" in ln.split()[1] for ln in fh)
    except OSError:
        return True


NOBODY = 65534
# How many tools the manifest lists (tests compare listings against it, never a literal).
TOOL_COUNT = len(__import__("json").load(open(os.path.join(ROOT, "tools.json"), encoding="utf-8"))["tools"])


def as_nobody(func):
    """Run ``func()`` in a forked child as the unprivileged user 65534 and return its JSON-able
    result. CI runs as root, which reads and writes every file whatever its mode: permission
    cases run here instead of being skipped. Whatever ``func`` touches must be reachable by that
    user (make folders with ``nobody_dir``)."""
    import json
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # pragma: no cover - the child
        os.close(rfd)
        try:
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            out = json.dumps(func())
        except BaseException as exc:                # noqa: BLE001 - report anything to the parent
            out = json.dumps({"child_error": repr(exc)})
        os.write(wfd, out.encode())
        os._exit(0)
    os.close(wfd)
    chunks = []
    while True:
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(rfd)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks).decode())


def once_per_run(tmp_path_factory, name, compute):
    """``compute()`` (JSON-able) once per test run, shared by every xdist worker: the first worker
    computes it under a lock and the others read its result (pytest-xdist's recipe for expensive
    session fixtures). Without xdist it simply computes. Used for the guard's escape matrix and the
    answers sweep, which cost a minute or more each."""
    import json
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return compute()
    sys.path.insert(0, ROOT)
    from xlakit.fs.lock import FileLock
    shared = tmp_path_factory.getbasetemp().parent      # the run's folder, common to all workers
    path = shared / (name + ".json")
    with FileLock(str(path) + ".lock"):
        if path.is_file():
            with open(str(path), encoding="utf-8") as fh:
                return json.load(fh)
        data = compute()
        with open(str(path), "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False)
        return json.loads(json.dumps(data))              # the same shape the other workers get


def nobody_dir(prefix="xla-nobody-"):
    """A fresh folder under the system temp dir owned by user 65534 (pytest's tmp_path lies under a
    0700 folder of root's, which that user cannot enter)."""
    import pathlib
    import tempfile
    path = tempfile.mkdtemp(prefix=prefix)
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    os.chmod(path, 0o755)
    return pathlib.Path(path)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: over 30 s on a loaded machine (CI runs it; -m 'not slow' leaves it out)")
    config.addinivalue_line("markers", "quick: a representative first-check subset (python3 xla.py selftest -m quick)")
    config.addinivalue_line("markers", "windows: runs on Windows CPython under Wine (tests/windows/; skips without Wine, "
                            "fails under CI=true; never in quick)")


# ``python3 xla.py selftest --quick`` (pytest -m quick): one or two files per layer and per kind of
# tool (about 450 tests), chosen to finish in about two minutes on two cores; the contract file
# without its 600 bad-input cases. The full suite (CI) runs everything.
QUICK_FILES = {"test_contract.py", "test_runtime.py", "test_host.py", "test_table_io.py", "test_sniff.py",
               "test_read_spreadsheet.py", "test_probe_table.py", "test_calc_table.py", "test_filter_table.py",
               "test_paths_files.py", "test_fetch_url.py", "test_write_text.py", "test_xlsb.py",
               "test_paging_cache.py", "test_cli.py", "test_spreadsheets_by_others.py"}
QUICK_SKIP = {"test_tool_survives_bad_input", "test_ctrl_c_kills_the_child_tree",       # the slowest few
              "test_extraction_shapes_of_old_and_listing_pages", "test_limit_2000_with_big_cells_stays_under_the_cap_and_pages_through"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if os.path.basename(str(item.fspath)) in QUICK_FILES and item.originalname not in QUICK_SKIP:
            item.add_marker(pytest.mark.quick)
