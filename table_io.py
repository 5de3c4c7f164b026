"""The tables' public face: what a table tool imports to read a table as a person reads it.

The code lives in ``xlakit.tables`` (readers by content, value rules, header detection, the
table/book model, ``where``, aggregation); this module keeps one stable name for tool scripts,
tests and users' own scripts (``import table_io as tio``), whatever moves inside the package.
"""
import os
import sys

_ROOT = os.path.dirname(os.path.abspath(__file__))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from xlakit.tables.core import *  # noqa: E402,F401,F403
