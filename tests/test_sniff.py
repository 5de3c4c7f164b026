"""xlakit.sniff on every committed fixture and on hostile inputs (zip bombs, truncation, junk)."""
import io
import os
import zipfile

import pytest

from conftest import FIXTURES
from xlakit.sniff import sniff, Kind

DOCS = os.path.join(FIXTURES, "documents")

# What each fixture is by content (files not listed only have to sniff without error).
EXPECTED = {
    "dates.xlsx": "xlsx", "encrypted.xlsx": "ole", "fake_html.xls": "html", "formulas_lo.xls": "xls",
    "garbage.xlsx": "unknown", "gbk.csv": "text", "lo_html.xls": "html", "sample.doc": "doc",
    "sample.docx": "docx", "sample.ods": "ods", "sample.pdf": "pdf", "truncated.xlsx": "xlsx",
    "utf16.txt": "text", "utf8bom.csv": "text", "xlsx_renamed.xls": "xlsx", "empty.csv": "empty",
    "documents/report.docx": "docx", "documents/report.doc": "doc", "documents/report.odt": "odt",
    "documents/report.rtf": "rtf", "documents/report.pdf": "pdf", "documents/report.html": "html",
    "documents/report.fodt": "xml", "documents/gbk.rtf": "rtf", "documents/gbk.html": "html",
    "documents/scanned.pdf": "pdf", "documents/password.pdf": "pdf", "documents/slides.pptx": "pptx",
    "documents/with_image.docx": "docx", "documents/poi/Word6.doc": "doc",
    "documents/poi/PasswordProtected.doc": "doc", "documents/make_fixtures.py": "text",
}


def _all_fixtures():
    for root, _dirs, names in os.walk(FIXTURES):
        for name in sorted(names):
            path = os.path.join(root, name)
            yield os.path.relpath(path, FIXTURES).replace(os.sep, "/")


@pytest.mark.parametrize("rel", sorted(_all_fixtures()))
def test_every_fixture(rel):
    path = os.path.join(FIXTURES, rel)
    kind = sniff(path)
    assert isinstance(kind, Kind) and kind.kind and kind.detail
    assert kind.size == os.path.getsize(path)
    if rel in EXPECTED:
        assert kind.kind == EXPECTED[rel], (rel, kind)
    # bytes and file objects give the same answer as the path
    with open(path, "rb") as fh:
        data = fh.read()
    assert sniff(data).kind == kind.kind
    assert sniff(io.BytesIO(data)).kind == kind.kind


def test_flags_and_names():
    enc = sniff(os.path.join(FIXTURES, "encrypted.xlsx"))
    assert enc.encrypted and "加密" in enc.detail
    trunc = sniff(os.path.join(FIXTURES, "truncated.xlsx"))
    assert trunc.damaged and "不完整" in trunc.detail
    doc = sniff(os.path.join(DOCS, "report.doc"))
    assert "worddocument" in doc.names and doc.base == "doc"
    assert "word/document.xml" in sniff(os.path.join(DOCS, "report.docx")).names
    assert sniff(os.path.join(DOCS, "report.odt")).mime == "application/vnd.oasis.opendocument.text"


def test_wps_and_et_by_stream_names(tmp_path):
    """Kingsoft WPS writes Word/Excel binary with an extra WpsCustomData stream."""
    from xlakit import sniff as sn
    assert sn._classify_ole(frozenset(["worddocument", "1table", "wpscustomdata"])).kind == "wps"
    assert sn._classify_ole(frozenset(["worddocument", "1table", "wpscustomdata"])).base == "doc"
    assert sn._classify_ole(frozenset(["workbook", "wpscustomdata"])).kind == "et"
    assert sn._classify_ole(frozenset(["powerpoint document"])).kind == "ppt"
    assert sn._classify_ole(frozenset(["matost", "contents"])).kind == "ole"


def test_zip_bomb_is_not_inflated(tmp_path):
    """A member that inflates to 300 MB: sniff reads the central directory only."""
    path = tmp_path / "bomb.docx"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<Types/>")
        with zf.open("word/document.xml", "w", force_zip64=True) as fh:
            block = b"\0" * (1 << 20)
            for _ in range(300):
                fh.write(block)
    assert os.path.getsize(path) < 2 << 20
    kind = sniff(str(path))
    assert kind.kind == "docx" and not kind.damaged


def test_content_types_bomb(tmp_path):
    """Even the one descriptor part sniff may read is capped."""
    path = tmp_path / "ct.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", b"<Types>" + b" " * (100 << 20))
    assert sniff(str(path)).kind == "zip"


def test_text_kinds_and_markup():
    assert sniff(b"").kind == "empty"
    assert sniff(b"\xef\xbb\xbf \r\n").kind == "empty"
    assert sniff("你好，世界\n第二行".encode("gbk")).encoding == "gb18030"
    assert sniff("你好".encode("utf-16")).kind == "text"
    assert sniff(b"<!DOCTYPE html><html><body>x</body></html>").kind == "html"
    word_html = b'<html xmlns:w="urn:schemas-microsoft-com:office:word"><body><p>x</p></body></html>'
    assert "Word" in sniff(word_html).detail
    mht = b"MIME-Version: 1.0\r\nContent-Type: multipart/related; boundary=\"b\"\r\n\r\n--b\r\n"
    assert sniff(mht).kind == "mhtml"
    assert sniff(b"{\\rtf1\\ansi hello}").kind == "rtf"
    assert sniff(b"<?xml version='1.0'?><root/>").kind == "xml"
    assert sniff(b"\x89PNG\r\n\x1a\n" + b"\0" * 20).kind == "png"
    assert sniff(b"\xff\xd8\xff\xe0" + b"\0" * 20).kind == "jpeg"
    assert sniff(b"\x1f\x8b\x08" + b"\0" * 20).kind == "gzip"
    assert sniff(bytes(range(256)) * 4).kind == "unknown"


def test_damaged_ole_does_not_raise():
    head = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\xff" * 600
    kind = sniff(head)
    assert kind.kind == "ole" and kind.damaged


def test_huge_sparse_file_is_cheap(tmp_path):
    """A 2 GB sparse file of zeros: only the prefix is read."""
    path = tmp_path / "big.bin"
    with open(path, "wb") as fh:
        fh.seek((2 << 30) - 1)
        fh.write(b"\0")
    assert sniff(str(path)).kind == "unknown"


def test_a_bom_alone_is_empty_and_damaged_utf8_is_still_text():
    """Found by the table readers: a BOM-only csv came back "unknown", and a long UTF-8 export
    with a few broken bytes was refused as binary."""
    from xlakit.sniff import sniff as _sniff
    for raw in (b"\xef\xbb\xbf", b"\xef\xbb\xbf\r\n", b"\xff\xfe"):
        assert _sniff(raw).kind == "empty", raw
    good = ("日期,金额,备注\n" + "2024-01-01,100,正常的中文备注内容\n" * 500).encode("utf-8")
    damaged = good[:3000] + b"\xff\xfe" + good[3000:]
    kind = _sniff(damaged)
    assert kind.kind == "text" and kind.encoding == "utf-8"
    assert _sniff(b"\x00\x01\x02binary\xff" * 100).kind == "unknown"
