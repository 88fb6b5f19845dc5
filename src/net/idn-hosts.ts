/**
 * Internationalized host names that may imitate another host (docs/CATALOG.md "Look-alike hosts",
 * docs/SECURITY.md): the catalog refuses them as listing URLs, so a look-alike of a listed host
 * (`xn--80ak6aa92e.com`, which displays as `аррӏе.com` in Cyrillic) cannot become a rival listing.
 * The WHATWG URL parser has already turned every Unicode label into its ASCII form (`xn--…`); each
 * such label is decoded with Node's `url.domainToUnicode` and judged by the scripts of its
 * characters, read from Node's own Unicode data through `\p{Script=…}`:
 *
 * 1. it must decode, to something that is not plain ASCII;
 * 2. outside ASCII, only letters, combining marks and digits (no symbol or punctuation, such as
 *    U+2044 FRACTION SLASH, which imitates `/`);
 * 3. one script, or Latin with the scripts written together in Japanese (Han, Hiragana, Katakana),
 *    Chinese (Han, Bopomofo) or Korean (Han, Hangul): the "highly restrictive" level of Unicode
 *    Technical Standard #39. Common and Inherited characters (digits, hyphen, marks) go with any;
 * 4. a label written in a script whose letters imitate Latin ones (LATIN_LOOKALIKE_SCRIPTS: the
 *    Cyrillic `аррӏе`) only under a top-level domain in the same script (`пример.рф`, not
 *    `пример.com`).
 *
 * 5. a label every character of which imitates an ASCII letter, digit or hyphen is a look-alike of
 *    that ASCII label, whatever its script: Latin letters that imitate other Latin letters (IPA
 *    `ɑ` for `a`, dotless `ı` for `i`: `ɑpple`, `ıpad`) included. Read from Unicode's confusables
 *    data through the `unhomoglyph` package (its skeleton of `ɑpple` is `apple`, of `münchen`
 *    `rnünchen`, which is not ASCII, so `münchen` is kept).
 */
import { domainToUnicode } from 'node:url';
import unhomoglyph from 'unhomoglyph';

/**
 * Unicode's scripts (Scripts.txt, up to Unicode 17), the most used first. Names the running Node
 * does not know are skipped; test/catalog/idn-hosts.test.ts checks that every character of
 * Node's Unicode data outside Common, Inherited and Unknown falls in one of them.
 */
const SCRIPT_NAMES = (
  'Latin Cyrillic Greek Han Hiragana Katakana Hangul Bopomofo Arabic Hebrew Armenian Georgian Thai Devanagari ' +
  'Bengali Tamil Telugu Kannada Malayalam Gujarati Gurmukhi Oriya Sinhala Lao Khmer Myanmar Tibetan Ethiopic ' +
  'Cherokee Coptic Lisu Canadian_Aboriginal Warang_Citi Carian Lycian Elbasan Miao Thaana Syriac Mongolian Yi ' +
  'Adlam Ahom Anatolian_Hieroglyphs Avestan Balinese Bamum Bassa_Vah Batak Beria_Erfe Bhaiksuki Brahmi Braille ' +
  'Buginese Buhid Caucasian_Albanian Chakma Cham Chorasmian Cuneiform Cypriot Cypro_Minoan Deseret Dives_Akuru ' +
  'Dogra Duployan Egyptian_Hieroglyphs Elymaic Garay Glagolitic Gothic Grantha Gunjala_Gondi Gurung_Khema ' +
  'Hanifi_Rohingya Hanunoo Hatran Imperial_Aramaic Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi ' +
  'Kawi Kayah_Li Kharoshthi Khitan_Small_Script Khojki Khudawadi Kirat_Rai Lepcha Limbu Linear_A Linear_B Lydian ' +
  'Mahajani Makasar Mandaic Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui ' +
  'Meroitic_Cursive Meroitic_Hieroglyphs Modi Mro Multani Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko ' +
  'Nushu Nyiakeng_Puachue_Hmong Ogham Ol_Chiki Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic ' +
  'Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Osage Osmanya Pahawh_Hmong Palmyrene ' +
  'Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan Saurashtra Sharada Shavian Siddham ' +
  'SignWriting Sidetic Sogdian Sora_Sompeng Soyombo Sundanese Sunuwar Syloti_Nagri Tagalog Tagbanwa Tai_Le ' +
  'Tai_Tham Tai_Viet Tai_Yo Takri Tangsa Tangut Tifinagh Tirhuta Todhri Tolong_Siki Toto Tulu_Tigalari Ugaritic ' +
  'Vai Vithkuqi Wancho Yezidi Zanabazar_Square'
).split(' ');

