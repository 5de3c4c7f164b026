"""read_document speed and text agreement against what a user would otherwise run.

- a 300-page text PDF: read_document's first window (the tool process, as the assistant spawns it)
  vs ``pdftotext`` on the whole file; agreement = similarity of the first window's text; then
  every later window to the end (each should cost about what the first does);
- a ~5 MB Chinese .doc (UTF-16 pieces): read_document's first window vs ``antiword`` and
  ``catdoc`` on the whole file;
- every Word 97+ .doc of a corpus folder (e.g. Apache POI's test-data/document): agreement of the
  whole text with antiword, per file, and the mean.

- ``--charsets DIR``: encoding detection (``xlakit.text.decode``, what every text/html/csv reader
  uses) on the chardet project's test files (``tests/<encoding>/*`` of github.com/chardet/chardet,
  not committed: each file is copyright its publisher), beside charset-normalizer; a file counts
  as right when the decoded text equals the labelled encoding's, or the codec is the label's
  superset (GB2312 -> GB18030, Big5 -> cp950, Shift_JIS -> cp932, EUC-KR -> cp949, ISO-8859-1 ->
  cp1252). ``--charsets-only`` skips everything else.

- ``--formats DIR``: every .ppt / .pptx / .epub / WordML .xml / Word 6-95 .doc in DIR (e.g. Apache POI's
  test-data/slideshow) read in-process and compared with LibreOffice's text of the same file
  (``soffice --convert-to odt|odp``, the text of its content.xml in document order, notes
  included): per format files, read ok, median similarity, total time. ``--formats-only`` skips
  everything else.

- ``--pdfs DIR``: every PDF in DIR (e.g. the test PDFs of pdfminer.six ``samples/`` and
  pdfplumber ``tests/pdfs/``), first 20 pages, against pdftotext: median agreement of our page
  text and of pypdf's plain text, overall and for files with CJK CID fonts without a ToUnicode
  map; pages put in column order; text-less pages by what they hold. ``--pdfs-only`` skips the rest.

- ``--peers pdf:DIR ... doc:DIR ... [--pdfminer DIR]``: per format (pdf, doc, docx, wpd), ours
  beside pdftotext and pdfminer.six (PDF) or LibreOffice and antiword (Word) on public corpora:
  files, read, median agreement with the peers, how many files join words every peer keeps apart,
  and the files where ours is wrong while the peers agree (each listed with why), apart from the
  files where the file itself shows the peer wrong (``peer_wrong``; a .docx whose difference from
  LibreOffice is all deleted revision text: LibreOffice's plain text keeps it, Word's accepted
  document does not). ``doc:DIR`` takes .doc, .docx and .wpd files, ``docx:DIR`` / ``wpd:DIR``
  only that kind.

- ``--wrong [--pdfminer DIR]``: issue 36's fixtures (contents page, fake bold, glyph-number fonts,
  predefined CJK CMaps, spacing accents, ODF numbering, ruby, cross-references): the similarity to each
  file's true text of what we, pdftotext, pdfminer.six (pip-installed into DIR for the comparison
  only) and LibreOffice show; files where a peer shows more than we do are marked.

Inputs are generated under bench/data/ with LibreOffice (not committed). The comparison tools come
from Debian (``apt-get install poppler-utils antiword catdoc libreoffice-writer-nogui``); a missing
one is reported and skipped. Usage::

    python3 bench/bench_documents.py [--corpus DIR] [--charsets DIR [--charsets-only]]
"""
import argparse
import difflib
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "bench", "data")
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tools", "pydeps"))


# A list item's bullet at the start of a line: ours writes "- " (indented when nested),
# LibreOffice's plain text the glyph ("•", "◦", "▪", a symbol-font private-use character).
BULLET = r"^[ \t]*(?:[-\u2022\u25e6\u25aa\u25ab\u2023\u2043\u25cf\u25cb\u25a0\u25a1\u25c6\u25c7\u27a2\u27a4\u2713" \
         r"\u2714\u2756\uf0a7\uf0b7\uf0d8\uf0fc])[ \t]+"


def _norm(text):
    text = re.sub(r"【第 \d+ 页】|^#+ |" + BULLET + r"|\|", " ", text, flags=re.M)
    return re.sub(r"\s+", "", text)


def agreement(ours, theirs, limit=20000, prefix=False):
    """Similarity of the whitespace-free texts; ``prefix``: ours is the first window of theirs."""
    a, b = _norm(ours)[:limit], _norm(theirs)
    b = b[:len(a)] if prefix else b[:limit]
    if not a and not b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def timed(cmd, stdin=None):
    start = time.monotonic()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, timeout=300)
    return time.monotonic() - start, proc.stdout.decode("utf-8", "replace")


