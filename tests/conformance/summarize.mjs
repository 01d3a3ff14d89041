// Helpers of tests/conformance/run.sh: which scenarios a requirement set runs, the verdict of
// one suite's run, and the closing total.
//
//   node summarize.mjs scenarios CONFORMANCE_CLI_JS REVISION
//       The client scenarios `conformance client --requirements REVISION` runs, one a line:
//       "<name>\tscored" or "<name>\tnot-scored:<reason>" (read from the package's frozen
//       requirements/REVISION.yaml: `client` plus the `not_scored` entries of leg client).
//
//   KNOWN_SCENARIOS="every scenario" node summarize.mjs judge LABEL SUITE_OUT BASELINE_YML CONFORMANCE_CLI_JS SCENARIO...
//       For every scenario run.sh left SUITE_OUT/logs/<name>.log (the conformance CLI's output)
//       and SUITE_OUT/logs/<name>.rc (its exit code, run with --expected-failures BASELINE_YML).
//       The CLI's own verdict with a baseline looks only at the checks: a scenario with no checks
//       at all (a client that did nothing) counts as passed there, and so does a client that
//       exits non-zero or times out. We are stricter for scenarios that are NOT in the baseline:
//       they pass only if the CLI exited 0, printed "OVERALL: PASSED" (so the client exited 0 or
//       the scenario allows a client error, did not time out, and no check failed or warned) and
//       at least one check SUCCEEDED. Scenarios in the baseline are expected failures while the
//       CLI exits 0 for them; a baseline entry that now passes is stale, and one that names no
//       scenario of this suite (KNOWN_SCENARIOS) is an error. Scenarios a requirement set does
//       not score (extensions, added after release) are judged the same way: our baseline, not
//       the suite's scoring, decides. Prints a line per scenario, ends with
//       "conformance LABEL: N passed, X expected failures, M failed", writes SUITE_OUT/counts.json.
//       Exit status: 0 when nothing failed, 1 otherwise.
//
//   node summarize.mjs total OUT_DIR SUITE...
//       One line per suite from OUT_DIR/SUITE/counts.json, then "conformance: N passed, M failed"
//       over all of them (the last line of `make test`). Exit 1 when anything failed or a suite
//       left no counts.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const [mode, ...args] = process.argv.slice(2);
const usage = () => {
  console.error(
    'usage: node summarize.mjs scenarios CLI_JS REVISION\n' +
      '       node summarize.mjs judge LABEL SUITE_OUT BASELINE_YML CLI_JS SCENARIO...\n' +
      '       node summarize.mjs total OUT_DIR SUITE...'
  );
  process.exit(2);
};
// The YAML library the conformance CLI itself uses, so a baseline means the same to both.
const yamlOf = (cliPath) => createRequire(cliPath)('yaml');

if (mode === 'scenarios') {
  const [cliPath, revision] = args;
  if (!cliPath || !revision) usage();
  const file = path.join(path.dirname(cliPath), '..', 'requirements', `${revision}.yaml`);
  if (!existsSync(file)) {
    console.error(`no requirement set ${revision} in this suite (${file} missing)`);
    process.exit(2);
  }
  const doc = yamlOf(cliPath).parse(readFileSync(file, 'utf8')) ?? {};
  for (const s of doc.client ?? []) console.log(`${s}\tscored`);
  for (const e of doc.not_scored ?? []) {
    if (e?.leg === 'client') console.log(`${e.scenario}\tnot-scored:${e.reason}`);
  }
} else if (mode === 'judge') {
  judge(...args);
} else if (mode === 'total') {
  total(...args);
} else {
  usage();
}

function judge(label, suiteOut, baselinePath, cliPath, ...scenarios) {
  if (!label || !suiteOut || !baselinePath || !cliPath || scenarios.length === 0) usage();
  const baselineName = path.basename(baselinePath);
  const baselineDoc = yamlOf(cliPath).parse(readFileSync(baselinePath, 'utf8')) ?? {};
  const entries = (baselineDoc.client ?? []).map(String);
  const baseline = new Set(entries);
  const notScored = new Set((process.env.NOT_SCORED ?? '').split(/\s+/).filter(Boolean));

  const safeName = (s) => s.replaceAll('/', '_');
  const results = [];

  for (const scenario of scenarios) {
    const logPath = path.join(suiteOut, 'logs', `${safeName(scenario)}.log`);
    const rcPath = path.join(suiteOut, 'logs', `${safeName(scenario)}.rc`);
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
          reasons.unshift(`stale baseline entry: the scenario passes now, remove it from ${baselineName}`);
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

  // Baseline entries that name no scenario of the suite (typos, removed scenarios, or the
  // per-check form `scenario:check-id`, which run.sh's verdict does not support). run.sh passes
  // the suite's full list in KNOWN_SCENARIOS, since it may run only a subset.
  const known = (process.env.KNOWN_SCENARIOS ?? scenarios.join(' ')).split(/\s+/).filter(Boolean);
  const unknown = entries.filter((s) => !known.includes(s));

  const mark = { passed: 'PASS ', expected: 'XFAIL', failed: 'FAIL ' };
  console.log('');
  console.log(`--- conformance ${label} (baseline ${baselineName})`);
  for (const r of results) {
    const notes = [];
    if (r.verdict === 'expected') notes.push(baselineName);
    if (notScored.has(r.scenario)) notes.push('not scored by the suite');
    const note = notes.length ? ` (${notes.join('; ')})` : '';
    console.log(`${mark[r.verdict]} ${r.scenario}: ${r.ok} checks ok, ${r.bad} failed${note}`);
    if (r.verdict === 'failed') {
      for (const reason of r.reasons) console.log(`        ${reason}`);
      console.log(`        log: ${path.relative(process.cwd(), r.logPath)}`);
    }
  }
  for (const s of unknown) {
    const why = s.includes(':')
      ? 'per-check entries (scenario:check-id) are not supported by run.sh, list the whole scenario'
      : 'not a client scenario of this suite';
    console.log(`FAIL  ${baselineName} lists '${s}': ${why}`);
  }

  const passed = results.filter((r) => r.verdict === 'passed').length;
  const expected = results.filter((r) => r.verdict === 'expected').length;
  const failed = results.filter((r) => r.verdict === 'failed').length + unknown.length;
  const line = `conformance ${label}: ${passed} passed, ${expected} expected failures, ${failed} failed`;
  console.log(line);
  writeFileSync(path.join(suiteOut, 'counts.json'), JSON.stringify({ label, passed, expected, failed, line }) + '\n');
  process.exit(failed === 0 ? 0 : 1);
}

function total(outDir, ...suites) {
  if (!outDir || suites.length === 0) usage();
  let passed = 0;
  let expected = 0;
  let failed = 0;
  console.log('');
  for (const suite of suites) {
    const file = path.join(outDir, suite, 'counts.json');
    if (!existsSync(file)) {
      console.log(`conformance ${suite}: no verdict (the run did not finish)`);
      failed += 1;
      continue;
    }
    const c = JSON.parse(readFileSync(file, 'utf8'));
    console.log(c.line);
    passed += c.passed;
    expected += c.expected;
    failed += c.failed;
  }
  console.log(`conformance: ${expected} expected failures listed in the baselines`);
  console.log(`conformance: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}
