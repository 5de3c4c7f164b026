#!/usr/bin/env python3
"""OCR benchmark: read_document (RapidOCR) beside tesseract ``-l chi_sim`` on the same pages.

    python3 bench/bench_ocr.py                 # clean + degraded A4 pages at 200 dpi, then two 30-page scans
    python3 bench/bench_ocr.py --quick         # two pages per set, a 6-page scan
    python3 bench/bench_ocr.py --scan 0        # no long scan (--scan N: an N-page one)
    python3 bench/bench_ocr.py --corpus DIR    # also public scans: DIR/x.pdf|png|jpg beside DIR/x.txt

Pages are Chinese documents we typed (a contract, a notice, a price table, a two-column notice, a
page as full as office paper gets), drawn on A4 at 200 dpi in Noto Sans CJK SC with Pillow
(LibreOffice is not on every machine), then degraded like phone scans: turned by up to 3 degrees,
blurred, uneven light, a red stamp, JPEG quality 40. Each page is wrapped as an image-only PDF and
read by ``read_document`` in a new process (as the host runs it), so the seconds are the whole
process: start-up, engine load, OCR.

Printed per page: character accuracy (1 - CER, spaces ignored), wall seconds, CPU seconds (user +
sys of the process and its children, from GNU time: on a shared machine wall time mostly measures
the neighbours), peak memory (RSS), and the same for tesseract when it is installed (Debian:
tesseract-ocr tesseract-ocr-chi-sim; a PDF of the corpus is rasterised for it with pdftoppm).
The long scans are what the 60 s contract is about: they are read window by window as the model
reads them, and the per-page seconds include every window's start-up and engine load. The first
repeats the bench pages, clean and degraded; the second (``clean_scan``) is 30 different clean
pages, sans and serif, stored in the picture encodings scan tools use, with tesseract beside it.
Needs the OCR group in tools/pydeps (``python3 xla.py install ocr``): Pillow comes with it.
"""
import io
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "pydeps"))
sys.path.insert(0, os.path.join(ROOT, "tests", "fixtures", "ocr"))
import make_fixtures  # noqa: E402 - its font lookup and PDF writer

DPI = 200
A4 = make_fixtures.A4

CONTRACT = ["采购合同", "甲方：华东办公用品有限公司", "乙方：上海明远贸易有限公司",
            "经双方友好协商，就乙方向甲方采购办公用品事宜，达成如下协议，以资共同遵守。",
            "第一条 采购内容：打印纸、签字笔、文件夹等办公用品，具体品名、数量和单价见附件清单。",
            "第二条 交货时间：甲方应在合同签订后十五个工作日内将全部货物送至乙方指定地点。",
            "第三条 付款方式：乙方在验收合格后三十日内，通过银行转账一次性支付全部货款。",
            "第四条 质量要求：货物应符合国家相关标准，如有质量问题，甲方负责免费更换。",
            "第五条 违约责任：任何一方违反本合同约定，应向对方支付合同总金额百分之五的违约金。",
            "第六条 争议解决：双方发生争议时应友好协商，协商不成的，可向合同签订地人民法院起诉。",
            "第七条 本合同一式两份，甲乙双方各执一份，自双方签字盖章之日起生效。",
            "甲方（盖章）：　　　　　　乙方（盖章）：", "二〇二六年十二月二日"]
NOTICE = ["关于做好年终总结工作的通知", "各部门、各分公司：",
          "为全面总结本年度工作成绩和经验，科学谋划明年工作，经公司研究决定，开展年终总结工作。现将有关事项通知如下：",
          "一、总结内容。各部门要围绕年度目标任务完成情况，认真梳理主要做法、取得的成效和存在的问题，提出明年的工作思路和具体措施。",
          "二、时间安排。各部门于十二月二十日前将书面总结报送办公室，办公室汇总后提交公司领导审阅。",
          "三、工作要求。各部门负责人要高度重视，亲自把关，确保总结内容实事求是、重点突出、文字精炼。",
          "特此通知。", "公司办公室", "二〇二六年十二月一日"]

