"""Site parsers and lookups of the web tools (web_search, query_weather, query_express,
query_location).

One module per site, each a set of pure functions from page text to results, so they can be
tested on saved pages and benchmarked offline: ``baidu``, ``so360``, ``weather`` (tianqi.com, with
the city table in ``cities``), ``express`` (kuaidi.com), ``location`` (IPv4 checks, ip9.com.cn).
``dom`` is the forgiving HTML tree they share and ``common`` the small helpers (lenient JSON,
dedupe, date prefixes). ``search`` is the only module here that talks to the network: the
Baidu -> 360 chain, through ``xlakit.http``.
"""
