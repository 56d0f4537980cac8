/**
 * Where an answer read in two halves splits a hub's contacts (answers.threads.ts balancedMiddle):
 * always a split with both sides non-empty, moved towards the lighter half, and, answer after
 * answer, towards halves of the same weight, whatever the contacts' weights.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { balancedMiddle } from '../../../src/store/sqlite/answers/answers.threads.js';

test('the next middle splits the ids in two and moves towards the lighter half', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 1_000_000 }),
      fc.integer({ min: 1, max: 100_000 }),
      fc.nat(),
      fc.nat({ max: 10_000_000 }),
      fc.nat({ max: 10_000_000 }),
      (low, span, at, first, second) => {
        const high = low + span;
        const middle = low + (at % span);
        const next = balancedMiddle(low, high, middle, first, second);
        assert.ok(Number.isInteger(next) && next >= low && next < high);
        if (first > second) assert.ok(next <= middle);
        if (first < second) assert.ok(next >= middle);
        if (first === second) assert.equal(next, middle);
      },
    ),
  );
});

test('answer after answer, the halves come to weigh about the same', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 2, maxLength: 300 }),
      fc.nat(),
      (weights, at) => {
        // Contacts low..high with these weights (bytes of their messages in the range asked).
        const low = 1_000;
        const high = low + weights.length - 1;
        const halves = (middle: number) => {
          let first = 0;
          let second = 0;
          weights.forEach((weight, i) => {
            if (low + i <= middle) first += weight;
            else second += weight;
          });
          return [first, second] as const;
        };
        const total = weights.reduce((a, b) => a + b, 0);
        // The best split there is, for these weights.
        let best = total;
        for (let m = low; m < high; m++) best = Math.min(best, Math.abs(halves(m)[0] - halves(m)[1]));
        let middle = low + (at % (high - low));
        for (let answer = 0; answer < 40; answer++)
          middle = balancedMiddle(low, high, middle, ...halves(middle));
        const [first, second] = halves(middle);
        // Within a few contacts' weight of the best split.
        assert.ok(
          Math.abs(first - second) <= best + 4 * Math.max(...weights),
          `${first} / ${second}, best ${best}`,
        );
      },
    ),
  );
});