/**
 * Scripts in which Unicode's confusables data (confusables.txt) maps letters to at least 8
 * distinct ASCII letters or digits, enough to spell a host: Cyrillic `а с е о р х у` and
 * Greek `α ο ρ ν` are the usual look-alikes.
 */
export const LATIN_LOOKALIKE_SCRIPTS: ReadonlySet<string> = new Set([
  'Cyrillic',
  'Greek',
  'Armenian',
  'Cherokee',
  'Coptic',
  'Lisu',
  'Canadian_Aboriginal',
  'Warang_Citi',
  'Carian',
  'Lycian',
  'Elbasan',
  'Miao',
]);

/** Scripts that may join Latin and one another in one label (Japanese, Chinese, Korean). */
const EAST_ASIAN_SETS = [new Set(['Han', 'Hiragana', 'Katakana']), new Set(['Han', 'Bopomofo']), new Set(['Han', 'Hangul'])];

let scriptTests: Array<[string, RegExp]> | undefined;
/** The (name, test) of every script the running Node knows, built on first use. */
function scripts(): Array<[string, RegExp]> {
  scriptTests ??= SCRIPT_NAMES.flatMap((name): Array<[string, RegExp]> => {
    try {
      return [[name, new RegExp(`^\\p{Script=${name}}$`, 'u')]];
    } catch {
      return []; // a script newer than this Node's Unicode data
    }
  });
  return scriptTests;
}

const COMMON_OR_INHERITED = /^[\p{Script=Common}\p{Script=Inherited}]$/u;
/** Outside ASCII, what a label may hold: letters, combining marks, digits. */
const NOT_LETTER_MARK_OR_DIGIT = /[^\p{ASCII}\p{L}\p{M}\p{N}]/u;

/** The script of one character; null for Common and Inherited (digits, hyphen, marks), 'Unknown' for none. */
export function scriptOf(char: string): string | null {
  if (/^[a-zA-Z]$/.test(char)) return 'Latin';
  if (COMMON_OR_INHERITED.test(char)) return null;
  return scripts().find(([, test]) => test.test(char))?.[0] ?? 'Unknown';
}

/** The scripts of a label's characters, Common and Inherited left out. */
export function scriptsOf(label: string): Set<string> {
  const found = new Set<string>();
  for (const char of label) {
    const script = scriptOf(char);
    if (script !== null) found.add(script);
  }
  return found;
}

/** One script, or Latin with a Japanese, Chinese or Korean combination (UTS #39 "highly restrictive"). */
function highlyRestrictive(found: Set<string>): boolean {
  if (found.size <= 1) return true;
  const others = [...found].filter((s) => s !== 'Latin');
  return EAST_ASIAN_SETS.some((allowed) => others.every((s) => allowed.has(s)));
}

/**
 * Why `hostname` (as the WHATWG URL parser gives it: lowercase, Unicode labels as `xn--…`) may
 * imitate another host, or null when it may not. The reason names the label and the cause.
 */
export function lookalikeHostReason(hostname: string): string | null {
  if (!hostname.includes('xn--')) return null;
  const labels = hostname.split('.').filter((label) => label !== '');
  const decoded = labels.map((label) => (label.startsWith('xn--') ? domainToUnicode(label) : label));
  const topScripts = scriptsOf(decoded.at(-1) ?? '');
  for (const [i, label] of labels.entries()) {
    if (!label.startsWith('xn--')) continue;
    const unicode = decoded[i]!;
    if (unicode === '' || unicode.startsWith('xn--') || /^\p{ASCII}*$/u.test(unicode))
      return `host label ${label} is not a valid internationalized label`;
    if (NOT_LETTER_MARK_OR_DIGIT.test(unicode)) return `host label ${label} holds a symbol or punctuation`;
    const found = scriptsOf(unicode);
    if (!highlyRestrictive(found)) return `host label ${label} mixes scripts (${[...found].join(', ')})`;
    const [only] = found;
    if (found.size === 1 && LATIN_LOOKALIKE_SCRIPTS.has(only!) && !(topScripts.size === 1 && topScripts.has(only!)))
      return `host label ${label} is written in ${only}, whose letters imitate Latin ones, under a top-level domain in another script`;
    const skeleton = unhomoglyph(unicode);
    if (/^[\x20-\x7e]*$/.test(skeleton)) return `host label ${label} imitates the ASCII label ${skeleton.toLowerCase()}`;
  }
  return null;
}