def tool(path, offset=0):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
           "PYTHONPATH": os.path.join(ROOT, "tools", "pydeps")}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-X", "utf8", "-u", os.path.join(ROOT, "tools", "read_document.py")],
                          input=json.dumps({"path": path, "offset": offset}).encode(), capture_output=True,
                          cwd=os.path.join(ROOT, "tools"), env=env, timeout=120)
    took = time.monotonic() - start
    data = json.loads(proc.stdout.decode("utf-8"))
    return took, data


def make_inputs():
    os.makedirs(DATA, exist_ok=True)
    from xlakit.documents import docx_write
    pdf = os.path.join(DATA, "long300.pdf")
    doc = os.path.join(DATA, "big5mb.doc")
    if not os.path.exists(pdf):
        paras = []
        for n in range(1, 301):
            paras.append("# 第 %d 章 合同条款" % n)
            paras.append(("第 %d 章第一条：甲乙双方本着平等互利的原则，经友好协商，就有关事项达成如下协议。" % n) * 6)
            paras.append("\\newpage")
        src = os.path.join(DATA, "long300.docx")
        with open(src, "wb") as fh:
            fh.write(docx_write.new_document("\n\n".join(paras))[0])
        subprocess.run(["soffice", "--headless", "--convert-to", "pdf", "--outdir", DATA, src], check=True,
                       capture_output=True, timeout=600)
    if not os.path.exists(doc):
        line = "本合同自双方签字盖章之日起生效，有效期三年。Party A shall pay within 30 days. "
        paras = ["第 %d 条 %s" % (n, line * 3) for n in range(12000)]
        src = os.path.join(DATA, "big5mb.docx")
        with open(src, "wb") as fh:
            fh.write(docx_write.new_document("\n\n".join(paras))[0])
        subprocess.run(["soffice", "--headless", "--convert-to", "doc", "--outdir", DATA, src], check=True,
                       capture_output=True, timeout=900)
    return pdf, doc


_SUPERSETS = {"gb2312": {"gb18030", "gbk"}, "big5": {"cp950", "big5hkscs"}, "shift_jis": {"cp932"},
              "euc-kr": {"cp949"}, "iso-8859-1": {"cp1252"}, "windows-1252": {"cp1252"}, "ascii": {"utf-8", "utf_8"},
              "tis-620": {"cp874"}, "utf-8-sig": {"utf-8"}}
_FOLDER_CODEC = {"ibm866": "cp866", "ibm855": "cp855", "maccyrillic": "mac_cyrillic", "macroman": "mac_roman"}


def _labelled(folder):
    """The codec a chardet test folder is labelled with (``windows-1251-russian`` -> cp1251)."""
    import codecs
    name = folder.lower()
    name = re.sub(r"-(russian|bulgarian|hebrew|greek|hungarian|turkish|slovak|czech|arabic|slovene|romanian|"
                  r"polish|croatian)$", "", name)
    name = _FOLDER_CODEC.get(name, name)
    try:
        codecs.lookup(name)
        return name
    except LookupError:
        return None


def _right(raw, label, text, codec):
    import codecs
    if codec is None:
        return False
    truth = raw.decode(label, "replace").lstrip("\ufeff")
    if text is not None and text.lstrip("\ufeff") == truth:
        return True
    norm = codecs.lookup(codec).name
    return norm == codecs.lookup(label).name or codec in _SUPERSETS.get(label, ()) or \
        norm in _SUPERSETS.get(label, ())


def charset_scores(root):
    """Right answers of xlakit.text and charset-normalizer on chardet's test files, per folder."""
    from xlakit import text as textlib
    try:
        import charset_normalizer
    except ImportError:
        charset_normalizer = None
    files = []
    for folder in sorted(os.listdir(root)):
        label = _labelled(folder) if os.path.isdir(os.path.join(root, folder)) else None
        if label:
            files += [(folder, label, os.path.join(root, folder, f)) for f in sorted(os.listdir(os.path.join(root, folder)))]
    ours, theirs, t_ours, t_theirs = {}, {}, 0.0, 0.0
    for folder, label, path in files:
        with open(path, "rb") as fh:
            raw = fh.read()
        start = time.monotonic()
        text, codec, _reason = textlib.decode(raw)
        t_ours += time.monotonic() - start
        ours.setdefault(folder, []).append(_right(raw, label, text, codec))
        if charset_normalizer is not None:
            start = time.monotonic()
            best = charset_normalizer.from_bytes(raw).best()
            t_theirs += time.monotonic() - start
            theirs.setdefault(folder, []).append(
                _right(raw, label, str(best) if best else None, best.encoding if best else None))
    print()
    print("编码识别：chardet 项目的 %d 个测试文件（%s）" % (len(files), root))
    print("| 编码 | 文件 | xlakit.text 正确 | charset-normalizer 正确 |")
    print("|---|---:|---:|---:|")
    for folder in sorted(ours):
        a = ours[folder]
        b = theirs.get(folder, [])
        if all(a) and all(b):
            continue
        row(folder, len(a), sum(a), sum(b) if b else "—")
    n_ours = sum(sum(v) for v in ours.values())
    n_theirs = sum(sum(v) for v in theirs.values())
    row("**合计**", len(files), "%d（%.1f%%，%.0f ms/文件）" % (n_ours, 100.0 * n_ours / max(1, len(files)),
                                                         1000 * t_ours / max(1, len(files))),
        "%d（%.1f%%，%.0f ms/文件）" % (n_theirs, 100.0 * n_theirs / max(1, len(files)), 1000 * t_theirs / max(1, len(files)))
        if theirs else "未安装")
    print("（只列出有错的编码；其余全部正确）")


