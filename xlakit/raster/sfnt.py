"""The sfnt container shared by every font we read: TrueType/OpenType files and TTC collections
(face offsets, the table directory, the ``name`` table), how well a face suits Simplified
Chinese, and where this OS keeps its Chinese fonts. ``fonts.Font`` builds on it.

Why split from ``fonts``: the container and the discovery walk are used before any outline is
read (choosing a face in a collection, listing candidates), and they change for different
reasons (a new OS font location) than the glyph parsers do.
"""
import mmap
import os
import re
import struct
import sys

class FontError(Exception):
    """The file is not a font we can draw with (the message says why, in Chinese)."""


_U16 = struct.Struct(">H").unpack_from
_S16 = struct.Struct(">h").unpack_from
_U32 = struct.Struct(">I").unpack_from


def _open_bytes(path):
    """A read-only mmap of the file (or its bytes for tiny/unmappable files)."""
    with open(path, "rb") as f:
        try:
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):
            return f.read()


def face_offsets(data):
    """Offsets of the faces in an sfnt or TTC file."""
    tag = bytes(data[:4])
    if tag == b"ttcf":
        n = _U32(data, 8)[0]
        if n <= 0 or n > 1000:
            raise FontError("字体集合文件头损坏")
        return list(struct.unpack_from(">%dI" % n, data, 12))
    if tag in (b"\x00\x01\x00\x00", b"OTTO", b"true"):
        return [0]
    if tag in (b"wOFF", b"wOF2"):
        raise FontError("WOFF 网页字体需要先解压，暂不支持")
    raise FontError("不是 TrueType/OpenType 字体文件")


def _tables(data, offset):
    num = _U16(data, offset + 4)[0]
    out = {}
    for i in range(num):
        rec = offset + 12 + 16 * i
        tag = bytes(data[rec:rec + 4]).decode("latin-1")
        off, length = struct.unpack_from(">II", data, rec + 8)
        if off + length > len(data) + 8:
            continue
        out[tag] = (off, length)
    return out


def _decode_name(platform, encoding, raw):
    try:
        if platform == 3 or platform == 0:
            return raw.decode("utf-16-be")
        if platform == 1:
            return raw.decode("mac_roman" if encoding == 0 else "latin-1")
    except (UnicodeDecodeError, LookupError):
        pass
    return None


def read_names(data, tables):
    """[(nameID, langID, platform, text)] for family/full/PostScript/typographic names."""
    if "name" not in tables:
        return []
    base = tables["name"][0]
    count, strings = _U16(data, base + 2)[0], _U16(data, base + 4)[0]
    out = []
    for i in range(count):
        p, e, lang, nid, length, off = struct.unpack_from(">6H", data, base + 6 + 12 * i)
        if nid not in (1, 2, 4, 6, 16, 17):
            continue
        start = base + strings + off
        text = _decode_name(p, e, bytes(data[start:start + length]))
        if text:
            out.append((nid, lang, p, text))
    return out


SC_PROBE = "中文图表"
_SC_RE = re.compile(r"(sc\b|SC\b|CJKsc|GB|CN\b|SC-|YaHei|SimSun|SimHei|PingFang SC|Hiragino Sans GB|WenQuanYi|Heiti SC)")


def score_face(names, covers_probe):
    """How well a face suits Simplified Chinese (the TTC order carries no meaning)."""
    score = 0
    texts = [t for (_nid, _lang, _p, t) in names]
    if any(_SC_RE.search(t) for t in texts) or any(lang == 0x804 and p == 3 for (_n, lang, p, _t) in names):
        score += 10
    if any("Mono" in t for t in texts):
        score -= 3
    if covers_probe:
        score += 5
    return score


# -- discovery ------------------------------------------------------------------------------------

