"""Benchmark draw_chart against matplotlib (Agg): whole-process seconds and peak memory per chart.

What a user would otherwise pick is a Python script with matplotlib, so each run here is a fresh
process on both sides (start-up and font loading included), drawing the same 800x500 chart with
Chinese labels: bar = 12 categories x 3 series, line = 3 series x 365 points, pie = 8 slices.
Runs alternate tool / matplotlib so a noisy minute hurts both alike; medians are reported.

    .venv/bin/python bench/bench_chart.py [--runs 5] [--font /path/to/cjk.ttc] [--bitmap]

matplotlib is for this benchmark only (pip install matplotlib into .venv); without it only the
tool is measured. The tool's font: --font (XLA_CHART_FONT), --bitmap, or whatever it discovers.
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WRAPPER = r'''
import json, os, resource, subprocess, sys, time
cmd, cwd, stdin = json.loads(sys.argv[1])
t0 = time.time()
proc = subprocess.run(cmd, cwd=cwd, input=stdin.encode("utf-8"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
wall = time.time() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss * (1 if sys.platform == "darwin" else 1024),
                  "code": proc.returncode, "out": proc.stdout.decode("utf-8", "replace")[:3000],
                  "err": proc.stderr.decode("utf-8", "replace")[-2000:]}))
'''

MPL = r'''
import json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import font_manager
spec, out, font = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
if font:
    font_manager.fontManager.addfont(font)
    plt.rcParams["font.family"] = font_manager.FontProperties(fname=font).get_name()
plt.rcParams["axes.unicode_minus"] = False
fig, ax = plt.subplots(figsize=(8, 5), dpi=100)
if spec["type"] == "pie":
    ax.pie(spec["values"], labels=spec["labels"], autopct="%1.1f%%")
elif spec["type"] == "bar":
    n, k = len(spec["labels"]), len(spec["series"])
    w = 0.8 / k
    for i, s in enumerate(spec["series"]):
        ax.bar([j + (i - (k - 1) / 2) * w for j in range(n)], s["data"], w, label=s["name"])
    ax.set_xticks(range(n), spec["labels"])
    ax.legend()
else:
    for s in spec["series"]:
        ax.plot(range(len(s["data"])), s["data"], label=s["name"])
    ax.legend()
ax.set_title(spec.get("title", ""))
fig.savefig(out)
'''


def specs():
    rnd = random.Random(1)
    bar = {"type": "bar", "title": "各月分品类销售额", "labels": ["%d月" % i for i in range(1, 13)],
           "series": [{"name": n, "data": [rnd.randint(2000, 30000) for _ in range(12)]} for n in ("食品", "日用", "家电")],
           "x_label": "月份", "y_label": "销售额"}
    days = ["%d日" % (i + 1) for i in range(365)]
    line = {"type": "line", "title": "全年每日访问量", "labels": days,
            "series": [{"name": n, "data": [round(1000 + 300 * rnd.random() + 2 * i + k * 200) for i in range(365)]}
                       for k, n in enumerate(("网站", "小程序", "App"))]}
    pie = {"type": "pie", "title": "费用构成", "labels": ["差旅", "餐饮", "办公", "培训", "通讯", "快递", "租赁", "其他"],
           "values": [12300, 5600, 3100, 2200, 900, 450, 8000, 300]}
    return {"bar": bar, "line": line, "pie": pie}


def run_one(argv, cwd, stdin, env):
    proc = subprocess.run([sys.executable, "-c", WRAPPER, json.dumps([argv, cwd, stdin])], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    res = json.loads(proc.stdout.decode("utf-8"))
    if res["code"] != 0:
        raise SystemExit("run failed: %s" % (res["err"] or res["out"])[-500:])
    return res


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--font", default="/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
    ap.add_argument("--bitmap", action="store_true")
    a = ap.parse_args(argv)
    home = tempfile.mkdtemp(prefix="bench_chart_")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "PYTHONPATH": os.path.join(ROOT, "tools", "pydeps")}
    if a.bitmap:
        env["XLA_CHART_BITMAP"] = "1"
    elif a.font and os.path.exists(a.font):
        env["XLA_CHART_FONT"] = a.font
    try:
        import matplotlib  # noqa: F401
        have_mpl = True
    except ImportError:
        have_mpl = False
    rows = []
    for name, spec in specs().items():
        tool, mpl, size = [], [], None
        for i in range(a.runs + 1):   # the first pair warms the OS file cache
            t = run_one([sys.executable, "-X", "utf8", "-u", "draw_chart.py"], os.path.join(ROOT, "tools"),
                        json.dumps(spec, ensure_ascii=False), env)
            size = int(re.search(r'"bytes": ?(\d+)', t["out"]).group(1))
            if have_mpl:
                out = os.path.join(home, "mpl_%s.png" % name)
                m = run_one([sys.executable, "-c", MPL, json.dumps(spec, ensure_ascii=False), out,
                             a.font if os.path.exists(a.font) else ""], ROOT, "", dict(env, MPLCONFIGDIR=os.path.join(home, "mpl")))
            if i:
                tool.append(t)
                if have_mpl:
                    mpl.append(m)
        row = {"chart": name, "tool_wall": statistics.median(r["wall"] for r in tool),
               "tool_cpu": statistics.median(r["cpu"] for r in tool),
               "tool_rss_mib": max(r["rss"] for r in tool) / 2 ** 20, "tool_png": size}
        if have_mpl:
            row.update({"mpl_wall": statistics.median(r["wall"] for r in mpl),
                        "mpl_cpu": statistics.median(r["cpu"] for r in mpl),
                        "mpl_rss_mib": max(r["rss"] for r in mpl) / 2 ** 20,
                        "mpl_png": os.path.getsize(os.path.join(home, "mpl_%s.png" % name))})
            row["ratio"] = row["tool_wall"] / row["mpl_wall"]
        rows.append(row)
    font = "bitmap" if a.bitmap else (a.font if "XLA_CHART_FONT" in env else "discovered")
    print("draw_chart vs matplotlib (Agg), 800x500, whole process, median of %d; tool font: %s" % (a.runs, font))
    print("%-5s | %-28s | %-28s | %s" % ("chart", "draw_chart wall / cpu / MiB / PNG", "matplotlib wall / cpu / MiB / PNG", "tool/mpl"))
    for r in rows:
        t = "%.3f s / %.3f s / %3.0f / %6d B" % (r["tool_wall"], r["tool_cpu"], r["tool_rss_mib"], r["tool_png"])
        m = ("%.3f s / %.3f s / %3.0f / %6d B" % (r["mpl_wall"], r["mpl_cpu"], r["mpl_rss_mib"], r["mpl_png"])
             if "mpl_wall" in r else "(matplotlib not installed)")
        print("%-5s | %s | %s | %s" % (r["chart"], t, m, ("%.2f" % r["ratio"]) if "ratio" in r else "-"))


if __name__ == "__main__":
    main()
