"""Pipe tables as WordprocessingML tables whose columns are sized by their content.

Why: splitting the text width evenly broke numbers and codes mid-token ("3,124,50 / 0",
"HT- / 2024- / 01001"), wrapped company names every three characters and made 12 rows take three
landscape pages. Here every column gets at least the width of its longest unbreakable token
(a number, a date, a code: no CJK, no space), a text column at least about five characters, and
the rest of the text width goes to the columns whose content wants more, in proportion to what
they lack; a table whose content fits is widened in proportion to its content. The widths are
fixed (``tblLayout fixed``) so Word, WPS and LibreOffice all keep them.

A table that does not fit at the body size is set one size smaller (五号 → 小五, 三号 → 四号)
before its text columns go below five characters. A table that still does not fit a portrait
page but fits a landscape one gets a landscape section of its own (``turn_wide_tables``: Word
users turn that page rather than read a table in 7 pt); one too wide even for landscape goes
there too, a size smaller, and the answer says it may run past the margin. Rows never split across a page (``cantSplit``), the header row repeats on every page
(``tblHeader``), numbers are right-aligned as in a finance table and a 合计 row is bold.
"""
import re

CELL_MARGINS = 216                     # twips: 108 left + 108 right (the table style's cell margins)
_TOKEN = re.compile(r"[^\s\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]+")
_NUMBER = re.compile(r"^[\s(（]*[-+−]?[¥$￥]?\s*\d[\d,，]*(\.\d+)?\s*(%|％|元|万元|亿元|万|亿)?[)）]?\s*$")


def text_em(text):
    """Width of ``text`` in ems of the body size: CJK and full-width one, Latin by rough class,
    sized for the widest face it may be drawn in (DejaVu Serif where Times New Roman is missing:
    digits 0.64 em against Times' 0.5), so a number never breaks anywhere."""
    em = 0.0
    for ch in text:
        o = ord(ch)
        if o >= 0x2e80:
            em += 1.0
        elif ch.isdigit() or ch in "+$%":
            em += 0.64
        elif ch in ".,:;":
            em += 0.36
        elif ch in "-/()":
            em += 0.42
        elif ch.isupper():
            em += 0.76
        elif ch == " ":
            em += 0.32
        else:
            em += 0.58
    return em


def is_number(text):
    return bool(_NUMBER.match(text or "")) and any(ch.isdigit() for ch in text)


BOLD = 1.1                  # bold digits and letters are about a tenth wider (DejaVu Serif Bold 0.70 em)


def bold_rows(rows, header, plain):
    """Indexes of the rows drawn bold: the header and the 合计/总计/小计 rows."""
    return set(n for n, row in enumerate(rows) if (header and n == 0) or (n and _is_total(row, plain)))


def _is_total(row, plain):
    return bool(row) and plain(row[0]).replace(" ", "") in ("合计", "总计", "小计", "总合计", "合计：")


def column_widths(rows, total, em, plain, with_soft=False, bold=()):
    """Widths in twips of the table's columns (``total``: the text width, ``em``: the body font
    size in twips, ``plain``: inline markup to text, ``bold``: indexes of bold rows, measured
    wider); ``with_soft``: (widths, True when every text column keeps about five characters a line)."""
    ncols = max((len(r) for r in rows), default=1)
    natural = [0.0] * ncols
    least = [0.0] * ncols
    hard = [0.0] * ncols
    for n, row in enumerate(rows):
        k = BOLD if n in bold else 1.0
        for c in range(ncols):
            cell = plain(row[c]) if c < len(row) else ""
            for line in cell.replace("<br/>", "\n").replace("<br>", "\n").split("\n"):
                natural[c] = max(natural[c], text_em(line) * k)
                tokens = [text_em(t) * k for t in _TOKEN.findall(line)]
                hard[c] = max([hard[c]] + tokens)
                least[c] = max([least[c]] + tokens)
                # a CJK text column keeps about five characters a line (not a name every 3 characters)
                least[c] = max(least[c], min(text_em(line), 5.0))
    pad = CELL_MARGINS + em * 0.5
    natural = [n * em + pad for n in natural]
    hard = [min(max(t * em + pad, em * 2 + pad), n) for t, n in zip(hard, natural)]
    soft = [min(max(l * em + pad, h), n) for l, h, n in zip(least, hard, natural)]
    roomy = sum(soft) <= total
    if sum(natural) <= total:
        scale = total / float(sum(natural))
        widths = [n * scale for n in natural]
    elif sum(hard) >= total:
        widths = hard       # wider than the page rather than a number broken in two
    else:
        # from the hard minimum up to about five characters a text column, then up to the content
        widths = _fill(_fill(list(hard), soft, total), natural, total)
    widths = [int(round(w)) for w in widths]
    return (widths, roomy) if with_soft else widths


def fits(rows, total, em, plain, header=False):
    """True when the table reads at ``total`` twips wide: every number and code whole and every
    text column about five characters a line, at the body size or one size smaller."""
    bold = bold_rows(rows, header, plain)
    if column_widths(rows, total, em, plain, with_soft=True, bold=bold)[1]:
        return True
    smaller = em * (18.0 / 21 if em < 300 else 28.0 / 32)
    return column_widths(rows, total, smaller, plain, with_soft=True, bold=bold)[1]