def _lo_text(path, target):
    """LibreOffice's text of ``path``: converted to odt/odp, the paragraphs of content.xml."""
    import tempfile
    import zipfile
    import xml.etree.ElementTree as ET
    out = tempfile.mkdtemp()
    try:
        subprocess.run(["soffice", "--headless", "--convert-to", target, "--outdir", out, path],
                       capture_output=True, timeout=120)
        made = glob.glob(os.path.join(out, "*." + target))
        if not made:
            return None
        root = ET.fromstring(zipfile.ZipFile(made[0]).read("content.xml"))
        text_ns = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
        return "\n".join("".join(el.itertext()) for el in root.iter() if el.tag in (text_ns + "p", text_ns + "h"))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def format_scores(folder):
    from xlakit import documents
    from xlakit.sniff import sniff
    import statistics
    per = {}
    for path in sorted(glob.glob(os.path.join(folder, "*"))):
        if not os.path.isfile(path):
            continue
        kind = sniff(path)
        fmt = kind.kind
        if fmt not in ("ppt", "pptx", "epub", "wordml", "doc"):
            continue
        t0 = time.monotonic()
        try:
            doc = documents.read(path)
            ours, failed = doc.text, None
        except Exception as exc:  # noqa: BLE001 - refusals count as not ok
            doc, ours, failed = None, None, exc
        if fmt == "doc":          # only Word 6.0/95 here (Word 97+ is scored with --corpus)
            if (doc is None and "6.0/95" not in str(failed)) or (doc is not None and not any(
                    "Word 6.0/95" in w for w in doc.warnings)):
                continue
            fmt = "word95"
        stats = per.setdefault(fmt, {"files": 0, "ok": 0, "scores": [], "time": 0.0, "low": []})
        stats["files"] += 1
        if failed is not None:
            stats["time"] += time.monotonic() - t0
            stats["low"].append((0.0, os.path.basename(path) + "（%s）" % str(failed)[:40]))
            continue
        stats["time"] += time.monotonic() - t0
        stats["ok"] += 1
        theirs = _lo_text(path, "odp" if fmt in ("ppt", "pptx") else "odt")
        if theirs is None:
            continue
        score = agreement(ours, theirs)
        stats["scores"].append(score)
        stats["low"].append((score, os.path.basename(path)))
    print("| 格式 | 文件 | 读出 | 与 LibreOffice 一致度中位数 | 耗时 s | 最低 |")
    print("|---|---:|---:|---:|---:|---|")
    for fmt, s in sorted(per.items()):
        med = statistics.median(s["scores"]) if s["scores"] else float("nan")
        low = "，".join("%s %.2f" % (n, v) for v, n in sorted(s["low"])[:3])
        row(fmt, s["files"], s["ok"], "%.3f" % med, "%.1f" % s["time"], low)


