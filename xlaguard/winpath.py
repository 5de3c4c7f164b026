"""Windows paths the way Windows reads them, for the audit hook's inside/outside decision.

Why a module of its own: on Windows the hook used to take a path's text as it came (``..`` kept, a
textual prefix of the workspace accepted), so ``open(r"..\\..\\Desktop\\x", "w")`` and
``workspace\\..\\..\\Desktop\\x`` wrote onto the Desktop (issue 33). The decision has to be made on
the path the kernel will open, so :func:`canonical` reproduces Win32 path handling:

1. prefixes: ``\\\\?\\`` and ``\\??\\`` (verbatim: no ``..``/``.``/``/`` processing, so those are
   refused, and trailing dots stay part of the name), ``\\\\?\\UNC\\``, ``\\\\.\\C:`` (the device
   namespace naming a drive; any other device, pipe or volume → refused), UNC ``\\\\server\\share``,
   admin shares of this machine (``\\\\localhost\\C$``, ``\\\\127.0.0.1\\D$``, ``\\\\.\\``) mapped to
   their drive, drive-relative ``C:foo`` and rooted ``\\foo`` against the cwd captured at event time;
2. the Win32 normalisation (``GetFullPathNameW``: mixed separators, ``.``, ``..`` that never climbs
   above the root, trailing dots and spaces of the last component); on Windows the OS function
   itself is used, elsewhere (unit tests) the same rules in Python;
3. refusals: alternate data streams (``x.txt:stream``), device names in any component (``CON``,
   ``NUL.txt``, ``COM1``, ``LPT¹``...), wildcard characters, NUL;
4. links: the longest existing ancestor is resolved with ``GetFinalPathNameByHandleW`` (symlinks,
   junctions, 8.3 short names, subst drives, case), the missing rest appended as written; with
   ``follow=False`` the last component stays unresolved (remove/rename act on the link itself).

Every failure answers None and the hook refuses. The result is an absolute Win32 path (``C:\\...``
or ``\\\\server\\share\\...``); :func:`inside` compares it case-insensitively with the roots, which
went through the same function. The functions use no module globals: the hook clones them with a
private globals dict and binds the OS calls as default arguments, so nothing the script assigns
changes them (the same pattern as ``hook._hook_template``)."""

DEVICE_NAMES = frozenset(
    ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$"]
    + ["COM%s" % c for c in "0123456789\u00b9\u00b2\u00b3"]
    + ["LPT%s" % c for c in "0123456789\u00b9\u00b2\u00b3"])
LOCAL_HOSTS = frozenset(("LOCALHOST", "127.0.0.1", "::1", "0:0:0:0:0:0:0:1", "."))
BAD_CHARS = '<>"|?*:'


