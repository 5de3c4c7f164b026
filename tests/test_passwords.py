"""Open passwords (issue 26): encrypted Office files and PDFs read with ``password``, Excel's default
password without asking, a wrong password told apart from a missing one, the password nowhere in
what the tools print or log. Fixtures: tests/fixtures/documents/crypt/make_encrypted.py (msoffcrypto
-tool, LibreOffice, pypdf) and the older encrypted.xlsx / encrypted.xls / tio_encrypted.xlsx."""
import glob
import os

import pytest

from conftest import FIXTURES, ok, fail, assert_contract

CRYPT = os.path.join(FIXTURES, "documents", "crypt")
SECRET = "机密2024"


def _logs(home):
    return "".join(open(p, encoding="utf-8").read() for p in glob.glob(str(home / ".xla" / "logs" / "*")))


@pytest.mark.parametrize("name", ["report_agile.docx", "report_rc4.doc", "report_aes.pdf", "report_aes.odt",
                                  "report_blowfish.odt"])
def test_documents_with_password(run, home, name, tmp_path):
    path = os.path.join(CRYPT, name)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    data = ok(run("read_document", {"path": path, "password": SECRET}, extra_env={"TMPDIR": str(tmp)}))
    assert "年度工作报告" in data["text"] and "1350 万元" in data["text"]
    need = run("read_document", {"path": path})
    err = fail(need)
    assert "密码" in err and "password" in err and "不对" not in err
    wrong = run("read_document", {"path": path, "password": SECRET + "x"})
    err_wrong = fail(wrong)
    assert "密码不对" in err_wrong and err_wrong != err
    printed = "".join(r.stdout + r.stderr for r in (need, wrong)) + _logs(home)
    assert SECRET not in printed and "2024x" not in printed
    assert not os.listdir(str(tmp))          # the decrypted copy is gone


def test_encrypted_odf(run):
    """LibreOffice's password-protected odt/ods: said to be encrypted (not "damaged") and how to save
    it without a password; with the password it reads exactly like the plain file."""
    err = fail(run("read_document", {"path": os.path.join(CRYPT, "report_aes.odt")}))
    assert "OpenDocument" in err and "损坏" in err and "不是文件损坏" in err and "使用密码保存" in err
    plain = ok(run("read_document", {"path": os.path.join(FIXTURES, "documents", "report.odt")}))["text"]
    data = ok(run("read_document", {"path": os.path.join(CRYPT, "report_aes.odt"), "password": SECRET}))
    assert data["text"] == plain and data["encrypted"] is True
    path = os.path.join(CRYPT, "ledger_aes.ods")
    assert "使用密码保存" in fail(run("read_spreadsheet", {"path": path}))
    assert "密码不对" in fail(run("read_spreadsheet", {"path": path, "password": "1234"}))
    rows = ok(run("read_spreadsheet", {"path": path, "password": SECRET}))["sheets"][0]["rows"]
    plain = ok(run("read_spreadsheet", {"path": os.path.join(FIXTURES, "sample.ods")}))["sheets"][0]["rows"]
    assert rows == plain and rows[2][:3] == ["2024-01-05", "苹果", 10]


def test_spreadsheets_with_password(run, home):
    for name, password in (("encrypted.xlsx", "1234"), ("encrypted.xls", "1234")):
        path = os.path.join(FIXTURES, name)
        data = ok(run("read_spreadsheet", {"path": path, "password": password}))
        assert data["sheets"][0]["total_rows"] == 8 and "wrong_password" not in data
        err = fail(run("read_spreadsheet", {"path": path}))
        assert "已加密" in err and "password" in err
        assert "密码不对" in fail(run("read_spreadsheet", {"path": path, "password": "4321"}))
    # every table tool reads through the same layer
    path = os.path.join(FIXTURES, "encrypted.xlsx")         # formulas_lo.xlsx with password 1234
    for tool, args in (("probe_table", {"path": path}), ("calc_table", {"path": path}),
                       ("filter_table", {"path": path, "where": [{"column": "金额", "op": "not_empty"}]}),
                       ("dedupe_table", {"path": path, "keys": ["品名"]}), ("clean_table", {"path": path}),
                       ("pivot_table", {"path": path, "row": {"column": "品名"}, "col": {"column": "说明"},
                                        "value": "金额"}),
                       ("lookup_table", {"left_path": path, "right_path": os.path.join(FIXTURES, "formulas_lo.xlsx"),
                                         "left_key": "品名", "right_key": "品名"})):
        res = run(tool, dict(args, password="1234"))
        data = ok(res)
        assert "1234" not in res.stdout.replace(path, "") + res.stderr, tool
        err = fail(run(tool, dict(args, password="9999")))
        assert "密码不对" in err and "9999" not in err, tool
    logs = _logs(home)
    assert '"password": "***"' in logs.replace(" ", "").replace('"password":"***"', '"password": "***"')
    assert "9999" not in logs and '"1234"' not in logs


@pytest.mark.parametrize("name", ["velvet.xlsx", "velvet.xls"])
def test_default_password_opens_without_asking(run, name):
    data = ok(run("read_spreadsheet", {"path": os.path.join(CRYPT, name), "limit": 5}))
    assert data["sheets"][0]["rows"]
    assert any("默认密码" in w for w in data.get("warnings", []))