def install_hint(platform=None):
    """What to install when no Chinese font was found, in this OS's own terms (the Linux font
    package means nothing to a Windows user, whose system fonts are YaHei/SimHei)."""
    platform = platform or sys.platform
    if platform.startswith("win"):
        return ("Windows 自带的中文字体（微软雅黑 msyh.ttc、黑体 simhei.ttf）在本机的 Fonts 文件夹里没有找到；"
                "在「设置 → 时间和语言 → 语言」添加中文（简体）会装回它们，装好后效果更好")
    if platform == "darwin":
        return "安装任一中文字体（macOS 自带苹方 PingFang，可在「字体册」里恢复）后效果更好"
    return "安装任一中文字体（如文泉驿微米黑：sudo apt install fonts-wqy-microhei）后效果更好"


def system_font_candidates():
    """(path, face name or None) for Chinese fonts in the usual places of this OS, best first."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    out = []
    if sys.platform.startswith("win"):
        roots = [os.path.join(os.environ.get("WINDIR", r"C:\Windows"), "Fonts")]
        local = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        roots.append(os.path.join(local, "Microsoft", "Windows", "Fonts"))
        files = [("msyh.ttc", "Microsoft YaHei"), ("msyh.ttf", None), ("simhei.ttf", None),
                 ("simsun.ttc", "SimSun"), ("Deng.ttf", None), ("simkai.ttf", None)]
        for r in roots:
            out += [(os.path.join(r, f), n) for f, n in files]
    elif sys.platform == "darwin":
        roots = ["/System/Library/Fonts", "/System/Library/Fonts/Supplemental", "/Library/Fonts",
                 os.path.join(home, "Library", "Fonts")]
        files = [("PingFang.ttc", "PingFang SC"), ("Hiragino Sans GB.ttc", None), ("STHeiti Light.ttc", None),
                 ("STHeiti Medium.ttc", None), ("Songti.ttc", None), ("Arial Unicode.ttf", None)]
        for r in roots:
            out += [(os.path.join(r, f), n) for f, n in files]
        import glob
        for pat in ("/System/Library/AssetsV2/com_apple_MobileAsset_Font*/*/AssetData/PingFang.ttc",
                    "/System/Library/Assets/com_apple_MobileAsset_Font*/*/AssetData/PingFang.ttc"):
            out += [(p, "PingFang SC") for p in sorted(glob.glob(pat))]
    else:
        roots = ["/usr/share/fonts", "/usr/local/share/fonts", os.path.join(home, ".local", "share", "fonts"),
                 os.path.join(home, ".fonts")]
        rel = ["opentype/noto/NotoSansCJK-Regular.ttc", "google-noto-sans-cjk-fonts/NotoSansCJK-Regular.ttc",
               "google-noto-cjk/NotoSansCJK-Regular.ttc", "noto-cjk/NotoSansCJK-Regular.ttc",
               "noto/NotoSansCJK-Regular.ttc", "truetype/wqy/wqy-microhei.ttc",
               "wqy-microhei/wqy-microhei.ttc", "wenquanyi/wqy-microhei/wqy-microhei.ttc",
               "truetype/wqy/wqy-zenhei.ttc", "wenquanyi/wqy-zenhei/wqy-zenhei.ttc",
               "truetype/droid/DroidSansFallbackFull.ttf", "truetype/arphic/uming.ttc"]
        for r in roots[:1]:
            out += [(os.path.join(r, p), None) for p in rel]
        for r in roots:   # anything else that looks Chinese, in a bounded walk
            out += [(p, None) for p in _scan(r)]
    seen, uniq = set(), []
    for p, n in out:
        if p not in seen and os.path.isfile(p):
            seen.add(p)
            uniq.append((p, n))
    return uniq


_CJK_NAME = re.compile(r"(cjk|wqy|wenquanyi|droidsansfallback|sourcehan|han ?sans|simhei|simsun|msyh|"
                       r"pingfang|heiti|hiragino|lxgw|noto.*(sc|cn)|uming|ukai)", re.I)


def _scan(root, limit=3000):
    found = []
    if not os.path.isdir(root):
        return found
    n = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            n += 1
            if n > limit:
                return found
            if name.lower().endswith((".ttf", ".ttc", ".otf", ".otc")) and _CJK_NAME.search(name):
                if "-VF" not in name and "Mono" not in name:
                    found.append(os.path.join(dirpath, name))
    found.sort()
    return found