RULES = make_fixtures.RULES
FULL = RULES + CONTRACT[3:11] + NOTICE[3:6]


def _font(size):
    return make_fixtures.font(size)


text_page = make_fixtures.text_page


def table_page():
    from PIL import Image, ImageDraw
    rows = [["序号", "品名", "规格", "数量", "单价", "金额"]]
    names = ["打印纸", "签字笔", "文件夹", "订书机", "计算器", "笔记本", "胶水", "剪刀", "回形针", "便利贴"]
    rnd = random.Random(7)
    for i, name in enumerate(names, 1):
        qty, price = rnd.randint(2, 60), rnd.choice([2.5, 8.0, 12.0, 25.0, 36.5, 68.0])
        rows.append([str(i), name, rnd.choice(["A4", "0.5mm", "大号", "标准"]), str(qty), "%.2f" % price, "%.2f" % (qty * price)])
    img = Image.new("L", A4, 255)
    draw = ImageDraw.Draw(img)
    draw.text((200, 200), "办公用品采购明细表", font=_font(44), fill=15)
    widths, x0, y0, rh = [120, 260, 220, 160, 220, 240], 200, 320, 80
    fnt = _font(30)
    for r, row in enumerate(rows):
        x = x0
        for c, cell in enumerate(row):
            draw.rectangle([x, y0 + r * rh, x + widths[c], y0 + (r + 1) * rh], outline=30, width=2)
            draw.text((x + 16, y0 + r * rh + 22), cell, font=fnt, fill=15)
            x += widths[c]
    return img, "办公用品采购明细表\n" + "\n".join(" ".join(r) for r in rows)


def two_column_page():
    from PIL import Image, ImageDraw
    img = Image.new("L", A4, 255)
    draw = ImageDraw.Draw(img)
    title = "员工手册（节选）"
    draw.text(((A4[0] - draw.textlength(title, font=_font(44))) / 2, 200), title, font=_font(44), fill=15)
    fnt = _font(28)
    col = (A4[0] - 400 - 80) // 2
    texts = []
    for k, paras in enumerate((CONTRACT[3:8], NOTICE[2:6])):
        y, x = 330, 200 + k * (col + 80)
        for para in paras:
            for line in make_fixtures.wrap(draw, para, fnt, col):
                draw.text((x, y), line, font=fnt, fill=15)
                y += 48
            y += 20
        texts.extend(paras)
    return img, title + "\n" + "\n".join(texts)


