"""The Chinese typefaces a document names (宋体, 仿宋, 楷体, 黑体, 方正小标宋简体 …) mapped to the best
face installed here, for LibreOffice's PDF export.

Why: the docx keeps the real Windows names (what Word/WPS on the user's PC use), but a machine
without Windows fonts lets fontconfig pick one sans face for all of them: the 公文's title, 仿宋
body, 黑体 and 楷体 headings, and a report's 宋体 body all come out the same Noto Sans. LibreOffice
has a font replacement table (Tools ▸ Options ▸ Fonts), filled with the names missing here;
``pdf_out`` writes it into the private profile it converts with, so the PDF shows a
serif for 宋体/小标宋, a fangsong face for 仿宋 (a serif when none is installed), a kai face for 楷体,
a sans for 黑体.

Freely licensed faces that fill the roles (Debian/Ubuntu package names; the same fonts are
downloadable for Windows and macOS): serif 宋体 — fonts-noto-cjk (Noto Serif CJK SC),
fonts-arphic-uming; 仿宋 — fonts-cwtex-fs (cwTeX 仿宋, traditional glyph forms); 楷体 —
fonts-lxgw-wenkai (霞鹜文楷), fonts-arphic-ukai; 黑体 — fonts-noto-cjk (Noto Sans CJK SC),
fonts-wqy-zenhei. ``FONT_PACKAGES`` names them for messages.
"""
import os
import shutil
import subprocess

# role -> names a document may use for it (Windows, WPS, macOS)
ROLES = {
    "song": ("宋体", "SimSun", "新宋体", "NSimSun", "方正小标宋简体", "方正小标宋_GBK", "小标宋", "华文中宋", "STZhongsong",
             "华文宋体", "STSong", "宋体-简", "Songti SC"),
    "fangsong": ("仿宋", "仿宋_GB2312", "FangSong", "FangSong_GB2312", "华文仿宋", "STFangsong", "方正仿宋_GBK",
                 "方正仿宋简体"),
    "kai": ("楷体", "楷体_GB2312", "KaiTi", "KaiTi_GB2312", "华文楷体", "STKaiti", "方正楷体_GBK", "方正楷体简体"),
    "hei": ("黑体", "SimHei", "方正黑体_GBK", "方正黑体简体", "华文黑体", "STHeiti", "微软雅黑", "Microsoft YaHei"),
}
# role -> installed families to use, best first; a role with none falls back to the next role named
CANDIDATES = {
    "song": ("Noto Serif CJK SC", "Source Han Serif SC", "思源宋体", "AR PL UMing CN", "AR PL SungtiL GB",
             "Songti SC", "STSong"),
    "fangsong": ("FangSong", "仿宋", "STFangsong", "cwTeX Q Fangsong Medium", "cwTeXFangSong"),
    "kai": ("KaiTi", "楷体", "STKaiti", "LXGW WenKai", "霞鹜文楷", "AR PL UKai CN", "AR PL KaitiM GB",
            "cwTeX Q Kai Medium", "cwTeXKai"),
    "hei": ("Noto Sans CJK SC", "Source Han Sans SC", "思源黑体", "WenQuanYi Zen Hei", "WenQuanYi Micro Hei",
            "SimHei", "PingFang SC"),
}
FALLBACK = {"fangsong": "song", "kai": "song", "song": "hei", "hei": None}
FONT_PACKAGES = {"song": "fonts-noto-cjk（Noto Serif CJK SC）", "fangsong": "fonts-cwtex-fs（cwTeX 仿宋）",
                 "kai": "fonts-lxgw-wenkai（霞鹜文楷）或 fonts-arphic-ukai", "hei": "fonts-noto-cjk（Noto Sans CJK SC）"}


def installed_families():
    """The font family names fontconfig knows (every localized name), or None where there is no
    fc-list (Windows, most Macs: the fonts a document names are usually there)."""
    fc = shutil.which("fc-list")
    if not fc:
        return None
    try:
        out = subprocess.run([fc, ":", "family"], capture_output=True, timeout=10).stdout.decode("utf-8", "replace")
    except (OSError, subprocess.SubprocessError):
        return None
    names = set()
    for line in out.splitlines():
        for name in line.split(","):
            name = name.strip().replace("\\-", "-")
            if name:
                names.add(name)
    return names


def best_faces(families):
    """{role: installed family or None}."""
    out = {}
    for role in ROLES:
        pick, r = None, role
        while r and not pick:
            pick = next((f for f in CANDIDATES[r] if f in families), None)
            r = FALLBACK[r]
        out[role] = pick
    return out


def replacements(families=None):
    """[(name a document uses, installed face)] for every name that is not installed itself."""
    families = installed_families() if families is None else families
    if not families:
        return []
    faces = best_faces(families)
    pairs = []
    for role, names in ROLES.items():
        if faces[role]:
            pairs += [(n, faces[role]) for n in names if n not in families]
    return pairs


def registry_items(pairs):
    """LibreOffice registry items (registrymodifications.xcu) turning on the replacement table
    with ``pairs``. "Always": headless LibreOffice applies no entry without it (fontconfig's own
    substitute counts as "found"); only names missing here are listed, so an installed 仿宋 stays."""
    if not pairs:
        return ""
    from xml.sax.saxutils import escape
    items = ['<item oor:path="/org.openoffice.Office.Common/Font/Substitution"><prop oor:name="Replacement" '
             'oor:op="fuse"><value>true</value></prop></item>']
    for n, (name, face) in enumerate(pairs):
        items.append('<item oor:path="/org.openoffice.Office.Common/Font/Substitution/FontPairs">'
                     '<node oor:name="_%d" oor:op="replace">'
                     '<prop oor:name="Always" oor:op="fuse"><value>true</value></prop>'
                     '<prop oor:name="OnScreenOnly" oor:op="fuse"><value>false</value></prop>'
                     '<prop oor:name="ReplaceFont" oor:op="fuse"><value>%s</value></prop>'
                     '<prop oor:name="SubstituteFont" oor:op="fuse"><value>%s</value></prop></node></item>'
                     % (n, escape(name), escape(face)))
    return "\n".join(items) + "\n"


if __name__ == "__main__":      # a look at this machine: python -m xlakit.documents.cjk_fonts
    fam = installed_families()
    print(best_faces(fam or set()))
    print(os.linesep.join("%s -> %s" % p for p in replacements(fam)))