def pdf_scores(folder, pages=20):
    """Every PDF in ``folder``: the first ``pages`` pages through our page reader and through
    pypdf's plain extract_text, each compared with pdftotext (poppler-data installed, so poppler
    has its own CID tables); and how often the CID tables, the column order and the text-less page
    labels come into play."""
    import logging
    import statistics
    import pypdf
    from xlakit.documents import cid_unicode, pdf_holds, pdf_text
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    fired = []
    order = pdf_text.order
    pdf_text.order = lambda pieces: fired.append(order(pieces)) or fired[-1]
    groups = {"all": [], "cid": []}
    counts = {"files": 0, "ok": 0, "columns": 0, "bare": {}, "time": 0.0}
    for path in sorted(glob.glob(os.path.join(folder, "*.pdf"))):
        counts["files"] += 1
        t0 = time.monotonic()
        try:
            reader = pypdf.PdfReader(path, strict=False)
            if reader.is_encrypted:
                reader.decrypt("")
            ours, plain, cid = [], [], False
            for page in reader.pages[:pages]:
                cid = cid or any(cid_unicode.font_table(f) for f in cid_unicode._fonts(page))
                fired.clear()
                text = pdf_text.page_text(page)
                counts["columns"] += sum(1 for f in fired if f is not None)
                if not text.strip():
                    kind = pdf_holds.holds(page)
                    counts["bare"][kind] = counts["bare"].get(kind, 0) + 1
                ours.append(text)
            counts["time"] += time.monotonic() - t0
            again = pypdf.PdfReader(path, strict=False)
            if again.is_encrypted:
                again.decrypt("")
            plain = [page.extract_text() or "" for page in again.pages[:pages]]
        except Exception:  # noqa: BLE001 - unreadable files count as not ok
            continue
        counts["ok"] += 1
        theirs = subprocess.run(["pdftotext", "-l", str(pages), path, "-"], capture_output=True,
                                timeout=60).stdout.decode("utf-8", "replace")
        if not _norm(theirs):
            continue
        score = (agreement("\n".join(ours), theirs), agreement("\n".join(plain), theirs))
        groups["all"].append(score)
        if cid:
            groups["cid"].append(score)
    print("| PDF | 文件 | 与 pdftotext 一致度中位数（我们） | （pypdf 原样） |")
    print("|---|---:|---:|---:|")
    for name, label in (("all", "全部（读出 %d/%d）" % (counts["ok"], counts["files"])), ("cid", "含无 ToUnicode 的 CJK CID 字体")):
        scores = groups[name]
        if scores:
            row(label, len(scores), "%.3f" % statistics.median(s[0] for s in scores),
                "%.3f" % statistics.median(s[1] for s in scores))
    print("按栏重排的页：%d；没有文字的页：%s；读取共 %.1f s" % (
        counts["columns"], "，".join("%s %d" % kv for kv in sorted(counts["bare"].items())) or "无", counts["time"]))


# Issue 36's files: what each shows, as the person who made it typed it (the fixtures' sources)
TRUTHS = (
    ("toc.pdf", "目录第一章 总则2第二章 项目背景与意义3第三章 研究内容4第四章 技术路线5第五章 进度安排6第六章 经费预算7第七章 预期成果8第八章 保障措施9第九章 风险分析10第十章 附则11第一章 总则本办法适用于本单位全部科研项目。"),
    ("fakebold.pdf", "安徽省人民政府关于印发通知的通知哈哈哈哈各单位"),
    ("fakebold_inline.pdf", "安徽省人民政府本科学历各单位哈哈哈哈"),
    ("accents.pdf", "La protégée du ministre a été nommée, don´t Pěníž Naïve École shared between doctors and institutions"),
    ("glyphs_czech.pdf", "Peněžní prostředky Příliš žluťoučký kůň"),
    ("glyphs_chinese.pdf", "买方：黎荣 卖方：张伟 合同金额：壹万元整"),
    ("cjk_cmaps.pdf", "あいうえお、東京都 かきくけこ。大阪府 さしすせそ 名古屋"),
    ("cidfonts.pdf", "安徽省人民政府办公厅关于印发通知（2023）各市人民政府臺灣省政府公報東京都の公文書대한민국 정부"),
    ("numbered.odt", "一、总则（一）目的为规范公司采购行为，制定本办法。（二）适用范围1. 总部各部门1.1. 行政部1.2. 财务部2. 各分公司"
                     "二、采购流程（一）申请1. 填写采购申请单2. 部门负责人审批所需材料：① 报价单② 合同草稿③ 验收记录"),
    ("ruby.doc", "ふりがなの例：東京（とうきょう）へ行きます。拼音：银行（yínháng）"),
    ("xref.odt", "付款条件详见第 2 页“付款条件”一节。"),
)


def _pdfminer(path):
    """pdfminer.six's text, when it is importable (``--pdfminer DIR``: a folder it was
    pip-installed into for this comparison; never a tool dependency)."""
    try:
        from pdfminer.high_level import extract_text
    except ImportError:
        return None
    try:
        return extract_text(path)
    except Exception as exc:  # noqa: BLE001 - a peer's failure is a result, not ours
        return "(%s)" % type(exc).__name__


