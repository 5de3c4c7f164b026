"""OOXML agile encryption with any cipher and hash the spec names, for tests.

msoffcrypto-tool only writes AES-256 + SHA-512; Apache POI, Java and .NET tools also write
AES-128/192, DES, 3DES, RC2 and MD5/SHA-1 variants, which is where "wrong password" came from for
right passwords (issue 35). This writes such files by [MS-OFFCRYPTO] 2.3.4.10-13, independently
of the reader in ``xlakit/crypt/agile.py`` (its own key/IV fitting, its own segment loop), into
msoffcrypto-tool's OLE container writer, and a standard-encryption (x.2) header for an RC4 file.
``encrypt(plain_bytes, password, cipher="AES", key_bits=256, hash_name="SHA512", block=16)``.
"""
import base64
import hashlib
import io
import os
import struct

BLK_INPUT = bytes([0xFE, 0xA7, 0xD2, 0x76, 0x3B, 0x4B, 0x9E, 0x79])
BLK_VALUE = bytes([0xD7, 0xAA, 0x0F, 0x6D, 0x30, 0x61, 0x34, 0x4E])
BLK_KEY = bytes([0x14, 0x6E, 0x0B, 0xE7, 0xAB, 0xAC, 0xD0, 0xD6])


def _h(name, data):
    return hashlib.new(name.replace("SHA", "sha").replace("MD5", "md5"), data).digest()


def _sized(data, n):
    out = bytearray(data[:n])
    while len(out) < n:
        out.append(0x36)
    return bytes(out)


def _algo(cipher, key):
    from cryptography.hazmat.primitives.ciphers import algorithms
    from cryptography.hazmat.decrepit.ciphers import algorithms as old
    if cipher == "AES":
        return algorithms.AES(key)
    if cipher == "RC2":
        return old.RC2(key)
    if cipher == "DES":
        return old.TripleDES(key + key + key)
    if cipher == "3DES_112":
        return old.TripleDES(key + key[:8])
    return old.TripleDES(key)


def _enc(cipher, key, iv, data, block):
    from cryptography.hazmat.primitives.ciphers import Cipher, modes
    if len(data) % block:
        data += b"\0" * (block - len(data) % block)
    worker = Cipher(_algo(cipher, key), modes.CBC(_sized(iv, block))).encryptor()
    return worker.update(data) + worker.finalize()


def encrypt(plain, password, cipher="AES", key_bits=256, hash_name="SHA512", block=16, spin=1000):
    from msoffcrypto.method.container.ecma376_encrypted import ECMA376Encrypted
    hash_size = len(_h(hash_name, b""))
    key_salt, pw_salt = os.urandom(block), os.urandom(block)
    secret = os.urandom(key_bits // 8)
    h = _h(hash_name, pw_salt + password.encode("utf-16-le"))
    for i in range(spin):
        h = _h(hash_name, struct.pack("<I", i) + h)

    def derived(blk):
        return _sized(_h(hash_name, h + blk), key_bits // 8)

    verifier = os.urandom(block)
    enc_input = _enc(cipher, derived(BLK_INPUT), pw_salt, verifier, block)
    enc_value = _enc(cipher, derived(BLK_VALUE), pw_salt, _h(hash_name, verifier), block)
    enc_key = _enc(cipher, derived(BLK_KEY), pw_salt, secret, block)
    package = bytearray(struct.pack("<Q", len(plain)))
    for index, start in enumerate(range(0, len(plain), 4096)):
        iv = _h(hash_name, key_salt + struct.pack("<I", index))
        package += _enc(cipher, secret, iv, plain[start:start + 4096], block)
    b64 = lambda b: base64.b64encode(b).decode()   # noqa: E731
    common = ('saltSize="%d" blockSize="%d" keyBits="%d" hashSize="%d" cipherAlgorithm="%s" '
              'cipherChaining="ChainingModeCBC" hashAlgorithm="%s"' % (block, block, key_bits, hash_size,
                                                                    cipher, hash_name))
    xml = ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
           '<encryption xmlns="http://schemas.microsoft.com/office/2006/encryption" '
           'xmlns:p="http://schemas.microsoft.com/office/2006/keyEncryptor/password">'
           '<keyData %s saltValue="%s"/>'
           '<dataIntegrity encryptedHmacKey="%s" encryptedHmacValue="%s"/>'
           '<keyEncryptors><keyEncryptor uri="http://schemas.microsoft.com/office/2006/keyEncryptor/password">'
           '<p:encryptedKey spinCount="%d" %s saltValue="%s" encryptedVerifierHashInput="%s" '
           'encryptedVerifierHashValue="%s" encryptedKeyValue="%s"/></keyEncryptor></keyEncryptors></encryption>'
           % (common, b64(key_salt), b64(os.urandom(hash_size)), b64(os.urandom(hash_size)), spin, common,
              b64(pw_salt), b64(enc_input), b64(enc_value), b64(enc_key)))
    info = struct.pack("<HHI", 4, 4, 0x40) + xml.encode("utf-8")
    out = io.BytesIO()
    ECMA376Encrypted(bytes(package), info).write_to(out)
    return out.getvalue()


def standard_rc4(plain):
    """A standard-encryption (3.2) container declaring RC4 (algId 0x6801): no password opens it
    here; the reader must say the scheme is not supported."""
    from msoffcrypto.method.container.ecma376_encrypted import ECMA376Encrypted
    csp = "Microsoft Enhanced Cryptographic Provider v1.0\0".encode("utf-16-le")
    header = struct.pack("<IIIIIIII", 0x04, 0, 0x6801, 0x8004, 128, 1, 0, 0) + csp
    verifier = struct.pack("<I", 16) + os.urandom(16) + os.urandom(16) + struct.pack("<I", 20) + os.urandom(20)
    info = struct.pack("<HHII", 3, 2, 0x04, len(header)) + header + verifier
    out = io.BytesIO()
    ECMA376Encrypted(struct.pack("<Q", len(plain)) + plain, info).write_to(out)
    return out.getvalue()
