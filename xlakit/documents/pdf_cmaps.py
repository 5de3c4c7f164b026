"""The predefined CJK CMaps pypdf does not know, decoded through Python's own codecs.

Why: a Type0 font may name one of Adobe's predefined CMaps as its encoding (PDF 32000-1, table
118) instead of carrying a ToUnicode map: the codes in the page are then Shift-JIS, EUC-JP, raw
JIS X 0208, EUC-KR, UHC, Big5 or GBK bytes. pypdf knows some of these names; for the others it
falls back to UTF-16, and Japanese あいうえお written with the "H" CMap (raw JIS codes 0x2422...)
comes out as control-picture symbols ␢␤␦. Every one of these encodings is a codec Python already
has (raw JIS is EUC-JP with the high bits cleared), so the names are added to pypdf's table of
predefined CMaps once, before the first PDF is read. pypdf then decodes the strings with the
codec, as it does for the names it knows.
"""
import codecs

# name -> Python codec; the Unicode-based (UCS2/UTF16) and most GB ones pypdf handles itself
CODECS = {}
for _names, _codec in (
        (("83pv-RKSJ-H", "90msp-RKSJ-H", "90msp-RKSJ-V", "90pv-RKSJ-H", "90pv-RKSJ-V", "Add-RKSJ-H",
          "Add-RKSJ-V", "Ext-RKSJ-H", "Ext-RKSJ-V"), "cp932"),
        (("EUC-H", "EUC-V"), "euc_jp"),
        (("H", "V"), "xla_jis"),
        (("KSC-EUC-H", "KSC-EUC-V", "KSCpc-EUC-H", "KSCpc-EUC-V"), "cp949"),
        (("KSCms-UHC-H", "KSCms-UHC-V", "KSCms-UHC-HW-H", "KSCms-UHC-HW-V"), "cp949"),
        (("UniKS-UTF16-H", "UniKS-UTF16-V", "UniJIS-UTF16-H", "UniJIS-UTF16-V"), "utf-16-be"),
        (("B5pc-H", "B5pc-V"), "cp950"),
        (("HKscs-B5-H", "HKscs-B5-V"), "big5hkscs"),
        (("GBKp-EUC-H", "GBKp-EUC-V", "GBT-EUC-H", "GBT-EUC-V"), "gbk")):
    for _name in _names:
        CODECS["/" + _name] = _codec

_done = False


def _jis(name):
    """Raw JIS X 0208 (the "H"/"V" CMaps: two bytes 0x21-0x7E) is EUC-JP with the high bits off."""
    if name != "xla_jis":
        return None

    def decode(data, errors="strict"):
        data = bytes(data)
        return bytes(b | 0x80 if b >= 0x21 else b for b in data).decode("euc_jp", errors), len(data)

    def encode(text, errors="strict"):
        return bytes(b & 0x7F for b in text.encode("euc_jp", errors)), len(text)
    return codecs.CodecInfo(encode, decode, name="xla_jis")


def install():
    """Teach pypdf the names above (once per process). Its table is private: if a later pypdf
    moves it, reading goes on as before."""
    global _done
    if _done:
        return
    _done = True
    codecs.register(_jis)
    try:
        from pypdf import _cmap
        table = _cmap._predefined_cmap
    except (ImportError, AttributeError):
        return
    for name, codec in CODECS.items():
        table.setdefault(name, codec)
