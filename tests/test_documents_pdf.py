"""read_document on PDFs as others wrote them (issue 26), spawned as the host does: no xref
table, fake bold, and paging a long PDF window by window from the page cache."""
import os

from conftest import FIXTURES, fail, ok

DOCS = os.path.join(FIXTURES, "documents")


def read(run, path, **kw):
    return ok(run("read_document", dict({"path": path}, **kw)))


def test_pdf_without_xref_is_rebuilt(run):
    data = read(run, os.path.join(DOCS, "noxref.pdf"))
    assert "Minimal PDF without a cross-reference table" in data["text"]
    assert any("交叉引用表" in w for w in data.get("warnings", [])), data


def test_fake_bold_copies_are_dropped(run):
    text = read(run, os.path.join(DOCS, "fakebold.pdf"))["text"]
    assert text.split("\n") == ["【第 1 页】", "安徽省人民政府", "关于印发通知的通知", "哈哈哈哈", "各单位"]


def test_long_pdf_paged_window_by_window(run, home):
    """Every window equals the same slice of the whole text; after the first call the page
    offsets are cached under ~/.xla/cache/pdf_pages and later windows start at their page."""
    path = os.path.join(DOCS, "long60.pdf")
    whole = read(run, path, max_chars=200000)
    assert whole["pages"] == 60 and whole["next_offset"] is None
    full = whole["text"]
    cache = os.path.join(str(home), ".xla", "cache", "pdf_pages")
    assert len(os.listdir(cache)) == 1
    offset, parts = 0, []
    while offset is not None:
        data = read(run, path, offset=offset, max_chars=2500)
        assert data["text"] == full[offset:offset + len(data["text"])]
        assert data["text"].strip()          # never the blank padding that stands for skipped pages
        parts.append(data["text"])
        offset = data["next_offset"]
    assert "".join(parts) == full
    assert data["total_chars"] == len(full)
    # an offset in the middle of a page (not at a marker) still gives that exact slice
    mid = full.index("【第 41 页】") + 7
    data = read(run, path, offset=mid, max_chars=100)
    assert data["text"] == full[mid:mid + 100]


CID_LINES = ["安徽省人民政府办公厅关于印发通知（2023）", "各市人民政府", "臺灣省政府公報", "東京都の公文書", "대한민국 정부"]


def test_cid_fonts_without_tounicode_read_through_the_collection_table(run):
    """Identity-H/V fonts of Adobe-GB1/CNS1/Japan1/Korea1 with no ToUnicode map: the CIDs go
    through Adobe's tables; pdftotext (its own copy of the tables, poppler-data) agrees."""
    import shutil
    import subprocess
    path = os.path.join(DOCS, "cidfonts.pdf")
    text = read(run, path)["text"]
    assert text.split("\n") == ["【第 1 页】", CID_LINES[0] + " " + CID_LINES[1]] + CID_LINES[2:]
    pdftotext = shutil.which("pdftotext")
    if pdftotext:
        theirs = subprocess.run([pdftotext, path, "-"], capture_output=True, timeout=30).stdout.decode("utf-8")
        if theirs.strip():        # without poppler-data pdftotext prints nothing for these fonts
            flat = "".join(theirs.split())
            assert all("".join(line.split()) in flat for line in CID_LINES), theirs


def test_pages_without_text_or_image_say_what_they_hold(run):
    """Blank, form-only and comment-only pages are not called scans (pypdf-made pages)."""
    data = read(run, os.path.join(DOCS, "bare.pdf"))
    pages = data["text"].split("【第 ")
    assert "年度工作报告" in pages[1]
    assert [p.split("\n", 1)[1] for p in pages[2:]] == ["〔本页是空白页，没有文字〕\n", "〔本页只有表单域，没有文字〕\n",
                                                       "〔本页只有批注，没有文字〕\n", "〔本页是空白页，没有文字〕"]
    assert data["warnings"] == ["这些页没有文字：第 2、5 页是空白页，第 3 页只有表单域，第 4 页只有批注"]
    assert "扫描" not in data["text"] + "".join(data["warnings"])


