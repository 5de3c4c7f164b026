"""Office files with an open password: found by their bytes, decrypted once for every reader.

Users say "打开这个加密的表格，密码是 1234". Documents and tables both read through here, so the
rules are one: OOXML agile/standard encryption (the ``EncryptionInfo``/``EncryptedPackage`` OLE
container), and the legacy RC4 / CryptoAPI / XOR encryption of Word 97 ``.doc``, Excel ``.xls``
and PowerPoint ``.ppt`` are undone by msoffcrypto-tool (through ``pydeps_boot``; it brings the
cryptography library, which pypdf's AES needs too); OpenDocument packages saved with a password
(odt/ods/odp) by ``crypt.odf`` on the same cryptography.

Excel's read-only-recommended workbooks are encrypted with the built-in password
"VelvetSweatshop": Excel opens them without asking, so do we (it is tried before asking).

Why a temporary file: every reader takes a path (zipfile, olefile, xlrd, the fast xlsx parser)
and the decrypted bytes must not reach the shared caches under ``~/.xla/cache`` (the callers
turn their caches off for a ``Plain``). The copy lives in a private ``mkdtemp`` folder (mode 0700)
and is removed on ``close()`` and, as a last resort, at process exit. It is not a user's file,
so it does not go through ``files``.

The password itself never leaves this module: messages are fixed sentences, library errors are
reduced to their class, and nothing is logged.
"""
import atexit
import os
import struct
import stat
import time

from .. import sniff
from ..errors import FormatError, what_broke

# shutil, tempfile and the agile cipher (hashlib, base64) are imported where a file is actually
# encrypted: every table read passes through ``office_encrypted``, and a fresh tool process should
# not pay for the decryption machinery a plain workbook never needs (issue 39, small calls).

__all__ = ["NEED_PASSWORD", "WRONG_PASSWORD", "DEFAULT_PASSWORD", "office_encrypted", "Plain", "decrypt"]

DEFAULT_PASSWORD = "VelvetSweatshop"
NEED_PASSWORD = ("文件已加密（设置了打开密码），没有密码读不了。请向用户要打开密码，用 password 参数传入后重试；"
                 "或请用户在 Office/WPS 里去掉密码后另存一份")
WRONG_PASSWORD = ("密码不对，解不开这个加密文件。请向用户确认打开密码（注意大小写、全角/半角和空格）后，"
                  "用 password 参数重新传入")
NEED_ODF_PASSWORD = ("这是加密的 OpenDocument 文件（LibreOffice/WPS 保存时设了打开密码，不是文件损坏），没有密码读不了。"
                     "请向用户要打开密码，用 password 参数传入后重试；或请用户在 LibreOffice 里输入密码打开，"
                     "「文件 → 另存为」时取消勾选「使用密码保存」，另存一份再试")
UNSUPPORTED = ("文件用本工具解不开的方式加密（%s），这不是密码不对。请用户在 Office/WPS 里输入密码打开，"
               "去掉密码（或改用 Office 默认的 AES 加密）后另存一份再试")

_FOLDERS = []


def _cleanup_all():
    if not _FOLDERS:
        return
    import shutil
    for folder in list(_FOLDERS):
        shutil.rmtree(folder, ignore_errors=True)


atexit.register(_cleanup_all)

STALE_AFTER = 180      # seconds: no tool lives longer than the host's 60 s


def _sweep_stale():
    """Remove decrypted copies a killed tool left behind (SIGKILL at the host's 60 s skips atexit):
    a plain copy of a password-protected file must not outlive the call that needed it."""
    import shutil
    import tempfile
    base = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(base) if n.startswith("xla-plain-")]
    except OSError:
        return
    now = time.time()
    for name in names:
        folder = os.path.join(base, name)
        try:
            st = os.lstat(folder)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode) and st.st_uid == getattr(os, "getuid", lambda: st.st_uid)() \
                and now - st.st_mtime > STALE_AFTER:
            shutil.rmtree(folder, ignore_errors=True)


