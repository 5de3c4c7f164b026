"""Zip packages (OPC: xlsx, xlsm, docx, pptx; the zip side of odt/ods too): the pieces every reader
and writer of such a package needs, in one place.

- names: :func:`rels_part` (where a part's relationships live), :func:`resolve` (a relationship
  target relative to its source part -> the absolute part name), :func:`part_name` (the
  ``/xl/workbook.xml`` form ``[Content_Types].xml`` uses);
- reading: :func:`parse_rels` (``{rId: (type tail, target part)}``, external targets left out,
  either quote style, any namespace prefix, since it goes through a real XML parser);
- writing: :func:`content_types`, :func:`relationships`, :func:`xml_text`, :func:`xml_attr` and
  :func:`clean_xml_text` (XML 1.0 cannot hold most control characters or lone surrogates);
- safety: :func:`check_package` refuses a zip bomb before anything is decompressed (a part
  bigger than :data:`MAX_PART_BYTES` uncompressed, all parts over :data:`MAX_TOTAL_BYTES`, or a
  big part packed more than :data:`MAX_RATIO` times, which real sheet XML never is), and
  :func:`read_part` reads one part whole with a cap (styles, workbook, relationships: parts
  that are small in every real file).

The limits say "not a real document" with room to spare: a million-row sheet is about 300 MB of
XML packed 10-30 times; deflate at its best packs about 1,000 times, which only a bomb reaches.
Errors are :class:`xlakit.errors.FormatError` in Chinese; this module imports nothing above the
errors.
"""
import posixpath
import re
import xml.etree.ElementTree as ET

from .errors import FormatError

MAX_PART_BYTES = 2 << 30            # one part, uncompressed
MAX_TOTAL_BYTES = 4 << 30           # all parts together, uncompressed
MAX_RATIO = 250                     # uncompressed / compressed, for parts above RATIO_FROM bytes
RATIO_FROM = 32 << 20
MAX_SMALL_PART = 256 << 20          # a part read whole (styles, workbook, rels, shared strings)
MAX_MEMBERS = 100000

NS_CONTENT_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"
NS_PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
NS_OFFICE_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
REL_OFFICE_DOCUMENT = NS_OFFICE_RELS + "/officeDocument"
REL_CORE_PROPS = NS_PKG_RELS + "/metadata/core-properties"
REL_EXTENDED_PROPS = NS_OFFICE_RELS + "/extended-properties"
CT_RELS = "application/vnd.openxmlformats-package.relationships+xml"
CT_XML = "application/xml"
CT_CORE_PROPS = "application/vnd.openxmlformats-package.core-properties+xml"
CT_EXTENDED_PROPS = "application/vnd.openxmlformats-officedocument.extended-properties+xml"
XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'

BOMB = ("「%s」不像正常的 Office 文件：其中的 %s 解压后有 %s，%s。为安全起见没有打开它；"
        "如果文件来源可靠，请用 Excel/WPS/Word 打开后另存一份再试")


# ---------------------------------------------------------------------------------------------
# Part names

def part_name(name):
    """``xl/workbook.xml`` -> ``/xl/workbook.xml`` (the form content types and absolute targets use)."""
    return "/" + name.lstrip("/")


def rels_part(part):
    """The relationships part of ``part`` (``""`` = the package itself -> ``_rels/.rels``)."""
    folder, base = posixpath.split(part.lstrip("/"))
    return posixpath.join(folder, "_rels", base + ".rels")


def resolve(source_part, target):
    """A relationship target as a zip member name: absolute targets (``/xl/...``) as they are,
    relative ones against the source part's folder (``../media/x.png`` works)."""
    if target.startswith("/"):
        return posixpath.normpath(target).lstrip("/")
    folder = posixpath.dirname(source_part.lstrip("/"))
    return posixpath.normpath(posixpath.join(folder, target)).lstrip("/")


def _local(tag):
    return tag.rsplit("}", 1)[-1] if "}" in tag else tag


def parse_rels(data, source_part):
    """``{rId: (type tail, target member)}`` from the bytes of a .rels part; external targets
    (hyperlinks, linked files) are left out. ``data`` None or empty -> ``{}``."""
    rels = {}
    if not data:
        return rels
    for rel in ET.fromstring(data):
        if _local(rel.tag) != "Relationship" or rel.get("TargetMode") == "External":
            continue
        target = rel.get("Target") or ""
        rels[rel.get("Id")] = ((rel.get("Type") or "").rsplit("/", 1)[-1], resolve(source_part, target))
    return rels