def test_a_pdf_with_nothing_on_it_is_not_called_a_scan(run):
    err = fail(run("read_document", {"path": os.path.join(DOCS, "nothing.pdf")}))
    assert "扫描版" not in err and "需要先做文字识别" not in err
    assert "共 2 页" in err and "第 1 页是空白页，第 2 页只有表单域" in err


COLUMN_LEFT = ["左栏第一行：本市各区县人民政府", "左栏第二行：要按照通知要求认真", "左栏第三行：做好辖区内的安全",
               "左栏第四行：生产检查工作，发现", "左栏第五行：问题及时整改。"]
COLUMN_RIGHT = ["右栏第一行：各有关单位应当在", "右栏第二行：规定时间内报送材料", "右栏第三行：逾期未报送的视为",
                "右栏第四行：放弃。"]


def test_columns_drawn_row_by_row_read_column_by_column(run):
    text = read(run, os.path.join(DOCS, "columns_rows.pdf"))["text"]
    page1, page2 = text.split("\n【第 2 页】\n")
    assert page1.split("\n") == (["【第 1 页】", "关于开展安全生产检查的通知"] + COLUMN_LEFT + COLUMN_RIGHT +
                                 ["特此通知。市安全生产委员会办公室"])
    # a table drawn the same way keeps its rows
    assert page2.split("\n") == ["单位 检查次数 隐患", "一区 12 3", "二区 9 1", "三区 15 4"]


def test_libreoffice_two_column_section_stays_as_drawn(run):
    """LibreOffice draws a column at a time: the text is already in order and is left alone."""
    lines = read(run, os.path.join(DOCS, "columns.pdf"))["text"].split("\n")
    assert lines[:3] == ["【第 1 页】", "两栏排版的通知", "左栏第1 段：本市各区县人民政府要按照通知要"]
    assert lines.index("右栏第1 段：各有关单位应当在规定时间内报送") == 12
    assert lines[-1] == "正文结束，以下单栏。"


def test_contents_page_with_dot_leaders_is_text_not_a_scan(run):
    """Issue 36.1: a table of contents (dot leaders, page numbers) has a good text layer and no
    picture: it is read as text, never sent to OCR as a "scan"."""
    data = read(run, os.path.join(DOCS, "toc.pdf"))
    assert "ocr" not in data, data
    assert not any("扫描" in w or "OCR" in w for w in data.get("warnings", [])), data
    lines = data["text"].split("\n")
    assert lines[:2] == ["【第 1 页】", "目录"]
    assert lines[2].startswith("第一章 总则....") and lines[2].endswith("2")
    assert lines[10].startswith("第九章 风险分析") and lines[10].endswith(".10")
    assert lines[11].startswith("第十章 附则") and lines[11].endswith(".11")


def test_fake_bold_inside_one_line_is_dropped_real_repeats_kept(run):
    """Issue 36.3: copies inside one TJ array, a line drawn twice after a tiny Td, glyph-by-glyph
    Tj/Td copies: each shown once; "哈哈哈哈" (drawn once, moving along) stays."""
    text = read(run, os.path.join(DOCS, "fakebold_inline.pdf"))["text"]
    assert text.split("\n") == ["【第 1 页】", "安徽省人民政府", "本科学历", "各单位", "哈哈哈哈"]


def test_spacing_accents_join_their_letters_and_tight_word_gaps_stay_spaces(run):
    """Issue 36.4: accents drawn as glyphs of their own ("prote´ge´") become one letter (NFC),
    after or before the letter; an acute used as an apostrophe stays; word gaps made only by TJ
    adjustments (0.15 em, no space glyph) stay spaces. pdftotext leaves the accents apart."""
    lines = read(run, os.path.join(DOCS, "accents.pdf"))["text"].split("\n")
    assert lines == ["【第 1 页】", "La protégée du ministre a été nommée, don\u00b4t", "Pěníž Naïve École",
                     "shared between doctors and institutions"]


