/**
 * `COPY … TO STDOUT` as a stream of the bytes PostgreSQL sends, in the pieces the socket delivered
 * them in: pg-copy-streams' own stream, with one change. It gathers the CopyData of each socket read
 * and pushes it as one Buffer; where a read holds the end of one message and the start of the next
 * (once a 256 KiB content chunk at least), that Buffer is a new one, zero-filled and copied into.
 * Here each piece is pushed as it is, a slice of the read. Measured serving 10 × 50 MiB at once from
 * PostgreSQL (bench/media.ts part 1's load, three runs of 5 × 10 downloads each): the server's CPU
 * 2.66-2.86 s a GB with the join, 1.64-2.14 without; 300 → 370 MB/s.
 *
 * It replaces the stream's internal list of pieces (`_copyDataChunks`, pg-copy-streams 7.0.0,
 * pinned in package.json). A version that no longer has it fails the first COPY with an error that
 * says so, never with different bytes: test/store/copy-out.test.ts and the content store's tests
 * read through it on PostgreSQL.
 *
 * Read it with eachPiece, not `for await`: a stream's async iterator calls `read()`, which joins
 * whatever is buffered into one new Buffer (5.7 % of the server's CPU serving content, in memmove).
 */
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { to as copyTo } from 'pg-copy-streams';

type CopyOut = ReturnType<typeof copyTo>;

/** The list pg-copy-streams 7.0.0 keeps the CopyData of one socket read in, as it uses it. */
class Pieces {
  size = 0;
  private pieces: Buffer[] = [];

  constructor(private readonly stream: Readable) {}

  push(piece: Buffer): void {
    this.pieces.push(piece);
    this.size += piece.length;
  }

  /** All of it (the library takes its whole size): every piece but the last pushed here, the last returned for it to push. */
  take(size: number): Buffer {
    if (size !== this.size) throw new Error('copyOut: pg-copy-streams took part of a read (not 7.0.0?)');
    const pieces = this.pieces;
    this.pieces = [];
    this.size = 0;
    const last = pieces.pop() as Buffer;
    // The stream's own push: its buffer takes them all; the library checks the last push's answer.
    for (const piece of pieces) this.stream.push(piece);
    return last;
  }
}

/** A query for `client.query(…)`: the COPY's output as a Readable of Buffers, none of them copied. */
export function copyOut(sql: string): CopyOut {
  const stream = copyTo(sql);
  const internal = stream as unknown as { _copyDataChunks?: { size?: unknown; take?: unknown } };
  if (
    typeof internal._copyDataChunks?.take !== 'function' ||
    typeof internal._copyDataChunks.size !== 'number'
  ) {
    throw new Error(
      'copyOut: pg-copy-streams keeps its pieces otherwise than 7.0.0 did; see postgres.copy-out.ts',
    );
  }
  internal._copyDataChunks = new Pieces(stream) as unknown as typeof internal._copyDataChunks;
  return stream;
}

/**
 * Hands each Buffer of `stream` to `onPiece` as it was pushed (never joined), and resolves when the
 * stream ends; rejects with its error, with what `onPiece` threw (the stream destroyed with it), or
 * when the stream is destroyed before it ends.
 */
export async function eachPiece(stream: Readable, onPiece: (piece: Buffer) => void): Promise<void> {
  stream.on('data', (piece: Buffer) => {
    try {
      onPiece(piece);
    } catch (error) {
      stream.destroy(error as Error);
    }
  });
  await finished(stream);
}
