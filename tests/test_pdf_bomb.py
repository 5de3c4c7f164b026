"""PDF decompression bombs and the OCR install (issue 34: a Flate bomb spent 37 s installing the
OCR engine before answering "no text found").

The bombs are built here: a page whose one picture declares 800 million pixels, a picture whose
Flate data inflates far past what it declares, a content stream that inflates to 400 MB. Each is
refused in Chinese within seconds as a bomb, on a copy of the toolbox without the OCR engine,
and no install is attempted (no pip lock or staging folder appears, pydeps is unchanged, pip is
pointed at nothing). Then the install policy: a real scan on that copy tries the install once;
when it does not finish, the next scan answers at once with the command instead of waiting again.
"""
import os
import shutil
import time
import zlib

import pytest

from conftest import FIXTURES, ROOT, fail
from xlakit.documents import pdf_bomb

NO_PIP = {"PIP_NO_INDEX": "1", "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_FIND_LINKS": ""}


def deflate_zeros(size):
    packer, chunk, parts = zlib.compressobj(9), b"\0" * (1 << 20), []
    while size > 0:
        parts.append(packer.compress(chunk[:min(size, len(chunk))]))
        size -= len(chunk)
    parts.append(packer.flush())
    return b"".join(parts)


def write_pdf(path, image_dict, image, content=b"q 612 0 0 792 0 0 cm /Im0 Do Q", content_flate=False):
    """A one-page PDF: one image XObject drawn over the page."""
    content_dict = b"<< /Length %d%s >>" % (len(content), b" /Filter /FlateDecode" if content_flate else b"")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 5 0 R >> >>"
               b" /Contents 4 0 R >>",
               content_dict + b"\nstream\n" + content + b"\nendstream",
               b"<< /Type /XObject /Subtype /Image %s /Length %d >>\nstream\n" % (image_dict, len(image)) + image
               + b"\nendstream"]
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return str(path)


GRAY = b"/ColorSpace /DeviceGray /BitsPerComponent 8"


@pytest.fixture(scope="module")
def bombs(tmp_path_factory):
    d = tmp_path_factory.mktemp("bombs")
    return {
        # 25,500 x 33,000 gray (841 MB when decoded) in 800 KB of Flate
        "declared": write_pdf(d / "declared.pdf", b"/Width 25500 /Height 33000 %s /Filter /FlateDecode" % GRAY,
                              deflate_zeros(25500 * 33000)),
        # says 1,700 x 2,200 (3.6 MB), inflates to 300 MB
        "overflow": write_pdf(d / "overflow.pdf", b"/Width 1700 /Height 2200 %s /Filter /FlateDecode" % GRAY,
                              deflate_zeros(300 << 20)),
        # a harmless little picture, and a content stream that inflates to 400 MB
        "content": write_pdf(d / "content.pdf", b"/Width 17 /Height 22 %s" % GRAY, b"\0" * 374,
                             content=deflate_zeros(400 << 20), content_flate=True),
    }


def project_without_engine(tmp_path):
    """A copy of the toolbox whose tools/pydeps has pypdf and olefile but not the OCR group."""
    root = tmp_path / "xla"
    (root / "tools" / "pydeps").mkdir(parents=True)
    for name in ("pydeps_boot.py", "tools.json"):
        shutil.copy(os.path.join(ROOT, name), str(root / name))
    shutil.copytree(os.path.join(ROOT, "xlakit"), str(root / "xlakit"), ignore=shutil.ignore_patterns("__pycache__"))
    for name in os.listdir(os.path.join(ROOT, "tools")):
        if name.endswith(".py"):
            shutil.copy(os.path.join(ROOT, "tools", name), str(root / "tools" / name))
    src = os.path.join(ROOT, "tools", "pydeps")
    for name in os.listdir(src):
        if name.split("-")[0].lower() in ("pypdf", "olefile") or name == "OleFileIO_PL.py":
            os.symlink(os.path.join(src, name), str(root / "tools" / "pydeps" / name))
    return str(root)


def tree(root):
    return sorted(os.path.relpath(os.path.join(d, n), root) for d, dirs, files in os.walk(root) for n in dirs + files)


@pytest.mark.parametrize("name, says", [("declared", "25500 × 33000 像素"), ("overflow", "解压后超过它声明的大小"),
                                        ("content", "内容数据解压后超过")])
def test_a_bomb_is_refused_at_once_without_any_ocr_install(run, tmp_path, bombs, name, says):
    root = project_without_engine(tmp_path)
    before = tree(os.path.join(root, "tools"))
    started = time.monotonic()
    result = run("read_document", {"path": bombs[name]}, root=root, extra_env=NO_PIP)
    took = time.monotonic() - started
    error = fail(result)
    print("%s: %.1f s" % (name, took))
    assert "压缩炸弹" in error and says in error, error
    assert took < 10
    assert "正在安装" not in result.stderr and "pip" not in error
    assert tree(os.path.join(root, "tools")) == before       # no lock, no staging, nothing installed


def test_a_bomb_is_refused_with_the_engine_installed_too(run, bombs):
    """The real toolbox: the bomb never reaches OCR (nor pdfium rendering it), whatever is installed."""
    for name in ("declared", "overflow"):
        started = time.monotonic()
        assert "压缩炸弹" in fail(run("read_document", {"path": bombs[name], "ocr": "force"}))
        assert time.monotonic() - started < 10


def test_an_unfinished_install_is_not_retried_on_the_next_scan(run, tmp_path):
    root = project_without_engine(tmp_path)
    scan = os.path.join(FIXTURES, "ocr", "scan.pdf")
    first = run("read_document", {"path": scan}, root=root, extra_env=NO_PIP)
    assert "自动安装没能完成" in fail(first) and "python3 xla.py install ocr" in first.error
    assert os.path.exists(os.path.join(root, "tools", ".ocr-install-failed"))
    started = time.monotonic()
    second = run("read_document", {"path": scan}, root=root, extra_env=NO_PIP)
    assert "上次自动安装没能完成" in fail(second) and "python3 xla.py install ocr" in second.error
    assert "正在安装" not in second.stderr and time.monotonic() - started < 10
    assert not os.path.exists(os.path.join(root, "tools", "pydeps", "rapidocr"))


def test_bomb_check_passes_real_pictures_and_blank_scans(tmp_path):
    """A blank white page compresses a thousand to one honestly: output within what the image
    declares is never a bomb, however small the data."""
    from pydeps_boot import ensure
    pypdf = ensure("pypdf")
    path = write_pdf(tmp_path / "blank.pdf", b"/Width 2480 /Height 3508 %s /Filter /FlateDecode" % GRAY,
                     zlib.compress(b"\xff" * (2480 * 3508), 9))
    page = pypdf.PdfReader(path).pages[0]
    pdf_bomb.check_page(page, 1)            # no Bomb raised
