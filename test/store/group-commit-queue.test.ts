/**
 * GroupCommit's queue alone (no store): what arrives while groups are on their way forms the next
 * group, and no more groups than allowed are ever on their way at once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { GroupCommit, type GroupOutcome, type IngestRequest } from '../../src/store/sql/ingest.js';

const outcome = { stored: 1, duplicates: 0, removed: 0, contactsCreated: [] };

test('requests arriving at any moment are each committed once, in order, with never more groups on their way than allowed', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 3 }),
      // Each request: the milliseconds after the previous one that it arrives.
      fc.array(fc.nat(4), { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 1, max: 6 }),
      async (allowed, gaps, commitMs) => {
        let open = 0;
        let mostOpen = 0;
        const groups: string[][] = [];
        const queue = new GroupCommit(
          async (group: readonly IngestRequest[]): Promise<GroupOutcome[]> => {
            open += 1;
            mostOpen = Math.max(mostOpen, open);
            groups.push(group.map((request) => request.hubId));
            await new Promise((resolve) => setTimeout(resolve, commitMs));
            open -= 1;
            return group.map(() => outcome);
          },
          () => allowed,
        );
        const answers: Promise<unknown>[] = [];
        for (const [n, gap] of gaps.entries()) {
          if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
          answers.push(queue.add(String(n), [], 0));
        }
        await Promise.all(answers);
        await queue.close();
        assert.ok(mostOpen <= allowed, `${mostOpen} groups on their way, ${allowed} allowed`);
        assert.deepEqual(
          groups.flat(),
          gaps.map((_, n) => String(n)),
        );
      },
    ),
    { numRuns: 40 },
  );
});

test('with one group on its way, everything that arrived during its commit goes in the next, as one group', async () => {
  const groups: number[] = [];
  let release: () => void = () => undefined;
  const queue = new GroupCommit(
    async (group: readonly IngestRequest[]): Promise<GroupOutcome[]> => {
      groups.push(group.length);
      if (groups.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return group.map(() => outcome);
    },
    () => 1,
  );
  const first = queue.add('1', [], 0);
  await new Promise((resolve) => setImmediate(resolve));
  const during = Array.from({ length: 5 }, (_, n) => queue.add(String(n + 2), [], 0));
  await new Promise((resolve) => setTimeout(resolve, 5));
  assert.deepEqual(groups, [1], 'nothing else starts while the first commits');
  release();
  await Promise.all([first, ...during]);
  assert.deepEqual(groups, [1, 5]);
});
