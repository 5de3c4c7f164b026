"""Reading text out of pictures (OCR): scanned PDF pages, photos, screenshots, pasted images.

Engine: RapidOCR (PP-OCR detection, direction and recognition models, shipped inside its wheel)
on onnxruntime, installed into tools/pydeps as the optional group ``ocr`` of ``pydeps_boot``.
It is big (about 130 MB to download), so it is never installed for users who never meet a scan:
the first picture that needs it installs it when the time left allows, otherwise the answer
says at once what is missing and gives the one command (``python3 xla.py install ocr``); the
text the document does have is kept.

When an install is tried at all (issue 34, where a crafted PDF waited 37 s for one): only for a
file that is read anyway (a PDF's pages pass the bomb check, ``pdf_bomb``, before any page is
called a scan), only with :data:`INSTALL_MIN` seconds left, and not again within
:data:`RETRY_AFTER` of an attempt that did not finish (a marker beside pydeps): on a slow or
closed network one call pays the wait, the next ones answer at once with the command. An
assistant cannot run that command itself (run_python starts no programs), which is why the
first try is still made in-call rather than never.

Speed: nearly all of a page's time is spent inside the models (detection about a quarter,
recognition most of the rest; our layout and turning code well under 1 %). An A4 page at 200 dpi
costs 2 to 3.5 CPU seconds; its lines are recognised on one thread per core
(``share_recognition``), so on two idle cores a page takes about 1.3 s (a page full of text 2 s).
Detection runs on one core only, so in a PDF or a multi-page TIFF the next page is detected on a
thread while this page's lines are recognised (``Reader.read``'s ``upcoming``; pictures are
decoded on the reading thread, pypdf and pdfium are never used from two threads).

Budget: a page costs one to a few seconds. ``Reader.can_start`` refuses to start a page
it cannot finish before the deadline (it measures its own pages), so a long scan is read window
by window: the caller says where to continue (``next_page``).

Warm engine: under the MCP server (one long process) the pictures go to the server's
``ocr_service`` process, whose engine stays loaded between calls (``Reader.load``); the steps,
the threads and the budget stay the same, only the models run there.

Output goes through ``ocr_layout``: paragraphs and columns in reading order, grids as Markdown
tables, unsure lines marked ``〔?…〕``; each page's mean confidence is reported.
"""
import os
import threading
import time

from ..errors import FormatError, what_broke
from . import ocr_layout, ocr_turn

GROUP = "ocr"
INSTALL_MIN = 40.0        # seconds left below which an install is not even tried
RETRY_AFTER = 24 * 3600   # seconds after an unfinished install before the next in-call try
FAILED_MARK = ".ocr-install-failed"    # beside pydeps: when the last in-call install did not finish
PAGE_GUESS = 6.0          # seconds one page is assumed to cost before one has been measured
MAX_SIDE = 2400           # pictures are scaled down to this (about 200 dpi on A4) before OCR
DET_SIDE = 1280           # text lines are found on a copy at most this big, then read at full size
REC_BATCH = 1             # lines recognised per model run (see load)
MIN_CONFIDENCE = 0.6      # a page whose lines average less is noise (a photo, a blank sheet)
MODES = ("auto", "off", "force")
REMOTE = "remote"         # Reader.engine when the host's warm engine reads the pictures


class Missing(FormatError):
    """The OCR engine is not installed and could not be installed now. The message is Chinese."""


class OutOfTime(Exception):
    """Not enough time left for the next page; ``page`` is where to continue."""

    def __init__(self, page):
        Exception.__init__(self, page)
        self.page = page


def _boot():
    import pydeps_boot
    return pydeps_boot


def ready():
    """Is the engine installed? Cheap (nothing heavy is imported)."""
    return _boot().group_ready(GROUP)


def missing_message(reason=None):
    boot = _boot()
    _mods, _reqs, what, size = boot.GROUPS[GROUP]
    text = "读取图片/扫描件里的文字需要%s（%s），本机还没有安装" % (what, size)
    if reason:
        text += "，%s" % reason
    from ..pycmd import run_where
    return text + "。请%s执行一次：%s（装好后以后都能直接识别），然后重试" % (run_where(), boot.group_command(GROUP))


