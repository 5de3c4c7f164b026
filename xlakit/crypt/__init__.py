"""Files with an open password, one module per container family.

``office``: OOXML encryption containers and the legacy Word/Excel/PowerPoint encryptions (found
by their bytes, decrypted to a private temporary copy every reader opens); ``odf``: OpenDocument
packages saved with a password. Readers import ``crypt.office``; it hands zip packages to ``odf``.
"""
