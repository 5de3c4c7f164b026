"""What a finished request hands back: ``Response`` (status, final URL, headers, decompressed
body, decoded text on demand), case-insensitive headers that ``http.cookiejar`` can read, and
the streaming gzip/deflate decoder whose output is bounded (a 5 MB cap must hold for a 5 GB
bomb). Part of ``xlakit.http``."""
import json
import urllib.parse
import zlib

from .charset import decode_body
from .errors import NetError, _fmt_bytes

def is_text_type(content_type):
    """True for answers meant to be read as text (HTML, plain text, JSON, XML, JavaScript, CSV)
    and for a missing type (which servers use for HTML far more often than for binaries)."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if not media:
        return True
    if media.startswith("text/"):
        return True
    return any(word in media for word in ("json", "xml", "javascript", "ecmascript", "x-www-form-urlencoded",
                                            "csv", "yaml"))


class Response(object):
    """One finished request. ``url`` is the final (logical) address after redirects,
    ``history`` the addresses before it, ``content`` the decompressed body (at most the cap),
    ``truncated`` True when the cap stopped the download (only with ``allow_truncated``) or the
    time ran out (only with ``partial_on_timeout``: then ``timed_out`` says, in Chinese, what was
    slow and what was read; otherwise None)."""

    def __init__(self, status, reason, url, headers, content, elapsed, history, truncated=False,
                 wire_bytes=0, timed_out=None):
        self.status = status
        self.reason = reason
        self.url = url
        self.headers = headers
        self.content = content
        self.elapsed = elapsed
        self.history = history
        self.truncated = truncated
        self.wire_bytes = wire_bytes
        self.timed_out = timed_out
        self._text = None
        self._encoding = None
        self._encoding_reason = None

    @property
    def content_type(self):
        """The media type without parameters, lower case (``text/html``), "" when absent."""
        return (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()

    def _decode(self):
        if self._text is None:
            self._text, self._encoding, self._encoding_reason = decode_body(
                self.content, self.headers.get("Content-Type") or "")

    @property
    def text(self):
        self._decode()
        return self._text

    @property
    def encoding(self):
        self._decode()
        return self._encoding

    @property
    def encoding_reason(self):
        self._decode()
        return self._encoding_reason

    @property
    def ok(self):
        return 200 <= self.status < 400

    def json(self):
        try:
            return json.loads(self.text)
        except ValueError:
            host = urllib.parse.urlsplit(self.url).hostname or self.url
            raise NetError("%s 返回的不是预期的 JSON 数据（内容类型 %s，%s），接口可能已变化或请求被拦截" % (
                host, self.content_type or "未知", _fmt_bytes(len(self.content))), "decode", self.url,
                response=self)

    def __repr__(self):
        return "<Response %d %s %d bytes>" % (self.status, self.url, len(self.content))


class _Headers(object):
    """Case-insensitive response headers; ``get_all`` for Set-Cookie and friends."""

    def __init__(self, pairs):
        self._pairs = list(pairs)

    def get(self, name, default=None):
        name = name.lower()
        for k, v in self._pairs:
            if k.lower() == name:
                return v
        return default

    def get_all(self, name, failobj=None):
        name = name.lower()
        values = [v for k, v in self._pairs if k.lower() == name]
        return values or ([] if failobj is None else failobj)

    # http.cookiejar reads cookies through this name
    get_all_cookie = get_all

    def items(self):
        return list(self._pairs)

    def __contains__(self, name):
        return self.get(name) is not None

    def __getitem__(self, name):
        return self.get(name)

    def __repr__(self):
        return repr(dict(self._pairs))


class _CookieResponse(object):
    """What ``CookieJar.extract_cookies`` wants from a response: ``info()`` with ``get_all``."""

    def __init__(self, headers):
        self._headers = headers

    def info(self):
        return self._headers


class _Decoder(object):
    """Streaming gzip/deflate decoding with an output bound (a 5 MB cap must hold for a 5 GB bomb)."""

    def __init__(self, encoding):
        self.encoding = encoding
        self._obj = None
        self._raw_deflate = False
        if encoding in ("gzip", "x-gzip"):
            self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._obj = zlib.decompressobj(zlib.MAX_WBITS)
            self._first = True
        elif encoding and encoding not in ("identity", "none"):
            raise NetError("网站用了无法解码的压缩方式 %s" % encoding, "decode")

    def feed(self, data, limit):
        if self._obj is None:
            return data
        if self.encoding == "deflate" and getattr(self, "_first", False):
            self._first = False
            try:
                probe = zlib.decompressobj(zlib.MAX_WBITS)
                probe.decompress(data[:2] if len(data) >= 2 else data)
            except zlib.error:
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)   # raw deflate (old IIS)
        out = []
        size = 0
        while data:
            bound = 0 if limit is None else max(1, limit - size)
            piece = self._obj.decompress(data, bound)
            out.append(piece)
            size += len(piece)
            data = self._obj.unconsumed_tail
            if self._obj.eof and self._obj.unused_data:   # concatenated gzip members
                data = self._obj.unused_data
                self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS if self.encoding != "deflate" else zlib.MAX_WBITS)
            if limit is not None and size >= limit:
                break
        return b"".join(out)

    def flush(self):
        if self._obj is None:
            return b""
        return self._obj.flush()