def _workers():
    """Threads that recognise a page's lines at once: one per core, at most four. Each runs the
    one-threaded model on its own lines, so nothing waits or spins; with a second tool running
    (the host allows two) the threads simply share the cores."""
    return max(1, min(4, os.cpu_count() or 1))


def share_recognition(engine, workers):
    """Recognise a page's lines on ``workers`` threads instead of one after the other.

    Recognition is most of a page's cost (about 70 % on an A4 page) and every line is read on its
    own, so the lines are dealt out by width (each thread gets as many long lines as short ones)
    and read at once: onnxruntime lets go of the GIL while it runs, and one session may be run
    from several threads. The answer is put back in the engine's order, so nothing else changes.
    Does nothing when this RapidOCR has other internals."""
    recognize = getattr(engine, "recognize_txt", None)
    if recognize is None or workers < 2:
        return

    def recognize_txt(crops):
        if len(crops) < 2 * workers:
            return recognize(crops)
        from concurrent.futures import ThreadPoolExecutor
        order = sorted(range(len(crops)), key=lambda i: crops[i].shape[1] / float(max(1, crops[i].shape[0])))
        shares = [order[k::workers] for k in range(workers)]
        with ThreadPoolExecutor(workers) as pool:
            answers = list(pool.map(lambda share: recognize([crops[i] for i in share]), shares))
        txts, scores, words = [None] * len(crops), [None] * len(crops), [None] * len(crops)
        for share, answer in zip(shares, answers):
            for k, i in enumerate(share):
                txts[i], scores[i], words[i] = answer.txts[k], answer.scores[k], answer.word_results[k]
        import dataclasses
        return dataclasses.replace(answers[0], imgs=list(crops), txts=tuple(txts), scores=tuple(scores),
                                   word_results=tuple(words), elapse=max(a.elapse or 0.0 for a in answers))

    engine.recognize_txt = recognize_txt


