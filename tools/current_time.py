"""current_time: what time it is now, from the network when possible, else from this machine.

Why: the model has no clock, and the user's clock can be wrong (by minutes, or by years after a
dead battery). Several well-known sites are asked at once for their HTTP ``Date`` header (UTC by
definition); the first plausible answer within a few seconds wins, and the local clock is the
fallback, said plainly in ``source``. ``clock_offset_seconds`` tells how far the local clock is
off, so a skewed machine shows up. A ``timezone`` can be named (IANA, ``UTC+8``, Chinese city and
Windows names such as ``中国标准时间``); without one the machine's own zone is used. Nothing here
can crash on a localized zone name or a missing zone database (Windows without ``tzdata``).

Parameters:
    timezone   optional zone to show the time in, e.g. ``Asia/Shanghai``, ``America/New_York``,
               ``UTC+8``, ``东京``; default the machine's zone.

Returns ``time`` (YYYY-MM-DD HH:MM:SS in that zone), ``iso``, ``date``, ``weekday`` (星期一…),
``timezone``, ``utc_offset``, ``is_dst``, ``utc``, ``timestamp``, ``source`` (network/local),
``source_site`` (which site answered), ``clock_offset_seconds`` (local clock minus network time;
null when the network did not answer) and, when the network failed, ``network_errors``.
"""
import datetime
import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # xlakit

from xlakit import runtime as rt  # noqa: E402
from xlakit import clock  # noqa: E402

SKEW_NOTE = 120     # seconds of local clock error worth a warning


def main(params):
    name = (params.get("timezone") or "").strip()
    if name:
        zone, zone_name, note = clock.resolve_zone(name)
        if note:
            rt.warn(note)
    else:
        zone, zone_name = clock.local_zone()
    reading, errors = clock.network_time(rt.deadline.sub(clock.WAIT + 1), wait=clock.WAIT)
    local_utc = datetime.datetime.now(clock.UTC)
    if reading is not None:
        utc = reading.now()
        out = clock.describe(utc, zone, zone_name)
        skew = (local_utc - utc).total_seconds()
        out.update({"source": "network", "source_site": reading.site, "clock_offset_seconds": round(skew, 1)})
        if abs(skew) >= SKEW_NOTE:
            rt.warn("本机时钟%s了约 %s，以上时间以网络为准" % ("快" if skew > 0 else "慢", _span(abs(skew))))
        return out
    out = clock.describe(local_utc, zone, zone_name)
    out.update({"source": "local", "source_site": None, "clock_offset_seconds": None,
                "network_errors": errors[:5]})
    rt.warn("联网获取时间失败，使用的是本机时钟（可能不准）")
    return out


def _span(seconds):
    if seconds >= 86400 * 365:
        return "%.1f 年" % (seconds / 86400.0 / 365.25)
    if seconds >= 86400:
        return "%.1f 天" % (seconds / 86400.0)
    if seconds >= 3600:
        return "%.1f 小时" % (seconds / 3600.0)
    if seconds >= 60:
        return "%d 分钟" % (seconds // 60)
    return "%d 秒" % seconds


if __name__ == "__main__":
    rt.run(main)
