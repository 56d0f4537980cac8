/**
 * Values written into a statement as literals (src/store/postgres/postgres.sql.ts withLiterals, for
 * the round trips of several statements of the webhook path) come back from a real PostgreSQL as
 * they went in, whatever the text: quotes, backslashes, `?`, `$1`, line breaks, any script.
 * PostgreSQL pass only (it opens a test store for its schema's connection).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { withLiterals } from '../../src/store/postgres/postgres.sql.js';
import { createTestStore, TEST_STORE_KIND } from '../helpers.js';

const textArb = fc.oneof(
  fc.string({
    unit: fc.constantFrom("'", "''", '\\', '\\\\', 'E', '?', '$1', '"', ';', '\n', '\t', 'a', '日', '😀'),
  }),
  // Any text PostgreSQL stores (it refuses NUL; a lone surrogate is not UTF-8).
  fc.string({ unit: 'grapheme' }).filter((s) => !s.includes('\u0000')),
);

test('a value written as a literal comes back as it was', {
  skip: TEST_STORE_KIND !== 'postgres' && 'PostgreSQL pass only',
}, async () => {
  const t = await createTestStore();
  const client = new pg.Client({ connectionString: t.env.DATABASE_URL });
  await client.connect();
  try {
    await fc.assert(
      fc.asyncProperty(
        textArb,
        fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.constant(Number.MIN_SAFE_INTEGER), fc.constant(-0)),
        fc.constantFrom(null, 'x'),
        async (text, number, maybe) => {
          // Two statements in one round trip, as the webhook path sends them.
          const results = (await client.query(
            `${withLiterals('SELECT ? AS text, ?::bigint AS number, ? AS maybe', [text, number, maybe])}; SELECT 1`,
          )) as unknown as pg.QueryResult[];
          assert.deepEqual(results[0]?.rows[0], { text, number: String(number === 0 ? 0 : number), maybe });
        },
      ),
      { numRuns: 200 },
    );
    assert.throws(() => withLiterals('SELECT ?', []), /more placeholders/);
    assert.throws(() => withLiterals('SELECT 1', ['x']), /fewer placeholders/);
    assert.throws(() => withLiterals('SELECT ?', [Number.NaN]), /safe integer/);
    assert.throws(() => withLiterals('SELECT ?', [1.5]), /safe integer/);
    // A negative number after a minus sign stays a number, not the start of a comment.
    const [negated] = (await client.query(
      `${withLiterals('SELECT -? AS n', [-5])}; SELECT 1`,
    )) as unknown as pg.QueryResult[];
    assert.deepEqual(negated?.rows[0], { n: 5 });
  } finally {
    await client.end();
    await t.close();
  }
});
