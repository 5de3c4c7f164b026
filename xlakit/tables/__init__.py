"""Tables: reading a spreadsheet as a person reads it, and writing one as Excel users expect.

Reading, bottom up: ``formats`` (bytes -> typed cell grid, by content: xlsx fast parser with an
openpyxl fallback, xls, csv/txt, HTML tables), ``values`` (what a cell means and how it is shown;
column letters; totals labels), ``header`` (which row is the header), ``book`` (``Table``: named
columns, data rows with merges filled and totals held back), ``where`` (conditions) and
``aggregate`` (buckets, exact metrics). Writing: ``write.write_rows`` dispatches to ``xlsx_new``,
``xlsx_existing``, ``xls_write`` and ``csv_write``; ``cells`` converts values, ``target`` inspects an
existing file and refuses a lossy re-save. Tools import the reading side as ``table_io``.

Nothing here imports ``xlakit.runtime``: errors come from ``xlakit.errors`` and time from a
``deadline`` argument.
"""
