"""The fault suite (issue 22): tools killed at every step, full and read-only disks, dying networks,
misbehaving MCP clients and concurrent writers. A package so that its conftest does not shadow
``tests/conftest.py`` (the shared helpers every test imports as ``conftest``). See README.md here."""