# ---------------------------------------------------------------------------------------------
# Writing

# Characters XML 1.0 cannot hold: C0 controls but tab/LF/CR, lone surrogates (JSON can carry
# "\ud800"; UTF-8 cannot encode it) and the non-characters U+FFFE/U+FFFF.
ILLEGAL_XML_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def clean_xml_text(text):
    """``text`` without the characters XML cannot hold (see :data:`ILLEGAL_XML_RE`)."""
    return ILLEGAL_XML_RE.sub("", text)


def xml_text(text):
    """Escape text content (``&``, ``<``, ``>``)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def xml_attr(text):
    """Escape a double-quoted attribute value (also ``"`` and the white space XML would fold)."""
    return (xml_text(text).replace('"', "&quot;").replace("\n", "&#10;").replace("\r", "&#13;")
            .replace("\t", "&#9;"))


def content_types(overrides, defaults=None):
    """``[Content_Types].xml`` for ``overrides`` ({part: content type}, part with or without the
    leading slash); ``defaults`` ({extension: content type}) adds to rels and xml."""
    ext = {"rels": CT_RELS, "xml": CT_XML}
    ext.update(defaults or {})
    parts = [XML_DECLARATION, '<Types xmlns="%s">' % NS_CONTENT_TYPES]
    parts += ['<Default Extension="%s" ContentType="%s"/>' % (xml_attr(e), xml_attr(t)) for e, t in ext.items()]
    parts += ['<Override PartName="%s" ContentType="%s"/>' % (xml_attr(part_name(p)), xml_attr(t))
              for p, t in overrides.items()]
    parts.append("</Types>")
    return "".join(parts)


def relationships(rels):
    """A .rels part for ``rels``: a list of ``(id, type, target)`` or ``(id, type, target, mode)``."""
    parts = [XML_DECLARATION, '<Relationships xmlns="%s">' % NS_PKG_RELS]
    for rel in rels:
        rid, typ, target = rel[:3]
        mode = ' TargetMode="%s"' % xml_attr(rel[3]) if len(rel) > 3 and rel[3] else ""
        parts.append('<Relationship Id="%s" Type="%s" Target="%s"%s/>' % (
            xml_attr(rid), xml_attr(typ), xml_attr(target), mode))
    parts.append("</Relationships>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# Safety

def _size_text(n):
    return "%.1f GB" % (n / float(1 << 30)) if n >= 1 << 30 else "%d MB" % (n >> 20)


def check_package(zf, label="文件"):
    """Refuse a zip bomb by the sizes the central directory declares (Python's zipfile never
    inflates a member past its declared size, so the declaration bounds every later read).
    ``label`` names the file in the message. Returns the total uncompressed size."""
    infos = zf.infolist()
    if len(infos) > MAX_MEMBERS:
        raise FormatError("「%s」里有 %d 个压缩成员，不像正常的 Office 文件，为安全起见没有打开。请另存一份再试" % (
            label, len(infos)))
    total = 0
    for info in infos:
        size = info.file_size
        total += size
        if size > MAX_PART_BYTES:
            raise FormatError(BOMB % (label, info.filename, _size_text(size), "超过单个部件 %s 的上限" %
                                      _size_text(MAX_PART_BYTES)))
        if size > RATIO_FROM and size > MAX_RATIO * max(info.compress_size, 1):
            raise FormatError(BOMB % (label, info.filename, _size_text(size), "压缩比超过 %d 倍（正常表格约 10–30 倍）" %
                                      MAX_RATIO))
    if total > MAX_TOTAL_BYTES:
        raise FormatError(BOMB % (label, "全部内容", _size_text(total), "超过 %s 的上限" % _size_text(MAX_TOTAL_BYTES)))
    return total


def read_part(zf, name, limit=MAX_SMALL_PART, label="文件"):
    """One member read whole, refused when its declared size is over ``limit``."""
    info = zf.getinfo(name)
    if info.file_size > limit:
        raise FormatError(BOMB % (label, name, _size_text(info.file_size), "超过这类部件 %s 的上限" %
                                  _size_text(limit)))
    return zf.read(info)


