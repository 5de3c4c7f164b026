"""Files and folders: where a tool may read and write (paths), how a write lands safely (files,
lock), and the shared listing/search/windowing code of the file tools (filetools, textwindow).
Every writer goes through ``paths.resolve_write`` and ``files.atomic_write``."""
