// Drives `xla.py mcp` with the official MCP TypeScript SDK's stdio client (tests/test_mcp_typescript.py).
// Usage: node mcp_ts_client.cjs <sdk install folder> <python> <xla.py> <home> <sample.xlsx> <big.csv>
// Prints one JSON object with what it saw; the Python test makes the assertions.
"use strict";
const path = require("path");
const { createRequire } = require("module");

const [sdkDir, python, xla, home, sample, bigCsv] = process.argv.slice(2);
const sdk = createRequire(path.join(sdkDir, "package.json"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");

async function main() {
  const out = {};
  const transport = new StdioClientTransport({
    command: python, args: ["-X", "utf8", xla, "mcp"],
    env: { PATH: process.env.PATH, HOME: home }, stderr: "ignore",
  });
  const client = new Client({ name: "xla-ts-test", version: "1.0.0" });
  await client.connect(transport);
  out.server = client.getServerVersion();

  const listed = await client.listTools();
  out.tools = listed.tools.map((t) => t.name);
  out.with_output_schema = listed.tools.filter((t) => t.outputSchema).length;

  // The SDK validates structuredContent against the listed outputSchema itself (ajv).
  const probe = await client.callTool({ name: "probe_table", arguments: { path: sample } });
  out.probe = { isError: probe.isError, ok: probe.structuredContent && probe.structuredContent.ok,
                columns: (probe.structuredContent.columns || []).map((c) => c.name) };

  const chart = await client.callTool({ name: "draw_chart", arguments: {
    type: "bar", labels: ["一月", "二月"], values: [3, 5], title: "销量" } });
  out.chart = chart.content.map((c) => ({ type: c.type, mimeType: c.mimeType || null,
                                          bytes: c.data ? Buffer.from(c.data, "base64").length : 0 }));

  const bad = await client.callTool({ name: "probe_table", arguments: { sample: "很多" } });
  out.bad = { isError: bad.isError, text: bad.content[0].text };

  const notes = [];
  const calc = await client.callTool({ name: "calc_table", arguments: { path: bigCsv, group_by: ["部门"] } },
    undefined, { onprogress: (p) => notes.push(p), timeout: 120000 });
  out.progress = notes;
  out.calc = { isError: calc.isError, rows_used: calc.structuredContent.rows_used };

  // Cancel a long call after its first progress report: the promise rejects, the server lives on.
  const abort = new AbortController();
  let cancelled = null;
  try {
    await client.callTool({ name: "calc_table", arguments: { path: bigCsv, group_by: ["部门"] } }, undefined, {
      signal: abort.signal, timeout: 120000, onprogress: () => abort.abort("测试取消") });
    cancelled = "finished";
  } catch (err) {
    cancelled = String(err && err.message || err);
  }
  out.cancelled = cancelled;
  out.ping_after_cancel = await client.ping();
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((err) => {
  process.stdout.write(JSON.stringify({ fatal: String(err && err.stack || err) }) + "\n");
  process.exit(1);
});
