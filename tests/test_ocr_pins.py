"""The OCR group's requirements resolve to a set that imports together on every platform we
promise, including an Intel Mac on macOS 10.15 with Python 3.9 (issue 33): there pip alone picks
numpy 2 beside onnxruntime 1.16 and OpenCV 4.6, which are built against numpy 1. The marker on the
numpy pin is evaluated the way pip evaluates it on that machine (packaging's markers, with that
machine's environment)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pydeps_boot  # noqa: E402

pytestmark = pytest.mark.quick

packaging = pytest.importorskip("pip._vendor.packaging.requirements")


def _env(platform, machine, version):
    return {"sys_platform": platform, "platform_machine": machine, "python_version": version,
            "python_full_version": version + ".0", "os_name": "nt" if platform == "win32" else "posix",
            "platform_system": {"darwin": "Darwin", "win32": "Windows"}.get(platform, "Linux"),
            "implementation_name": "cpython", "platform_python_implementation": "CPython",
            "platform_release": "", "platform_version": "", "implementation_version": version + ".0",
            "extra": ""}


def _numpy_spec(env):
    reqs = [packaging.Requirement(r) for r in pydeps_boot.GROUPS["ocr"][1]]
    specs = [str(r.specifier) for r in reqs if r.name == "numpy" and (r.marker is None or r.marker.evaluate(env))]
    return specs


@pytest.mark.parametrize("version", ["3.9", "3.10", "3.11", "3.12"])
def test_intel_mac_keeps_numpy_1(version):
    specs = _numpy_spec(_env("darwin", "x86_64", version))
    assert specs and all("<2" in s for s in specs), specs


@pytest.mark.parametrize("platform,machine,version", [
    ("darwin", "arm64", "3.9"), ("win32", "AMD64", "3.9"), ("linux", "x86_64", "3.11"), ("darwin", "x86_64", "3.13")])
def test_elsewhere_numpy_is_left_to_pip(platform, machine, version):
    assert _numpy_spec(_env(platform, machine, version)) == []