def test_embedded_truetype_without_or_with_a_wrong_map_reads_through_the_font(run):
    """Issue 36.2: codes that are glyph numbers of an embedded TrueType font. With no ToUnicode
    (a subset: "Peněžní" came out "3HQČåQt") and with a ToUnicode that maps each code to itself
    (黎荣 came out 哾㦓-like): the font's own cmap, read backwards, names the characters, as
    pdfminer does (pdftotext shows the same garbage we used to)."""
    text = read(run, os.path.join(DOCS, "glyphs_czech.pdf"))
    assert "ocr" not in text, text
    assert text["text"].split("\n") == ["【第 1 页】", "Peněžní prostředky", "Příliš žluťoučký kůň"]
    text = read(run, os.path.join(DOCS, "glyphs_chinese.pdf"))["text"]
    assert text.split("\n") == ["【第 1 页】", "买方：黎荣", "卖方：张伟", "合同金额：壹万元整"]


def test_predefined_japanese_cmaps_pypdf_lacks(run):
    """Issue 36.2: Type0 fonts with a predefined CMap as encoding and no ToUnicode: raw JIS (H,
    which came out as control pictures ␢␤␦), EUC-JP, Shift-JIS; nothing on stderr."""
    result = run("read_document", {"path": os.path.join(DOCS, "cjk_cmaps.pdf")})
    text = ok(result)["text"]
    assert text.split("\n") == ["【第 1 页】", "あいうえお、東京都", "かきくけこ。大阪府", "さしすせそ 名古屋"]
    assert "encoding" not in result.stderr, result.stderr


def test_a_text_layer_that_reads_as_garbage_is_not_shown_as_right(run):
    """Issue 36.2: when no repair applies (the map sends codes to half a dozen scripts and there is
    no font file to read), the answer says the page's text is not to be trusted. The other PDF
    fixtures (CJK, kana, Hangul, accents) raise no such warning."""
    data = read(run, os.path.join(DOCS, "garbled.pdf"))
    assert any("乱码" in w and "第 1 页" in w for w in data.get("warnings", [])), data
    for name in ("cidfonts.pdf", "cjk_cmaps.pdf", "accents.pdf", "glyphs_chinese.pdf", "glyphs_czech.pdf", "report.pdf",
                 "toc.pdf", "word_gaps.pdf", "type1_encoding.pdf", "senate_cut.pdf"):
        other = read(run, os.path.join(DOCS, name))
        assert not any("乱码" in w for w in other.get("warnings", [])), name


def test_latin_text_decoded_through_the_wrong_table_is_not_shown_as_right(run):
    """Issue 36: English whose map gives each character the code minus 29 ("3D\\PHQW LV GXH" for
    "Payment is due") is made of ordinary letters, so the CJK signs saw nothing; too few vowels in
    capitals now say the page is not to be trusted."""
    data = read(run, os.path.join(DOCS, "garbled_latin.pdf"))
    assert data["text"].startswith("【第 1 页】\n3D\\PHQW LV GXH"), data["text"]
    assert any("乱码" in w and "第 1 页" in w for w in data.get("warnings", [])), data


def test_latin_garble_signs():
    """latin_garble on strings: real European text (Czech consonant strings in lower case,
    camelCase, part numbers) passes; the minus-29 shift, a substitution with capitals in mid-word
    and digit-studded words do not."""
    from xlakit.documents.latin_garble import garbled
    czech = "Příliš žluťoučký kůň úpěl ďábelské ódy. Čtvrtý čtverec a strč prst skrz krk. Peněžní prostředky. " * 3
    english = ("The iPhone and PowerPoint files from McDonald's were sent as PDFs with part numbers "
               "A4-220, H2O, COVID-19 and DHAW20190001 to the accounts office in writing. ") * 3
    assert not garbled(czech) and not garbled(english)
    shifted = "".join(chr(ord(c) - 29) if c.isalpha() else c for c in english)
    assert garbled(shifted)
    assert garbled("o(hô..i.p3xSTRxtT3xR2tTOR /xNhyM/TTw2W 9nhmmmimm02vxS0/TxV2tORR2SPON32NTSMxTwh/0V/ROR "
                   "n9hnnnimp02vxS0/TxV2tORR2SPON32NTTOyU0in1/N3uROM/UvinnTO/Uvinô/RM2Rh32R2z/")
    assert not garbled("DOCUMENT NO. DATE PAYEE NAME")          # too little to judge


