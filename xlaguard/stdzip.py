"""The interpreter's own stdlib zip: which bytecode the hook may let ``marshal.loads`` turn into code.

Why: the hook refuses ``marshal.loads`` (crafted code objects are memory read/write primitives)
except for the cache of a source file read by the real SourceFileLoader. An *embeddable* CPython,
which desktop hosts ship on Windows, has no sources: its stdlib is bytecode only, in
``python39.zip`` beside ``python.exe``, loaded by ``zipimport`` with ``marshal.loads``. So run_python
could not even start there (issue 33).

What is accepted is decided by content, captured before the script runs: the SHA-256 of every
module's bytecode in the stdlib zips the interpreter was started with (``sys.path`` entries that
are ``.zip`` files under ``sys.base_prefix`` / the executable's folder and outside the writable
roots). A ``.pyc`` the script plants, a zip it builds, a monkeypatched ``zipimport`` or a direct
``marshal.loads`` of crafted bytes all produce bytes outside that set and stay refused; the same
bytes as a real stdlib module only ever give that module's code."""
import os
import sys


def stdlib_zips(roots=()):
    """The stdlib zips of this interpreter: ``sys.path`` entries ending in ``.zip`` that exist as
    files beside the interpreter (``sys.base_prefix``, ``sys.executable``'s folder), not in a root."""
    homes = {os.path.normcase(os.path.abspath(h)) for h in (sys.base_prefix, sys.prefix,
                                                            os.path.dirname(sys.executable)) if h}
    rs = [os.path.normcase(os.path.realpath(r)) for r in roots]
    found = []
    for entry in sys.path:
        if not isinstance(entry, str) or not entry.lower().endswith(".zip") or not os.path.isfile(entry):
            continue
        real = os.path.normcase(os.path.realpath(entry))
        if os.path.normcase(os.path.dirname(os.path.abspath(entry))) not in homes:
            continue
        if any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in rs):
            continue
        found.append(entry)
    return found


def bytecode_digests(zips):
    """SHA-256 digests of each ``.pyc`` member's code part (past the 16-byte header, exactly what
    ``zipimport`` hands to ``marshal.loads``)."""
    import hashlib
    import zipfile
    out = set()
    for z in zips:
        try:
            with zipfile.ZipFile(z) as zf:
                for info in zf.infolist():
                    if info.filename.endswith(".pyc"):
                        data = zf.read(info)
                        if len(data) > 16:
                            out.add(hashlib.sha256(data[16:]).digest())
        except (OSError, zipfile.BadZipFile, ValueError):
            continue
    return frozenset(out)


def trusted(roots=()):
    """(digests, sha256 function) for the hook; an interpreter without a stdlib zip gives an empty set."""
    import hashlib
    zips = stdlib_zips(roots)
    return (bytecode_digests(zips) if zips else frozenset()), hashlib.sha256
