"""Regenerate the rendered example pages (examples/gongwen, examples/monthly, examples/pivot, the report's first
page in examples/report): every file is made by
the real tools with the host's contract, the PDF by write_document's LibreOffice path, the PNG pages
by poppler's pdftoppm. Run from the repository root: python3 examples/make_pages.py (needs
LibreOffice and poppler-utils)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))


def tool(name, params, home):
    env = {"PATH": os.environ["PATH"], "HOME": home, "PYTHONPATH": os.path.join(ROOT, "tools", "pydeps")}
    out = subprocess.run([sys.executable, "-X", "utf8", "-u", os.path.join(ROOT, "tools", name + ".py")],
                         input=json.dumps(params).encode("utf-8"), capture_output=True, cwd=os.path.join(ROOT, "tools"),
                         env=env)
    data = json.loads(out.stdout.decode("utf-8"))
    if not data.get("ok"):
        raise SystemExit("%s: %s" % (name, data.get("error")))
    return data


def pages(pdf, folder, stem, dpi=60):
    for old in os.listdir(folder):
        if old.startswith(stem + "-") and old.endswith(".png"):
            os.remove(os.path.join(folder, old))
    subprocess.run(["pdftoppm", "-r", str(dpi), "-png", pdf, os.path.join(folder, stem)], check=True)


GONGWEN = {
    "path": "红头通知.pdf",
    "gongwen": {"issuer": "××市人民政府文件", "number": "×政发〔2026〕12号", "signature": "××市人民政府",
                "date": "2026年3月8日", "cc": "市委办公室，市人大常委会办公室，市政协办公室。",
                "printer": "××市人民政府办公室", "print_date": "2026年3月8日印发"},
    "text": ("# 关于做好2026年度安全生产工作的通知\n\n各区县人民政府，市政府各部门：\n\n"
             "为切实做好今年安全生产工作，有效防范和遏制各类生产安全事故，保障人民群众生命财产安全，现将有关事项通知如下。\n\n"
             "## 总体要求\n\n坚持人民至上、生命至上，统筹发展和安全，坚持安全第一、预防为主、综合治理，"
             "全面落实安全生产责任制，推动安全生产形势持续稳定向好。\n\n"
             "## 重点任务\n\n### 压实安全生产责任\n\n各区县、各部门要严格落实党政同责、一岗双责，"
             "把安全生产工作纳入重要议事日程，定期研究解决突出问题。\n\n"
             "### 深化隐患排查治理\n\n聚焦道路交通、建筑施工、危险化学品、消防等重点行业领域，"
             "开展常态化隐患排查整治，建立问题清单、责任清单、整改清单，做到整改责任、资金、措施、时限和预案“五到位”。\n\n"
             "### 提升应急处置能力\n\n完善应急预案体系，加强应急救援队伍建设，每季度至少组织一次综合演练。\n\n"
             "## 工作要求\n\n各单位要于每季度末将工作进展情况报市应急管理局。"),
}

MONTHLY = {
    "path": "9月经营月报.pdf", "page_numbers": True, "header": "财务部",
    "text": ("# 9月经营月报\n\n[TOC]\n\n\\newpage\n\n## 一、总体情况\n\n9月实现营业收入 4,521.36 万元，同比增长 12.4%；"
             "利润总额 -23.45 万元，主要受华北区新店开办费用影响。\n\n"
             "![各区域季度收入](charts/各区域季度收入.png){width=90%}\n\n"
             "## 二、分区域明细\n\n| 区域 | 合同编号 | 收入（元） | 利润（元） | 备注 |\n|---|---|---|---|---|\n"
             "| 华东区域营销管理中心 | HT-2024-01001 | 18,452,300.00 | 1,204,500.00 | 完成全年目标的 78% |\n"
             "| 华南区域营销管理中心 | HT-2024-01002 | 12,890,100.00 | 856,300.00 | 新开门店 3 家 |\n"
             "| 华北区域营销管理中心 | HT-2024-01003 | 9,021,700.00 | -234,500.00 | 开办费用集中发生 |\n"
             "| 西南区域营销管理中心 | HT-2024-01004 | 4,849,500.00 | 312,000.00 | 与上月持平 |\n"
             "| 合计 | | 45,213,600.00 | 2,138,300.00 | |\n\n"
             "## 三、下月安排\n\n继续控制华北区开办费用，推进华南区新店爬坡。"),
}


def pivot_pages(home):
    """A year of expenses by department, pivoted by department x month with a chart, printed."""
    import random
    rnd = random.Random(7)
    rows = [["日期", "部门", "费用类别", "金额"]]
    for month in range(1, 13):
        for dept in ("技术部", "销售部", "市场部", "行政部", "财务部", "客服部"):
            for kind in ("差旅", "办公", "招待"):
                rows.append(["2025-%02d-%02d" % (month, rnd.randint(1, 28)), dept, kind,
                             round(rnd.uniform(800, 26000), 2)])
    src = os.path.join(home, ".xla", "workspace", "2025年费用明细.xlsx")
    tool("write_spreadsheet", {"path": src, "rows": rows}, home)
    pv = tool("pivot_table", {"path": src, "row": {"column": "日期", "date_bucket": "month"}, "col": {"column": "部门"},
                              "value": "金额", "chart": {"type": "bar", "title": "2025年各月各部门费用"}}, home)
    pdf = tool("convert_document", {"path": pv["path"]}, home)
    folder = os.path.join(HERE, "pivot")
    pages(pdf["path"], folder, "透视表打印")
    shutil.copy(pv["path"], os.path.join(folder, "2025年费用_透视.xlsx"))


REPORT = {"path": "9月费用报告.pdf", "page_numbers": True, "header": "综合办公室",
          "text": ("# 9月费用报告\n\n## 一、总体情况\n\n9月共发生费用 6,350.25 元，技术部最多，占 55.1%。\n\n"
                   "![9月各部门费用](charts/9月各部门费用.png){width=70%}\n\n## 二、分部门明细\n\n| 部门 | 金额（元） |\n"
                   "| --- | --- |\n| 技术部 | 3,500.00 |\n| 销售部 | 2,100.00 |\n| 行政部 | 750.25 |\n| 合计 | 6,350.25 |\n\n"
                   "\\newpage\n\n## 三、建议\n\n控制行政开支。")}


def report_pages(home):
    """examples/report: the chart and the report's first page (README's write_document picture)."""
    tool("draw_chart", {"type": "bar", "title": "9月各部门费用", "labels": ["技术部", "销售部", "行政部"],
                        "series": [{"name": "金额", "data": [3500, 2100, 750.25]}], "file_name": "9月各部门费用",
                        "scale": 2}, home)
    pdf = tool("write_document", REPORT, home)
    out = os.path.join(HERE, "report", "report_page1")
    subprocess.run(["pdftoppm", "-r", "60", "-f", "1", "-l", "1", "-singlefile", "-png", pdf["path"], out], check=True)


def main():
    home = tempfile.mkdtemp(prefix="xla-examples-")
    try:
        pivot_pages(home)
        report_pages(home)
        tool("draw_chart", {"type": "bar", "title": "各区域季度收入", "labels": ["一季度", "二季度", "三季度"],
                            "series": [{"name": "华东", "data": [34.5e6, 39.8e6, 45.2e6]},
                                       {"name": "华南", "data": [30.1e6, 36.7e6, 40.2e6]},
                                       {"name": "华北", "data": [28.5e6, -2.345e6, 37.9e6]}],
                            "unit": "元", "file_name": "各区域季度收入", "scale": 2}, home)
        gw = tool("write_document", GONGWEN, home)
        pages(gw["path"], os.path.join(HERE, "gongwen"), "红头公文")
        mr = tool("write_document", MONTHLY, home)
        pages(mr["path"], os.path.join(HERE, "monthly"), "月报")
        shutil.copy(gw["path"], os.path.join(HERE, "gongwen", "红头通知.pdf"))
        shutil.copy(mr["path"], os.path.join(HERE, "monthly", "9月经营月报.pdf"))
        for folder, params in (("gongwen", GONGWEN), ("monthly", MONTHLY)):
            with open(os.path.join(HERE, folder, "write_document.json"), "w", encoding="utf-8") as fh:
                json.dump(params, fh, ensure_ascii=False, indent=1)
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
