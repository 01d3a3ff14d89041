"""sb-bench peer: the official Python MCP SDK client (`ClientSession` over `stdio_client`,
`call_tool`) against one fake-mcp-server process, with the same protocol as every other client
of `sb-bench` (see tests/src/bin/sb_bench.rs):

  warm-up: `--warmup` sequential calls, then for each c in `--conc`: `--calls` calls of
  `echo {text}` by c concurrent asyncio workers (asyncio.gather) sharing one call counter; every
  call is timed alone (perf_counter_ns around the awaited call_tool) and checked; throughput is
  calls / wall time.

Prints one JSON line per c on stdout:
  {"client":"py-sdk","sdk_version":"2.3.0","c":1,"calls":N,"p50_us":..,"p99_us":..,"throughput":..}
Exits 3 (message on stderr) when the `mcp` package does not import, 1 on any other failure.

Usage: python py_client.py --server PATH [--calls N] [--warmup N] [--conc 1,16,64]
"""

import argparse
import asyncio
import json
import math
import os
import sys
import time

TEXT = "hello from sb-bench"


def percentile(sorted_values, q):
    """Nearest-rank percentile (the same definition in every sb-bench client)."""
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[rank - 1]


async def run(opts, mcp, version):
    params = mcp.StdioServerParameters(command=opts.server, args=[])
    with open(os.devnull, "w") as devnull:
        async with mcp.stdio_client(params, errlog=devnull) as (read, write):
            async with mcp.ClientSession(read, write) as session:
                await session.initialize()

                async def call():
                    r = await session.call_tool("echo", {"text": TEXT})
                    text = getattr(r.content[0], "text", None) if r.content else None
                    if r.is_error or text != TEXT:
                        raise RuntimeError(f"unexpected echo result: {r!r}")

                for _ in range(opts.warmup):
                    await call()

                for c in opts.conc:
                    n = opts.calls
                    lat = [0.0] * n
                    counter = 0

                    async def worker():
                        nonlocal counter
                        while True:
                            i = counter
                            if i >= n:
                                return
                            counter += 1
                            t = time.perf_counter_ns()
                            await call()
                            lat[i] = (time.perf_counter_ns() - t) / 1000.0

                    t0 = time.perf_counter()
                    await asyncio.gather(*(worker() for _ in range(c)))
                    wall = time.perf_counter() - t0
                    lat.sort()
                    line = {
                        "client": "py-sdk",
                        "sdk_version": version,
                        "c": c,
                        "calls": n,
                        "p50_us": percentile(lat, 0.5),
                        "p99_us": percentile(lat, 0.99),
                        "throughput": n / wall,
                    }
                    print(json.dumps(line), flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--server", required=True)
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--warmup", type=int, default=500)
    p.add_argument("--conc", default="1,16,64", type=lambda s: [int(x) for x in s.split(",")])
    opts = p.parse_args()
    try:
        import mcp
        from importlib.metadata import version as dist_version

        version = dist_version("mcp")
    except Exception as e:  # noqa: BLE001 - any import failure means "peer unavailable"
        print(f"the Python MCP SDK (mcp) does not import: {e}; run `make deps` or set SWITCHBOARD_PYTHON", file=sys.stderr)
        sys.exit(3)
    try:
        asyncio.run(run(opts, mcp, version))
    except Exception as e:  # noqa: BLE001
        print(f"py_client: {e!r}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
