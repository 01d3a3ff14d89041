// sb-bench peer: the official TypeScript MCP SDK v2 client (`@modelcontextprotocol/client`,
// `Client` pinned to the 2026-07-28 revision, `callTool`) on the 2026-07-28 wire: the connection
// opens with `server/discover` and every request carries the per-request `_meta` envelope (and,
// over HTTP, the MCP-Protocol-Version / Mcp-Method / Mcp-Name headers). The same protocol as
// every other client of `sb-bench` (see tests/src/bin/sb_bench.rs):
//
//   warm-up: `--warmup` sequential calls, then for each c in `--conc`: `--calls` calls of
//   `echo {text}` by c concurrent workers sharing one call counter; every call is timed alone
//   (performance.now() around the awaited callTool) and checked; throughput is calls / wall time.
//
// The server is a TypeScript SDK v2 server (tests/fixtures/ts2_server.mjs): over stdio the client
// starts it (`--server-cmd`, a JSON array: program and arguments); over HTTP it is already
// listening at `--url` (sb-bench starts it).
//
// Prints one JSON line per c on stdout:
//   {"client":"ts-sdk-v2","sdk_version":"2.4.0","protocol":"2026-07-28","transport":"stdio",
//    "c":1,"calls":N,"p50_us":..,"p99_us":..,"throughput":..}
// Exits 3 (message on stderr) when the SDK cannot be found, 1 on any other failure (including a
// connection that did not negotiate 2026-07-28: a pinned client refuses anything else).
//
// Usage: node ts2_client.mjs (--server-cmd JSON | --url URL) [--modules DIR] [--calls N]
//                            [--warmup N] [--conc 1,16,64]
// The SDK is looked up in --modules, else $SWITCHBOARD_NODE_MODULES, else
// $SWITCHBOARD_NPM_DIR/node_modules (the folder holding `@modelcontextprotocol/client`).

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const TEXT = "hello from sb-bench";
const REVISION = "2026-07-28";
const PKG = "@modelcontextprotocol/client";

function parseArgs(argv) {
  const opts = { calls: 20000, warmup: 500, conc: [1, 16, 64], serverCmd: null, url: null, modules: null };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => (inline !== undefined ? inline : argv[++i]);
    switch (flag) {
      case "--server-cmd": opts.serverCmd = JSON.parse(value()); break;
      case "--url": opts.url = value(); break;
      case "--modules": opts.modules = value(); break;
      case "--calls": opts.calls = Number(value()); break;
      case "--warmup": opts.warmup = Number(value()); break;
      case "--conc": opts.conc = value().split(",").map(Number); break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  if (!opts.serverCmd === !opts.url) throw new Error("give exactly one of --server-cmd JSON and --url URL");
  if (opts.serverCmd && (!Array.isArray(opts.serverCmd) || opts.serverCmd.length === 0)) {
    throw new Error("--server-cmd must be a JSON array: [program, ...args]");
  }
  return opts;
}

function modulesDir(explicit) {
  const env = process.env;
  const candidates = [
    explicit,
    env.SWITCHBOARD_NODE_MODULES,
    env.SWITCHBOARD_NPM_DIR && path.join(env.SWITCHBOARD_NPM_DIR, "node_modules"),
  ].filter(Boolean);
  return candidates.find((d) => existsSync(path.join(d, PKG, "package.json")));
}

/** Nearest-rank percentile of a sorted array (the same definition in every sb-bench client). */
function percentile(sorted, q) {
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1];
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const modules = modulesDir(opts.modules);
  if (!modules) {
    console.error(`the TypeScript SDK v2 client (${PKG}) was not found: run \`make deps\` or set SWITCHBOARD_NODE_MODULES`);
    process.exit(3);
  }
  const dir = path.join(modules, PKG);
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  const load = (sub) => import(pathToFileURL(path.join(dir, manifest.exports[sub].import.default)).href);
  const { Client, StreamableHTTPClientTransport } = await load(".");

  let transport;
  if (opts.url) {
    transport = new StreamableHTTPClientTransport(new URL(opts.url));
  } else {
    const { StdioClientTransport } = await load("./stdio");
    const [command, ...args] = opts.serverCmd;
    transport = new StdioClientTransport({ command, args, stderr: "ignore" });
  }
  const client = new Client(
    { name: "sb-bench-ts2", version: "0.1.0" },
    { versionNegotiation: { mode: { pin: REVISION } } },
  );
  await client.connect(transport);
  const negotiated = client.getNegotiatedProtocolVersion();
  if (client.getProtocolEra() !== "modern" || negotiated !== REVISION) {
    throw new Error(`negotiated ${negotiated} (${client.getProtocolEra()}), not ${REVISION}`);
  }

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
      client: "ts-sdk-v2",
      sdk_version: manifest.version,
      protocol: negotiated,
      transport: opts.url ? "http" : "stdio",
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
  console.error(`ts2_client: ${e?.stack ?? e}`);
  process.exit(1);
});
