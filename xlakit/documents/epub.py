"""EPUB e-books: the chapters in reading (spine) order, each XHTML page read by the HTML reader.

``META-INF/container.xml`` names the package document (OPF); its ``manifest`` maps ids to files
and its ``spine`` lists the reading order. Zip order means nothing (LibreOffice writes the last
chapter first), and the navigation page (``properties="nav"``, a table of contents) is not a
chapter. The title is the OPF's ``dc:title``. DRM-encrypted books (``META-INF/encryption.xml``
naming the chapters) cannot be read and say so.
"""
import posixpath
import urllib.parse
import zipfile

from .base import FormatError, zip_read, zip_xml, why
from . import html

NAME = "epub"
LABEL = "EPUB 电子书"

OPF = "{http://www.idpf.org/2007/opf}"
CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
DC = "{http://purl.org/dc/elements/1.1/}"
XHTML_TYPES = ("application/xhtml+xml", "text/html", "application/xml", "text/xml")


def accepts(kind):
    if kind.kind == "epub":
        return True, None
    return False, "不是 EPUB 电子书"


def _opf_path(zf):
    root = zip_xml(zf, "META-INF/container.xml")
    if root is not None:
        for rootfile in root.iter(CONTAINER + "rootfile"):
            if rootfile.get("full-path"):
                return rootfile.get("full-path")
    found = [n for n in zf.namelist() if n.lower().endswith(".opf")]
    return found[0] if found else None


def chapters(zf):
    """(title, [chapter part names in spine order])."""
    opf_name = _opf_path(zf)
    opf = zip_xml(zf, opf_name) if opf_name else None
    if opf is None:
        raise FormatError("EPUB 里找不到目录文件（content.opf），电子书已损坏或不完整")
    base = posixpath.dirname(opf_name)
    manifest = {}
    for item in opf.iter(OPF + "item"):
        href = urllib.parse.unquote(item.get("href", ""))
        manifest[item.get("id")] = (posixpath.normpath(posixpath.join(base, href)) if base else href,
                                    item.get("media-type", ""), item.get("properties", ""))
    order = []
    for ref in opf.iter(OPF + "itemref"):
        name, media, props = manifest.get(ref.get("idref"), (None, "", ""))
        if name and media in XHTML_TYPES and "nav" not in props.split() and name not in order:
            order.append(name)
    title_el = opf.find(".//" + DC + "title")
    title = (title_el.text or "").strip() if title_el is not None else ""
    return title or None, order


def convert(path, kind, out, deadline=None):
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise FormatError("EPUB 电子书已损坏，无法打开（%s）" % why(exc))
    with zf:
        title, order = chapters(zf)
        if title:
            out.title = title
        encrypted = zip_xml(zf, "META-INF/encryption.xml")
        if encrypted is not None and any(urllib.parse.unquote(ref.get("URI", "")) in order
                                         for ref in encrypted.iter("{http://www.w3.org/2001/04/xmlenc#}CipherReference")):
            raise FormatError("这本 EPUB 电子书有版权保护（DRM 加密），读不出正文。请用购买它的阅读软件打开")
        names = set(zf.namelist())
        for name in order:
            if deadline is not None:
                deadline.check("读取电子书")
            if name not in names:
                out.warnings.append("电子书目录里的章节 %s 在文件里找不到，已跳过" % name)
                continue
            text, _codec = html.decode(zip_read(zf, name))
            html.convert_text(text, out, deadline)
