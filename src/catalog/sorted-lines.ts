/**
 * A word's line in a text of lines sorted by their first field (the word, up to a tab or the line's end): the lexicon
 * files' lookup (word-neighbours.ts, word-vectors.ts), a binary search over the lines' starts, the text kept as one
 * string rather than a map of tens of thousands of entries.
 */

/** Where each line of `text` starts. */
export function lineStarts(text: string): Int32Array {
  const starts: number[] = [0];
  for (let at = text.indexOf('\n'); at >= 0 && at + 1 < text.length; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  return Int32Array.from(starts);
}

/** The number of the line whose first field is `word`, or -1. */
export function findLine(text: string, starts: Int32Array, word: string): number {
  let [lo, hi] = [0, starts.length - 1];
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const start = starts[mid]!;
    const newline = text.indexOf('\n', start);
    const line = text.slice(start, newline < 0 ? undefined : newline);
    const tab = line.indexOf('\t');
    const key = tab < 0 ? line : line.slice(0, tab);
    if (key === word) return mid;
    if (key < word) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}
