"""What a PDF page without a text layer really holds, so the answer does not call it a scan.

Why: most "text-less" PDFs people send are not scans at all. Of 23 real PDFs that were all
called "扫描版（图片）PDF，需要 OCR", 16 had no image on any page: blank pages, forms whose only
content is their fields, pages holding nothing but comments. Telling the user to run OCR on those
sends them the wrong way, and OCR would find nothing. So a text-less page is sorted here:

- ``picture``: an image (an image XObject, one inside a form XObject, or an inline image), or
  vector drawing (text turned into outlines reads well by OCR): a scan as far as we can tell;
- ``form``: nothing drawn, only form fields (widget annotations);
- ``notes``: nothing drawn, only comments (text, highlight, stamp … annotations; links do not
  count, they are invisible);
- ``blank``: nothing drawn at all.
"""
import re

PAINT = re.compile(rb"(?<![A-Za-z0-9*'\"])(?:f\*?|F|S|s|B\*?|b\*?|sh|Do|BI)(?![A-Za-z0-9*'\"])")
LABELS = {"blank": "空白页", "form": "只有表单域", "notes": "只有批注"}


def holds(page):
    """'picture', 'form', 'notes' or 'blank' (a damaged page is a 'picture': today's answer)."""
    try:
        if _draws(page):
            return "picture"
        kinds = [str(a.get_object().get("/Subtype")) for a in (page.get("/Annots") or [])]
    except Exception:  # noqa: BLE001 - unreadable structure: say no more than before
        return "picture"
    if "/Widget" in kinds:
        return "form"
    if any(k not in ("/Link", "/Popup") for k in kinds):
        return "notes"
    return "blank"


def _draws(page):
    """Does the content paint anything: images, form XObjects, paths, shadings, inline images?"""
    resources = page.get("/Resources")
    resources = resources.get_object() if resources is not None else {}
    xobjects = resources.get("/XObject")
    if xobjects and len(xobjects.get_object()):
        return True
    contents = page.get_contents()
    return bool(contents is not None and PAINT.search(contents.get_data()))


def summary(kinds):
    """'第 1、3 页是空白页，第 2 页只有表单域' for {page: kind} (pictures left out)."""
    parts = []
    for kind in ("blank", "form", "notes"):
        pages = [n for n, k in sorted(kinds.items()) if k == kind]
        if pages:
            shown = "、".join(str(n) for n in pages[:20]) + ("……" if len(pages) > 20 else "")
            parts.append("第 %s 页%s%s" % (shown, "是" if kind == "blank" else "", LABELS[kind]))
    return "，".join(parts)
