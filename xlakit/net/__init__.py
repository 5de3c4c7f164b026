"""The parts that ``xlakit.http`` is built from, one seam a module.

Callers import ``xlakit.http`` (which re-exports every public name defined here); these modules
exist so each concern reads on its own page:

- ``errors``: ``NetError`` and the Chinese sentences for HTTP statuses, timeouts, no network;
- ``route``: where a connection really goes (the ``XLA_NET_MAP`` test seam, the proxy setting);
- ``policy``: which addresses may be reached at all (no loopback, LAN, metadata service...) and
  the user's ``net_allow`` opt-ins;
- ``charset``: which text encoding a response body is in (BOM, header, ``<meta>``, UTF-8, GB18030);
- ``sockets``: DNS with a timeout, TCP connect, SOCKS5 and HTTP CONNECT tunnels, verified TLS;
- ``response``: ``Response``, case-insensitive headers, streaming gzip/deflate with an output bound.

The request loop itself (headers, cookies, redirects, deadline, caps, kept-alive connections) is
``xlakit.http.Session``.
"""
