"""A toolbox for long MCP memory runs: the real tools, plus a "replay" twin of each, so 10,000
mixed calls finish in minutes (issue 38 item 4).

Why replays: a real table, document or chart call costs 0.1-0.5 s of child process, so 10,000 of
them take most of an hour on two shared cores. What the server keeps per call depends on what
passes through it (the request, the answer's size and shape, images, progress lines, the threads
and pipes of a run), not on the work the child does. So each real tool is run for real once, its
answer recorded, and a twin tool ``<name>_replay`` (the real tool's own parameter schema, so the
host validates exactly as for the real one) prints the recorded answer, and its progress lines on
stderr, from a ten-line script. Everything on the server's side is the real code path; the real
tools stay in the box and a share of the calls goes to them.
"""
import json
import os
import shutil

from conftest import ROOT

# (tool, arguments): tables, documents, a chart (an image), files and the calendar
REAL_CALLS = [
    ("read_spreadsheet", {"path": "t.xlsx", "limit": 200}),
    ("probe_table", {"path": "t.xlsx"}),
    ("calc_table", {"path": "t.xlsx", "group_by": ["部门"], "metrics": [{"column": "金额", "func": "sum"}]}),
    ("filter_table", {"path": "t.xlsx", "where": [{"column": "金额", "op": ">", "value": 100}]}),
    ("draw_chart", {"type": "bar", "title": "各部门费用", "labels": ["行政", "销售", "研发", "财务"],
                    "series": [{"name": "九月", "data": [1200, 3400, 2100, 800]},
                               {"name": "十月", "data": [1100, 3900, 2500, 900]}]}),
    ("write_document", {"path": "d.docx", "text": "# 九月报告\n\n" + "本月各部门费用如下。\n\n" * 30, "mode": "overwrite"}),
    ("read_document", {"path": "d.docx"}),
    ("write_text", {"path": "a.txt", "text": "你好，世界\n" * 200, "mode": "overwrite"}),
    ("read_text_file", {"path": "a.txt"}),
    ("list_dir", {"path": "."}),
    ("file_info", {"path": "t.xlsx"}),
    ("find_files", {"pattern": "*.docx"}),
    ("lunar_date", {"date": "2024-02-10"}),
    ("lunar_date", {"year": 2025}),
]

REPLAY = ("import sys\n"
          "sys.stdin.buffer.read()\n"
          "here = __file__[:-3]\n"
          "err = open(here + '.err', 'rb').read()\n"
          "if err:\n"
          "    sys.stderr.buffer.write(err)\n"
          "    sys.stderr.buffer.flush()\n"
          "sys.stdout.buffer.write(open(here + '.out', 'rb').read())\n")


def build(tmp_path, home):
    """The box (real tools + ``*_replay`` twins) under ``tmp_path``; the sample ledger in
    ``home``'s workspace. Returns the box root."""
    root = tmp_path / "box"
    (root / "tools").mkdir(parents=True)
    for name in ("pydeps_boot.py", "xla.py", "table_io.py"):
        shutil.copy(os.path.join(ROOT, name), str(root / name))
    os.symlink(os.path.join(ROOT, "xlakit"), str(root / "xlakit"))
    os.symlink(os.path.join(ROOT, "tools", "pydeps"), str(root / "tools" / "pydeps"))
    for name in os.listdir(os.path.join(ROOT, "tools")):
        if name.endswith(".py"):
            shutil.copy(os.path.join(ROOT, "tools", name), str(root / "tools" / name))
    work = home / ".xla" / "workspace"
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(os.path.join(ROOT, "examples", "示例台账.xlsx"), str(work / "t.xlsx"))
    with open(os.path.join(ROOT, "tools.json"), encoding="utf-8") as fh:
        manifest = json.load(fh)
    manifest["tools"] = [t for t in manifest["tools"] if t["name"] in {n for n, _ in REAL_CALLS}]
    with open(str(root / "tools.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, ensure_ascii=False)
    return str(root)


def add_replays(root, recorded):
    """``recorded``: [(tool, arguments, stdout bytes, stderr bytes)] of real runs; adds one
    ``<tool>_replay_<n>`` per recording and returns the calls [(name, arguments)]."""
    path = os.path.join(root, "tools.json")
    with open(path, encoding="utf-8") as fh:
        manifest = json.load(fh)
    real = {t["name"]: t for t in manifest["tools"]}
    calls = []
    for n, (tool, args, out, err) in enumerate(recorded):
        name = "%s_replay_%d" % (tool, n)
        script = os.path.join(root, "tools", name)
        with open(script + ".py", "w", encoding="utf-8") as fh:
            fh.write(REPLAY)
        with open(script + ".out", "wb") as fh:
            fh.write(out)
        with open(script + ".err", "wb") as fh:
            fh.write(err)
        entry = dict(real[tool], name=name, script=name + ".py")
        manifest["tools"].append(entry)
        calls.append((name, args))
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, ensure_ascii=False)
    return calls