def normalize(p, cwd, _full=None, _devices=DEVICE_NAMES, _hosts=LOCAL_HOSTS, _bad=BAD_CHARS, _machine=""):
    """(absolute Win32 path, verbatim?) for ``p`` as Windows would open it with ``cwd`` as the
    current directory, or None when the path must be refused. ``_full`` is GetFullPathNameW
    (``nt._getfullpathname``) on Windows; None means the same rules in Python."""
    if type(p) is not str or p == "" or "\0" in p:
        return None
    s = p
    verbatim = False
    if s[:4] == "\\\\?\\" or s[:4] == "\\??\\":
        verbatim = True
        s = s[4:]
        if s[:4].upper() == "UNC\\":
            s = "\\\\" + s[4:]
        elif not (len(s) >= 3 and s[1] == ":" and s[2] == "\\" and s[0].isalpha() and s[0].isascii()):
            return None                     # \\?\GLOBALROOT, \\?\Volume{...}, \\?\pipe\...
        if "/" in s:
            return None                     # not a separator there: an invalid name at best
    else:
        s = s.replace("/", "\\")
        if s[:4] == "\\\\.\\":
            rest = s[4:]
            if len(rest) >= 2 and rest[1] == ":" and rest[0].isalpha() and rest[0].isascii() \
                    and (len(rest) == 2 or rest[2] == "\\"):
                s = rest if len(rest) > 2 else rest + "\\"
            else:
                return None                 # devices, named pipes, physical drives, volumes
    # UNC: \\server\share\rest; this machine's admin shares are its drives
    if s[:2] == "\\\\":
        parts = s[2:].split("\\")
        if len(parts) < 2 or parts[0] == "" or parts[1] == "":
            return None
        host, share = parts[0].upper(), parts[1]
        if (host in _hosts or (_machine and host == _machine.upper())) and len(share) == 2 and share[1] == "$" \
                and share[0].isalpha() and share[0].isascii():
            s = share[0] + ":\\" + "\\".join(parts[2:])
        elif host in _hosts:
            return None                     # another share of this machine: an alias we cannot map
    elif not verbatim:
        if len(s) >= 2 and s[1] == ":" and s[0].isalpha() and s[0].isascii():
            if s[2:3] != "\\":             # drive-relative C:foo
                if cwd[:2].upper() == s[:2].upper():
                    s = cwd.rstrip("\\") + "\\" + s[2:]
                elif _full is not None:
                    # another drive: Windows uses that drive's own current folder (the hidden "=D:"
                    # variable, which chdir sets); only GetFullPathNameW knows it
                    try:
                        s = _full(s)
                    except (OSError, ValueError):
                        return None
                    if type(s) is not str or not (len(s) >= 3 and s[1] == ":" and s[2] == "\\"):
                        return None
                else:
                    s = s[:2] + "\\" + s[2:]
        elif s[:1] == "\\":
            if cwd[:2] == "\\\\":
                cp = cwd[2:].split("\\")
                if len(cp) < 2:
                    return None
                s = "\\\\" + cp[0] + "\\" + cp[1] + s
            else:
                s = cwd[:2] + s
        else:
            s = cwd.rstrip("\\") + "\\" + s
    if s[:2] == "\\\\":
        parts = s[2:].split("\\")
        root = "\\\\" + parts[0] + "\\" + parts[1]
        comps = parts[2:]
    else:
        if not (len(s) >= 3 and s[1] == ":" and s[2] == "\\"):
            return None
        root = s[0].upper() + ":"
        comps = s[3:].split("\\")
    if verbatim:
        out = []
        for c in comps:
            if c == "":
                continue
            if c == "." or c == "..":
                return None
            out.append(c)
        full = root + "\\" + "\\".join(out)
    elif _full is not None:
        try:
            full = _full(s)
        except (OSError, ValueError):
            return None
        if type(full) is not str:
            return None
        if full[:4] == "\\\\?\\" or full[:4] == "\\\\.\\":
            return None                     # GetFullPathNameW made a device path (CON, NUL.txt...)
        if full[:2] == "\\\\":
            parts = full[2:].split("\\")
            if len(parts) < 2:
                return None
            root = "\\\\" + parts[0] + "\\" + parts[1]
            out = [c for c in parts[2:] if c != ""]
        elif len(full) >= 3 and full[1] == ":" and full[2] == "\\":
            root = full[0].upper() + ":"
            out = [c for c in full[3:].split("\\") if c != ""]
        else:
            return None
        full = root + "\\" + "\\".join(out)
    else:
        out = []
        last = len(comps) - 1
        while last >= 0 and comps[last] == "":
            last -= 1
        for i, c in enumerate(comps):
            if c == "" or c == ".":
                continue
            if c == "..":
                if out:
                    out.pop()
                continue
            if i == last:
                c = c.rstrip(". ")
                if c == "":
                    return None
            out.append(c)
        full = root + "\\" + "\\".join(out)
    for c in out:
        for ch in c:
            if ch in _bad or ord(ch) < 32:
                return None                 # ADS (name:stream), wildcards, control characters
        base = c.split(".", 1)[0].rstrip(" ").upper()
        if base in _devices:
            return None
        if c.strip(". ") == "":
            return None                     # "..." and friends: names Win32 cannot reach back
    if full.endswith("\\") and len(full) > 3:
        full = full[:-1]
    return full, verbatim