class Reader(object):
    """The loaded engine plus its timing; one per tool run (loading costs about a second)."""

    _shared = None

    def __init__(self, deadline=None):
        self.deadline = deadline
        self.engine = None
        self.seconds = []            # measured cost of each page read so far
        self.confidences = {}        # page label -> mean confidence
        self.staged = False          # the engine can be run step by step (ocr_turn.staged)
        self.pending = None          # (key, Ahead): the next picture, being detected on a thread
        self.remote = None           # ocr_client.Client: the host's warm engine reads our pictures
        self.remote_tried = False
        self._loading = threading.Lock()

    @classmethod
    def get(cls, deadline=None):
        if cls._shared is None:
            cls._shared = cls(deadline)
        cls._shared.deadline = deadline or cls._shared.deadline
        return cls._shared

    # -- engine -----------------------------------------------------------------------------
    def load(self):
        """Import (installing when there is time) and start the engine; raises Missing. Under a
        host that keeps a warm engine (the MCP server: ``ocr_service``) the pictures go there and
        nothing is loaded here; ``engine`` is then :data:`REMOTE`."""
        with self._loading:
            if self.engine is None and not self.remote_tried:
                self.remote_tried = True
                self._connect()
            if self.engine is not None:
                return self.engine
            return self._load()

    def _connect(self):
        from . import ocr_client
        client = ocr_client.Client.from_env()
        if client is None:
            return
        try:
            client.hello()
        except ocr_client.Unavailable:
            return
        self.remote, self.engine = client, REMOTE

    def _go_local(self):
        """The warm engine stopped answering (the service ended): this run loads its own."""
        with self._loading:
            if self.engine is REMOTE:
                self.remote, self.engine = None, None
        return self.load()

    def _load(self):
        boot = _boot()
        if not boot.group_ready(GROUP):
            left = self.deadline.remaining() if self.deadline is not None else 600.0
            if left < INSTALL_MIN:
                raise Missing(missing_message())
            if _failed_recently(boot):
                raise Missing(missing_message("上次自动安装没能完成（网络慢或不通），这次不再等待安装"))
            try:
                boot.ensure_group(GROUP, timeout=max(10.0, left - 2 * PAGE_GUESS))
            except boot.DependencyError as exc:
                _mark_failed(boot)
                raise Missing(missing_message("自动安装没能完成（%s）" % _first_sentence(str(exc))))
        import logging
        logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        try:
            from rapidocr import RapidOCR
            self.engine = RapidOCR(params={
                "Global.log_level": "error", "Global.max_side_len": MAX_SIDE,
                # Detection at most DET_SIDE on the long side: on an A4 page at 200 dpi this is 5x
                # faster than the default (which detects at full size) and reads the same text;
                # 1024 and 960 are cheaper still but lose the degraded pages (79 % and 66 %).
                "Det.limit_type": "max", "Det.limit_side_len": DET_SIDE,
                # One line per recognition run: a batch is padded to its widest line, and the
                # padding cost more than the runs saved (1.15 vs 1.6 CPU s on an A4 contract).
                "Rec.rec_batch_num": REC_BATCH,
                # onnxruntime's memory arena reuses buffers between runs: detection 20 % cheaper.
                "EngineConfig.onnxruntime.enable_cpu_mem_arena": True,
                # One thread per model run: the cores are used by running lines at once
                # (share_recognition), which does not spin or wait like onnxruntime's own pool.
                "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1})
        except Exception as exc:  # noqa: BLE001 - a broken install shows up as anything
            raise Missing(missing_message("已安装的引擎无法启动（%s: %s）" % (type(exc).__name__, str(exc)[:200])))
        self.staged = ocr_turn.staged(self.engine)
        share_recognition(self.engine, _workers())
        return self.engine

    # -- budget -----------------------------------------------------------------------------
    def cost(self):
        """What the next page will probably cost: the slowest page so far, or a guess."""
        return max(self.seconds) if self.seconds else PAGE_GUESS

    def can_start(self):
        if self.deadline is None:
            return True
        return self.deadline.remaining() > 1.2 * self.cost() + 1.0

    # -- reading ----------------------------------------------------------------------------
    # A page is read in two halves: ``detect`` (find the text lines: one model run on the whole
    # picture, about a quarter of a page's time, on one core) and ``recognise`` (read each line,
    # on one thread per core). ``read`` runs the next page's ``detect`` on a thread while this
    # page's lines are recognised (``upcoming``), so the core detection left idle is used.

    def detect(self, image):
        """A PIL image -> a ``_Found`` (the picture and its detected lines). Safe on a thread: it
        touches only its own picture and the detection model, which nothing else runs meanwhile."""
        engine = self.load()
        started = time.monotonic()
        image = prepare(image)
        if engine is REMOTE:
            from .ocr_client import Unavailable
            found = _Found(image.size, None)
            found.image = image
            try:
                found.handle = self.remote.detect(image)
                found.seconds = time.monotonic() - started
                return found
            except Unavailable:
                engine = self._go_local()
        import numpy
        found = _Found(image.size, numpy.asarray(image)[:, :, ::-1].copy())    # RGB -> the BGR OpenCV expects
        if self.staged:
            found.ori = engine.load_img(found.ori)
            img, found.record = engine.preprocess_img(found.ori)
            try:
                found.crops, found.det = engine.detect_and_crop(img, found.record)
            except Exception as exc:  # noqa: BLE001 - RapidOCRError: nothing detected (as RapidOCR's own call)
                if type(exc).__name__ != "RapidOCRError":
                    raise
                found.crops = []
        found.seconds = time.monotonic() - started
        return found

    def recognise(self, found):
        """A ``_Found`` -> [ocr_layout.Line]: every text line the engine read, any order."""
        self.load()
        started = time.monotonic()
        try:
            if found.handle is not None:
                lines = self._recognise_remote(found)
                if lines is not None:
                    return lines
                found = self.detect(found.image)        # the service is gone: this page here
            result, seen = self._recognise(self.load(), found)
        finally:
            # What the page cost the reading thread: its detection (or the wait for the thread
            # that detected it ahead) and its recognition. The first page of a run is always
            # detected here, so the slowest page (``cost``) is never less than a whole page.
            self.seconds.append(found.waited + time.monotonic() - started)
        boxes, texts, scores = getattr(result, "boxes", None), getattr(result, "txts", None), getattr(result, "scores", None)
        if boxes is None or texts is None:
            return []
        angle = ocr_turn.page_angle(seen)
        if angle:       # scanned sideways or upside down: the lines read right, their places are turned
            boxes = ocr_turn.turn_quads(boxes, angle, found.size[0], found.size[1])
        return [ocr_layout.Line(b, t, s) for b, t, s in zip(boxes, texts, scores) if _plausible(t, s)]

    def _recognise_remote(self, found):
        """The warm engine's lines for a picture it detected; None when it stopped answering."""
        from .ocr_client import Unavailable
        try:
            return [ocr_layout.Line(q, t, s) for q, t, s in self.remote.recognise(found.handle)]
        except (Unavailable, AttributeError):
            self._go_local()
            return None

    def _recognise(self, engine, found):
        """The engine's own steps after detection (RapidOCR.__call__ / run_ocr_steps), keeping the
        direction model's verdicts: (result, seen) with seen as ``ocr_turn.page_angle`` takes it."""
        if not self.staged:
            return engine(found.ori), None
        if not found.crops:
            return None, None
        boxes = ocr_turn.boxes_of(found.det)
        seen = {"boxes": boxes, "labels": []}
        try:
            turned, cls = engine.cls_and_rotate(found.crops)
            seen["labels"] = ocr_turn.flipped_of(cls)
            if len(seen["labels"]) == len(found.crops) == len(boxes):
                turned = ocr_turn.one_direction(found.crops, turned, boxes, seen["labels"])
            rec = engine.recognize_txt(turned)
        except Exception as exc:  # noqa: BLE001 - RapidOCRError: the engine's own call answers nothing
            if type(exc).__name__ != "RapidOCRError":
                raise
            return None, None
        return engine.build_final_output(found.ori, found.det, cls, rec, found.crops, found.record), seen

    def lines(self, image):
        """A PIL image -> [ocr_layout.Line], both halves on this thread."""
        found = self.detect(image)
        found.waited = found.seconds
        return self.recognise(found)

    def drop(self):
        """Forget the picture being detected ahead (waiting for its thread: none is left running)."""
        pending, self.pending = self.pending, None
        if pending is not None:
            pending[1].wait()

    def _claim(self, key):
        """The detection started ahead for ``key``, or None (any other one is dropped)."""
        if key is not None and self.pending is not None and self.pending[0] == key:
            pending, self.pending = self.pending, None
            return pending[1].result()
        self.drop()
        return None

    def read(self, image, label, key=None, upcoming=None):
        """A picture -> (blocks, confidence, note). ``blocks`` as ``ocr_layout.layout``; ``note``
        is a Chinese remark when nothing trustworthy was found (blank page, a photo).

        ``image`` may be a function that gives the picture (it is not called when the picture
        ``key`` was detected ahead). ``upcoming`` = (key, function giving the next picture or
        None): once this picture is detected, and when a page can still be started, the next one
        is detected on a thread while this one is recognised; ``read`` of that key takes it, any
        other call drops it (``drop``)."""
        started = time.monotonic()
        found = self._claim(key)
        if found is None:
            found = self.detect(image() if callable(image) else image)
        found.waited = time.monotonic() - started
        if upcoming is not None and self.can_start():
            try:
                picture = upcoming[1]()
            except Exception:  # noqa: BLE001 - a broken next picture is met (and said) in its turn
                picture = None
            if picture is not None:
                self.pending = (upcoming[0], Ahead(self, picture))
        try:
            lines = self.recognise(found)
        except BaseException:
            self.drop()
            raise
        if not lines:
            return [], None, "%s没有识别出文字：可能是空白页、照片或图形" % label
        chars = sum(len(l.text) for l in lines)
        confidence = sum(l.score * len(l.text) for l in lines) / max(1, chars)
        self.confidences[label] = round(confidence, 3)
        if confidence < MIN_CONFIDENCE and chars < 40:
            return [], confidence, "%s没有可靠的文字：识别把握只有 %.0f%%，可能是照片或图形，未输出" % (
                label, confidence * 100)
        return ocr_layout.layout(lines), confidence, None


class _Found(object):
    """One picture after detection: what ``Reader.recognise`` needs (RapidOCR's own intermediates)."""

    def __init__(self, size, ori):
        self.size, self.ori = size, ori
        self.record, self.crops, self.det = None, None, None
        self.handle, self.image = None, None     # detected by the warm engine (ocr_service)
        self.seconds = 0.0           # the detection's own time (on whichever thread)
        self.waited = 0.0            # how long the reading thread spent on it (or waiting for it)


class Ahead(object):
    """``Reader.detect`` of one picture on its own thread (onnxruntime lets go of the GIL, so it
    runs beside the recognition threads). ``result`` waits and returns it (or raises its error)."""

    def __init__(self, reader, image):
        import threading
        self._found, self._error = None, None
        self._thread = threading.Thread(target=self._run, args=(reader, image), name="ocr-ahead", daemon=True)
        self._thread.start()

    def _run(self, reader, image):
        try:
            self._found = reader.detect(image)
        except BaseException as exc:  # noqa: BLE001 - handed to the thread that takes the result
            self._error = exc

    def wait(self):
        self._thread.join()

    def result(self):
        self.wait()
        if self._error is not None:
            raise self._error
        return self._found


def _plausible(text, score):
    """A line worth keeping: it has a letter, digit or Chinese character, or the engine is sure.
    Texture (a checkerboard, a photo's edges) comes back as lone symbols read without confidence."""
    text = (text or "").strip()
    if not text:
        return False
    return any(c.isalnum() for c in text) or score >= 0.9


def prepare(image):
    """First frame, RGB (transparency onto white), at most MAX_SIDE pixels on its long side."""
    from PIL import Image
    try:
        image.seek(0)
    except (AttributeError, EOFError, ValueError):
        pass
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        image = Image.alpha_composite(background, rgba)
    image = image.convert("RGB")
    w, h = image.size
    if max(w, h) > MAX_SIDE:
        scale = MAX_SIDE / float(max(w, h))
        image = image.resize((max(1, int(w * scale)), max(1, int(h * scale))), Image.LANCZOS)
    return image


def emit(out, blocks):
    """Write layout blocks into a documents Builder (tables as Markdown, kept as they are)."""
    for kind, text in blocks:
        if kind == "table":
            out.raw(text)
        else:
            out.para(text)


def open_image(data_or_path):
    """Pillow image from a path or bytes; FormatError in Chinese when it is not a readable picture."""
    import io
    from PIL import Image
    try:
        image = Image.open(io.BytesIO(data_or_path) if isinstance(data_or_path, bytes) else data_or_path)
        image.load()
        return image
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types for damaged pictures
        raise FormatError("图片已损坏或格式不受支持，无法识别（%s）。请确认文件完整，或另存为 PNG/JPEG 再试" % what_broke(exc))


def has_pillow():
    """Pillow comes with the OCR group (and is often there anyway)."""
    import importlib.util
    _boot().group_ready(GROUP)           # puts tools/pydeps on the path
    return importlib.util.find_spec("PIL") is not None


def _failed_recently(boot):
    try:
        return time.time() - os.path.getmtime(os.path.join(boot.DEPS_PARENT, FAILED_MARK)) < RETRY_AFTER
    except OSError:
        return False


def _mark_failed(boot):
    try:
        with open(os.path.join(boot.DEPS_PARENT, FAILED_MARK), "w", encoding="utf-8") as fh:
            fh.write(time.strftime("%Y-%m-%d %H:%M:%S\n"))
    except OSError:
        pass


def _first_sentence(text):
    return text.split("。")[0][:300]


def similarity(a, b):
    """How alike two texts are, ignoring spaces and line breaks (0..1): a text layer against OCR."""
    import difflib
    a = "".join(a.split())[:3000]
    b = "".join(b.split())[:3000]
    if not a or not b:
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def plain(blocks):
    return "\n".join(text for _kind, text in blocks)


def summary():
    """What OCR did in this run, for the answer: None when no picture was read."""
    reader = Reader._shared
    if reader is None or not reader.seconds:
        return None
    answer = {"engine": "RapidOCR (PP-OCR)", "pages_read": len(reader.seconds),
              "seconds": round(sum(reader.seconds), 1), "confidence": dict(reader.confidences)}
    if reader.remote is not None:
        answer["warm_engine"] = True     # read by the host's engine, loaded before this call
    return answer