def _near(text, truth):
    """Similarity of the text to the truth (whitespace, page markers, heading marks and dot
    leaders ignored): text missing and text shown twice or wrong both cost."""
    a, b = re.sub(r"\s+", "", truth), re.sub(r"\s+", "", text or "")
    b = re.sub(r"【第\d+页】|#+|\.{3,}|\x0c", "", b)
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def wrong_text_scores():
    """Per file of issue 36: similarity to the true text of what ours, pdftotext, pdfminer and
    LibreOffice show; a file where a peer comes closer than we do is marked."""
    from xlakit import documents
    folder = os.path.join(ROOT, "tests", "fixtures", "documents")
    print("| 文件 | 我们 | pdftotext | pdfminer | LibreOffice | |")
    print("|---|---:|---:|---:|---:|---|")
    worse = 0
    for name, truth in TRUTHS:
        path = os.path.join(folder, name)
        ours = _near(documents.read(path).text, truth)
        peers = []
        if name.endswith(".pdf"):
            peers.append(_near(timed(["pdftotext", "-enc", "UTF-8", path, "-"])[1], truth)
                         if shutil.which("pdftotext") else None)
            miner = _pdfminer(path)
            peers.append(None if miner is None else _near(miner, truth))
            peers.append(None)
        else:
            peers += [None, None]
            out = os.path.join(DATA, "lo_txt")
            os.makedirs(out, exist_ok=True)
            subprocess.run(["soffice", "--headless", "--convert-to", "txt:Text", "--outdir", out, path],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180)
            txt = os.path.join(out, os.path.splitext(name)[0] + ".txt")
            peers.append(_near(open(txt, encoding="utf-8-sig").read(), truth) if os.path.exists(txt) else None)
        flag = "我们较差" if any(p is not None and p > ours + 0.01 for p in peers) else ""
        worse += 1 if flag else 0
        row(name, "%.2f" % ours, *(["—" if p is None else "%.2f" % p for p in peers] + [flag]))
    print()
    print("%d 个文件里，同行读得比我们对的：%d 个" % (len(TRUTHS), worse))


WORD = re.compile(r"[A-Za-z\u00C0-\u024F]+")


def joined_words(ours, theirs):
    """Words of ``ours`` (5+ letters) that ``theirs`` shows as two or three consecutive words
    ("doctorsandinstitutions"): lost word gaps."""
    words = WORD.findall(theirs)
    seen = set(w.lower() for w in words)
    pairs = set()
    for i in range(len(words)):
        for n in (2, 3):
            if i + n <= len(words):
                pairs.add("".join(words[i:i + n]).lower())
    return set(w for w in WORD.findall(ours) if len(w) >= 5 and w.lower() not in seen and w.lower() in pairs)


def coverage(ours, theirs, limit=20000):
    """How much of the peer's text (whitespace-free) ours shows, in order: extra text of ours
    (headers and footers, notes, ruby a peer leaves out) costs nothing, text it lacks or gets
    wrong does."""
    a, b = _norm(ours)[:2 * limit], _norm(theirs)[:limit]
    if not b:
        return 1.0
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / float(len(b))


def same_letters(ours, theirs, limit=20000):
    """How much of the peer's text ours holds regardless of order (character counts): low only
    when characters are missing or wrong, not when a table or a chart's labels come in another
    order."""
    import collections
    a, b = collections.Counter(_norm(ours)[:2 * limit]), collections.Counter(_norm(theirs)[:limit])
    total = sum(b.values())
    return 1.0 if not total else sum(min(a[c], n) for c, n in b.items()) / float(total)


FIELD_CODE = re.compile(r'\b(?:FORMDROPDOWN|FORMTEXT|FORMCHECKBOX|HYPERLINK|MERGEFIELD|MERGEFORMAT|PAGEREF|INCLUDEPICTURE)\b'
                        r'(?:\s+(?:\\[a-z]\s*)*"[^"\n]*")?')


def peer_wrong(path, ours, peer):
    """Why a peer's text is not the file's text, checked on the file, or None. Two cases seen in
    POI's fuzzed .doc files (issue 36), both with evidence in the file rather than a judgement:

    - the peer shows Word field instructions (``FORMDROPDOWN``, ``HYPERLINK "mailto:…"``) as
      text, 3 or more that ours does not show, and without them (and the field marks it shows
      as µ/§ beside them) ours covers >= 90 % of the rest: the file's field table is damaged and
      the peer fell back to raw field codes; Word shows field results, as ours does;
    - a .doc whose peer text occurs nowhere in the file's bytes (no word of 4 or more characters
      of it as UTF-16 or as 8-bit text): Word stores a .doc's text as it is, so the peer invented it."""
    codes = FIELD_CODE.findall(peer)
    if len(codes) >= 3 and not FIELD_CODE.search(ours or ""):
        rest = FIELD_CODE.sub("", peer).replace("µ", "").replace("§", "")
        if coverage(ours or "", rest) >= 0.9:
            return "同行把域代码当文字显示（%d 处，如 %s），去掉这些后我们覆盖同行文字 %.2f" % (
                len(codes), codes[0].split()[0], coverage(ours or "", rest))
    if path.lower().endswith(".doc"):
        text = _norm(peer)[:2000]
        with open(path, "rb") as fh:
            data = fh.read()
        runs = [w[:12] for w in re.findall(r"\S{4,}", peer[:4000])]     # short words say nothing
        stored = any(r.encode("utf-16-le") in data or r.encode("cp1252", "ignore") in data for r in runs)
        if runs and not stored:
            return "同行读出的文字“%s”在文件的字节里找不到（UTF-16 与 8 位文字都没有）" % text[:20]
    return None


