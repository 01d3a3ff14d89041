// Judge one run of tests/conformance/run.sh and print its summary.
//
//   KNOWN_SCENARIOS="every scenario" node summarize.mjs OUT_DIR BASELINE_YML CONFORMANCE_CLI_JS SCENARIO...
//
// For every scenario run.sh left OUT_DIR/logs/<name>.log (the conformance CLI's output) and
// OUT_DIR/logs/<name>.rc (its exit code, run with --expected-failures BASELINE_YML). The CLI's
// own verdict with a baseline looks only at the checks: a scenario with no checks at all (a
// client that did nothing) counts as passed there. We are stricter for scenarios that are NOT in
// the baseline: they pass only if the CLI exited 0, printed "OVERALL: PASSED" (so the client
// exited 0, did not time out, and no check failed or warned) and at least one check SUCCEEDED.
// Scenarios in the baseline are expected failures while the CLI exits 0 for them; a baseline
// entry that now passes is stale, and one that names no scenario of this suite is an error.
// Prints a line per scenario and ends with "conformance: N passed, M failed" on its own line.
// Exit status: 0 when nothing failed, 1 otherwise.
import { readFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const [outDir, baselinePath, cliPath, ...scenarios] = process.argv.slice(2);
if (!outDir || !baselinePath || !cliPath || scenarios.length === 0) {
  console.error('usage: node summarize.mjs OUT_DIR BASELINE_YML CONFORMANCE_CLI_JS SCENARIO...');
  process.exit(2);
}

// Parse the baseline with the same YAML library the conformance CLI uses.
const { parse: parseYaml } = createRequire(cliPath)('yaml');
const baselineDoc = parseYaml(readFileSync(baselinePath, 'utf8')) ?? {};
const baseline = new Set((baselineDoc.client ?? []).map(String));

const safeName = (s) => s.replaceAll('/', '_');
const results = [];

for (const scenario of scenarios) {
  const logPath = path.join(outDir, 'logs', `${safeName(scenario)}.log`);
  const rcPath = path.join(outDir, 'logs', `${safeName(scenario)}.rc`);
  const log = existsSync(logPath) ? readFileSync(logPath, 'utf8') : '';
  const rc = existsSync(rcPath) ? Number(readFileSync(rcPath, 'utf8').trim()) : NaN;

  let checks = [];
  const saved = log.match(/^Results saved to (.+)$/m);
  if (saved && existsSync(path.join(saved[1].trim(), 'checks.json'))) {
    checks = JSON.parse(readFileSync(path.join(saved[1].trim(), 'checks.json'), 'utf8'));
  }
  const count = (status) => checks.filter((c) => c.status === status).length;
  const ok = count('SUCCESS');
  const bad = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING');
  const exited = log.match(/^Client exited with code (-?\d+)/m);
  const timedOut = /^Client timed out after/m.test(log);
  const overallPassed = /OVERALL: PASSED/.test(log);

  const reasons = [];
  for (const c of bad) {
    reasons.push(`${c.status} ${c.id}: ${c.errorMessage ?? c.details?.message ?? c.description}`);
  }
  if (exited) reasons.push(`client exited with code ${exited[1]}`);
  if (timedOut) reasons.push('client timed out');

  let verdict;
  if (baseline.has(scenario)) {
    if (rc === 0) {
      verdict = 'expected';
    } else {
      verdict = 'failed';
      if (bad.length === 0 && checks.length > 0) {
        reasons.unshift('stale baseline entry: the scenario passes now, remove it from baseline.yml');
      } else {
        reasons.push(`the conformance CLI exited with ${Number.isNaN(rc) ? 'no status' : rc}`);
      }
    }
  } else if (rc === 0 && overallPassed && ok > 0 && bad.length === 0) {
    verdict = 'passed';
  } else {
    verdict = 'failed';
    if (checks.length === 0) reasons.push('no checks recorded (the client never reached the server?)');
    else if (ok === 0 && bad.length === 0) reasons.push('no check succeeded (the client did not do what the scenario asks)');
    if (Number.isNaN(rc)) reasons.push('the conformance CLI did not finish');
    else if (rc !== 0 && reasons.length === 0) reasons.push(`conformance CLI exited with ${rc}`);
  }
  results.push({ scenario, verdict, ok, bad: bad.length, reasons, logPath });
}

// Baseline entries that name no scenario of the suite (typos, removed scenarios). run.sh passes
// the suite's full list in KNOWN_SCENARIOS, since it may run only a subset.
const known = (process.env.KNOWN_SCENARIOS ?? scenarios.join(' ')).split(/\s+/).filter(Boolean);
const unknown = [...baseline].filter((s) => !known.includes(s));

const mark = { passed: 'PASS ', expected: 'XFAIL', failed: 'FAIL ' };
console.log('');
for (const r of results) {
  const note = r.verdict === 'expected' ? ' (baseline.yml)' : '';
  console.log(`${mark[r.verdict]} ${r.scenario}: ${r.ok} checks ok, ${r.bad} failed${note}`);
  if (r.verdict === 'failed') {
    for (const reason of r.reasons) console.log(`        ${reason}`);
    console.log(`        log: ${path.relative(process.cwd(), r.logPath)}`);
  }
}
for (const s of unknown) {
  console.log(`FAIL  baseline.yml lists '${s}', which is not a client scenario of this suite`);
}

const passed = results.filter((r) => r.verdict === 'passed').length;
const expected = results.filter((r) => r.verdict === 'expected').length;
const failed = results.filter((r) => r.verdict === 'failed').length + unknown.length;
console.log('');
console.log(`conformance: ${expected} expected failures listed in tests/conformance/baseline.yml`);
console.log(`conformance: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