def canonical(p, cwd, follow=True, _normalize=None, _final=None, _NotFound=(), _len=len):
    """The path ``p`` names once links are resolved, as an absolute Win32 path, or None (refuse).

    ``_final`` is GetFinalPathNameByHandleW on a ``\\\\?\\`` path (``nt._getfinalpathname``), which
    opens the object: it raises one of ``_NotFound`` when it does not exist (then its parent is
    tried) and any other error ends in None. The tail that does not exist yet is appended as
    written (it is what CreateFileW will create)."""
    if type(p) is str:
        last = p.replace("/", "\\").rsplit("\\", 1)[-1]
        if last.split(".", 1)[0].rstrip(" ").upper() == "NUL" and ":" not in last:
            return "\\\\.\\NUL"              # the null device, in any folder: harmless
    n = _normalize(p, cwd)
    if n is None:
        return None
    full = n[0]
    if full[:2] == "\\\\":
        parts = full[2:].split("\\")
        root = "\\\\" + parts[0] + "\\" + parts[1]
        comps = parts[2:]
    else:
        root = full[:2]
        comps = [c for c in full[3:].split("\\") if c != ""]
    keep = []
    if not follow and comps:
        keep.append(comps.pop())
    hops = 0
    while True:
        here = root + "\\" + "\\".join(comps)
        verb = ("\\\\?\\UNC\\" + here[2:]) if here[:2] == "\\\\" else ("\\\\?\\" + here)
        try:
            got = _final(verb)
            break
        except _NotFound:
            if not comps:
                return None
            keep.append(comps.pop())
            hops += 1
            if hops > 512:
                return None
        except BaseException:
            return None
    if type(got) is not str:
        return None
    if got[:8].upper() == "\\\\?\\UNC\\":
        got = "\\\\" + got[8:]
    elif got[:4] == "\\\\?\\" and _len(got) >= 6 and got[5] == ":":
        got = got[4].upper() + got[5:]
    else:
        return None                         # a volume without a drive letter: not ours to judge
    got = got.rstrip("\\")
    keep.reverse()
    if keep:
        got = got + "\\" + "\\".join(keep)
    if _len(got) == 2:
        got += "\\"
    return got


def inside(canon, roots):
    """Is ``canon`` one of ``roots`` or below one (roots: canonical paths, upper-cased)?"""
    if canon is None:
        return False
    u = canon.upper()
    if u == "\\\\.\\NUL":
        return True
    for r in roots:
        if u == r or u.startswith(r if r.endswith("\\") else r + "\\"):
            return True
    return False


def bind(cwd_fn=None, full=None, final=None, machine=""):
    """Private copies of :func:`normalize` and :func:`canonical` wired to the OS calls: on Windows
    ``nt._getfullpathname`` and ``nt._getfinalpathname``. Returns a function ``(p, follow) ->
    canonical or None`` that reads the cwd (``cwd_fn``) at call time; its globals are a private
    dict holding only the builtins it needs, so the script can reach none of them."""
    import types
    safe = {"__builtins__": {"type": type, "str": str, "len": len, "enumerate": enumerate, "ord": ord,
                             "OSError": OSError, "ValueError": ValueError, "BaseException": BaseException}}
    norm = types.FunctionType(normalize.__code__, safe, "normalize",
                              (full, DEVICE_NAMES, LOCAL_HOSTS, BAD_CHARS, machine))
    canon = types.FunctionType(canonical.__code__, safe, "canonical",
                               (True, norm, final, (FileNotFoundError, NotADirectoryError), len))

    def resolve(p, follow, _canon=canon, _cwd=cwd_fn):
        return _canon(p, _cwd(), follow)
    return types.FunctionType(resolve.__code__, safe, "win_resolve", (canon, cwd_fn))


def os_bind():   # pragma: no cover - Windows only
    """:func:`bind` with this Windows' own path functions and machine name."""
    import nt
    import os
    return bind(os.getcwd, nt._getfullpathname, nt._getfinalpathname, os.environ.get("COMPUTERNAME", ""))