def degrade(img, seed):
    """A phone scan: tilt, uneven light, a red stamp, blur, JPEG 40."""
    from PIL import Image, ImageDraw, ImageFilter
    rnd = random.Random(seed)
    rgb = img.convert("RGB")
    stamp = Image.new("RGBA", rgb.size, (0, 0, 0, 0))
    sd = ImageDraw.Draw(stamp)
    cx, cy = int(rgb.size[0] * 0.7), int(rgb.size[1] * 0.45)
    sd.ellipse([cx - 150, cy - 150, cx + 150, cy + 150], outline=(215, 30, 30, 140), width=10)
    sd.text((cx - 90, cy - 20), "合同专用章", font=_font(36), fill=(215, 30, 30, 140))
    rgb = Image.alpha_composite(rgb.convert("RGBA"), stamp).convert("RGB")
    shade = Image.linear_gradient("L").resize(rgb.size).point(lambda v: 255 - v // 3)
    rgb = Image.composite(rgb, Image.new("RGB", rgb.size, (120, 115, 105)), shade)
    rgb = rgb.rotate(rnd.choice([-3, -2, 2, 3]), resample=Image.BICUBIC, expand=False, fillcolor=(230, 230, 225))
    rgb = rgb.filter(ImageFilter.GaussianBlur(0.8))
    buf = io.BytesIO()
    rgb.convert("L").save(buf, "JPEG", quality=40)
    from PIL import Image as _I
    return _I.open(io.BytesIO(buf.getvalue()))


def jpeg_bytes(img, quality=75):
    buf = io.BytesIO()
    img.convert("L").save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def accuracy(truth, got):
    strip = re.compile(r"[\s|\-:]|〔[^〕]*〕|【[^】]*】|〔\?|〕")
    a, b = strip.sub("", truth), strip.sub("", got)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return max(0.0, 1.0 - prev[-1] / float(max(1, len(a))))


def timed(cmd, stdin=None, env=None, cwd=None):
    """(stdout, wall s, CPU s, peak RSS MiB) of one process; CPU and memory from GNU time when present.
    CPU seconds matter on a shared machine: wall time there mostly measures the neighbours."""
    prefix = ["/usr/bin/time", "-f", "%M %U %S"] if os.path.exists("/usr/bin/time") else []
    started = time.monotonic()
    proc = subprocess.run(prefix + cmd, input=stdin, capture_output=True, env=env, cwd=cwd)
    wall = time.monotonic() - started
    rss = cpu = None
    if prefix:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        parts = tail[-1].split() if tail else []
        if len(parts) == 3:
            rss, cpu = int(parts[0]) / 1024.0, float(parts[1]) + float(parts[2])
    return proc.stdout.decode("utf-8", "replace"), wall, cpu, rss


def ours(path, **params):
    """(answer dict, wall s, CPU s, peak MiB) of one read_document run, spawned as the host does."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""),
           "PYTHONPATH": os.path.join(ROOT, "tools", "pydeps")}
    params["path"] = path
    out, wall, cpu, rss = timed([sys.executable, "-X", "utf8", "-u", "read_document.py"],
                                stdin=json.dumps(params).encode(), env=env, cwd=os.path.join(ROOT, "tools"))
    try:
        data = json.loads(out)
    except ValueError:
        data = {"ok": False, "error": out[:200]}
    return data, wall, cpu, rss


def text_of(data):
    return data.get("text") or data.get("error") or ""


def tesseract(picture_paths):
    """tesseract -l chi_sim on each picture, as one run's (text, wall, CPU, peak MiB); None without it."""
    if not shutil.which("tesseract"):
        return None
    runs = [timed(["tesseract", path, "stdout", "-l", "chi_sim"]) for path in picture_paths]
    return ("\n".join(r[0] for r in runs), sum(r[1] for r in runs), sum(r[2] or 0.0 for r in runs),
            max(r[3] or 0.0 for r in runs))


def rasterize(pdf_path, work):
    """A PDF's pages as 200-dpi PNGs for tesseract (pdftoppm, from poppler-utils); [] without it."""
    if not shutil.which("pdftoppm"):
        return []
    stem = os.path.join(work, os.path.splitext(os.path.basename(pdf_path))[0])
    subprocess.run(["pdftoppm", "-r", str(DPI), "-png", pdf_path, stem], capture_output=True)
    folder, base = os.path.split(stem)
    return sorted(os.path.join(folder, n) for n in os.listdir(folder) if n.startswith(base + "-") and n.endswith(".png"))


HEADER = "%-4s %-6s | %7s %6s %6s %6s | %7s %6s %6s %6s" % (
    "集", "页", "准确率", "墙钟s", "CPU s", "MiB", "tess", "墙钟s", "CPU s", "MiB")


def compare(set_name, name, truth, path, pictures, totals, pages=1):
    """One row: ours on ``path`` beside tesseract on ``pictures``; seconds and CPU per page."""
    data, wall, cpu, rss = ours(path)
    tess = tesseract(pictures)
    row = [accuracy(truth, text_of(data)), wall / pages, (cpu or 0.0) / pages, rss or 0.0]
    if tess:
        row += [accuracy(truth, tess[0]), tess[1] / pages, tess[2] / pages, tess[3]]
    totals.setdefault(set_name, []).append(row)
    cells = ["%6.1f%%" % (row[0] * 100), "%6.2f" % row[1], "%6.2f" % row[2], "%6.0f" % row[3]]
    cells += (["%6.1f%%" % (row[4] * 100), "%6.2f" % row[5], "%6.2f" % row[6], "%6.0f" % row[7]]
              if tess else ["-"] * 4)
    print("%-4s %-6s | %s %s %s %s | %s %s %s %s" % tuple([set_name, name[:6]] + cells))


def corpus(folder, work, totals):
    """Public scans with published text: every picture or PDF in ``folder`` that has a ``.txt`` of
    the same name beside it (the text its publisher typed or checked)."""
    for entry in sorted(os.listdir(folder)):
        stem, ext = os.path.splitext(entry)
        truth_path = os.path.join(folder, stem + ".txt")
        if ext.lower() == ".txt" or not os.path.exists(truth_path):
            continue
        with open(truth_path, encoding="utf-8") as fh:
            truth = fh.read()
        path = os.path.join(folder, entry)
        pictures = rasterize(path, work) if ext.lower() == ".pdf" else [path]
        compare("公开", stem, truth, path, pictures, totals, pages=max(1, len(pictures)))


def long_scan(pages, count, work):
    """A ``count``-page scan (the bench pages in turn, clean then degraded) read as the model reads
    it: window after window (``read_windows``)."""
    from PIL import Image  # noqa: F401 - Pillow draws the pages
    pictures, truths = [], []
    for i in range(count):
        _name, (img, truth) = pages[i % len(pages)]
        degraded = (i // len(pages)) % 2 == 1
        page = degrade(img, i) if degraded else img
        pictures.append((jpeg_bytes(page, 40 if degraded else 75), page.size, None))
        truths.append(truth)
    path = os.path.join(work, "扫描件-%d页.pdf" % count)
    with open(path, "wb") as fh:
        fh.write(make_fixtures.pdf(pictures))
    read_windows(path, truths, "\n%d 页扫描件（A4 %d dpi，清晰与降质各半），按窗口逐段读取，每个窗口一个新进程：" % (count, DPI))


# Sentences of office documents the clean scan's pages are made of (each page its own mix).
POOL = make_fixtures.RULES[2:] + CONTRACT[1:11] + NOTICE[2:6] + [
    "第八条 保密条款：双方对在合作过程中知悉的对方商业秘密负有保密义务，未经对方书面同意不得向第三方披露。",
    "三、报销标准。市内交通费按实际发生额报销，出差住宿费在一线城市每人每天不超过五百元，其他城市不超过三百五十元。",
    "会议由副总经理主持，财务部、人事部、行政部及各事业部负责人参加，会议听取了第三季度经营情况汇报。",
    "经审核，该项目预算总额为人民币一百二十八万元，其中设备购置费七十六万元，安装调试费十二万元，其余为培训和运维费用。",
    "请各单位于本月二十八日下午五点前将报名表（见附件二）以电子邮件形式发送至人力资源部，逾期不再受理。",
    "2026年1月至11月，公司累计实现营业收入3.86亿元，同比增长12.4%；净利润4120万元，同比增长8.7%。",
    "联系人：王晓明，电话：021-64758392，邮箱：wangxm@example.com，地址：上海市徐汇区漕溪北路88号。"]


def clean_scan(count, work):
    """A ``count``-page image-only PDF of clean office pages, every page different text (``POOL``
    mixed per page), in Noto Sans and Noto Serif CJK at 10.5 and 12 pt at 200 dpi, the pictures
    stored the ways scanner apps and PDF tools store them (``make_fixtures.ENCODINGS``: grey JPEG,
    1 bit, 16-grey palette, Pillow's hex palette), read window by window; tesseract chi_sim on the
    same pictures beside it."""
    rnd = random.Random(36)
    pictures, truths, pngs = [], [], []
    for i in range(count):
        paras = ["办公管理制度汇编（第 %d 部分）" % (i + 1)] + rnd.sample(POOL, 14)
        img, truth = make_fixtures.text_page(paras, size=(29, 33)[i % 2], serif=(i // 2) % 2 == 1)
        how = make_fixtures.ENCODINGS[i % len(make_fixtures.ENCODINGS)]
        pictures.append((make_fixtures.encoded(img, how), img.size, None))
        truths.append(truth)
        png = os.path.join(work, "clean-%02d.png" % i)
        img.save(png)
        pngs.append(png)
    path = os.path.join(work, "清晰扫描件-%d页.pdf" % count)
    with open(path, "wb") as fh:
        fh.write(make_fixtures.pdf(pictures, dpi=DPI))
    read_windows(path, truths, "\n%d 页清晰扫描件（A4 %d dpi，宋体/黑体 10.5/12 磅，图片按 %s 轮流存放），按窗口逐段读取：" % (
        count, DPI, "/".join(make_fixtures.ENCODINGS)))
    if shutil.which("tesseract"):
        runs = [timed(["tesseract", png, "stdout", "-l", "chi_sim"]) for png in pngs]
        scores = [accuracy(t, r[0]) for t, r in zip(truths, runs)]
        print("  tesseract chi_sim 同样 %d 页（PNG）：平均准确率 %.1f%%，最低 %.1f%%，CPU %.2f 秒/页" % (
            count, 100 * sum(scores) / len(scores), 100 * min(scores), sum(r[2] or 0.0 for r in runs) / count))


def read_windows(path, truths, title):
    """Read ``path`` as the model reads it: window after window, each a new process with the
    host's whole budget, continuing at the ``next_page`` (or ``next_offset``) the previous answer
    gave. Prints each window and the cost per page of the whole thing (start-ups, engine loads
    and all), the mean and the lowest page accuracy."""
    count = len(truths)
    print(title)
    params, text, windows = {}, "", []
    while True:
        data, wall, cpu, rss = ours(path, **params)
        if not data.get("ok"):
            print("  窗口 %d 失败：%s" % (len(windows) + 1, text_of(data)[:200]))
            return
        text += data.get("text") or ""
        read = (data.get("ocr") or {}).get("pages_read", 0)
        windows.append((wall, cpu or 0.0, rss or 0.0))
        print("  窗口 %d：%s，OCR %d 页，墙钟 %.1f 秒，CPU %.1f 秒，峰值 %.0f MiB" % (
            len(windows), json.dumps(params, ensure_ascii=False) if params else "从头", read, wall, cpu or 0, rss or 0))
        if data.get("next_page"):
            params = {"start_page": data["next_page"]}
        elif data.get("next_offset") is not None:
            params = dict(params, offset=data["next_offset"])
        else:
            break
        if len(windows) > 2 * count:
            print("  窗口太多，停止")
            return
    read_pages = re.split(r"【第 \d+ 页】", text)[1:]
    scores = [accuracy(t, got) for t, got in zip(truths, read_pages)]
    wall = sum(w[0] for w in windows)
    print("  共 %d 个窗口，%.2f 秒/页（整个进程：启动、加载、识别），CPU %.2f 秒/页，峰值内存 %.0f MiB，"
          "最长的窗口 %.1f 秒（上限 60 秒）；读到 %d/%d 页，平均准确率 %.1f%%，最低 %.1f%%" % (
              len(windows), wall / count, sum(w[1] for w in windows) / count, max(w[2] for w in windows),
              max(w[0] for w in windows), len(read_pages), count, 100 * sum(scores) / max(1, len(scores)),
              100 * min(scores or [0.0])))


def warm_engine(work, calls=4):
    """Issue 36.7: one-page scans read through the MCP server (``xla.py mcp``, one long process
    keeping the OCR engine warm in ``ocr_service``) call after call, beside the same pages read by
    new tool processes as the assistant host runs them. Each call reads a different file (the page
    cache would otherwise answer the repeats). Prints each call's wall seconds, and the service
    process's memory after the calls (it is what stays resident)."""
    pictures = []
    rnd = random.Random(7)
    for i in range(calls):
        img, _truth = make_fixtures.text_page(["通知（%d）" % (i + 1)] + rnd.sample(POOL, 6))
        path = os.path.join(work, "warm-%d.pdf" % i)
        with open(path, "wb") as fh:
            fh.write(make_fixtures.pdf([(make_fixtures.encoded(img), img.size, None)], dpi=DPI))
        pictures.append(path)
    home = tempfile.mkdtemp(prefix="bench-ocr-home-", dir=work)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home}
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "xla.py"), "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)

    def request(msg_id, method, params):
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params},
                                     ensure_ascii=False) + "\n").encode("utf-8"))
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    print("\n常驻引擎（MCP 服务器，issue 36.7）：%d 个一页扫描件，每次调用读一个不同的文件" % calls)
    request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "0"}})
    served = []
    for i, path in enumerate(pictures):
        started = time.monotonic()
        answer = request(i + 1, "tools/call", {"name": "read_document", "arguments": {"path": path}})
        wall = time.monotonic() - started
        data = json.loads(answer["result"]["content"][0]["text"])
        served.append(wall)
        print("  MCP 第 %d 次：%.2f 秒%s" % (i + 1, wall, "（常驻引擎）" if (data.get("ocr") or {}).get("warm_engine") else ""))
    rss = _service_rss(proc.pid)
    proc.stdin.close()
    proc.wait(30)
    direct = []
    for i, path in enumerate(pictures):
        data, wall, cpu, _rss = ours(path)
        direct.append(wall)
    print("  MCP：第一次 %.2f 秒，之后平均 %.2f 秒；每次新进程（主机直接运行）：平均 %.2f 秒；常驻引擎进程内存 %s" % (
        served[0], sum(served[1:]) / max(1, len(served) - 1), sum(direct) / len(direct),
        "%.0f MiB" % rss if rss else "未知"))


