/**
 * Spectral lints the document the server serves with its spectral:oas ruleset: no error, and no
 * warning but those .spectral.yaml keeps with a reason.
 */
// sqlite-only: the document is linted; it does not depend on the store
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keptWarnings, runTool, servedDocument } from './document.js';

/** Spectral's severities: 0 error, 1 warning, 2 information, 3 hint. */
interface SpectralResult {
  code: string;
  severity: 0 | 1 | 2 | 3;
  message: string;
  path: string[];
}

test('spectral lint (spectral:oas): no error, only the warnings .spectral.yaml keeps', async () => {
  const served = await servedDocument();
  try {
    const run = await runTool('spectral', [
      'lint',
      served.file,
      '--ruleset',
      '.spectral.yaml',
      '--format',
      'json',
      '--quiet',
    ]);
    let results: SpectralResult[];
    try {
      results = JSON.parse(run.stdout) as SpectralResult[];
    } catch {
      assert.fail(`spectral did not run (exit ${run.code}): ${run.stderr}${run.stdout}`);
    }
    assert.ok(Array.isArray(results), run.stdout);
    const describe = (r: SpectralResult) => `${r.code} at ${r.path.join('.')}: ${r.message}`;
    assert.deepEqual(results.filter((r) => r.severity === 0).map(describe), [], 'errors');
    assert.equal(run.code, 0, run.stderr);
    const kept = keptWarnings('.spectral.yaml');
    assert.ok(kept.size > 0, '.spectral.yaml lists the warnings it keeps');
    assert.deepEqual(
      results.filter((r) => r.severity === 1 && !kept.has(r.code)).map(describe),
      [],
      'warnings .spectral.yaml does not keep',
    );
  } finally {
    served.cleanUp();
  }
});
