"""The toolbox as a Model Context Protocol server: the stdio server itself (``server``), each
tool's outputSchema (``schema``) and the JSON block a desktop client pastes to start it (``config``).
``xla.py mcp`` enters through ``server.main``."""
