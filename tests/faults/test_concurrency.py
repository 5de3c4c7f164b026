"""Concurrency: 8 writers appending to one file at once, for an .xlsx, a .csv, a .docx and a .txt,
both straight (8 tool processes started together, contending for the per-file lock) and through
the host runner (``xlakit.host.run_tool`` from 8 threads, as 8 assistant sessions would; the runner
lets 2 tools run at a time). Afterwards every appended row / paragraph / line is there exactly
once, the original content is intact and first, every writer said ok, no temp file is left, and
the files open in openpyxl, python-docx and LibreOffice (converted headless to csv / text, and
the rows counted there too).
"""
import csv
import io
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

from conftest import ROOT

from . import harness, samples, tally
from .harness import xla_host

WRITERS = 8
ROWS_EACH = 3
SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
KINDS = {                      # kind -> (file name, original bytes, tool, args for writer i)
    "xlsx": ("账.xlsx", lambda: samples.xlsx_bytes(3), "write_spreadsheet",
             lambda p, i: {"path": p, "mode": "append",
                           "rows": [["2024-10-%02d" % (j + 1), "P%d-R%d" % (i, j), i * 10 + j] for j in range(ROWS_EACH)]}),
    "csv": ("账.csv", lambda: samples.csv_bytes(3), "write_spreadsheet",
            lambda p, i: {"path": p, "mode": "append",
                          "rows": [["2024-10-%02d" % (j + 1), "P%d-R%d" % (i, j), i * 10 + j] for j in range(ROWS_EACH)]}),
    "docx": ("报告.docx", samples.docx_bytes, "write_document",
             lambda p, i: {"path": p, "mode": "append", "text": "\n\n".join("P%d-R%d 追加的段落" % (i, j) for j in range(ROWS_EACH))}),
    "txt": ("说明.txt", lambda: "原有的一行\n".encode("utf-8"), "write_text",
            lambda p, i: {"path": p, "mode": "append", "text": "".join("P%d-R%d\n" % (i, j) for j in range(ROWS_EACH))}),
}
IDS = sorted("P%d-R%d" % (i, j) for i in range(WRITERS) for j in range(ROWS_EACH))


def _ids_in(texts):
    """The appended ids found in ``texts`` (one per cell / paragraph / line), in order."""
    import re
    return [m for t in texts for m in re.findall(r"P\d+-R\d+", t or "")]


def _read(kind, path):
    """(appended ids in order, the original part still first) read with the reference library."""
    if kind == "xlsx":
        import openpyxl
        rows = list(openpyxl.load_workbook(path).active.iter_rows(values_only=True))
        head_ok = [list(r) for r in rows[:4]] == [["日期", "客户", "金额"]] + [
            ["2024-09-%02d" % (i + 1), "客户%d" % i, 100 + i] for i in range(3)]
        return _ids_in(str(r[1]) for r in rows), head_ok
    if kind == "csv":
        with open(path, encoding="utf-8-sig", newline="") as fh:
            rows = list(csv.reader(fh))
        head_ok = rows[:4] == [["日期", "客户", "金额"]] + [["2024-09-%02d" % (i + 1), "客户%d" % i, str(100 + i)]
                                                         for i in range(3)]
        return _ids_in(r[1] for r in rows if len(r) > 1), head_ok
    if kind == "docx":
        paras = _docx_paragraphs(path)
        return _ids_in(paras), paras[:2] == ["原有的标题", "原有的第1段，写一些内容让文件大一点。"]
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    return _ids_in(lines), lines[:1] == ["原有的一行"]


def _docx_paragraphs(path):
    """Paragraph texts by python-docx (xla.py TEST_REQUIREMENTS); where it is not installed yet,
    by reading word/document.xml, so the check never silently goes away."""
    try:
        import docx
    except ImportError:
        import xml.etree.ElementTree as ET
        import zipfile
        w = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
        with zipfile.ZipFile(path) as zf:
            root = ET.fromstring(zf.read("word/document.xml"))
        return ["".join(t.text or "" for t in p.iter(w + "t")) for p in root.iter(w + "p")]
    return [p.text for p in docx.Document(path).paragraphs]


def _run_all(kind, how, folder, home):
    name, make, tool, args_of = KINDS[kind]
    path = os.path.join(str(folder), "%s-%s%s" % (os.path.splitext(name)[0], how, os.path.splitext(name)[1]))
    with open(path, "wb") as fh:
        fh.write(make())

    def one(i):
        args = args_of(path, i)
        if how == "runner":
            res = xla_host.run_tool(tool, args, root=ROOT, home=str(home))
            return res.ok, res.stdout[-400:] + (res.stderr or "")[-400:]
        code, out, err, _ = harness.spawn(tool, args, home)
        return code == 0, out[-400:] + err[-400:]

    with ThreadPoolExecutor(WRITERS) as pool:
        answers = list(pool.map(one, range(WRITERS)))
    return path, answers


def test_eight_writers_append_to_one_file_at_once(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    jobs = [(kind, how) for kind in KINDS for how in ("direct", "runner")]
    with ThreadPoolExecutor(2) as pool:          # two files at a time: 16 writers on 2 cores
        done = list(pool.map(lambda job: (job,) + _run_all(job[0], job[1], tmp_path, home), jobs))
    failures, written = [], {}
    for (kind, how), path, answers in done:
        tally.scenario()
        bad = [a[1] for a in answers if not a[0]]
        if bad:
            failures.append("%s %s: %d of %d writers failed: %s" % (kind, how, len(bad), WRITERS, bad[0]))
        ids, head_ok = _read(kind, path)
        tally.checked()
        if sorted(ids) != IDS:
            missing = sorted(set(IDS) - set(ids))
            tally.add("bytes_lost", len(missing))
            failures.append("%s %s: rows missing %s, doubled %s" % (
                kind, how, missing, sorted({i for i in ids if ids.count(i) > 1})))
        if not head_ok:
            failures.append("%s %s: the original content is not intact at the top" % (kind, how))
        written[path] = kind
    left = harness.stray_temps(tmp_path)
    tally.add("stray_temp_files", len(left))
    assert not left, left
    assert not failures, "\n".join(failures)
    if SOFFICE:
        _check_with_libreoffice(written, tmp_path)


def _check_with_libreoffice(written, tmp_path):
    out = tmp_path / "lo"
    profile = tempfile.mkdtemp(prefix="xla-lo-")
    try:
        for target, kinds in (("csv:Text - txt - csv (StarCalc):44,34,76", ("xlsx",)),
                              ("txt:Text (encoded):UTF8", ("docx",))):
            files = [p for p, k in written.items() if k in kinds]
            subprocess.run([SOFFICE, "-env:UserInstallation=file://" + profile, "--headless", "--convert-to", target,
                            "--outdir", str(out)] + files, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=120, check=False)
            for p in files:
                stem = os.path.splitext(os.path.basename(p))[0]
                conv = out / (stem + "." + target.split(":")[0])
                tally.checked()
                assert conv.exists(), "LibreOffice could not open %s" % p
                text = conv.read_text(encoding="utf-8", errors="replace")
                ids = _ids_in(text.splitlines()) if conv.suffix == ".txt" else _ids_in(
                    r[1] for r in csv.reader(io.StringIO(text)) if len(r) > 1)
                assert sorted(ids) == IDS, "LibreOffice reads %s with rows %s" % (p, sorted(ids)[:30])
    finally:
        shutil.rmtree(profile, ignore_errors=True)
