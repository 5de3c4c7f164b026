"""Does Latin-script text read like a font's codes decoded through the wrong table?

Why: a PDF font whose encoding is read wrong (a subset font's own numbering taken for MacRoman,
glyph numbers taken for character codes) turns English into text that is still made of ordinary
letters, digits and punctuation: "o(hô..i.p3xSTRxtT3xR2tTOR" (a table of names and amounts),
"+HOOR ZRUOG" for "Hello world" (TrueType glyph numbers in Apple's standard order are the
character code minus 29). ``pdf_fontmap.garbled`` looks for characters real text never holds and
for too many scripts, and finds nothing wrong here; the page would be shown as right. Three cheap
signs, each one far from what real text does (measured on every page of pdfminer.six's and
pdfplumber's sample PDFs, and on the same pages garbled by a random substitution of their
characters and by the minus-29 shift, see bench/README.md):

- vowels: a, e, i, o, u, y (accents ignored) are 28-66 % of the letters on every real page
  (English, French, German, Czech and other European text is 33-48 %); the minus-29 shift leaves
  about 17 % and turns lower case into capitals, a substitution anything. Below 22 % with at
  least 150 letters is garbled when half the letters are capitals, or below 12 % in any case
  (Czech can string consonants together, "strč prst skrz krk", in lower case).
- case flips: a lower-case letter followed by a capital, inside a word, not as in camelCase
  ("iPhone", "McDonald": the capital starts a lower-case run). Real pages have at most 1.4 % of
  their letter pairs like that; a substitution of mixed-case text 10-40 %. At least 5 flips and
  5 % of the pairs is garbled.
- words with short digit runs between letters (or letters between digits) twice or more, or with
  a flip: "p3xSTRxtT3x". Real pages: at most 8 % of their words; garbled ones 15-70 %. At least
  8 such words and 25 % of the words is garbled.

Only Latin letters count (a Chinese page with a little English is judged on its English, and is
left alone when there is too little of it to judge); pages shorter than the thresholds are never
called garbled, so a heading or a form label is not second-guessed.
"""
import re
import unicodedata

VOWELS = frozenset("aeiouyAEIOUY")
_WORD = re.compile(r"\S+")
_LETTER = "[^\\W\\d_]"
_SANDWICH = re.compile(r"(?<=%s)\d{1,2}(?=%s)|(?<=\d)%s{1,2}(?=\d)" % (_LETTER, _LETTER, _LETTER))

MIN_LETTERS = 150        # vowel share judged only on this many Latin letters or more
MAX_VOWELS = 0.22
FEWEST_VOWELS = 0.12     # below this, lower-case text too
MIN_FLIPS, FLIP_SHARE = 5, 0.05
MIN_ODD_WORDS, ODD_WORD_SHARE = 8, 0.25


def _latin(c):
    return c.isalpha() and ord(c) < 0x250           # Basic Latin to Latin Extended-B


def _vowel(c):
    return c in VOWELS or (ord(c) >= 0xC0 and unicodedata.normalize("NFD", c)[0] in VOWELS)


def _flips(word):
    """(lower-to-capital flips that are not camelCase, Latin letter pairs) in one word."""
    flips = pairs = 0
    for i in range(1, len(word)):
        a, b = word[i - 1], word[i]
        if _latin(a) and _latin(b):
            pairs += 1
            if a.islower() and b.isupper():
                after = word[i + 1:i + 3]
                if not (len(after) == 2 and after.isalpha() and after.islower()):
                    flips += 1
    return flips, pairs


def signs(text):
    """The measures above for ``text``: dict of letters, vowels, capitals, flips, pairs, words,
    odd_words."""
    letters = vowels = capitals = flips = pairs = words = odd = 0
    for m in _WORD.finditer(text):
        word = m.group()
        latin = [c for c in word if _latin(c)]
        if not latin:
            continue
        letters += len(latin)
        vowels += sum(1 for c in latin if _vowel(c))
        capitals += sum(1 for c in latin if c.isupper())
        if len(latin) < 2:
            continue
        words += 1
        f, p = _flips(word)
        flips += f
        pairs += p
        if f or len(_SANDWICH.findall(word)) >= 2:
            odd += 1
    return {"letters": letters, "vowels": vowels, "capitals": capitals, "flips": flips, "pairs": pairs, "words": words,
            "odd_words": odd}


def garbled(text):
    """True when the Latin letters of ``text`` show one of the signs above."""
    s = signs(text)
    if s["letters"] >= MIN_LETTERS and s["vowels"] < MAX_VOWELS * s["letters"] and (
            s["capitals"] >= 0.5 * s["letters"] or s["vowels"] < FEWEST_VOWELS * s["letters"]):
        return True
    if s["flips"] >= MIN_FLIPS and s["flips"] >= FLIP_SHARE * s["pairs"]:
        return True
    return s["odd_words"] >= MIN_ODD_WORDS and s["odd_words"] >= ODD_WORD_SHARE * s["words"]
