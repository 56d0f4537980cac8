/**
 * Redocly CLI lints the document the server serves with its recommended rules: no error, and no
 * warning but those redocly.yaml keeps with a reason.
 */
// sqlite-only: the document is linted; it does not depend on the store
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keptWarnings, runTool, servedDocument } from './document.js';

interface RedoclyReport {
  totals: { errors: number; warnings: number };
  problems: Array<{
    ruleId: string;
    severity: string;
    message: string;
    location: Array<{ pointer?: string }>;
  }>;
}

test('redocly lint (recommended): no error, only the warnings redocly.yaml keeps', async () => {
  const served = await servedDocument();
  try {
    const run = await runTool('redocly', ['lint', served.file, '--config', 'redocly.yaml', '--format=json']);
    let report: RedoclyReport;
    try {
      report = JSON.parse(run.stdout) as RedoclyReport;
    } catch {
      assert.fail(`redocly did not run (exit ${run.code}): ${run.stderr}${run.stdout}`);
    }
    const describe = (severity: string) =>
      report.problems
        .filter((p) => p.severity === severity)
        .map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    assert.deepEqual(describe('error'), [], 'errors');
    assert.equal(report.totals.errors, 0);
    assert.equal(run.code, 0, run.stderr);
    const kept = keptWarnings('redocly.yaml');
    assert.ok(kept.size > 0, 'redocly.yaml lists the warnings it keeps');
    const unexpected = report.problems.filter((p) => p.severity === 'warn' && !kept.has(p.ruleId));
    assert.deepEqual(
      unexpected.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`),
      [],
      'warnings redocly.yaml does not keep',
    );
  } finally {
    served.cleanUp();
  }
});
