"""read_document on text written in the encodings people still send (issue 26), spawned as the
host does: every fixture must come back exactly as its UTF-8 source, never as GB18030 garbage,
never refused as binary. Also the RTF quirks of Chinese Word and lone surrogates (which used to
make the tool print nothing)."""
import os

import pytest

from conftest import FIXTURES, fail, ok

DOCS = os.path.join(FIXTURES, "documents")
ENC = os.path.join(DOCS, "encodings")


def source(name):
    with open(os.path.join(ENC, "src", name), encoding="utf-8") as fh:
        return fh.read()


def read(run, path, **kw):
    return ok(run("read_document", dict({"path": path}, **kw)))


@pytest.mark.parametrize("name,src,label", [
    ("cp1252.txt", "pt.txt", "Windows-1252"),
    ("cp866.txt", "ru.txt", "CP866"),
    ("koi8_r.txt", "ru.txt", "KOI8-R"),
    ("cp1256.txt", "ar.txt", "Windows-1256"),
    ("shift_jis.csv", "ja.txt", "Shift-JIS"),
    ("euc_kr.txt", "ko.txt", "EUC-KR"),
    ("ebcdic_cp500.txt", "en_ebcdic.txt", "EBCDIC"),
])
def test_legacy_text_encodings(run, name, src, label):
    data = read(run, os.path.join(ENC, name))
    assert data["text"] == source(src).strip("\n"), (name, data["text"][:200])
    assert data["format"] == "text" and label in data["format_name"], data["format_name"]
    assert "\ufffd" not in data["text"]


def test_big5_page_without_charset(run):
    data = read(run, os.path.join(ENC, "big5.html"))
    assert data["title"] == "公司年度報告"
    assert "本年度營業額較去年成長百分之十二，主要來自臺灣與香港市場的新客戶。" in data["text"]


def test_page_that_lies_about_its_charset(run):
    """<meta charset="utf-8"> on GBK bytes: the bytes win."""
    data = read(run, os.path.join(ENC, "gbk_declared_utf8.html"))
    assert data["title"] == "通知"
    assert "各部门请于本周五前提交年度总结，逾期将影响考核结果。" in data["text"]
    assert "\ufffd" not in data["text"]


def test_gbk_still_gbk(run):
    """The Chinese default did not move: GBK text and pages read as before."""
    text = read(run, os.path.join(DOCS, "gbk.html"))["text"]
    assert "关于国庆节放假安排的通知" in text and "\ufffd" not in text


def test_binary_is_still_refused(run, tmp_path):
    junk = tmp_path / "blob.dat"
    junk.write_bytes(bytes(range(1, 256)) * 40 + b"\x00\x01\x02")
    assert "读不了" in fail(run("read_document", {"path": str(junk)}))


def test_rtf_quirks_of_chinese_word(run):
    text = read(run, os.path.join(DOCS, "quirks.rtf"))["text"]
    lines = text.split("\n")
    assert lines[0] == "软件需求说明书"
    assert "Version 1.0 · Draft（草稿）" in lines          # \'b7 under a \fcharset0 font is cp1252
    assert "第一段说明文字 星号之后的文字不能丢" in lines     # a stray \* mid-group drops nothing
    assert "西文字体下的中文" in lines                       # a whole GBK run under a Western font
    assert "emoji \U0001f600 lone \ufffd end" in lines     # pair joined, lone surrogate replaced
    assert "mail gateway" not in text and "\x00" not in text  # nothing after the final brace


def test_lone_surrogate_in_pdf_text(run):
    """A ToUnicode map that yields U+D800: the answer is printed (U+FFFD), not swallowed."""
    data = read(run, os.path.join(DOCS, "surrogate.pdf"))
    assert "中文\ufffd" in data["text"]


NOTICE = "关于春节放假的通知\r\n各部门：根据国务院办公厅通知，2025年春节放假安排如下。\r\n一、1月28日至2月4日放假调休，共8天。\r\n"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_notice_without_bom_is_text(run, tmp_path, codec):
    """Issue 36: a Chinese notice in UTF-16 with no byte-order mark has almost no NUL bytes, so a
    NUL count does not call it UTF-16; it used to be refused as binary."""
    path = tmp_path / "通知.txt"
    path.write_bytes(NOTICE.encode(codec))
    data = read(run, str(path))
    assert data["text"] == NOTICE.replace("\r\n", "\n").strip()
    assert any("BOM" in w for w in data["warnings"])


def test_page_with_a_stray_nul_byte_is_read_as_a_page(run, tmp_path):
    """The same page with one NUL byte reads as it does without it (it used to be refused)."""
    page = ('<!DOCTYPE html><html><head><meta charset="utf-8"><title>通知</title></head><body>'
            '<h1>放假通知</h1><p>各部门：春节放假安排如下。</p>%s<p>第二段</p></body></html>')
    (tmp_path / "clean.html").write_bytes((page % "").encode("utf-8"))
    (tmp_path / "nul.html").write_bytes((page % "\x00").encode("utf-8"))
    clean, data = read(run, str(tmp_path / "clean.html")), read(run, str(tmp_path / "nul.html"))
    assert data["format"] == "html" and data["text"] == clean["text"] == "# 放假通知\n各部门：春节放假安排如下。\n第二段"
    assert data["title"] == clean["title"]


def test_page_in_an_encoding_the_sniffer_does_not_try_is_a_page_not_its_tags(run, tmp_path):
    """cp1251 bytes labelled gb2312: decoded right and read as a page (no tags in the text)."""
    path = tmp_path / "news.html"
    path.write_bytes('<html><head><meta charset="gb2312"><title>Новости</title></head><body><h1>Отчёт</h1>'
                     '<p>Годовой отчёт компании за прошлый год.</p></body></html>'.encode("cp1251"))
    data = read(run, str(path))
    assert data["format"] == "html"
    assert data["text"] == "# Отчёт\nГодовой отчёт компании за прошлый год."