def turn_wide_tables(blocks, layout, plain, em):
    """``blocks`` with a landscape section around each table too wide for a portrait page
    (consecutive such tables share it), and Chinese notes for the answer. A table too wide even
    for landscape is set there a size smaller, with a note that it may run past the margin. The
    explicit ``<!-- landscape -->`` / ``<!-- portrait -->`` lines are followed as written."""
    out, notes = [], []
    orientation = layout.orientation
    portrait, landscape = layout.text_size("portrait")[0], layout.text_size("landscape")[0]
    turned = False
    tables = 0
    for block in blocks:
        if block[0] == "orient":
            if turned:
                out.append(("orient", "portrait"))
                turned = False
            orientation = block[1]
        elif block[0] == "table":
            tables += 1
            cols = max(len(r) for r in block[1]) if block[1] else 0
            if orientation == "portrait" and not fits(block[1], portrait, em, plain, block[2]):
                if not turned:
                    out.append(("orient", "landscape"))
                    turned = True
                notes.append("第 %d 个表格有 %d 列，纵向页面放不下，已自动放到横向页面（单独一节，后面的内容回到纵向）"
                             % (tables, cols))
            if not fits(block[1], landscape if (turned or orientation == "landscape") else portrait, em, plain, block[2]):
                notes.append("第 %d 个表格有 %d 列，横向页面也放不下：已缩小一号字，数字和编号不断开，表格可能超出版心；"
                             "可以删掉不必要的列，或拆成两张表" % (tables, cols))
            out.append(block)
            continue
        elif turned:
            out.append(("orient", "portrait"))
            turned = False
            if block[0] == "pagebreak":
                continue            # the section break starts the new page already
        out.append(block)
    if turned:
        out.append(("orient", "portrait"))
    return out, notes


def _fill(widths, goal, total):
    """``widths`` grown towards ``goal`` while they sum to less than ``total``: the columns that
    lack the most get the most (water-filling), none beyond its goal."""
    left = total - sum(widths)
    for _round in range(len(widths) + 1):
        wanting = [c for c in range(len(widths)) if goal[c] - widths[c] > 0.5]
        if not wanting or left <= 0.5:
            break
        lack = sum(goal[c] - widths[c] for c in wanting)
        given = 0.0
        for c in wanting:
            add = min(goal[c] - widths[c], left * (goal[c] - widths[c]) / lack)
            widths[c] += add
            given += add
        left -= given
    return widths


def table_xml(rows, header, styles, para_xml, plain, total=8306, em=210):
    """The w:tbl of a pipe table; ``para_xml(text, ppr, bold_all)`` writes one cell paragraph."""
    ncols = max((len(r) for r in rows), default=1)
    # a table too wide for its text size at the body size is set a size smaller (五号 -> 小五, 三号
    # -> 四号), as a person does in Word, before its text columns shrink below five characters
    size = None
    bold = bold_rows(rows, header, plain)
    widths, roomy = column_widths(rows, total, em, plain, with_soft=True, bold=bold)
    if not roomy:
        smaller = em * (18.0 / 21 if em < 300 else 28.0 / 32)
        small_widths, small_roomy = column_widths(rows, total, smaller, plain, with_soft=True, bold=bold)
        if small_roomy or sum(small_widths) <= total < sum(widths):
            widths, size = small_widths, int(round(smaller / 10.0))
    border = "".join('<w:%s w:val="single" w:sz="4" w:space="0" w:color="auto"/>' % side
                     for side in ("top", "left", "bottom", "right", "insideH", "insideV"))
    parts = ['<w:tbl><w:tblPr><w:tblStyle w:val="%s"/><w:tblW w:w="%d" w:type="dxa"/>'
             '<w:tblBorders>%s</w:tblBorders><w:tblLayout w:type="fixed"/><w:tblLook w:val="04A0" w:firstRow="%d" '
             'w:lastRow="0" w:firstColumn="0" w:lastColumn="0" w:noHBand="0" w:noVBand="1"/></w:tblPr><w:tblGrid>%s</w:tblGrid>'
             % (styles.table, sum(widths), border, 1 if header else 0, "".join('<w:gridCol w:w="%d"/>' % w for w in widths))]
    for n, row in enumerate(rows):
        head = header and n == 0
        # a 合计/总计/小计 row reads as the table's result: bold, like the header
        total = not head and _is_total(row, plain)
        cells = list(row) + [""] * (ncols - len(row))
        parts.append("<w:tr><w:trPr><w:cantSplit/>%s</w:trPr>" % ("<w:tblHeader/>" if head else ""))
        for c, cell in enumerate(cells):
            ppr = styles.cell_ppr
            if head:
                ppr += '<w:jc w:val="center"/>'
            elif is_number(plain(cell)):
                ppr += '<w:jc w:val="right"/>'
            para = para_xml(cell.replace("<br>", "\n").replace("<br/>", "\n"), ppr, head or total)
            if size:
                para = _sized(para, size)
            parts.append('<w:tc><w:tcPr><w:tcW w:w="%d" w:type="dxa"/></w:tcPr>%s</w:tc>' % (widths[c], para))
        parts.append("</w:tr>")
    parts.append("</w:tbl>")
    return "".join(parts)


def _sized(para, half_points):
    """A cell paragraph with every run (and the paragraph mark) at ``half_points``: w:sz is the
    last property our runs carry, so it goes just before </w:rPr>."""
    sz = '<w:sz w:val="%d"/><w:szCs w:val="%d"/>' % (half_points, half_points)
    para = para.replace("</w:rPr>", sz + "</w:rPr>")
    para = re.sub(r"<w:r>(?!<w:rPr>)", "<w:r><w:rPr>%s</w:rPr>" % sz, para)
    if "<w:pPr>" in para:
        para = para.replace("</w:pPr>", "<w:rPr>%s</w:rPr></w:pPr>" % sz, 1)
    else:
        para = para.replace("<w:p>", "<w:p><w:pPr><w:rPr>%s</w:rPr></w:pPr>" % sz, 1)
    return para
