"""The MCP server keeps the OCR engine warm between calls (issue 36.7): one ocr_service process,
started at the first read_document call, used by every read_document child, gone after its idle
time or with the server. Real server, real engine, real scans (make_fixtures' A4 pages as
image-only PDFs); no timing asserts: what is checked is who loaded the engine and how often, and
that the answers are right."""
import os
import re
import sys

from conftest import FIXTURES, ROOT, ok
from test_mcp import Raw, wait_until

sys.path.insert(0, os.path.join(FIXTURES, "ocr"))
import make_fixtures  # noqa: E402

LOADED = "文字识别引擎已加载"


def scans(tmp_path, count):
    """``count`` one-page scans of different notices (the page cache answers repeats of one file)."""
    paths = []
    for i in range(count):
        img, _truth = make_fixtures.text_page(["通知（第 %d 号）" % (i + 1)] + make_fixtures.NOTICE, bottom=900)
        img = img.crop((0, 0, img.size[0], 1000))
        path = tmp_path / ("通知-%d.pdf" % i)
        path.write_bytes(make_fixtures.pdf([(make_fixtures.encoded(img), img.size, None)], dpi=200))
        paths.append(str(path))
    return paths


def services(server_pid):
    """Live ocr_service processes started by the server (Linux /proc)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            with open("/proc/%s/cmdline" % pid, "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if int(fields[1]) == server_pid and fields[0] != "Z" and b"ocr_service" in cmdline:
            found.append(int(pid))
    return found


def read(server, path):
    answer = server.request("tools/call", {"name": "read_document", "arguments": {"path": path}})
    assert not answer["result"].get("isError"), answer
    import json
    return json.loads(answer["result"]["content"][0]["text"])


def test_the_second_scan_through_the_server_does_not_load_the_engine_again(home, tmp_path):
    server = Raw(home)
    try:
        server.initialize()
        first, second, third = scans(tmp_path, 3)
        answers = [read(server, path) for path in (first, second, third)]
        for answer in answers:
            assert answer["ocr"]["warm_engine"] is True and answer["ocr"]["pages_read"] == 1
            assert "自二〇二六年十二月一日起" in answer["text"].replace(" ", ""), answer["text"]
        assert [len(re.findall(r"通知[(（]第 ?%d ?号[)）]" % (i + 1), a["text"])) for i, a in enumerate(answers)] == [1, 1, 1]
        assert server.stderr().count(LOADED) == 1
        assert len(services(server.proc.pid)) == 1
        pid = services(server.proc.pid)[0]
    finally:
        assert server.close() == 0
    wait_until(lambda: not os.path.exists("/proc/%d" % pid) or open("/proc/%d/stat" % pid).read().split()[2] == "Z",
               "the OCR service to end with the server")


def test_the_idle_service_exits_and_the_next_call_starts_a_new_one(home, tmp_path):
    server = Raw(home, env={"XLA_MCP_OCR_IDLE": "1"})
    try:
        server.initialize()
        first, second = scans(tmp_path, 2)
        assert read(server, first)["ocr"]["warm_engine"] is True
        wait_until(lambda: not services(server.proc.pid), "the idle OCR service to exit")
        assert "空闲" in server.stderr()
        again = read(server, second)
        assert "ocr" in again, (again, server.stderr())
        assert again["ocr"].get("warm_engine") is True and "特此通知" in again["text"], server.stderr()
        assert server.stderr().count(LOADED) == 2
    finally:
        assert server.close() == 0


def test_a_service_address_that_does_not_answer_means_the_tool_reads_with_its_own_engine(run, tmp_path):
    path = scans(tmp_path, 1)[0]
    data = ok(run("read_document", {"path": path}, extra_env={
        "XLA_OCR_SERVICE": str(tmp_path / "gone" / "s"), "XLA_OCR_KEY": "00" * 32}))
    assert "特此通知" in data["text"] and "warm_engine" not in data["ocr"]
    assert re.search(r"【第 1 页】", data["text"])