def _lo_texts(paths, out):
    """LibreOffice's plain text of each file (one soffice run for all, with a profile of its own so
    a LibreOffice already running for the user or another bench does not take the job), by path."""
    import tempfile
    os.makedirs(out, exist_ok=True)
    profile = tempfile.mkdtemp(prefix="lo_bench_")
    try:
        subprocess.run(["soffice", "-env:UserInstallation=file://" + profile, "--headless",
                        "--convert-to", "txt:Text (encoded):UTF8", "--outdir", out] + paths,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=1800)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    texts = {}
    for path in paths:
        txt = os.path.join(out, os.path.splitext(os.path.basename(path))[0] + ".txt")
        if os.path.exists(txt):
            with open(txt, encoding="utf-8-sig", errors="replace") as fh:
                texts[path] = fh.read()
    return texts


def peer_scores(pdf_dirs, office_dirs, pages=20):
    """Issue 36: per format, our text beside the peers' on public corpora, and the files where ours
    is wrong and a peer is right. PDFs: pdftotext and pdfminer.six (``--pdfminer DIR``); Word
    files (.doc, .docx, .wpd): LibreOffice (and antiword for .doc). Without a true text, "ours
    wrong, a peer right" means: the peers agree with each other (similarity >= 0.9, whitespace
    ignored; one peer agrees with itself) and ours shows less than 90 % of what the closest peer
    shows (``coverage``: our extra text, such as headers and footers LibreOffice's plain text leaves
    out, is not counted against us) and less than 95 % of its characters in any order
    (``same_letters``: a table read row by row where a peer reads column by column is not
    wrong text), or ours joins words every peer keeps apart (3 or more). A file where the file
    itself shows the peer wrong (``peer_wrong``: field codes shown as text, text that is not in
    the file) is counted as "同行错（已核对）" instead. Each such file is listed with its numbers."""
    from xlakit import documents
    import logging
    import statistics
    logging.disable(logging.CRITICAL)
    groups = {}
    for folder in pdf_dirs:
        groups.setdefault("pdf", []).extend(sorted(glob.glob(os.path.join(folder, "**", "*.pdf"), recursive=True)))
    for folder in office_dirs:
        folder, exts = folder if isinstance(folder, tuple) else (folder, ("doc", "docx", "wpd"))
        for ext in exts:
            groups.setdefault(ext, []).extend(sorted(glob.glob(os.path.join(folder, "*." + ext))))
    print("| 格式 | 文件 | 我们读出 | 同行 | 与同行一致度中位数 | 覆盖同行文字中位数 | 同行之间 | 我们连词的文件 | 我们错、同行对 | 同行错（已核对） |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|")
    listed = []
    for fmt, paths in groups.items():
        if not paths:
            continue
        peers = {}
        if fmt == "pdf":
            for path in paths:
                got = {}
                if shutil.which("pdftotext"):
                    got["pdftotext"] = subprocess.run(["pdftotext", "-l", str(pages), path, "-"], capture_output=True,
                                                      timeout=120).stdout.decode("utf-8", "replace")
                miner = _pdfminer_pages(path, pages)
                if miner is not None:
                    got["pdfminer"] = miner
                peers[path] = got
        else:
            lo = _lo_texts(paths, os.path.join(DATA, "peers_" + fmt)) if shutil.which("soffice") else {}
            for path in paths:
                got = {"LibreOffice": lo[path]} if path in lo else {}
                if fmt == "doc" and shutil.which("antiword"):
                    got["antiword"] = timed(["antiword", "-m", "UTF-8.txt", path])[1]
                peers[path] = got
        read, sims, covers, between, joined, wrong, theirs_wrong = 0, [], [], [], 0, 0, 0
        for path in paths:
            try:
                ours = documents.read(path, stop_at=400000).text
                if fmt == "pdf":            # the peers read the first ``pages`` pages
                    ours = ours.split("【第 %d 页】" % (pages + 1))[0]
                read += 1
            except Exception:  # noqa: BLE001 - refused or failed: no text to compare
                ours = None
            got = {k: v for k, v in peers[path].items() if _norm(v or "")}
            if not got:
                continue
            names = sorted(got)
            peer_agree = agreement(got[names[0]], got[names[1]]) if len(names) > 1 else 1.0
            if len(names) > 1:
                between.append(peer_agree)
            if ours is None:
                reason = peer_wrong(path, "", got[names[0]])
                if reason:
                    theirs_wrong += 1
                    listed.append((fmt, path, "**同行错**：我们没有读出；" + reason))
                elif peer_agree >= 0.9:
                    wrong += 1
                    listed.append((fmt, path, "我们没有读出，同行读出"))
                continue
            mine = max(agreement(ours, got[n]) for n in names)
            covered = max(coverage(ours, got[n]) for n in names)
            sims.append(mine)
            covers.append(covered)
            lost = set.intersection(*[joined_words(ours, got[n]) for n in names])
            joined += 1 if lost else 0
            letters = max(same_letters(ours, got[n]) for n in names)
            if (peer_agree >= 0.9 and covered < 0.9 and letters < 0.95) and fmt == "docx":
                gone = _docx_deleted(path)
                kept = {n: _without(got[n], gone) for n in names}
                if gone and max(coverage(ours, kept[n]) for n in names) >= 0.9:
                    theirs_wrong += 1
                    listed.append((fmt, path, "**同行错**：%s 的纯文本把 %d 字已删除的修订（w:del / w:moveFrom）也列出了，Word "
                                   "接受修订后的文档里没有这些字（ECMA-376 第 1 部分 17.13.5）；去掉这些字后我们覆盖同行文字 %.2f"
                                   "（去掉前 %.2f）" % (" / ".join(names), sum(len(g) for g in gone),
                                                        max(coverage(ours, kept[n]) for n in names), covered)))
                    continue
            if (peer_agree >= 0.9 and covered < 0.9 and letters < 0.95) or len(lost) >= 3:
                reason = None if lost else peer_wrong(path, ours, got[names[0]])
                if reason:
                    theirs_wrong += 1
                    listed.append((fmt, path, "**同行错**：" + reason))
                    continue
                wrong += 1
                listed.append((fmt, path, "覆盖同行文字 %.2f（不计顺序 %.2f），一致度 %.2f（同行之间 %.2f）%s" % (
                    covered, letters, mine, peer_agree, "，连词 %d 个：%s" % (len(lost), "、".join(sorted(lost)[:4])) if lost else "")))
        row(fmt, len(paths), read, " / ".join(sorted(set(k for g in peers.values() for k in g))) or "—",
            "%.3f" % statistics.median(sims) if sims else "—", "%.3f" % statistics.median(covers) if covers else "—",
            "%.3f" % statistics.median(between) if between else "—", joined, wrong, theirs_wrong)
    print()
    for fmt, path, why in listed:
        print("- %s %s：%s" % (fmt, os.path.relpath(path, os.path.dirname(os.path.dirname(path))), why))


