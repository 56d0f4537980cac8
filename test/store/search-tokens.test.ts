/**
 * The search index's tokens (src/store/sql/search.ts) against the contract's rule: whenever a
 * message holds a query's terms, its tokens hold every token the query asks for (a prefix token:
 * one beginning so). Without that the index would miss a match; the store's property test
 * (search-property.test.ts) checks whole searches on both stores.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { termsOf } from '../../src/modules/search/search.usecases.js';
import { isQuerySpace, messageTokens, queryTokens } from '../../src/store/sql/search.js';
import { normaliseText } from '../../src/store/store.js';

/** Every character kind a message may hold: kana (full and half width), kanji, Latin, emoji, white space of every sort. */
const CHARS = [
  ...'あいうかがきさしすたちっつなのはばぱゃよりをんアイカガキツフォンｱｲｶｷﾌｫﾝｯﾞﾟ予約定東京日本語',
  ...'abcxyzABCXYZＡＢＣａｂｃ１２İßΣσ.,!?',
  '😀',
  '👍🏻',
  '🇯🇵',
  ...' \n\t\r\u3000\u00a0\u2028\u2029\u200a\u202f\u205f\ufeff\u1680\u000b\u000c',
];
const textArb = fc.array(fc.constantFrom(...CHARS), { maxLength: 24 }).map((chars) => chars.join(''));

const holds = (tokens: Set<string>, asked: { token: string; prefix: boolean }) =>
  asked.prefix ? [...tokens].some((token) => token.startsWith(asked.token)) : tokens.has(asked.token);

test('a message holds every token a query asks for whenever it holds the query (the contract rule as oracle)', () => {
  fc.assert(
    fc.property(textArb, fc.nat(), fc.nat(), (msg, start, length) => {
      const text = normaliseText(msg);
      const chars = Array.from(text);
      // A piece of the message: as the API splits a query into terms, and as the store takes a
      // term (white space and all).
      const from = chars.length === 0 ? 0 : start % chars.length;
      const piece = chars.slice(from, from + 1 + (length % 6)).join('');
      // And a piece cut by UTF-16 units, as a store caller may: half an emoji.
      const units = text.slice(start % (text.length + 1), (start % (text.length + 1)) + 1 + (length % 4));
      const tokens = new Set(messageTokens(msg).split(' ').filter(Boolean));
      for (const terms of [
        termsOf(piece),
        piece === '' ? undefined : [piece],
        units === '' ? undefined : [units],
      ]) {
        // Normalising again may reorder combining marks (`İ` then `ﾞ`): the message holds the query
        // only as the contract's rule says.
        if (!terms?.every((term) => text.includes(term))) continue;
        for (const asked of queryTokens(terms)) {
          const where = `${JSON.stringify(msg)} lacks ${asked.token} for ${JSON.stringify(terms)}`;
          assert.ok(holds(tokens, asked), where);
        }
      }
    }),
    { numRuns: 5_000 },
  );
});

test('tokens are ASCII words an FTS5 query and a tsquery take as they are, each once', () => {
  fc.assert(
    fc.property(textArb, (msg) => {
      const tokens = messageTokens(msg).split(' ').filter(Boolean);
      assert.equal(new Set(tokens).size, tokens.length);
      for (const token of tokens) assert.match(token, /^[0-9a-z]{3}(?:[0-9a-z]{2})?$/);
    }),
  );
});

test('white space is what a query splits on: `\\s` of JavaScript, for every code point', () => {
  for (let c = 0; c <= 0x10ffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    assert.equal(isQuerySpace(c), /\s/u.test(String.fromCodePoint(c)), `U+${c.toString(16)}`);
  }
});
