"""WordPerfect and Word for Windows 1.0/2.0 files (issue 36): recognised by content and read through
LibreOffice (converted to ODT in a scratch folder, then our ODT reader); without LibreOffice the
error says which program opens them. The Word 2.0 file is Apache POI's (tests/fixtures/documents/
poi/README.md); the WordPerfect files are written here by hand after the WordPerfect 5.x layout
(a 16-byte prefix: FF 'WPC', the text's offset, product 1, file type 10, version, key), which is
all LibreOffice's importer needs."""
import os
import struct

import pytest

from conftest import FIXTURES, fail, ok
from xlakit.documents import soffice
from xlakit.sniff import sniff

POI = os.path.join(FIXTURES, "documents", "poi")
NO_OFFICE = {"XLA_SOFFICE": "none"}
needs_office = pytest.mark.skipif(soffice.find_soffice() is None, reason="LibreOffice is not installed")

PARAS = [b"Quarterly report", b"Sales rose by twelve percent in the third quarter.", b"The board meets on Friday."]


def wordperfect(path, key=0, product=1, file_type=10):
    """A WordPerfect 5.x document: the prefix, then ASCII text with hard returns (0x0A)."""
    prefix = b"\xffWPC" + struct.pack("<I", 16) + bytes([product, file_type, 0, 0]) + struct.pack("<H", key) + b"\0\0"
    path.write_bytes(prefix + b"\n".join(PARAS) + b"\n")
    return str(path)


def test_wordperfect_is_recognised_by_content(tmp_path):
    assert sniff(wordperfect(tmp_path / "report.txt")).kind == "wpd"
    assert sniff(wordperfect(tmp_path / "locked.wpd", key=0x1234)).encrypted
    assert sniff(wordperfect(tmp_path / "graphic.wpd", file_type=0x16)).kind == "unknown"


@needs_office
def test_a_wordperfect_document_is_read_through_libreoffice(run, tmp_path):
    data = ok(run("read_document", {"path": wordperfect(tmp_path / "季度报告.wpd")}))
    assert data["format"] == "wpd"
    assert data["text"].split("\n") == [p.decode() for p in PARAS]
    assert any("LibreOffice" in w for w in data["warnings"])


def test_without_libreoffice_the_error_names_the_programs(run, tmp_path):
    err = fail(run("read_document", {"path": wordperfect(tmp_path / "report.wpd")}, extra_env=NO_OFFICE))
    assert "WordPerfect" in err and "LibreOffice" in err and ".docx" in err
    err = fail(run("read_document", {"path": os.path.join(POI, "word2.doc")}, extra_env=NO_OFFICE))
    assert "Word 1.0/2.0" in err and "LibreOffice" in err


def test_a_password_protected_wordperfect_file_says_so(run, tmp_path):
    err = fail(run("read_document", {"path": wordperfect(tmp_path / "locked.wpd", key=0x1234)}))
    assert "加密" in err


@needs_office
def test_word2_is_read_through_libreoffice(run):
    data = ok(run("read_document", {"path": os.path.join(POI, "word2.doc")}))
    assert data["format"] == "doc"
    lines = data["text"].split("\n")
    assert lines[0] == "Member of 3GPP (ARIB)"
    assert "benni.alexander@nokia.com" in lines[1] and "Nokia Japan Co, Ltd" in lines[1]
    assert "Member of 3GPP (CCSA)" in lines
    assert any("LibreOffice" in w for w in data["warnings"])


@needs_office
def test_convert_document_takes_wordperfect_and_word2(run, home, tmp_path):
    """What read_document reads through LibreOffice, convert_document converts: a .wpd to PDF and
    to a .docx Word opens (read back here), a Word 2.0 .doc to .odt."""
    src = wordperfect(tmp_path / "季度报告.wpd")
    data = ok(run("convert_document", {"path": src}))
    assert data["path"].endswith("季度报告.pdf") and data["pages"] == 1 and data["format"] == "pdf"
    data = ok(run("convert_document", {"path": src, "format": "docx"}))
    assert data["path"].endswith("季度报告.docx") and data["pages"] is None and "DOCX" in data["message"]
    back = ok(run("read_document", {"path": data["path"]}))
    assert back["format"] == "docx" and back["text"].split("\n") == [p.decode() for p in PARAS]
    data = ok(run("convert_document", {"path": os.path.join(POI, "word2.doc"), "format": "odt",
                                       "out_path": str(tmp_path / "旧文档.odt")}))
    assert data["path"] == str(tmp_path / "旧文档.odt")
    assert "Member of 3GPP (ARIB)" in ok(run("read_document", {"path": data["path"]}))["text"]


def test_convert_document_without_libreoffice_names_the_programs(run, tmp_path):
    err = fail(run("convert_document", {"path": wordperfect(tmp_path / "report.wpd")}, extra_env=NO_OFFICE))
    assert "WordPerfect" in err and "LibreOffice" in err and "安装" in err
    err = fail(run("convert_document", {"path": os.path.join(POI, "word2.doc"), "format": "docx"}, extra_env=NO_OFFICE))
    assert "Word 1.0/2.0" in err and "Word 97–2003" in err and ".docx" in err
    err = fail(run("convert_document", {"path": wordperfect(tmp_path / "locked.wpd", key=0x1234)}))
    assert "密码" in err


def test_convert_document_targets(run, tmp_path):
    """docx / odt are for text documents only; a file already in the target format is refused."""
    sheet = tmp_path / "表.csv"
    sheet.write_text("a,b\n1,2\n", encoding="utf-8")
    assert "只能转换成 PDF" in fail(run("convert_document", {"path": str(sheet), "format": "docx"}))
    assert "已经是 DOCX" in fail(run("convert_document", {"path": os.path.join(FIXTURES, "sample.docx"), "format": "docx"}))
    assert ".docx 结尾" in fail(run("convert_document", {"path": wordperfect(tmp_path / "r.wpd"), "format": "docx",
                                                          "out_path": str(tmp_path / "r.pdf")}))
