"""Which way up a picture is: a page scanned sideways or upside down, read in the right order.

RapidOCR already reads each text line the right way round: a tall line box is turned a quarter
(``np.rot90``) before recognition, and the direction model turns a line that is upside down. What
it does not fix is the *page*: the boxes stay where they are in the picture, so on a page scanned
sideways or upside down the layout (``ocr_layout``) would order the lines bottom to top or column
by column. The direction of the page follows from what the engine already decided per line, so
no second recognition pass is needed:

- most text boxes tall (height ≥ 1.5 × width) → the page lies on its side; if the direction model
  kept the turned lines as they were, the page needs a quarter turn counter-clockwise (90°),
  if it flipped them, clockwise (270°);
- most boxes wide and most of them flipped by the direction model → the page is upside down (180°).

The same majority also corrects the direction model line by line (:func:`one_direction`): it
sees each line squeezed to 192 × 48 pixels, and on a long upright line it sometimes says "upside
down" with 95 % confidence; the line is then read turned over, as garbage ("带用采" for a
40-character line of a clean page). All lines of a page lie the same way, so once the page's
lines clearly agree, every line is read that way.

:func:`boxes_of` and :func:`flipped_of` take those per-line decisions from the engine's steps
(they are not part of its answer; ``ocr.Reader`` runs the steps itself, see :func:`staged`), and keep
them per page, so the next page can be detected while this one is recognised; :func:`page_angle` decides; :func:`turn_quads` moves the boxes into the upright page,
exactly as ``PIL.Image.rotate(angle, expand=True)`` moves the pixels.
"""
import math

TALL = 1.5            # a box this much taller than wide is a line written (or scanned) sideways
SURE = 0.9            # the direction model's score above which RapidOCR really turns a line
MAJORITY = 2.0        # one reading must outweigh the other this many times to turn the page


def staged(engine):
    """Can this RapidOCR be run step by step (``ocr.Reader`` runs detection and recognition apart,
    to keep the per-line directions and to detect the next page early)? False when its internals
    differ; then pages are read in one call and simply not turned."""
    return all(callable(getattr(engine, name, None)) for name in
               ("load_img", "preprocess_img", "detect_and_crop", "cls_and_rotate", "recognize_txt",
                "build_final_output"))


def boxes_of(det):
    """The detected boxes as lists of (x, y), in the order the crops are in."""
    boxes = getattr(det, "boxes", None)
    return [] if boxes is None else [[(float(x), float(y)) for x, y in b] for b in boxes]


def flipped_of(cls):
    """The direction model's per-line verdict: True where it turns the line over (180°)."""
    labels = []
    for item in getattr(cls, "cls_res", None) or []:
        try:
            label, score = str(item[0]), float(item[1])
        except (TypeError, ValueError, IndexError):
            label, score = "0", 0.0
        labels.append(label == "180" and score > SURE)
    return labels


def one_direction(crops, turned, boxes, flipped):
    """The line pictures to recognise: where the page's lines clearly agree (one way outweighs the
    other MAJORITY times), every line is taken that way, else each as the direction model said.
    ``crops`` as detected, ``turned`` after the model, ``flipped`` its per-line verdicts. Tall and
    wide boxes are counted apart (RapidOCR turns a tall line a quarter before the model sees it)."""
    out = list(turned)
    weights = [max(_sides(quad)) for quad in boxes]
    tall = [height >= TALL * width for width, height in (_sides(quad) for quad in boxes)]
    for group in (True, False):
        lines = [i for i in range(len(crops)) if tall[i] == group]
        down = sum(weights[i] for i in lines if flipped[i])
        up = sum(weights[i] for i in lines if not flipped[i])
        if up > MAJORITY * down:
            for i in lines:
                out[i] = crops[i]
        elif down > MAJORITY * up:
            for i in lines:
                out[i] = turned[i] if flipped[i] else crops[i][::-1, ::-1].copy()   # half a turn
    return out


def _sides(quad):
    (x0, y0), (x1, y1), _p2, (x3, y3) = quad[:4]
    return math.hypot(x1 - x0, y1 - y0), math.hypot(x3 - x0, y3 - y0)


def page_angle(seen):
    """The counter-clockwise turn (0, 90, 180, 270) that makes the page upright."""
    if not seen or not seen["boxes"] or len(seen["labels"]) != len(seen["boxes"]):
        return 0
    tall = {True: 0.0, False: 0.0}     # flipped by the direction model -> weight (long side)
    wide = {True: 0.0, False: 0.0}
    for quad, flipped in zip(seen["boxes"], seen["labels"]):
        width, height = _sides(quad)
        if height >= TALL * width:
            tall[flipped] += height
        elif width >= TALL * height:
            wide[flipped] += width
    tall_all, wide_all = tall[True] + tall[False], wide[True] + wide[False]
    if tall_all > MAJORITY * wide_all and tall_all > 0:
        return 270 if tall[True] > tall[False] else 90
    if wide_all > 0 and wide[True] > MAJORITY * wide[False]:
        return 180
    return 0


def turn_point(x, y, angle, width, height):
    """Where pixel (x, y) of a width × height picture lands after a counter-clockwise turn."""
    if angle == 90:
        return y, width - x
    if angle == 180:
        return width - x, height - y
    if angle == 270:
        return height - y, x
    return x, y


def turn_quads(quads, angle, width, height):
    """Each box moved into the upright page, its corners again clockwise from the top-left."""
    out = []
    for quad in quads:
        moved = [turn_point(float(x), float(y), angle, width, height) for x, y in quad]
        start = min(range(len(moved)), key=lambda i: (moved[i][0] + moved[i][1], moved[i][1]))
        out.append(moved[start:] + moved[:start])
    return out
