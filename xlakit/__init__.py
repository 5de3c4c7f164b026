"""xlakit: the shared code of xla-tools, in three storeys.

Plumbing (imports nothing above it): ``errors``, ``manifest``, ``lock``, ``runtime``, ``host``.
Common layers: ``paths`` (where a tool may read and write), ``files`` (safe replace, backups,
trash), ``text`` (decoding, display width, cutting), ``http``, ``sniff`` (what a file is by its
bytes), ``opc`` (zip packages: xlsx/docx/pptx).
Domains: ``tables`` (readers, semantics, writers), ``documents``, ``raster``, ``lunar``, ``web``,
``mcp``.

A tool script finds the package with one line (tools/ sits beside this folder)::

    import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

This file stays import-free on purpose: ``pydeps_boot`` and the host import parts of the
package before anything else is known to work.
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
