/** Where a JSON text goes wrong (for `chatlog import`'s messages), held to JSON.parse as the oracle. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { findJsonProblem, lineAndColumn } from '../../../src/modules/ingest/import.json.js';

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The offset V8 names in its message, when it names one ("Unexpected end" is the end of the text). */
function v8Offset(text: string): number | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    const message = (error as Error).message;
    if (/Unexpected end of JSON input/.test(message)) return text.length;
    const position = /at position (\d+)/.exec(message)?.[1];
    return position === undefined ? undefined : Number(position);
  }
}

/** Valid JSON texts, pretty-printed or not, with characters JSON must escape. */
const jsonText = fc.oneof(
  fc.json(),
  fc.jsonValue().map((value) => JSON.stringify(value, null, 2)),
  fc.jsonValue().map((value) => JSON.stringify([value, '😀 "\\ \n'], null, '\t')),
);
/** Characters that break JSON in every way: structure, quotes, escapes, control characters, emoji. */
const noise = fc.constantFrom(
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '"',
  '\\',
  '\n',
  '\u0001',
  ' ',
  '0',
  '-',
  '.',
  'e',
  't',
  'x',
  '😀',
  "'",
  'u',
);

test('a text has a problem exactly when JSON.parse refuses it, at the offset V8 names', () => {
  fc.assert(
    fc.property(
      jsonText,
      fc.array(fc.tuple(fc.nat(), fc.nat(2), noise), { maxLength: 3 }),
      (valid, edits) => {
        let text = valid;
        for (const [at, kind, char] of edits) {
          const i = at % (text.length + 1);
          // Insert, replace or delete one character.
          text =
            kind === 0
              ? text.slice(0, i) + char + text.slice(i)
              : kind === 1
                ? text.slice(0, i) + char + text.slice(i + 1)
                : text.slice(0, i) + text.slice(i + 1);
        }
        const problem = findJsonProblem(text);
        assert.equal(problem === undefined, parses(text), JSON.stringify(text));
        if (problem) {
          const named = v8Offset(text);
          if (named !== undefined) assert.equal(problem.offset, named, JSON.stringify(text));
          assert.deepEqual(
            { line: problem.line, column: problem.column },
            lineAndColumn(text, problem.offset),
          );
        }
      },
    ),
    { numRuns: 3000 },
  );
});

test('one change to a valid text is never blamed on an earlier place', () => {
  fc.assert(
    fc.property(jsonText, fc.nat(), noise, (valid, at, char) => {
      const i = at % (valid.length + 1);
      const text = valid.slice(0, i) + char + valid.slice(i);
      const problem = findJsonProblem(text);
      // Everything before the change is the start of a valid text, so it cannot be the problem.
      if (problem) assert.ok(problem.offset >= i, `${JSON.stringify(text)}: ${problem.offset} < ${i}`);
    }),
    { numRuns: 2000 },
  );
});

test('lines and columns as an editor counts them, with the words of the problem', () => {
  const text = '[\n  {"lineId": "U1", "msg": "😀 hi" "createdAt": "x"}\n]';
  assert.deepEqual(findJsonProblem(text), {
    line: 2,
    column: 34,
    offset: text.indexOf('"createdAt"'),
    what: `expected ',' or '}' after a property value, found '"'`,
  });
  assert.match(
    findJsonProblem('{"a": 1,}')?.what ?? '',
    /expected a property name in double quotes, found '}'/,
  );
  assert.match(
    findJsonProblem('[1, 2')?.what ?? '',
    /expected ',' or ']' after an element, found the end of the file/,
  );
  assert.match(findJsonProblem('"a\nb"')?.what ?? '', /a line break inside a string/);
  assert.deepEqual(
    { ...findJsonProblem('[\r\n1 2]') },
    { line: 2, column: 3, offset: 5, what: "expected ',' or ']' after an element, found '2'" },
  );
  // Deep nesting is scanned without recursion.
  assert.equal(findJsonProblem(`${'['.repeat(100_000)}${']'.repeat(100_000)}`), undefined);
  assert.equal(findJsonProblem(`${'['.repeat(100_000)}`)?.offset, 100_000);
});