def _docx_deleted(path):
    """The deleted revision text of a .docx's main part, one string per ``w:del`` / ``w:moveFrom``
    element (whitespace-free, outermost only): what Word's final view leaves out and LibreOffice's
    plain text still prints."""
    import zipfile
    import xml.etree.ElementTree as ET
    w = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
    try:
        with zipfile.ZipFile(path) as zf:
            root = ET.fromstring(zf.read("word/document.xml"))
    except Exception:  # noqa: BLE001 - no evidence to offer
        return []
    out = []

    def walk(el):
        for child in el:
            if child.tag in (w + "del", w + "moveFrom"):
                text = "".join(t.text or "" for t in child.iter() if t.tag in (w + "t", w + "delText"))
                if text.strip():
                    out.append(re.sub(r"\s+", "", text))
            else:
                walk(child)
    walk(root)
    return out


def _without(text, pieces):
    """The peer's whitespace-free text with each piece taken out once (where it shows)."""
    text = _norm(text)
    for piece in pieces:
        at = text.find(piece)
        if at >= 0:
            text = text[:at] + text[at + len(piece):]
    return text


def _pdfminer_pages(path, pages):
    try:
        from pdfminer.high_level import extract_text
    except ImportError:
        return None
    try:
        return extract_text(path, maxpages=pages)
    except Exception:  # noqa: BLE001 - a peer's failure is a result, not ours
        return ""


