"""Text the way Chinese office files and pages come: decoding with a reason, width, cutting.

- :func:`detect_encoding` / :func:`decode`: a BOM decides; else UTF-16 without BOM by the parity
  of its zero bytes; else strict UTF-8 (a damaged spot in a long UTF-8 export is still UTF-8);
  else the legacy encodings are *scored* (see :func:`guess_legacy`): GB18030 (what Chinese Excel,
  WPS and Notepad write as "ANSI"), Big5, Shift-JIS, EUC-JP, EUC-KR, the Windows code pages
  1250–1257, KOI8, cp866, ISO-8859-x, Thai, EBCDIC. GB18030 decodes almost any pair of high bytes,
  so "the first that decodes" read Western and Big5 text as Chinese garbage; each candidate's
  decoded text is scored instead, and GB18030 wins only when it scores best. A declared charset
  (``<meta>``, an XML declaration) is trusted only when the bytes agree with it.
  The reason is returned so a tool can tell the user what it assumed.
- :func:`width`: display width with CJK and full-width characters counted double (column widths,
  the CLI's tables, chart labels).
- :func:`cut` / :func:`cut_lines`: shorten long text and long single lines with a visible marker
  that says how much was left out, so one minified line cannot eat a whole answer.
"""
import codecs
import collections
import re
import unicodedata

_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

LABELS = {"utf-8-sig": "UTF-8（带 BOM）", "utf-8": "UTF-8", "gb18030": "GBK/GB18030", "utf-16": "UTF-16",
          "utf-16-le": "UTF-16LE", "utf-16-be": "UTF-16BE", "utf-32": "UTF-32", "ascii": "ASCII",
          "utf-32-le": "UTF-32LE", "utf-32-be": "UTF-32BE",
          "cp950": "Big5（繁体中文）", "cp932": "Shift-JIS（日文）", "euc_jp": "EUC-JP（日文）",
          "cp949": "EUC-KR（韩文）", "iso2022_jp": "ISO-2022-JP（日文）", "iso2022_kr": "ISO-2022-KR（韩文）",
          "cp1252": "Windows-1252（西欧）", "cp1250": "Windows-1250（中欧）", "cp1251": "Windows-1251（西里尔）",
          "cp1253": "Windows-1253（希腊）", "cp1254": "Windows-1254（土耳其）", "cp1255": "Windows-1255（希伯来）",
          "cp1256": "Windows-1256（阿拉伯）", "cp1257": "Windows-1257（波罗的海）", "koi8_r": "KOI8-R（俄文）",
          "koi8_u": "KOI8-U（乌克兰文）", "cp866": "CP866（DOS 俄文）", "mac_cyrillic": "Mac 西里尔",
          "cp855": "CP855（DOS 西里尔）", "iso8859_2": "ISO-8859-2（中欧）", "iso8859_5": "ISO-8859-5（西里尔）",
          "iso8859_6": "ISO-8859-6（阿拉伯）", "iso8859_7": "ISO-8859-7（希腊）", "iso8859_8": "ISO-8859-8（希伯来）",
          "cp874": "TIS-620/CP874（泰文）", "cp500": "EBCDIC（IBM 大型机，cp500）", "mac_roman": "Mac Roman（西欧）"}


def decode_prefix(raw, encoding, errors="strict"):
    """Decode that tolerates a multi-byte character cut off at the end of a sample."""
    decoder = codecs.getincrementaldecoder(encoding)(errors)
    return decoder.decode(raw, final=False)