def _service_rss(server_pid):
    """Resident MiB of the server's OCR service process (Linux /proc), or None."""
    try:
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            with open("/proc/%s/stat" % pid) as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            if int(fields[1]) != server_pid:
                continue
            with open("/proc/%s/cmdline" % pid, "rb") as fh:
                if b"ocr_service" not in fh.read():
                    continue
            with open("/proc/%s/status" % pid) as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        return None
    return None


def main(argv):
    quick = "--quick" in argv
    count = int(argv[argv.index("--scan") + 1]) if "--scan" in argv else (6 if quick else 30)
    folder = argv[argv.index("--corpus") + 1] if "--corpus" in argv else None
    pages = [("合同", text_page(CONTRACT)), ("通知", text_page(NOTICE)), ("表格", table_page()),
             ("分栏", two_column_page()), ("满页", text_page(FULL))]
    if quick:
        pages = pages[:1] + pages[-1:]
    work = tempfile.mkdtemp(prefix="bench-ocr-")
    try:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print("OCR 基准：A4 %d dpi，每页一个新进程（整个进程计时）；开始时负载 %.1f（%d 核）" % (DPI, load, os.cpu_count() or 0))
        if not shutil.which("tesseract"):
            print("（本机没有 tesseract：apt-get install tesseract-ocr tesseract-ocr-chi-sim 后可并排比较）")
        print(HEADER)
        totals = {}
        for set_name in ("清晰", "降质"):
            for k, (name, (img, truth)) in enumerate(pages):
                page = degrade(img, k) if set_name == "降质" else img
                png = os.path.join(work, "%s-%s.png" % (set_name, name))
                page.save(png)
                data = jpeg_bytes(page, 40 if set_name == "降质" else 75)
                pdf_path = os.path.join(work, "%s-%s.pdf" % (set_name, name))
                with open(pdf_path, "wb") as fh:
                    fh.write(make_fixtures.pdf([(data, page.size, None)]))
                compare(set_name, name, truth, pdf_path, [png], totals)
        if folder:
            corpus(folder, work, totals)
        for set_name, rows in totals.items():
            n = float(len(rows))
            avg = [sum(r[i] for r in rows) / n for i in range(len(rows[0]))]
            line = "%s：平均准确率 %.1f%%，%.2f 秒/页（CPU %.2f 秒），峰值内存 %.0f MiB" % (
                set_name, avg[0] * 100, avg[1], avg[2], max(r[3] for r in rows))
            if len(avg) > 4:
                line += "；tesseract chi_sim %.1f%%，%.2f 秒/页（CPU %.2f 秒）" % (avg[4] * 100, avg[5], avg[6])
            print(line)
        if count:
            long_scan(pages, count, work)
            clean_scan(count, work)
        warm_engine(work, 3 if quick else 6)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print("结束时负载 %.1f" % load)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
