"""The shared code keeps the shape rules.md promises a newcomer: no import circles and no shared
module past ~900 lines.

Why a test: both rules erode one convenient edit at a time (a function-level ``from .x import y``
"to avoid the circle" is still a circle: the two modules cannot be read or changed apart), and
nobody notices until a module is 1,500 lines. The imports are read from the source (``ast``,
every ``import`` anywhere in a module, also inside functions), not by importing anything.
"""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("xlakit", "xlaguard")
TOP_LEVEL = ("xla.py", "xla_guard.py", "xla_sync.py", "table_io.py", "pydeps_boot.py")
MAX_LINES = 950     # "~900": room for a docstring grown by one change, not for a second module


def _modules():
    """{dotted name: path} of every module in the shared packages."""
    found = {}
    for package in PACKAGES:
        for folder, dirs, files in os.walk(os.path.join(ROOT, package)):
            dirs[:] = [d for d in dirs if d != "__pycache__" and d != "data"]
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    if dotted.endswith(".__init__"):
                        dotted = dotted[:-len(".__init__")]
                    found[dotted] = path
    return found


def _imports(dotted, path, modules):
    """The shared modules ``dotted`` imports. ``from pkg import mod`` counts as importing ``mod``
    (the package is already being imported as its parent), ``from pkg import name`` as ``pkg``."""
    is_package = path.endswith("__init__.py")
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = dotted.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                target = source + "." + alias.name
                out.add(target if target in modules else source)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {name for name in out if name in modules and name != dotted}


def _circles(edges):
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []
    counter = [0]
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_no_import_circles_in_the_shared_code():
    modules = _modules()
    edges = {name: _imports(name, path, modules) for name, path in modules.items()}
    assert _circles(edges) == []


def test_the_checker_sees_a_circle_through_a_function_level_import():
    """The check itself: a lazy import inside a function closes a circle too."""
    edges = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert _circles(edges) == [["a", "b"]]


def test_no_shared_module_past_about_900_lines():
    long = []
    paths = list(_modules().values()) + [os.path.join(ROOT, name) for name in TOP_LEVEL]
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            lines = sum(1 for _ in fh)
        if lines > MAX_LINES:
            long.append((os.path.relpath(path, ROOT), lines))
    assert long == [], "split these along their seams: %r" % long


def test_no_source_warns_when_compiled():
    """An invalid escape in a docstring is a DeprecationWarning on 3.9-3.11 and a SyntaxWarning
    on 3.12+, printed on stderr by every tool process that compiles the module (no .pyc yet)."""
    import warnings
    paths = list(_modules().values()) + [os.path.join(ROOT, name) for name in TOP_LEVEL]
    tools = os.path.join(ROOT, "tools")
    paths += [os.path.join(tools, name) for name in sorted(os.listdir(tools)) if name.endswith(".py")]
    noisy = []
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            source = fh.read()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                compile(source, path, "exec")
            except (SyntaxError, DeprecationWarning, SyntaxWarning) as exc:
                noisy.append("%s: %s" % (os.path.relpath(path, ROOT), exc))
    assert noisy == []
