"""What one write puts into a .docx besides text: pictures with their media parts and numbered
captions, the table of contents with bookmarks on the headings it lists, and section breaks
(landscape pages). One ``Extras`` per write, for a new document and for an append alike: the
append path seeds it with the ids already taken in the user's document (relationship ids, media
names, drawing ids, bookmark ids, the last figure number) so nothing collides and every existing
part stays as it was.
"""
from . import docx_layout, docx_media

TITLE_MARK = "_XlaTitle"
REL_IMAGE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/image"


class Extras(object):
    def __init__(self, layout, pictures, esc, plain, caption_style="Caption", rel_ids=(), media_names=(),
                 first_figure=1, next_shape=1, next_bookmark=1, part_base="word"):
        self.layout = layout
        self.pictures = pictures            # {path as written: docx_media.Picture}
        self.esc, self.plain = esc, plain
        self.caption_style = caption_style
        self.rel_ids = set(rel_ids)
        self.media_names = set(media_names)
        self.figure = first_figure - 1
        self.shape = next_shape
        self.bookmark = next_bookmark
        self.part_base = part_base
        self.media = []                     # (part name relative to the package, bytes, rel id, target)
        self.orientation = layout.orientation
        self.marks = {}                     # block index -> bookmark name, for headings a TOC lists
        self.toc_entries = []
        self.toc_style_ids = None
        self.sections = 0
        self.estimate_pages = True          # off in append mode: the pages before are unknown
        self.title_index = None             # block index of the document title (plan_toc)
        self.toc_levels = (1, 3)
        self.find_title = True              # off in append mode: the text added is not the document's start

    # ---- headings and the TOC
    def plan_toc(self, blocks):
        """Bookmarks for the headings (levels 1–3, or 2–3 under a document title) when the blocks
        hold a [TOC] line. The title: the first block a level-1 heading that is the only one (the
        report's name, not a chapter); it is centred and the TOC does not list it."""
        heads = [n for n, b in enumerate(blocks) if b[0] == "h" and b[1] == 1]
        first = next((n for n, b in enumerate(blocks) if b[0] not in ("orient",)), None)
        self.title_index = heads[0] if self.find_title and len(heads) == 1 and heads[0] == first else None
        self.toc_levels = (2, 3) if self.title_index is not None else (1, 3)
        if not any(b[0] == "toc" for b in blocks):
            return
        pages = {}
        if self.estimate_pages:
            pages = docx_layout.estimate_pages(blocks, self.layout, self._picture_points, self.plain)
        for n, block in enumerate(blocks):
            if block[0] == "h" and self.toc_levels[0] <= block[1] <= self.toc_levels[1]:
                name = "_TocXla%04d" % (len(self.marks) + 1)
                self.marks[n] = name
                self.toc_entries.append((block[1], self.plain(block[2]), name, pages.get(n)))

    def _picture_points(self, block, orientation):
        tw, th = self.layout.text_size(orientation)
        _cx, cy = docx_media.fit(self.pictures[block[2]], tw, th, block[3])
        return cy / 12700.0 + 6 + (30.0 if block[1] else 0.0)

    def heading_wrap(self, index, runs_xml):
        name = self.marks.get(index)
        if index == self.title_index and self.toc_entries:
            # the title a TOC leaves out (\o "2-3"): LibreOffice lists every outline level from 1, so
            # pdf_out's export macro finds the title by this bookmark and keeps it out of the index
            name = TITLE_MARK
        if not name:
            return runs_xml
        bid = self.bookmark
        self.bookmark += 1
        return '<w:bookmarkStart w:id="%d" w:name="%s"/>%s<w:bookmarkEnd w:id="%d"/>' % (bid, name, runs_xml, bid)

    def toc(self):
        return docx_layout.toc_xml(self.toc_entries, self.esc, style_ids=self.toc_style_ids, levels=self.toc_levels)

    # ---- pictures
    def _rel_id(self):
        n = len(self.rel_ids) + 1
        while "rIdImg%d" % n in self.rel_ids:
            n += 1
        rid = "rIdImg%d" % n
        self.rel_ids.add(rid)
        return rid

    def _media_name(self, ext):
        n = 1
        while "media/xla_image%d.%s" % (n, ext) in self.media_names:
            n += 1
        name = "media/xla_image%d.%s" % (n, ext)
        self.media_names.add(name)
        return name

    def picture(self, caption, path, width_pct):
        pic = self.pictures[path]
        same = [m for m in self.media if m[1] is pic.data]
        if same:
            rid = same[0][2]
        else:
            rid = self._rel_id()
            target = self._media_name(pic.ext)
            self.media.append(((self.part_base + "/" if self.part_base else "") + target, pic.data, rid, target))
        tw, th = self.layout.text_size(self.orientation)
        cx, cy = docx_media.fit(pic, tw, th, width_pct)
        shape = self.shape
        self.shape += 1
        name = "图片 %d" % shape
        out = docx_media.picture_para_xml(docx_media.drawing_xml(rid, cx, cy, shape, name, caption))
        if caption:
            self.figure += 1
            out += docx_media.caption_xml(self.caption_style, self.figure, caption, self.esc)
        return out

    def relationships(self):
        """(id, type, target) of the media relationships to add to the main part's rels."""
        return [(rid, REL_IMAGE, target) for _part, _data, rid, target in self.media]

    # ---- sections
    def orient(self, orientation):
        """A section break when the orientation changes: the paragraph carries the properties of
        the section it ends."""
        if orientation == self.orientation:
            return ""
        # and a paragraph one twip high: LibreOffice drops a section break that a table follows
        out = (docx_layout.section_break_xml(self.layout.sect_xml(self.orientation))
               + '<w:p><w:pPr><w:spacing w:before="0" w:after="0" w:line="20" w:lineRule="exact"/>'
               '<w:ind w:firstLineChars="0" w:firstLine="0"/></w:pPr></w:p>')
        self.orientation = orientation
        self.sections += 1
        return out

    def final_sect(self):
        return self.layout.sect_xml(self.orientation)
