"""OOXML "agile" encryption ([MS-OFFCRYPTO] 2.3.4.10-13), every cipher and hash the spec allows.

Why our own: msoffcrypto-tool's agile path hard-codes AES, takes a 16-byte IV whatever the block
size, does not pad a key that is longer than the hash (AES-192/256 over SHA-1), and falls back on
SHA-1 for a hash it does not know (MD5). Files written by Apache POI, Java and .NET tools with
those parameters then failed as "wrong password" although the password was right. Here every
parameter comes from the ``EncryptionInfo`` XML: cipher AES / RC2 / DES / 3DES (112 and 168
bit) in CBC or CFB chaining, hash SHA-1/256/384/512 or MD5, keys truncated or padded with
0x36 and IVs sized to the block as the spec says. A cipher or hash outside that list raises
``Unsupported`` with its Chinese name, so the user hears "not supported", never "wrong password".

Input is the two streams of the OLE container (``EncryptionInfo``, ``EncryptedPackage``); the
output is the plain package bytes. The password never leaves this module.
"""
import base64
import hashlib
import struct
import xml.etree.ElementTree as ET

__all__ = ["WrongPassword", "Unsupported", "is_agile", "decrypt", "describe"]

SEGMENT = 4096
BLK_VERIFIER_INPUT = bytes([0xFE, 0xA7, 0xD2, 0x76, 0x3B, 0x4B, 0x9E, 0x79])
BLK_VERIFIER_VALUE = bytes([0xD7, 0xAA, 0x0F, 0x6D, 0x30, 0x61, 0x34, 0x4E])
BLK_KEY_VALUE = bytes([0x14, 0x6E, 0x0B, 0xE7, 0xAB, 0xAC, 0xD0, 0xD6])

HASHES = {"SHA1": "sha1", "SHA-1": "sha1", "SHA256": "sha256", "SHA-256": "sha256",
          "SHA384": "sha384", "SHA-384": "sha384", "SHA512": "sha512", "SHA-512": "sha512",
          "MD5": "md5"}
# what a user is told when a file uses something we cannot undo
NAMES = {"RC4": "RC4 流加密", "DESX": "DESX", "MD4": "MD4 散列", "MD2": "MD2 散列",
         "RIPEMD-128": "RIPEMD-128 散列", "RIPEMD-160": "RIPEMD-160 散列", "WHIRLPOOL": "Whirlpool 散列"}
MAX_SPIN = 10000000


class WrongPassword(Exception):
    pass


class Unsupported(Exception):
    """``str(exc)`` is the Chinese name of the cipher, hash or scheme."""


def is_agile(info):
    """True when the ``EncryptionInfo`` stream declares agile encryption (version 4.4)."""
    return len(info) >= 8 and struct.unpack_from("<HH", info, 0) == (4, 4)


