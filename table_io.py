"""The tables' public face: what a table tool imports to read a table as a person reads it.

The code lives in ``xlakit.tables`` (``values``: value rules and display; ``header``: header
detection; ``book``: the table/book model; ``where``: conditions; ``aggregate``: buckets and
metrics; ``formats``: the readers). This module keeps one stable name for tool scripts, tests and
users' own scripts (``import table_io as tio``), whatever moves inside the package.
"""
import os
import sys

_ROOT = os.path.dirname(os.path.abspath(__file__))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from xlakit.errors import FormatError, ToolError  # noqa: E402,F401
from xlakit.tables.values import *  # noqa: E402,F401,F403
from xlakit.tables.header import *  # noqa: E402,F401,F403
from xlakit.tables.book import *  # noqa: E402,F401,F403
from xlakit.tables.where import *  # noqa: E402,F401,F403
from xlakit.tables.aggregate import *  # noqa: E402,F401,F403
