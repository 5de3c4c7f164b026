"""What crosses the process boundary between a tool and the host: the limits and the one JSON
serialisation both sides measure with.

The host takes ``images`` out of a result and cuts the rest at 20,000 characters. If the tool
measured its answer with one serialisation (compact separators) and the host re-serialised with
another (spaces after ``:`` and ``,``), an answer that fits by the tool's count would come out cut
and unparseable. So there is exactly one: :func:`json_text`.
"""
import datetime
import json
import re

OUTPUT_LIMIT = 20000        # characters of stdout the host keeps (images excluded)
ERROR_LIMIT = 2000          # characters of an error the host keeps
CAPTURE_LIMIT = 1024 * 1024  # bytes of output the host collects before it kills the tool


def _json_default(value):
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_surrogates(text):
    """``text`` with every lone surrogate (U+D800–U+DFFF: half of a UTF-16 pair, which a PDF's or
    an RTF's text, or a JSON ``"\\ud800"`` escape, can carry) turned into U+FFFD. Such a character
    cannot be encoded as UTF-8, so writing it would fail and the answer would be lost."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub("\ufffd", text)


def json_text(obj):
    """The serialisation of every answer: UTF-8 characters as they are, compact separators, lone
    surrogates as U+FFFD (so every answer can be written)."""
    return clean_surrogates(json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=_json_default))


def without_images(obj):
    if isinstance(obj, dict) and "images" in obj:
        return {k: v for k, v in obj.items() if k != "images"}
    return obj


def text_size(obj):
    """Characters ``obj`` takes in the answer, images not counted (the host strips them first)."""
    return len(json_text(without_images(obj)))
