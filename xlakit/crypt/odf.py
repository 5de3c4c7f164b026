"""OpenDocument files saved with a password (odt/ods/odp): decrypted into a plain package.

An encrypted ODF package is an ordinary zip whose parts (content.xml, styles.xml, pictures) are
each deflated and then encrypted; ``META-INF/manifest.xml`` stays readable and gives, per part,
the algorithm, IV, salt, iteration count and a checksum of the first kilobyte. So the package is
recognised cheaply (``encryption-data`` in the manifest) and, with the password, rebuilt as an
unencrypted package that every existing reader (documents' odt, tables' ods) opens unchanged.

ODF 1.2 as LibreOffice and OpenOffice write it: start key SHA-256 (or SHA-1) of the UTF-8
password, PBKDF2-HMAC-SHA1, then AES-256-CBC (W3C padding) or, in older files, Blowfish CFB-64
(only where the installed cryptography still ships Blowfish). The checksum tells a wrong
password apart from a damaged file. LibreOffice 24.2's "wholesome" encryption (Argon2id and
AES-GCM over one inner package) is not handled: the caller says how to save without it.
"""
import base64
import hashlib
import zipfile
import zlib
import xml.etree.ElementTree as ET

MF = "{urn:oasis:names:tc:opendocument:xmlns:manifest:1.0}"
AES_CBC = "http://www.w3.org/2001/04/xmlenc#aes256-cbc"


class WrongPassword(Exception):
    pass


class Unsupported(Exception):
    pass


def encrypted(path):
    """True when ``path`` is an ODF package whose manifest lists encrypted parts."""
    try:
        with zipfile.ZipFile(path) as zf:
            info = zf.getinfo("META-INF/manifest.xml")
            if info.file_size > 4 * 1024 * 1024:
                return False
            return b"encryption-data" in zf.read(info)
    except (KeyError, zipfile.BadZipFile, OSError, ValueError, NotImplementedError):
        return False


def _b64(text):
    return base64.b64decode(text or "")


def _attr(el, name, default=None):
    return el.get(MF + name, default) if el is not None else default


def _checksum_ok(data, kind, expected):
    if not expected:
        return True
    kind = (kind or "SHA1/1K").lower()
    algo = hashlib.sha256 if "sha256" in kind else hashlib.sha1
    part = data[:1024] if "1k" in kind else data
    return algo(part).digest() == expected


def _decrypt_part(raw, enc, password):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.ciphers import Cipher, modes
    from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
    algorithm = enc.find(MF + "algorithm")
    derivation = enc.find(MF + "key-derivation")
    start = enc.find(MF + "start-key-generation")
    name = _attr(algorithm, "algorithm-name", "")
    if _attr(derivation, "key-derivation-name", "PBKDF2") != "PBKDF2":
        raise Unsupported(_attr(derivation, "key-derivation-name"))
    start_name = (_attr(start, "start-key-generation-name", "SHA1") or "").lower()
    secret = password.encode("utf-8")
    start_key = hashlib.sha256(secret).digest() if "sha256" in start_name else hashlib.sha1(secret).digest()
    size = int(_attr(derivation, "key-size", "32" if name == AES_CBC else "16"))
    key = PBKDF2HMAC(algorithm=hashes.SHA1(), length=size, salt=_b64(_attr(derivation, "salt")),
                     iterations=int(_attr(derivation, "iteration-count", "1024"))).derive(start_key)
    iv = _b64(_attr(algorithm, "initialisation-vector"))
    if name == AES_CBC:
        from cryptography.hazmat.primitives.ciphers import algorithms
        if len(raw) % 16:
            raise WrongPassword()
        plain = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor().update(raw)
        pad = plain[-1] if plain else 0
        body = plain[:-pad] if 0 < pad <= 16 else plain
    elif name.lower().startswith("blowfish"):
        try:
            from cryptography.hazmat.decrepit.ciphers.algorithms import Blowfish
        except ImportError:
            try:
                from cryptography.hazmat.primitives.ciphers.algorithms import Blowfish
            except ImportError:
                raise Unsupported("Blowfish")
        plain = body = Cipher(Blowfish(key), modes.CFB(iv)).decryptor().update(raw)
    else:
        raise Unsupported(name or "?")
    expected = _b64(_attr(enc, "checksum"))
    if not (_checksum_ok(plain, _attr(enc, "checksum-type"), expected) or
            _checksum_ok(body, _attr(enc, "checksum-type"), expected)):
        raise WrongPassword()
    try:
        return zlib.decompress(body, -15)
    except zlib.error:
        return body                  # a part stored without compression before encryption


def decrypt_to(path, password, target):
    """Write the unencrypted package of ``path`` to ``target``. Raises WrongPassword (checksum
    mismatch on the first encrypted part) or Unsupported (algorithm name)."""
    if not password:
        raise WrongPassword()
    with zipfile.ZipFile(path) as zf:
        manifest = zf.read("META-INF/manifest.xml")
        if b"encrypted-package" in manifest:
            raise Unsupported("wholesome")
        root = ET.fromstring(manifest)
        entries = {}
        for entry in root.iter(MF + "file-entry"):
            enc = entry.find(MF + "encryption-data")
            if enc is not None:
                entries[_attr(entry, "full-path")] = enc
                entry.remove(enc)
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
            for info in zf.infolist():
                if info.filename == "META-INF/manifest.xml":
                    continue
                data = zf.read(info)
                if info.filename in entries:
                    data = _decrypt_part(data, entries[info.filename], password)
                kind = zipfile.ZIP_STORED if info.filename == "mimetype" else zipfile.ZIP_DEFLATED
                out.writestr(info.filename, data, compress_type=kind)
            ET.register_namespace("manifest", MF[1:-1])
            out.writestr("META-INF/manifest.xml", ET.tostring(root, encoding="utf-8", xml_declaration=True))
