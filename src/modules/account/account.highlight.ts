/**
 * The search terms in a message, marked for the screen (`<mark>`): the terms are matched as search
 * matches them (CONTRACT §12: NFKC, lower case), and the marks go round the characters the user
 * typed, whatever width or case they are. Each user-perceived character (grapheme) is normalised on
 * its own and a grapheme is marked when a match covers any of what it became: `ｶﾞ` is marked for
 * `ガ`, `㍿` for `会社`.
 */
import { escapeHtml } from '../../lib/html.js';
import { normaliseText } from '../../store/store.js';

// Made at first use: ICU's segmenter costs ~10 ms, which a start need not pay.
let graphemes: Intl.Segmenter | undefined;

/** `text` as HTML, each run of characters that matches a term inside `<mark>`. */
export function highlight(text: string, terms: readonly string[]): string {
  if (terms.length === 0 || text === '') return escapeHtml(text);
  const pieces: string[] = [];
  const starts: number[] = [];
  let normalised = '';
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment } of graphemes.segment(text)) {
    pieces.push(segment);
    starts.push(normalised.length);
    normalised += normaliseText(segment);
  }
  starts.push(normalised.length);
  // Which graphemes a match covers: by the normalised text's offsets.
  const marked = new Uint8Array(pieces.length);
  for (const term of terms) {
    if (term === '') continue;
    for (let at = normalised.indexOf(term); at !== -1; at = normalised.indexOf(term, at + 1)) {
      const end = at + term.length;
      // The first grapheme that ends after `at` (binary search), then each one that starts before `end`.
      let low = 0;
      let high = pieces.length - 1;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (starts[middle + 1]! > at) high = middle;
        else low = middle + 1;
      }
      for (let i = low; i < pieces.length && starts[i]! < end; i++) marked[i] = 1;
    }
  }
  let html = '';
  let open = false;
  for (let i = 0; i < pieces.length; i++) {
    if (marked[i] && !open) html += '<mark>';
    if (!marked[i] && open) html += '</mark>';
    open = marked[i] === 1;
    html += escapeHtml(pieces[i]!);
  }
  return open ? `${html}</mark>` : html;
}
