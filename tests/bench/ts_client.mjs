// sb-bench peer: the official TypeScript MCP SDK client (`Client` + `StdioClientTransport`,
// `callTool`) against one fake-mcp-server process, with the same protocol as every other
// client of `sb-bench` (see tests/src/bin/sb_bench.rs):
//
//   warm-up: `--warmup` sequential calls, then for each c in `--conc`: `--calls` calls of
//   `echo {text}` by c concurrent workers sharing one call counter; every call is timed alone
//   (performance.now() around the awaited callTool) and checked; throughput is calls / wall time.
//
// Prints one JSON line per c on stdout:
//   {"client":"ts-sdk","sdk_version":"1.32.2","c":1,"calls":N,"p50_us":..,"p99_us":..,"throughput":..}
// Exits 3 (message on stderr) when the SDK cannot be found, 1 on any other failure.
//
// Usage: node ts_client.mjs --server PATH [--sdk DIR] [--calls N] [--warmup N] [--conc 1,16,64]
// The SDK directory (the package folder `@modelcontextprotocol/sdk`) comes from --sdk, else
// $SWITCHBOARD_TS_SDK_DIR, $SWITCHBOARD_NODE_MODULES/@modelcontextprotocol/sdk or
// $SWITCHBOARD_NPM_DIR/node_modules/@modelcontextprotocol/sdk.

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const TEXT = "hello from sb-bench";

function parseArgs(argv) {
  const opts = { calls: 20000, warmup: 500, conc: [1, 16, 64], server: null, sdk: null };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => (inline !== undefined ? inline : argv[++i]);
    switch (flag) {
      case "--server": opts.server = value(); break;
      case "--sdk": opts.sdk = value(); break;
      case "--calls": opts.calls = Number(value()); break;
      case "--warmup": opts.warmup = Number(value()); break;
      case "--conc": opts.conc = value().split(",").map(Number); break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!opts.server) throw new Error("--server PATH is required");
  return opts;
}

function sdkDir(explicit) {
  const env = process.env;
  const candidates = [
    explicit,
    env.SWITCHBOARD_TS_SDK_DIR,
    env.SWITCHBOARD_NODE_MODULES && path.join(env.SWITCHBOARD_NODE_MODULES, "@modelcontextprotocol/sdk"),
    env.SWITCHBOARD_NPM_DIR && path.join(env.SWITCHBOARD_NPM_DIR, "node_modules/@modelcontextprotocol/sdk"),
  ].filter(Boolean);
  return candidates.find((d) => existsSync(path.join(d, "dist/esm/client/index.js")));
}

/** Nearest-rank percentile of a sorted array (the same definition in every sb-bench client). */
function percentile(sorted, q) {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1];
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const dir = sdkDir(opts.sdk);
  if (!dir) {
    console.error("the TypeScript SDK (@modelcontextprotocol/sdk) was not found: run `make deps` or set SWITCHBOARD_TS_SDK_DIR");
    process.exit(3);
  }
  const version = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).version;
  const load = (p) => import(pathToFileURL(path.join(dir, "dist/esm", p)).href);
  const { Client } = await load("client/index.js");
  const { StdioClientTransport } = await load("client/stdio.js");

  const transport = new StdioClientTransport({ command: opts.server, args: [], stderr: "ignore" });
  const client = new Client({ name: "sb-bench-ts", version: "0.1.0" });
  await client.connect(transport);

  const call = async () => {
    const r = await client.callTool({ name: "echo", arguments: { text: TEXT } });
    if (r.isError || r.content?.[0]?.text !== TEXT) {
      throw new Error(`unexpected echo result: ${JSON.stringify(r)}`);
    }
  };

  for (let i = 0; i < opts.warmup; i++) await call();

  for (const c of opts.conc) {
    const n = opts.calls;
    const lat = new Float64Array(n);
    let next = 0;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= n) return;
        const t = performance.now();
        await call();
        lat[i] = (performance.now() - t) * 1000;
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: c }, worker));
    const wall = (performance.now() - t0) / 1000;
    lat.sort();
    console.log(JSON.stringify({
      client: "ts-sdk",
      sdk_version: version,
      c,
      calls: n,
      p50_us: percentile(lat, 0.5),
      p99_us: percentile(lat, 0.99),
      throughput: n / wall,
    }));
  }
  await client.close();
}

main().catch((e) => {
  console.error(`ts_client: ${e?.stack ?? e}`);
  process.exit(1);
});