def detect(raw):
    """``(codec, reason)`` for the bytes ``raw`` (a whole file or its beginning)."""
    for bom, name in _BOMS:
        if raw.startswith(bom):
            return name, "文件开头有 %s 的字节顺序标记（BOM）" % LABELS[name]
    head = raw[:65536]
    if b"\x00" in head:
        # UTF-16 without a BOM: the zero bytes (high bytes of ASCII ',', '\n', digits) all sit on
        # one side. Chinese characters have no zero byte, so only the parity is telling.
        even, odd = head[0::2].count(0), head[1::2].count(0)
        for zeros, other, name in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
            if zeros >= 2 and other <= zeros * 0.02 and _utf16_evidence(head, zeros, name):
                return name, "没有 BOM，但零字节都在同一侧，是 %s" % LABELS[name]
    if b"\x00" in head and len(head) >= 16:
        quads = [head[i::4].count(0) for i in range(4)]
        n = len(head) // 4
        for name, top, plane in (("utf-32-le", 3, 2), ("utf-32-be", 0, 1)):
            if quads[top] >= n * 0.98 and quads[plane] >= n * 0.5:
                try:
                    decode_prefix(head[:n * 4], name)
                    return name, "没有 BOM，但每 4 个字节里有 2 个以上是零，是 %s" % LABELS[name]
                except UnicodeDecodeError:
                    pass
    if b"\x1b$" in head and head.isascii():
        for marks, name in (((b"\x1b$B", b"\x1b$@"), "iso2022_jp"), ((b"\x1b$)C",), "iso2022_kr")):
            if any(m in head for m in marks):
                try:
                    decode_prefix(raw, name)
                    return name, "含有 %s 的切换序列" % LABELS[name]
                except UnicodeDecodeError:
                    pass
    try:
        decode_prefix(raw, "utf-8")
        return "utf-8", "按 UTF-8 解码没有错误"
    except UnicodeDecodeError:
        pass
    # Not clean UTF-8. A GBK file fails on nearly every Chinese character; a UTF-8 export with
    # a damaged spot fails a handful of times among many valid multi-byte characters.
    text = raw.decode("utf-8", "replace")
    bad = text.count("\ufffd")
    multibyte = sum(1 for ch in text[:200000] if ord(ch) > 127) - bad
    if bad * 100 < len(raw) and multibyte > bad * 20:
        return "utf-8", "基本是 UTF-8，只有 %d 处损坏的字节（已替换为 �）" % bad
    codec, _score = guess_legacy(raw)
    if codec == "gb18030":
        return codec, "不是 UTF-8，按字节统计是中文 Windows 常用的 GBK/GB18030"
    return codec, "不是 UTF-8，按字节统计最像 %s" % LABELS.get(codec, codec)