def office_encrypted(path, kind):
    """True when ``path`` (sniffed as ``kind``) is an Office file with an open password. Cheap: the
    OLE container flag, the Word FIB flag, the Excel FILEPASS record near the start of the
    workbook stream, PowerPoint's ``EncryptedSummary`` stream."""
    if kind.kind == "ole" and kind.encrypted:
        return True
    if kind.kind in ("odt", "ods", "odp"):
        return kind.encrypted
    names = kind.names
    if kind.kind == "ppt" or "powerpoint document" in names:
        return "encryptedsummary" in names
    if kind.kind not in ("doc", "wps", "xls", "et") or kind.damaged:
        return False
    ole = sniff.open_ole(path)
    if ole is None:      # no olefile, or a damaged container: the readers report it
        return False
    try:
        if kind.base == "doc" and ole.exists("WordDocument"):
            head = ole.openstream("WordDocument").read(12)
            return len(head) >= 12 and bool(struct.unpack_from("<H", head, 0x0A)[0] & 0x0100)
        for name in ("Workbook", "Book"):
            if ole.exists(name):
                return _filepass(ole.openstream(name).read(4096))
    except Exception:  # noqa: BLE001
        return False
    finally:
        ole.close()
    return False


def _filepass(data):
    """A FILEPASS record (0x002F) among the first records after the BOF of a BIFF stream."""
    pos = 0
    for _ in range(12):
        if pos + 4 > len(data):
            return False
        rec, size = struct.unpack_from("<HH", data, pos)
        if rec == 0x002F:
            return True
        if pos and rec == 0x0809:      # the next substream: no FILEPASS in the globals
            return False
        pos += 4 + size
    return False


class Plain(object):
    """The decrypted copy of an encrypted file: ``path`` to read, ``close()`` removes it."""

    def __init__(self, path, folder, default_password):
        self.path = path
        self.folder = folder
        self.default_password = default_password   # opened with Excel's built-in password

    def close(self):
        if self.folder:
            import shutil
            shutil.rmtree(self.folder, ignore_errors=True)
            if self.folder in _FOLDERS:
                _FOLDERS.remove(self.folder)
            self.folder = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def decrypt(path, password=None, suffix=""):
    """A ``Plain`` copy of encrypted ``path``. ``password`` None/"" tries Excel's default password
    only, then says one is needed; a wrong one says so, in other words."""
    import shutil
    import tempfile
    import pydeps_boot
    from . import agile
    if _is_zip(path):
        return _decrypt_odf(path, password, suffix)
    try:
        msoffcrypto = pydeps_boot.ensure("msoffcrypto")
    except pydeps_boot.DependencyError as exc:
        raise FormatError("文件已加密，解密需要的组件没装上：%s" % exc)
    from msoffcrypto import exceptions as mso_errors
    tries = [p for p in (password or None, DEFAULT_PASSWORD) if p]
    streams = _ooxml_streams(path)
    _sweep_stale()
    folder = tempfile.mkdtemp(prefix="xla-plain-")
    _FOLDERS.append(folder)
    target = os.path.join(folder, "plain" + suffix)
    try:
        if streams is not None and agile.is_agile(streams[0]):
            plain = _agile_plain(streams, tries)
            if plain is not None:
                attempt, data = plain
                with open(target, "wb") as dst:
                    dst.write(data)
                return Plain(target, folder, attempt == DEFAULT_PASSWORD and attempt is not password)
            tries = []
        elif streams is not None:
            _check_standard(streams[0])
        for attempt in tries:
            try:
                with open(path, "rb") as src:
                    office = msoffcrypto.OfficeFile(src)
                    if not office.is_encrypted():
                        raise FormatError("文件标着加密，但解密组件认为它没有加密，无法处理。请用 Office/WPS 打开后另存一份再试")
                    office.load_key(password=attempt, **({"verify_password": True}
                                                         if _verifies(office) else {}))
                    with open(target, "wb") as dst:
                        office.decrypt(dst)
            except mso_errors.InvalidKeyError:
                continue
            except mso_errors.DecryptionError as exc:
                if "verif" in str(exc).lower() or "key" in str(exc).lower():
                    continue
                raise FormatError(UNSUPPORTED % "解密组件不认识的加密方式", encrypted=True, unsupported=True)
            except (mso_errors.FileFormatError, mso_errors.ParseError):
                raise FormatError(UNSUPPORTED % "加密信息无法解析，可能已损坏", encrypted=True, unsupported=True)
            except FormatError:
                raise
            except Exception:  # noqa: BLE001 - a wrong key often surfaces as garbage
                continue
            if os.path.getsize(target) == 0:
                continue
            if type(office).__name__ == "Ppt97File":
                _restore_ppt_edits(path, target)
            return Plain(target, folder, attempt == DEFAULT_PASSWORD and attempt is not password)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        _FOLDERS.remove(folder)
        raise
    shutil.rmtree(folder, ignore_errors=True)
    _FOLDERS.remove(folder)
    raise FormatError(WRONG_PASSWORD if password else NEED_PASSWORD,
                      encrypted=True, wrong_password=bool(password))


