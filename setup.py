"""Package list for pyproject.toml (everything else is declared there).

Why a setup.py at all: the wheel maps the checkout root to ``xla_tools`` (package-dir), and
pyproject's ``packages.find`` cannot add that prefix. Listing the subpackages by hand would let a
new ``xlakit/...`` folder silently miss the wheel, so they are found here. ``tools/`` is a plain
folder of scripts (no ``__init__.py``) shipped as one more package directory; this file itself
sits in the mapped root and is left out."""
from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

SHIPPED = ("xlakit", "xlakit.*", "xlaguard", "xlaguard.*")


class BuildPy(build_py):
    def find_package_modules(self, package, package_dir):
        return [m for m in super().find_package_modules(package, package_dir)
                if (m[0], m[1]) != ("xla_tools", "setup")]


setup(packages=["xla_tools", "xla_tools.tools"] + ["xla_tools." + name for name in find_packages(".", include=SHIPPED)],
      cmdclass={"build_py": BuildPy})