def _utf16_evidence(head, zeros, name):
    """Whether zero bytes all on one side of ``head`` really mean UTF-16 without a BOM, and are
    not a few stray NULs in UTF-8/GBK text (a broken export pads a field with them; taken for
    UTF-16 the whole file turned to garbage). Real evidence: the zeros keep up the alternating
    pattern across the sample (ASCII characters, delimiters and line ends in UTF-16 carry one:
    a tenth of the code units or more), or the text decodes as UTF-16 into real characters while
    the bytes without their NULs are no UTF-8."""
    try:
        text = decode_prefix(head[:len(head) // 2 * 2], name)
    except UnicodeDecodeError:
        return False
    if zeros * 20 >= len(head):
        return True
    try:
        decode_prefix(head.replace(b"\x00", b""), "utf-8")
        return False                    # UTF-8 text with stray NULs
    except UnicodeDecodeError:
        pass
    odd = sum(1 for ch in text[:8192] if unicodedata.category(ch) in ("Co", "Cn", "Cs") or
              (ch < " " and ch not in "\t\r\n"))
    return odd * 100 <= len(text[:8192])


def stray_nuls(text, codec):
    """How many NUL characters text decoded as ``codec`` carries as noise: none for UTF-16/32
    (their zeros are part of the characters), and only when they are few (a binary file is full
    of them): at most one character in a hundred. 0 otherwise."""
    if codec.startswith(("utf-16", "utf-32")):
        return 0
    n = text.count("\x00")
    return n if n * 100 <= len(text) else 0


def detect_encoding(raw):
    """Codec name only (see :func:`detect`)."""
    return detect(raw)[0]


# ---------------------------------------------------------------------------------------------
# Legacy encodings, scored
#
# Every candidate that decodes the sample's non-ASCII lines is scored by how much its text looks
# like writing: characters a real document of that encoding's languages uses (common hanzi of
# GB2312/Big5 level 1, kana and JIS level-1 kanji, KS X 1001 hangul, letters in words of one
# script and a sane case pattern, the letters of one language's alphabet) earn points; control
# characters, private-use and unassigned code points, hanzi wedged between Latin letters
# ("contrata玢o"), mixed-case Cyrillic words (KOI8 read as cp1251) cost points. The score is per
# non-ASCII byte, so a two-byte hanzi and two one-byte letters weigh the same. GB18030 wins when
# it scores best or ties (within 0.03); other ties go to the earlier candidate.

_EAST_ASIAN = ("cp950", "cp932", "euc_jp", "cp949", "gb18030")
_SINGLE_BYTE = ("cp1252", "cp1250", "cp1251", "koi8_r", "koi8_u", "cp866", "mac_cyrillic", "iso8859_5",
                "cp855", "cp1253", "iso8859_7", "cp1254", "cp1255", "iso8859_8", "cp1256", "iso8859_6",
                "cp1257", "cp874", "iso8859_2", "mac_roman")
_CJK_PUNCT = set("，。、；：？！“”‘’（）《》〈〉【】「」『』〔〕—…·～￥　・")
_SYMBOLS_OK = set("«»“”„‘’‚–—…•·°§©®€£¥±×÷¿¡\u00a0\u00ad№¦¬µ¶†‡‰‹›™¢¤")
# The non-ASCII letters each language writes; a Latin decode is judged by the best-fitting one.
_ALPHABETS = (
    "àâæçéèêëîïôœùûüÿ", "äöüß", "áéíñóúü", "áâãàçéêíóôõú", "àèéìíîòóùú", "åäöæøéáíóúýðþ", "éëïóöü",
    "áčďéěíňóřšťúůýž", "áäčďéíĺľňóôŕšťúýž", "ąćęłńóśźż", "áéíóöőúüű", "ăâîșşțţ", "čćđšž",
    "çğıöşüâîû", "ąčęėįšųūž", "āčēģīķļņšūž", "äõöüšž", "àçèéíïòóúü",
    "абвгдеёжзийклмнопрстуфхцчшщъыьэюя", "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя",
    "абвгдђежзијклљмнњопрстћуфхцчџш", "абвгдежзийклмнопрстуфхцчшщъьюя", "абвгдеёжзійклмнопрстуўфхцчшыьэюя",
)
_common = {}
# Letter frequencies of Russian and Greek prose (share of all letters, accents folded); Ukrainian,
# Bulgarian and Serbian text overlaps the Russian table well over 0.7, other scripts misread as
# Cyrillic or Greek far less.
_CYRILLIC_FREQ = dict(zip("оеаинтсрвлкмдпуяыьгзбчйхжшюцщэфъёіїєґ", (
    .1097, .0845, .0801, .0735, .067, .0626, .0547, .0473, .0454, .044, .0349, .0321, .0298, .0281,
    .0262, .0201, .019, .0174, .017, .0165, .0159, .0144, .0121, .0097, .0094, .0073, .0064, .0048,
    .0036, .0032, .0026, .0004, .0004, .05, .006, .004, .001)))
_FREQ = {"cyrillic": _CYRILLIC_FREQ, "greek": dict(zip("αοιετσνηυρπκμλωδγχθφβξζψς", (
    .12, .10, .09, .085, .08, .05, .07, .05, .045, .045, .04, .04, .035, .03, .02, .018, .018, .012,
    .013, .008, .007, .005, .004, .002, .03)))}


def _common_set(codec):
    """The everyday characters of an East-Asian codec: its level-1 hanzi/kanji or KS hangul."""
    if codec not in _common:
        rows = {"gb18030": ("gb2312", range(0xB0, 0xD8), range(0xA1, 0xFF)),
                "cp950": ("cp950", range(0xA4, 0xC7), list(range(0x40, 0x7F)) + list(range(0xA1, 0xFF))),
                "cp932": ("euc_jp", range(0xB0, 0xD0), range(0xA1, 0xFF)),
                "euc_jp": ("euc_jp", range(0xB0, 0xD0), range(0xA1, 0xFF)),
                "cp949": ("euc_kr", range(0xB0, 0xC9), range(0xA1, 0xFF))}[codec]
        source, leads, trails = rows
        found = set()
        for lead in leads:
            for trail in trails:
                try:
                    found.add(bytes((lead, trail)).decode(source))
                except UnicodeDecodeError:
                    pass
        _common[codec] = found
    return _common[codec]


def _script(ch):
    o = ord(ch)
    if o < 0x250:
        return "latin"
    for lo, hi, name in ((0x370, 0x400, "greek"), (0x400, 0x530, "cyrillic"), (0x590, 0x600, "hebrew"),
                         (0x600, 0x700, "arabic"), (0xE00, 0xE80, "thai"), (0x1E00, 0x1F00, "latin")):
        if lo <= o < hi:
            return name
    return "other"


_HAN = "\u3400-\u9fff"
_WEDGED = re.compile("(?<=[A-Za-z])[%s](?=[A-Za-z])" % _HAN)
_SPACED = re.compile("(?<= )[%s]|[%s](?= )" % (_HAN, _HAN))
_WORD = re.compile(r"[^\W\d_]+")


def _east_asian_weight(ch, codec, common):
    o = ord(ch)
    if ch in common or ch in _CJK_PUNCT or 0xFF01 <= o <= 0xFF5E:
        return 1.0
    if 0x3040 <= o <= 0x30FF:
        return 1.0 if codec in ("cp932", "euc_jp") else 0.0
    if 0xFF61 <= o <= 0xFF9F:
        return 0.6 if codec in ("cp932", "euc_jp") else -0.3     # half-width katakana: old, rarer
    if 0xAC00 <= o <= 0xD7A3:
        return 0.3 if codec == "cp949" else -0.5
    if 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF:
        return 0.3
    if 0xE000 <= o <= 0xF8FF or 0xF900 <= o <= 0xFAFF or o >= 0x20000 or \
            unicodedata.category(ch) in ("Cc", "Cn", "Co") or ch == "\ufffd":
        return -3.0
    if o < 0x2000:
        return -1.0           # Latin/Greek/Cyrillic out of a CJK codec: a 4-byte GB18030 accident
    return -0.3               # box drawing, roman numerals, circled numbers: rare in prose


def _char_bytes(ch, codec):
    o = ord(ch)
    if 0xFF61 <= o <= 0xFF9F and codec != "gb18030":
        return 1
    return 4 if o >= 0x10000 or (o < 0x2000 and codec == "gb18030") else 2


def _east_asian_score(text, codec):
    common = _common_set(codec)
    counts = collections.Counter(ch for ch in text if ord(ch) > 127)
    total = 0.0
    nbytes = 0
    weights = {}
    for ch, n in counts.items():
        size = _char_bytes(ch, codec)
        w = weights[ch] = _east_asian_weight(ch, codec, common)
        nbytes += size * n
        total += w * size * n
    for ch in _WEDGED.findall(text):             # a lone hanzi inside a Latin word: Western bytes
        total -= (weights[ch] + 1.0) * 2
    if codec != "cp949":                         # Chinese and Japanese put no spaces between words
        for ch in _SPACED.findall(text):
            if weights[ch] > 0:
                total -= weights[ch] * 0.4 * 2
    score = total / max(1, nbytes)
    if codec in ("cp932", "euc_jp"):
        # Japanese prose is written with kana: EUC-JP and Big5/GB share byte rows, and only the
        # kana tell them apart (a GB2312 text read as EUC-JP has kanji only).
        han = sum(n for ch, n in counts.items() if 0x3400 <= ord(ch) <= 0x9FFF)
        kana = sum(n for ch, n in counts.items() if 0x3040 <= ord(ch) <= 0x30FF or 0xFF66 <= ord(ch) <= 0xFF9D)
        share = kana / max(1, kana + han)
        score = score * min(1.0, 0.5 + share * 5) + (0.05 if share >= 0.1 else 0.0)
    return score


def _word_score(word):
    """(points, letters) for one word holding non-ASCII letters: one script, a sane case pattern
    (lower, Title or UPPER: KOI8 read as cp1251 comes out "пРИВЕТ"), not mostly accented Latin."""
    high = [c for c in word if ord(c) > 127]
    scripts = set(_script(c) for c in word)
    if len(scripts) > 1:
        return -1.0 * len(high), None
    cased = [c for c in word if c.lower() != c.upper()]
    if len(cased) > 1 and not ("".join(cased[1:]).islower() or "".join(cased).isupper()):
        return -1.0 * len(high), None
    if scripts == {"latin"} and len(word) >= 3 and len(high) >= 2 and len(high) * 2 > len(word):
        return -0.5 * len(high), None
    return 1.0 * len(high), high


def _single_byte_score(text):
    total = 0.0
    nbytes = 0
    letters = collections.Counter()
    in_words = collections.Counter()
    for word, n in collections.Counter(w for w in _WORD.findall(text) if not w.isascii()).items():
        points, high = _word_score(word)
        total += points * n
        for c in word:
            if ord(c) > 127:
                in_words[c] += n
        if high:
            for c in high:
                low = c.lower() if len(c.lower()) == 1 else c
                letters[low] += n
    for ch, n in collections.Counter(ch for ch in text if ord(ch) > 127).items():
        nbytes += n
        n -= in_words.get(ch, 0)
        if n <= 0:
            continue
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cn", "Co") or ch == "\ufffd":
            total -= 3.0 * n
        elif ch in _SYMBOLS_OK:
            total += 1.0 * n
        elif cat[0] == "M":
            total += 0.5 * n
        elif cat[0] == "L":
            total += 0.5 * n      # a letter next to a digit or underscore
        else:
            total -= 0.5 * n
    if letters:
        counted = sum(letters.values())
        scripts = set(_script(c) for c in letters)
        if scripts <= {"latin", "cyrillic"}:
            fit = max(sum(n for c, n in letters.items() if c in alphabet) for alphabet in _ALPHABETS)
            total -= counted - fit                   # letters no single language uses together
        freq = _FREQ.get(scripts.pop()) if len(scripts) == 1 else None
        if freq and counted >= 30:
            # Hebrew bytes read as cp1251 or cp1253 are lower-case Cyrillic or Greek words too;
            # their letter frequencies are not a Slavic or Greek text's (too many й, ш, ъ).
            folded = collections.Counter()
            for c, n in letters.items():
                folded[unicodedata.normalize("NFD", c)[0]] += n
            overlap = sum(min(n / counted, freq.get(c, 0.0)) for c, n in folded.items())
            total -= counted * max(0.0, 0.7 - overlap) * 2
    return total / max(1, nbytes)


def _sample(raw, limit=4000):
    """The lines holding non-ASCII bytes (the only ones that tell encodings apart), up to ``limit``
    bytes from the first 512 KB, cut at line ends so no character is split."""
    head = raw[:1 << 19]
    if len(head) < len(raw):
        head = head[:head.rfind(b"\n") + 1] or head
    picked, size = [], 0
    for line in head.split(b"\n"):
        if not line.isascii():
            picked.append(line)
            size += len(line)
            if size >= limit:
                break
    return b"\n".join(picked)


def _looks_ebcdic(raw):
    head = raw[:65536]
    if len(head) < 64 or head.count(b"\x40") < len(head) * 0.08 or head.count(b" ") > len(head) * 0.005:
        return False
    # EBCDIC letters and digits: a-i j-r s-z at 0x81-0xA9, A-Z at 0xC1-0xE9, 0-9 at 0xF0-0xF9
    alnum = sum(head.count(bytes((b,))) for b in list(range(0x81, 0xAA)) + list(range(0xC1, 0xEA)) +
                list(range(0xF0, 0xFA)))
    return alnum > len(head) * 0.5


def guess_legacy(raw):
    """``(codec, score)`` of the best-scoring legacy encoding for bytes that are not UTF-8
    (score about 1.0 for clean text, below 0 for garbage)."""
    if _looks_ebcdic(raw):
        return "cp500", 1.0
    sample = _sample(raw)
    if not sample:
        return "cp1252", 1.0
    scores = score_candidates(sample)
    top = max(score for _codec, score in scores)
    # A tie (a two-character CSV cell is valid GBK, EUC-KR and KOI8 alike) goes to GB18030: this
    # toolbox's users write GBK far more often than anything else that is not UTF-8.
    for codec, score in scores:
        if codec == "gb18030" and score >= top - 0.03:
            return codec, score
    return next((codec, score) for codec, score in scores if score == top)


def score_candidates(sample):
    """[(codec, score)] for every candidate that decodes ``sample`` (strictly, a cut character at
    the end allowed); when none does, every candidate with its replacement characters counted."""
    out = []
    for strict in (True, False):
        for codec in _EAST_ASIAN + _SINGLE_BYTE:
            if codec == _SINGLE_BYTE[0] and out and max(s for _c, s in out) >= 0.97 and len(sample) >= 400:
                break     # clean East-Asian text: no 8-bit code page reads a long sample that well
            try:
                text = decode_prefix(sample, codec, "strict" if strict else "replace")
            except UnicodeDecodeError:
                continue
            score = _east_asian_score(text, codec) if codec in _EAST_ASIAN else _single_byte_score(text)
            out.append((codec, score))
        if out:
            return out
    return [("gb18030", -3.0)]


_DECLARED_ALIASES = {
    "gb2312": "gb18030", "gbk": "gb18030", "x-gbk": "gb18030", "cp936": "gb18030", "euc-cn": "gb18030",
    "big5": "cp950", "big5-hkscs": "big5hkscs", "x-x-big5": "cp950", "shift_jis": "cp932", "sjis": "cp932",
    "x-sjis": "cp932", "windows-31j": "cp932", "euc-kr": "cp949", "ks_c_5601-1987": "cp949",
    "iso-8859-1": "cp1252", "latin1": "cp1252", "latin-1": "cp1252", "us-ascii": "cp1252", "ascii": "cp1252",
    "iso-8859-9": "cp1254", "tis-620": "cp874", "windows-874": "cp874", "unicode": "utf-16", "utf8": "utf-8",
}


def codec_for_label(label):
    """A Python codec name for a charset label as documents declare it (``gb2312`` -> GB18030, its
    superset; ``iso-8859-1`` -> cp1252, as browsers do), or None when there is no such codec."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _DECLARED_ALIASES.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    if not _CANONICAL:
        _CANONICAL.update((codecs.lookup(c).name, c) for c in _EAST_ASIAN + _SINGLE_BYTE + ("cp500",))
    return _CANONICAL.get(name, name)


_CANONICAL = {}


def check_declared(raw, label):
    """``(codec, reason)`` when the declared charset ``label`` fits the bytes, else None: the
    bytes must decode strictly, valid UTF-8 beats an 8-bit label, and a declared legacy charset
    must score about as well as the best guess (pages that lie about their charset are common)."""
    codec = codec_for_label(label)
    if not codec:
        return None
    name = LABELS.get(codec, codec)
    if codec.startswith(("utf-16", "utf-32")):
        return None                       # a UTF-16 label on 8-bit bytes (a copied <meta>) is wrong
    try:
        decode_prefix(raw, codec)
    except (UnicodeDecodeError, LookupError):
        return None
    if codec == "utf-8":
        return "utf-8", "按文件声明的编码 UTF-8（字节与之相符）"
    try:
        decode_prefix(raw, "utf-8")
        if not raw[:1 << 19].isascii():
            return None                   # valid UTF-8 with multi-byte characters: the label is stale
    except UnicodeDecodeError:
        pass
    sample = _sample(raw)
    if not sample:
        return codec, "按文件声明的编码 %s" % name
    scores = dict(score_candidates(sample))
    mine = scores.get(codec)
    if mine is None:
        text = decode_prefix(sample, codec, "replace")
        mine = _east_asian_score(text, codec) if codec in _EAST_ASIAN else _single_byte_score(text)
    if mine >= max(scores.values()) - 0.15:
        return codec, "按文件声明的编码 %s（字节与之相符）" % name
    return None


def looks_like_text(head):
    """True when ``head`` (a file's first bytes) reads as text in some encoding we score: no NUL
    outside UTF-16/32, and the best legacy guess scores like writing, not like binary."""
    codec, reason = detect(head)
    if codec.startswith("utf-16") or codec.startswith("utf-32"):
        return True
    if b"\x00" in head[:65536]:
        return False
    if codec in ("utf-8", "utf-8-sig"):
        return True
    sample = _sample(head)
    if not sample:
        return True
    scores = dict(score_candidates(sample))
    return scores.get(codec, guess_legacy(head)[1]) > 0.5


def decode(raw, encoding=None, declared=None):
    """``(text, codec, reason)``. ``encoding`` forces a codec; ``declared`` is the charset the
    file itself names (``<meta charset>``, an XML declaration), used only when the bytes agree
    (:func:`check_declared`), else detection decides and the reason says the label was wrong.
    Undecodable bytes become U+FFFD (never an exception) and the reason says how many there were."""
    agreed = None
    if not encoding and declared and not any(raw.startswith(bom) for bom, _name in _BOMS):
        agreed = check_declared(raw, declared)
    if encoding:
        codec, reason = encoding, "按指定的编码 %s" % encoding
    elif agreed:
        codec, reason = agreed
    else:
        codec, reason = detect(raw)
        if declared:
            reason = "文件声明的编码是 %s，但字节与之不符；%s" % (declared, reason)
    try:
        text = raw.decode(codec)
    except UnicodeDecodeError:
        text = raw.decode(codec, "replace")
        reason += "；有 %d 处无法解码的字节已替换为 �" % text.count("\ufffd")
    except LookupError:
        codec, reason = detect(raw)
        text = raw.decode(codec, "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, codec, reason


def label(codec):
    return LABELS.get(codec, codec)


def char_width(ch):
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def width(text):
    """Columns ``text`` takes on screen: CJK and full-width characters count double."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def fit_width(text, columns, marker="…"):
    """``text`` shortened to at most ``columns`` display columns, ending with ``marker`` if cut."""
    if width(text) <= columns:
        return text
    room = columns - width(marker)
    out, used = [], 0
    for ch in text:
        w = char_width(ch)
        if used + w > room:
            break
        out.append(ch)
        used += w
    return "".join(out) + marker


def cut(text, limit, marker="…"):
    """``text`` at most ``limit`` characters; a cut ends with ``marker``."""
    if len(text) <= limit:
        return text
    return text[:max(0, limit - len(marker))] + marker


def cut_line(line, limit):
    """One long line shortened with a marker that says how many characters were left out."""
    if len(line) <= limit:
        return line, False
    return line[:limit] + "…（此行共 %d 字，省略 %d 字）" % (len(line), len(line) - limit), True


def cut_lines(text, line_limit):
    """Every line of ``text`` at most ``line_limit`` characters; returns (text, lines cut)."""
    out, n = [], 0
    for line in text.split("\n"):
        line, was_cut = cut_line(line, line_limit)
        n += was_cut
        out.append(line)
    return "\n".join(out), n


def human_size(n):
    """``3.1KB``-style size (binary units, at most one decimal, ``.0`` dropped)."""
    if n is None:
        return None
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            if unit == "B":
                return "%dB" % n
            text = ("%.1f" % n).rstrip("0").rstrip(".")
            return text + unit
        n /= 1024.0
    return None   # pragma: no cover