def _ooxml_streams(path):
    """The ``EncryptionInfo`` and ``EncryptedPackage`` streams of an encrypted OOXML container, or
    None for the legacy formats (their encryption lives inside the document streams)."""
    import pydeps_boot
    try:
        olefile = pydeps_boot.ensure("olefile")
    except pydeps_boot.DependencyError:
        return None
    try:
        ole = olefile.OleFileIO(path)
    except Exception:  # noqa: BLE001 - msoffcrypto reports a damaged container
        return None
    try:
        if not (ole.exists("EncryptionInfo") and ole.exists("EncryptedPackage")):
            return None
        return ole.openstream("EncryptionInfo").read(), ole.openstream("EncryptedPackage").read()
    except Exception:  # noqa: BLE001
        return None
    finally:
        ole.close()


def _agile_plain(streams, tries):
    """(password that worked, plain bytes) for agile encryption, None when no password fits; a
    cipher or hash we cannot undo says so by name (the password may well be right)."""
    from . import agile
    for attempt in tries:
        try:
            return attempt, agile.decrypt(streams[0], streams[1], attempt)
        except agile.WrongPassword:
            continue
        except agile.Unsupported as exc:
            raise FormatError(UNSUPPORTED % exc, encrypted=True, unsupported=True)
    return None


STANDARD_CIPHERS = {0x6801: "RC4 流加密", 0x6603: "三重 DES（3DES）", 0x6601: "DES", 0x6602: "RC2"}


def _check_standard(info):
    """Standard encryption (versions 2.2/3.2/4.2) that msoffcrypto-tool cannot undo: it assumes
    AES with SHA-1, so an RC4 or DES file would otherwise be "wrong password"; extensible
    encryption (x.3) is a third-party scheme."""
    if len(info) < 32:
        return
    major, minor = struct.unpack_from("<HH", info, 0)
    if minor == 3 and major in (3, 4):
        raise FormatError(UNSUPPORTED % "第三方扩展加密", encrypted=True, unsupported=True)
    if minor != 2:
        raise FormatError(UNSUPPORTED % ("未知版本 %d.%d 的加密" % (major, minor)), encrypted=True, unsupported=True)
    alg, alg_hash = struct.unpack_from("<II", info, 20)
    if alg in STANDARD_CIPHERS:
        raise FormatError(UNSUPPORTED % STANDARD_CIPHERS[alg], encrypted=True, unsupported=True)
    if alg_hash not in (0, 0x8004):
        raise FormatError(UNSUPPORTED % ("%s 散列" % {0x8003: "MD5", 0x8002: "MD4"}.get(alg_hash, "非 SHA-1")),
                          encrypted=True, unsupported=True)


def _is_zip(path):
    with open(path, "rb") as fh:
        return fh.read(4) == b"PK\x03\x04"