def test_type1_font_program_encoding_does_not_override_the_dictionary(run):
    """Issue 36: a simple Type1 font whose embedded program has an encoding of its own. The
    dictionary's /WinAnsiEncoding wins (pypdf read the program's: "aétt€eCf,Hle1€1fte2o"); with
    /Differences and no /BaseEncoding the program is the base and the Differences win (pypdf:
    "Tax Q5 net"); with no /Encoding the program's own (uniXXXX names) is used."""
    data = read(run, os.path.join(DOCS, "type1_encoding.pdf"))
    assert data["text"].split("\n") == ["【第 1 页】", "Hello Café, total €12", "Tax €5 net", "Café 中文"]
    assert not data.get("warnings"), data


def test_cff_subset_fonts_with_their_own_encoding_read_by_the_dictionary(run):
    """Issue 36, pdfplumber's senate-expenditures.pdf (cut): CFF subset fonts whose dictionaries
    say /MacRomanEncoding. pypdf reads the programs' encodings whenever fontTools is importable
    (a user's Python with matplotlib has it) and printed "/xNhyM/TTw2W" for "BAIN, J MATTHEW".
    Run with this interpreter, which has fontTools when the test environment does."""
    import sys
    result = run("read_document", {"path": os.path.join(DOCS, "senate_cut.pdf")}, python=sys.executable)
    data = ok(result)
    lines = data["text"].split("\n")
    assert "BAIN, J MATTHEW" in lines and "VELEZ-GREEN, ALEXANDER J" in lines, lines
    assert lines[1].startswith("DOCUMENT NO. PAYEE NAME"), lines
    assert not data.get("warnings"), data


def test_form_xobjects_drawn_twice_are_read_twice(run):
    """Issue 36, pdfminer's issue-1113 sample: pypdf reports a form's text in the form's own space,
    so a label form stamped at two places, and two forms that draw each other (the loop refused
    after one round), read as fake-bold copies and lost their second drawing. Both peers read
    each twice; so do we."""
    text = read(run, os.path.join(DOCS, "forms.pdf"))["text"]
    assert text.split("\n") == ["【第 1 页】", "PAID", "PAID", "Hello world", "Hello world"], text


def test_word_gaps_pypdf_loses_are_spaces_again(run):
    """Issue 36.4 (pdfplumber's issue-598 sample, an IRS form among pdfminer's): a Type0 font with
    no space glyph spaced by TJ offsets (English in a Chinese PDF), a form drawn row by row across
    two columns, table cells drawn right to left. pypdf read "doctorsandinstitutions",
    "amountincome", "ScribbleSmooth"; now the words stay apart and the columns come in order."""
    lines = read(run, os.path.join(DOCS, "word_gaps.pdf"))["text"].split("\n")
    assert lines[:2] == ["【第 1 页】", "人工智能帮助 doctors and institutions"]
    assert "income is from sources outside the" in lines and "treaty, do not include the amount" in lines
    assert "Straight Scribble" in lines and "Smooth Scribble" in lines
    assert lines.index("United States. If you are a resident") < lines.index("treaty, do not include the amount")


def test_pieces_of_one_line_that_do_not_touch_are_spaced():
    from xlakit.documents.pdf_text import _spaced
    cell = [("Handgun", (151.2, 534.7), 0.7, 5.76, None), ("", (151.2, 534.7), 0.7, 69.1, None),
            ("Long", (199.0, 534.7), 0.7, 5.76, None)]
    assert _spaced(cell) == ("Handgun Long", 1)
    back = [("Straight", (430, 620), 1, 12, None), ("Smooth", (89, 620), 1, 12, None)]
    assert _spaced(back)[0] == "Straight Smooth"
    touching = [("Scrib", (100, 500), 1, 10, None), ("ble", (127.5, 500), 1, 10, None),
                ("安徽", (100, 480), 1, 10, None), ("省", (120, 480), 1, 10, None)]
    assert _spaced(touching) == ("Scribble安徽省", 0)
