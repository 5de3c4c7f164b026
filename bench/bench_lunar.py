"""Benchmark of the lunar calendar: conversions per second, solar terms per second, and one whole
lunar_date call as the host runs it, next to lunar-python (what a Python user would pick).

Why: the table lookup must be instant (the host's lunar reminders may convert every day of a year
at once) and the computed solar terms must not make a single call noticeably slow. lunar-python is
optional here (``pip install lunar_python``); without it only our numbers are printed.

Usage: ``python3 bench/bench_lunar.py [--days 20000]``
"""
import argparse
import datetime as dt
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from xlakit import lunar as L  # noqa: E402


def rate(fn, items):
    t0 = time.perf_counter()
    for x in items:
        fn(x)
    return len(items) / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=int, default=20000)
    args = ap.parse_args()
    rng = random.Random(1)
    span = (L.MAX_DATE - L.MIN_DATE).days
    sample = [L.MIN_DATE + dt.timedelta(days=rng.randrange(span)) for _ in range(args.days)]
    lunars = [L.to_lunar(d) for d in sample]
    lunars = [x for x in lunars if x.year >= 1900]
    years = list(range(1900, 2101))
    try:
        import lunar_python as lp
    except ImportError:
        lp = None

    rows = []
    rows.append(("公历→农历（次/秒）", rate(L.to_lunar, sample),
                 lp and rate(lambda d: lp.Solar.fromYmd(d.year, d.month, d.day).getLunar(), sample)))
    rows.append(("农历→公历（次/秒）", rate(lambda x: L.to_solar(x.year, x.month, x.day, x.leap), lunars),
                 lp and rate(lambda x: lp.Lunar.fromYmd(x.year, -x.month if x.leap else x.month, x.day).getSolar(),
                             lunars)))
    L._TERM_CACHE.clear()
    rows.append(("一年 24 节气（年/秒，无缓存）", rate(lambda y: (L._TERM_CACHE.clear(), L.solar_terms(y)), years),
                 lp and rate(lambda y: lp.Solar.fromYmd(y, 6, 1).getLunar().getJieQiTable(), years)))
    L._TERM_CACHE.clear()
    rows.append(("完整描述一天（次/秒，节气有缓存）", rate(lambda d: L.describe(d, today=d), sample[:3000]),
                 lp and rate(lambda d: _lp_describe(lp, d), sample[:3000])))

    print("%-34s %14s %14s" % ("测量", "xlakit.lunar", "lunar-python"))
    for name, ours, theirs in rows:
        print("%-34s %14s %14s" % (name, "{:,.0f}".format(ours), "{:,.0f}".format(theirs) if theirs else "-"))

    # One tool call the way the assistant spawns it (interpreter start + import + answer).
    cmd = [sys.executable, "-X", "utf8", "-u", "lunar_date.py"]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""), "PYTHONPATH": "pydeps"}
    walls = []
    for _ in range(5):
        t0 = time.perf_counter()
        out = subprocess.run(cmd, input=json.dumps({"date": "2024-09-17"}).encode(), cwd=os.path.join(ROOT, "tools"),
                             env=env, capture_output=True)
        walls.append(time.perf_counter() - t0)
        assert json.loads(out.stdout)["ok"], out.stdout
    print("lunar_date 整个进程（5 次中位数）：%.3f s" % sorted(walls)[2])


def _lp_describe(lp, d):
    o = lp.Solar.fromYmd(d.year, d.month, d.day).getLunar()
    return (o.getYearInGanZhi(), o.getMonthInChinese(), o.getDayInChinese(), o.getFestivals(),
            o.getJieQi(), o.getNextJieQi(), o.getMonthInGanZhi(), o.getDayInGanZhi())


if __name__ == "__main__":
    main()