class _Params(object):
    def __init__(self, node, what):
        get = node.get
        self.cipher = (get("cipherAlgorithm") or "").upper()
        self.chaining = get("cipherChaining") or "ChainingModeCBC"
        self.hash = (get("hashAlgorithm") or "").upper()
        try:
            self.key_bits = int(get("keyBits"))
            self.block = int(get("blockSize"))
            self.hash_size = int(get("hashSize") or 0)
            self.salt = base64.b64decode(get("saltValue") or "")
        except (TypeError, ValueError):
            raise Unsupported("%s参数不完整" % what)
        if self.hash not in HASHES:
            raise Unsupported(NAMES.get(self.hash, "%s 散列" % (self.hash or "未知")))
        if self.chaining not in ("ChainingModeCBC", "ChainingModeCFB"):
            raise Unsupported("%s 分组模式" % self.chaining)
        _cipher(self.cipher, b"\0" * (self.key_bits // 8), self.block)   # a name or size we cannot use

    def digest(self, data):
        return hashlib.new(HASHES[self.hash], data).digest()

    def decrypt(self, key, iv, data):
        from cryptography.hazmat.primitives.ciphers import Cipher, modes
        iv = _fit(iv, self.block)
        mode = modes.CBC(iv) if self.chaining == "ChainingModeCBC" else modes.CFB8(iv)
        if len(data) % self.block and self.chaining == "ChainingModeCBC":
            data = data[:len(data) - len(data) % self.block]
        worker = Cipher(_cipher(self.cipher, key, self.block), mode).decryptor()
        return worker.update(data) + worker.finalize()


def _cipher(name, key, block):
    """The cryptography algorithm for a spec cipher name and key (raises ``Unsupported``)."""
    bits = len(key) * 8
    try:
        if name == "AES" and bits in (128, 192, 256) and block == 16:
            from cryptography.hazmat.primitives.ciphers import algorithms
            return algorithms.AES(key)
        if name in ("DES", "3DES", "3DES_112") and block == 8:
            try:
                from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
            except ImportError:                           # cryptography before 43
                from cryptography.hazmat.primitives.ciphers.algorithms import TripleDES
            if name == "DES" and bits == 64:
                return TripleDES(key * 3)
            if name == "3DES_112" and bits == 128:
                return TripleDES(key + key[:8])
            if name == "3DES" and bits == 192:
                return TripleDES(key)
        if name == "RC2" and block == 8 and 40 <= bits <= 128:
            from cryptography.hazmat.decrepit.ciphers.algorithms import RC2
            return RC2(key)
    except ImportError:
        raise Unsupported("%s 加密（本机的 cryptography 组件太旧，不带这种算法）" % name)
    except ValueError:
        pass
    label = {"AES": "AES-%d" % bits, "DES": "DES", "3DES": "三重 DES（3DES）",
             "3DES_112": "三重 DES（112 位）", "RC2": "RC2-%d" % bits}.get(name)
    if label:
        raise Unsupported("%s 加密（密钥长度 %d 位、分组 %d 字节不合规范）" % (label, bits, block))
    raise Unsupported(NAMES.get(name, "%s 加密" % (name or "未知算法")))


def _fit(data, size):
    """Truncate to ``size`` bytes or pad with 0x36, as the spec does for keys and IVs."""
    return data[:size] if len(data) >= size else data + b"\x36" * (size - len(data))


def _parse(info):
    try:
        root = ET.fromstring(info[8:].rstrip(b"\0"))
    except ET.ParseError:
        raise Unsupported("加密信息无法解析")
    key_data = encrypted_key = None
    for node in root.iter():
        tag = node.tag.rsplit("}", 1)[-1]
        if tag == "keyData":
            key_data = node
        elif tag == "encryptedKey" and "keyEncryptor/password" in node.tag:
            encrypted_key = node
    if key_data is None:
        raise Unsupported("加密信息不完整")
    if encrypted_key is None:
        raise Unsupported("证书加密（没有密码可用）")
    return key_data, encrypted_key


def describe(info):
    """A short Chinese name of the scheme (for messages and tests): e.g. "AES-256 + SHA512"."""
    key_data, _ = _parse(info)
    return "%s-%s + %s" % (key_data.get("cipherAlgorithm"), key_data.get("keyBits"), key_data.get("hashAlgorithm"))


def decrypt(info, package, password, deadline=None):
    """The plain package bytes of agile-encrypted ``package`` (the ``EncryptedPackage`` stream)."""
    key_data_node, node = _parse(info)
    data = _Params(key_data_node, "数据")
    pw = _Params(node, "密码")
    try:
        spin = int(node.get("spinCount"))
        verifier_input = base64.b64decode(node.get("encryptedVerifierHashInput") or "")
        verifier_value = base64.b64decode(node.get("encryptedVerifierHashValue") or "")
        key_value = base64.b64decode(node.get("encryptedKeyValue") or "")
    except (TypeError, ValueError):
        raise Unsupported("加密信息不完整")
    if not 0 <= spin <= MAX_SPIN:
        raise Unsupported("加密信息不合规范")
    h = pw.digest(pw.salt + password.encode("utf-16-le"))
    for i in range(spin):
        h = pw.digest(struct.pack("<I", i) + h)
        if deadline is not None and not i % 100000:
            deadline.check("解密")

    def key_for(block_key):
        return _fit(pw.digest(h + block_key), pw.key_bits // 8)

    salt_iv = pw.salt
    plain_input = pw.decrypt(key_for(BLK_VERIFIER_INPUT), salt_iv, verifier_input)[:len(pw.salt)]
    expected = pw.decrypt(key_for(BLK_VERIFIER_VALUE), salt_iv, verifier_value)
    size = pw.hash_size or len(pw.digest(b""))
    if pw.digest(plain_input)[:size] != expected[:size]:
        raise WrongPassword()
    secret = pw.decrypt(key_for(BLK_KEY_VALUE), salt_iv, key_value)[:data.key_bits // 8]
    _cipher(data.cipher, secret, data.block)
    if len(package) < 8:
        raise Unsupported("加密内容为空")
    total = struct.unpack_from("<Q", package, 0)[0]
    body = memoryview(package)[8:]
    out = bytearray()
    index = 0
    for start in range(0, len(body), SEGMENT):
        iv = data.digest(data.salt + struct.pack("<I", index))
        out += data.decrypt(secret, iv, bytes(body[start:start + SEGMENT]))
        index += 1
        if len(out) >= total:
            break
    return bytes(out[:total])