def _decrypt_odf(path, password, suffix):
    """An OpenDocument package saved with a password, rebuilt unencrypted (``crypt.odf``)."""
    if not password:
        raise FormatError(NEED_ODF_PASSWORD, encrypted=True, wrong_password=False)
    import shutil
    import tempfile
    import pydeps_boot
    try:
        pydeps_boot.ensure("msoffcrypto")       # brings cryptography
    except pydeps_boot.DependencyError as exc:
        raise FormatError("文件已加密，解密需要的组件没装上：%s" % exc)
    from . import odf as odf_crypt
    folder = tempfile.mkdtemp(prefix="xla-plain-")
    _FOLDERS.append(folder)
    target = os.path.join(folder, "plain" + suffix)
    try:
        odf_crypt.decrypt_to(path, password, target)
        return Plain(target, folder, False)
    except BaseException as exc:
        shutil.rmtree(folder, ignore_errors=True)
        _FOLDERS.remove(folder)
        if isinstance(exc, odf_crypt.WrongPassword):
            raise FormatError(WRONG_PASSWORD, encrypted=True, wrong_password=True)
        if isinstance(exc, odf_crypt.Unsupported):
            raise FormatError(UNSUPPORTED.replace("Office/WPS", "LibreOffice").replace("（或改用 Office 默认的 AES 加密）", "")
                              % _odf_scheme(str(exc)), encrypted=True, unsupported=True)
        if isinstance(exc, Exception) and not isinstance(exc, FormatError):
            raise FormatError("加密的 OpenDocument 文件解不开（%s），可能已损坏。请用户在 LibreOffice 里输入密码打开，"
                              "去掉密码后另存一份再试" % what_broke(exc), encrypted=True)
        raise


def _odf_scheme(name):
    """The Chinese name of an ODF encryption scheme ``crypt.odf`` cannot undo."""
    if name == "wholesome":
        return "LibreOffice 24.2 起可选的整包加密（Argon2id + AES-GCM）"
    if name == "Blowfish":
        return "Blowfish 加密（本机的 cryptography 组件不带这种算法）"
    return "%s 算法" % (name.rsplit("#", 1)[-1][:30] or "未知")


def _restore_ppt_edits(original, plain):
    """msoffcrypto-tool also "decrypts" a .ppt's UserEditAtom and PersistDirectoryAtom records,
    which [MS-PPT] keeps unencrypted, so the copy's edit chain is noise: put the original bytes of
    those records back (same stream size, written in place with olefile)."""
    import olefile
    try:
        src = olefile.OleFileIO(original)
        try:
            data = src.openstream("PowerPoint Document").read()
            current = src.openstream("Current User").read()
        finally:
            src.close()
        ranges = []
        edit = struct.unpack_from("<I", current, 16)[0] if len(current) >= 20 else 0
        seen = set()
        while edit and edit not in seen and len(seen) < 1000 and edit + 28 <= len(data):
            seen.add(edit)
            rtype, length = struct.unpack_from("<HI", data, edit + 2)
            if rtype != 0x0FF5:
                break
            last, directory = struct.unpack_from("<II", data, edit + 16)
            ranges.append((edit, edit + 8 + length))
            if directory + 8 <= len(data) and struct.unpack_from("<H", data, directory + 2)[0] == 0x1772:
                ranges.append((directory, directory + 8 + struct.unpack_from("<I", data, directory + 4)[0]))
            edit = last
        if not ranges:
            return
        dst = olefile.OleFileIO(plain, write_mode=True)
        try:
            fixed = bytearray(dst.openstream("PowerPoint Document").read())
            if len(fixed) != len(data):
                return
            for start, end in ranges:
                fixed[start:end] = data[start:end]
            dst.write_stream("PowerPoint Document", bytes(fixed))
        finally:
            dst.close()
    except Exception:  # noqa: BLE001 - the reader still falls back on scanning the records
        return


def _verifies(office):
    """OOXML files can check a password before decrypting (otherwise a wrong key yields a broken
    zip); the legacy formats verify inside ``load_key`` anyway."""
    return type(office).__name__ == "OOXMLFile"