def test_password_never_echoed_by_argument_checks(run):
    res = run("read_document", {"path": os.path.join(CRYPT, "report_agile.docx"), "password": [SECRET]})
    assert not res.ok and "password" in res.error and SECRET not in res.error + res.stdout + res.stderr


def test_a_killed_tool_s_decrypted_copy_is_swept_by_the_next_call(run, tmp_path):
    """SIGKILL at the host's 60 s skips atexit: the next decrypting call removes plain copies older
    than any tool can live (and leaves a fresh one, another tool's, alone)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    stale, fresh = tmp / "xla-plain-stale", tmp / "xla-plain-fresh"
    for folder in (stale, fresh):
        folder.mkdir()
        (folder / "plain.docx").write_bytes(b"secret")
    os.utime(str(stale), (1000000000, 1000000000))
    ok(run("read_document", {"path": os.path.join(CRYPT, "report_agile.docx"), "password": SECRET},
           extra_env={"TMPDIR": str(tmp)}))
    assert sorted(os.listdir(str(tmp))) == ["xla-plain-fresh"]


# --- issue 35: right passwords that were "wrong" (agile ciphers msoffcrypto-tool does not undo) ---

AGILE = [("AES", 128, "SHA1", 16), ("AES", 192, "SHA1", 16), ("AES", 256, "SHA256", 16),
         ("AES", 128, "MD5", 16), ("DES", 64, "MD5", 8), ("3DES", 192, "SHA384", 8),
         ("3DES_112", 128, "SHA1", 8), ("RC2", 128, "SHA1", 8)]


@pytest.mark.parametrize("params", AGILE, ids=["-".join(map(str, p[:3])) for p in AGILE])
def test_agile_ciphers_with_the_right_password(run, tmp_path, params):
    """Files as Apache POI / Java / .NET tools write them: every cipher and hash the agile spec
    names opens with the right password and still says "密码不对" for a wrong one."""
    import agile_encrypt
    plain = os.path.join(FIXTURES, "formulas_lo.xlsx")
    path = tmp_path / "book.xlsx"
    path.write_bytes(agile_encrypt.encrypt(open(plain, "rb").read(), "password", *params))
    rows = ok(run("read_spreadsheet", {"path": str(path), "password": "password"}))["sheets"][0]["rows"]
    assert rows == ok(run("read_spreadsheet", {"path": plain}))["sheets"][0]["rows"]
    assert "密码不对" in fail(run("read_spreadsheet", {"path": str(path), "password": "Password"}))


def test_agile_xlsb_docx_and_default_password(run, tmp_path):
    """An agile xlsb and docx with the password `password`; a docx encrypted with Excel's built-in
    VelvetSweatshop over AES-128/SHA-1 opens without asking."""
    import agile_encrypt
    xlsb = os.path.join(FIXTURES, "xlsb", "ledger_sheetjs.xlsb")
    path = tmp_path / "ledger.xlsb"
    path.write_bytes(agile_encrypt.encrypt(open(xlsb, "rb").read(), "password", "AES", 128, "SHA1", 16))
    rows = ok(run("read_spreadsheet", {"path": str(path), "password": "password"}))["sheets"][0]["rows"]
    assert rows == ok(run("read_spreadsheet", {"path": xlsb}))["sheets"][0]["rows"]
    docx = os.path.join(FIXTURES, "documents", "report.docx")
    text = ok(run("read_document", {"path": docx}))["text"]
    path = tmp_path / "report.docx"
    path.write_bytes(agile_encrypt.encrypt(open(docx, "rb").read(), "password", "AES", 192, "SHA1", 16))
    assert ok(run("read_document", {"path": str(path), "password": "password"}))["text"] == text
    path.write_bytes(agile_encrypt.encrypt(open(docx, "rb").read(), "VelvetSweatshop", "AES", 128, "SHA1", 16))
    assert ok(run("read_document", {"path": str(path)}))["text"] == text


def test_unsupported_encryption_is_named_not_a_wrong_password(run, tmp_path):
    """Standard encryption declaring RC4, and an agile file declaring a cipher the spec allows but
    we do not undo (RC4): the scheme is named, and the answer is not "密码不对"."""
    import agile_encrypt
    plain = open(os.path.join(FIXTURES, "formulas_lo.xlsx"), "rb").read()
    path = tmp_path / "rc4.xlsx"
    path.write_bytes(agile_encrypt.standard_rc4(plain))
    result = run("read_spreadsheet", {"path": str(path), "password": "password"})
    err = fail(result)
    assert "RC4" in err and "不是密码不对" in err and "密码不对，" not in err
    assert_contract(result)
    data = agile_encrypt.encrypt(plain, "password", "AES", 128, "SHA1", 16)
    path = tmp_path / "agile_rc4.xlsx"
    path.write_bytes(data.replace(b'cipherAlgorithm="AES"', b'cipherAlgorithm="RC4"'))   # same length
    err = fail(run("read_spreadsheet", {"path": str(path), "password": "password"}))
    assert "RC4" in err and "不是密码不对" in err