def row(*cells):
    print("| " + " | ".join(str(c) for c in cells) + " |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", help="folder of .doc files to compare with antiword")
    parser.add_argument("--charsets", help="chardet's tests/ folder: score encoding detection")
    parser.add_argument("--charsets-only", action="store_true", help="only the encoding detection score")
    parser.add_argument("--formats", help="folder of ppt/epub/WordML/Word 95 files: score against LibreOffice")
    parser.add_argument("--formats-only", action="store_true", help="only the --formats score")
    parser.add_argument("--pdfs", help="folder of PDFs: score against pdftotext (CID fonts, columns, text-less pages)")
    parser.add_argument("--pdfs-only", action="store_true", help="only the --pdfs score")
    parser.add_argument("--wrong", action="store_true",
                        help="issue 36's files: ours beside pdftotext / pdfminer / LibreOffice, then stop")
    parser.add_argument("--pdfminer", help="a folder pdfminer.six was pip-installed into (for --wrong, --peers)")
    parser.add_argument("--peers", nargs="+", metavar="DIR",
                        help="folders of PDFs (pdf:DIR) and Word files (doc:DIR: .doc, .docx and .wpd; docx:DIR or "
                             "wpd:DIR: only those): ours beside pdftotext / pdfminer / LibreOffice per format, files "
                             "where ours is wrong and a peer right; then stop")
    args = parser.parse_args()
    if args.pdfminer:
        sys.path.append(args.pdfminer)
    if args.peers:
        peer_scores([d[4:] for d in args.peers if d.startswith("pdf:")],
                    [d[4:] for d in args.peers if d.startswith("doc:")]
                    + [(d.split(":", 1)[1], (d.split(":", 1)[0],)) for d in args.peers
                       if d.split(":", 1)[0] in ("docx", "wpd")])
        return
    if args.wrong:
        wrong_text_scores()
        return
    if args.pdfs:
        pdf_scores(args.pdfs)
        if args.pdfs_only:
            return
    if args.formats:
        format_scores(args.formats)
        if args.formats_only:
            return
    if args.charsets:
        charset_scores(args.charsets)
        if args.charsets_only:
            return
    pdf, doc = make_inputs()
    print("| 文件 | 工具 | 墙钟 s | 说明 | 与对照文本一致度 |")
    print("|---|---|---:|---|---:|")
    took, data = tool(pdf)
    first = data["text"]
    row("300 页 PDF（%.1f MB）" % (os.path.getsize(pdf) / 1e6), "read_document 第一段", "%.2f" % took,
        "%d 字，pages=%s" % (len(first), data.get("pages")), "")
    if shutil.which("pdftotext"):
        t2, full = timed(["pdftotext", "-enc", "UTF-8", pdf, "-"])
        row("", "pdftotext 全文", "%.2f" % t2, "%d 字" % len(full), "%.3f" % agreement(first, full, prefix=True))
    # window by window to the end: each window starts at its own page (page-offset cache)
    times, offset = [], data.get("next_offset")
    while offset is not None:
        took, part = tool(pdf, offset)
        times.append(took)
        offset = part.get("next_offset")
    if times:
        row("", "read_document 逐段读完", "%.2f" % sum(times), "%d 段；第 2 段 %.2f s，最后一段 %.2f s，最慢 %.2f s" % (
            len(times) + 1, times[0], times[-1], max(times)), "")
    took, data = tool(doc)
    first = data["text"]
    row(".doc（%.1f MB）" % (os.path.getsize(doc) / 1e6), "read_document 第一段", "%.2f" % took,
        "%d 字" % len(first), "")
    for name, cmd in (("antiword", ["antiword", "-m", "UTF-8.txt", doc]), ("catdoc", ["catdoc", "-d", "utf-8", doc])):
        if shutil.which(cmd[0]):
            t2, full = timed(cmd)
            row("", "%s 全文" % name, "%.2f" % t2, "%d 字" % len(full), "%.3f" % agreement(first, full, prefix=True))
    from xlakit import documents
    t0 = time.monotonic()
    whole = documents.read(doc)
    row("", "documents.read 全文（进程内）", "%.2f" % (time.monotonic() - t0), "%d 字" % len(whole.text), "")
    if args.corpus and shutil.which("antiword"):
        scores = []
        for path in sorted(glob.glob(os.path.join(args.corpus, "*.doc"))):
            try:
                ours = documents.read(path).text
            except Exception:  # noqa: BLE001 - refused files (encrypted, Word 6) are not compared
                continue
            _t, theirs = timed(["antiword", "-m", "UTF-8.txt", path])
            if theirs.strip():
                scores.append((agreement(ours, theirs), os.path.basename(path)))
        scores.sort()
        print()
        print("语料 %s：%d 个 .doc 与 antiword 的平均一致度 %.3f；最低：%s" % (
            args.corpus, len(scores), sum(s for s, _ in scores) / max(1, len(scores)),
            "，".join("%s %.2f" % (n, s) for s, n in scores[:5])))


if __name__ == "__main__":
    main()
