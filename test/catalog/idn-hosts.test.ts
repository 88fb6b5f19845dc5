/**
 * Look-alike internationalized hosts (docs/CATALOG.md "Look-alike hosts", src/net/idn-hosts.ts): each
 * rule on hosts as the URL parser gives them, every script of Node's Unicode data known to the
 * rules, and through the catalog: a look-alike of a listed host is refused with
 * bazaar_resource_url_invalid and a reason naming the cause, so it cannot become a rival listing,
 * while internationalized hosts that imitate nothing are listed.
 */
import { describe, expect, it } from 'vitest';
import { LATIN_LOOKALIKE_SCRIPTS, lookalikeHostReason, scriptOf } from '../../src/net/idn-hosts.ts';
import { checkResourceUrl, sanitizeIconUrl } from '../../src/catalog/ingest/sanitize.ts';
import { PAY_TO_A, PAY_TO_B, settlement } from './fixtures.ts';
import { freshCatalogPerTest } from './fresh.ts';

/** The host of `https://<host>/`, as the WHATWG URL parser normalizes it (Unicode labels become `xn--…`). */
const host = (written: string) => new URL(`https://${written}/`).hostname;

describe('lookalikeHostReason', () => {
  it.each([
    ['ASCII', 'api.example.com'],
    ['German', 'münchen.example'],
    ['Spanish', 'mañana.com'],
    ['Cyrillic under a Cyrillic top-level domain', 'пример.рф'],
    ['Greek under a Greek top-level domain', 'παράδειγμα.ελ'],
    ['Japanese: Han and Hiragana', '例え.jp'],
    ['Japanese: Katakana and Han', 'ドメイン名例.jp'],
    ['Japanese with Latin', 'sony日本.jp'],
    ['Korean with Latin', 'a한국.com'],
    ['Korean top-level domain', 'example.한국'],
    ['French with an accent', 'café.fr'],
    ['Polish', 'łódź.pl'],
    ['Thai', 'ตัวอย่าง.ไทย'],
    ['Arabic', 'مثال.إختبار'],
  ])('%s is accepted: %s', (_, written) => {
    expect(lookalikeHostReason(host(written))).toBeNull();
  });

  it.each([
    ['Cyrillic а among Latin letters', 'аpple.com', /host label xn--pple-43d mixes scripts \(Cyrillic, Latin\)/],
    ['Cyrillic и among Latin letters', 'приmer.com', /mixes scripts \(Cyrillic, Latin\)/],
    ['Greek ο among Latin letters', 'gοogle.com', /mixes scripts \(Latin, Greek\)/],
    ['Hangul with Hiragana (Korean and Japanese)', '한국え.com', /mixes scripts \(Hangul, Hiragana\)/],
    ['Han with Cyrillic', '日本д.com', /mixes scripts \(Han, Cyrillic\)/],
    ['all Cyrillic look-alikes (аррӏе)', 'аррӏе.com', /xn--80ak6aa92e is written in Cyrillic, whose letters imitate Latin ones/],
    ['Cyrillic under .com', 'пример.com', /is written in Cyrillic/],
    ['Greek under .com', 'παράδειγμα.com', /is written in Greek/],
    ['Lisu look-alikes', 'ꓮꓑꓑꓡꓰ.com', /is written in Lisu/],
    ['Canadian syllabics look-alikes', 'ᗅᑭᑭᒪᗴ.com', /is written in Canadian_Aboriginal/],
    ['a fraction slash that imitates /', 'exam⁄ple.com', /holds a symbol or punctuation/],
    ['an emoji', 'i❤️.com', /holds a symbol or punctuation/],
    ['Latin IPA ɑ for a (every letter imitates ASCII)', 'ɑpple.com', /host label xn--pple-p5b imitates the ASCII label apple/],
    ['Latin dotless ı for i', 'ıpad.com', /imitates the ASCII label ipad/],
  ])('%s is refused: %s', (_, written, reason) => {
    expect(lookalikeHostReason(host(written))).toMatch(reason);
  });

  it('an xn-- label that does not decode, or decodes to ASCII, is refused', () => {
    for (const written of ['xn--zz.com', 'xn--abc-.com', 'api.xn--.com']) {
      expect(lookalikeHostReason(host(written)), written).toMatch(/is not a valid internationalized label/);
    }
  });

  it('knows the script of every character of Node’s Unicode data outside Common, Inherited and Unknown', () => {
    const unlisted = new Set<string>();
    const general = /^[\p{Script=Common}\p{Script=Inherited}\p{Script=Unknown}]$/u;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const char = String.fromCodePoint(cp);
      if (!general.test(char) && scriptOf(char) === 'Unknown') unlisted.add(`U+${cp.toString(16).toUpperCase()}`);
    }
    expect([...unlisted].slice(0, 20)).toEqual([]);
    expect(scriptOf('a')).toBe('Latin');
    expect(scriptOf('-')).toBeNull();
    expect(scriptOf('\u0301')).toBeNull(); // combining acute accent: Inherited
    for (const script of LATIN_LOOKALIKE_SCRIPTS) expect(() => new RegExp(`\\p{Script=${script}}`, 'u')).not.toThrow();
  });
});

describe('the resource URL and the icon URL', () => {
  it('checkResourceUrl names the cause; an icon on a look-alike host is dropped', () => {
    expect(checkResourceUrl('https://аррӏе.com/pay')).toEqual({
      ok: false,
      reason:
        'resource.url host label xn--80ak6aa92e is written in Cyrillic, whose letters imitate Latin ones, under a top-level domain in another script.',
    });
    expect(checkResourceUrl('https://münchen.example/pay')).toMatchObject({ ok: true });
    expect(checkResourceUrl('ftp://x.example.com/')).toEqual({
      ok: false,
      reason: 'resource.url must be an absolute http(s) URL without credentials.',
    });
    expect(sanitizeIconUrl('https://xn--pple-43d.com/icon.png')).toBeUndefined();
    expect(sanitizeIconUrl('https://xn--mnchen-3ya.example/icon.png')).toBe('https://xn--mnchen-3ya.example/icon.png');
  });
});

describe('a look-alike of a listed host', () => {
  const fresh = freshCatalogPerTest();

  it('cannot become a rival listing; internationalized hosts that imitate nothing are listed', async () => {
    const t = fresh();
    expect(await t.catalog.recordSettlement(settlement({ url: 'https://apple.com/pay', payTo: PAY_TO_A }))).toEqual({ status: 'success' });
    for (const [url, cause] of [
      ['https://аррӏе.com/pay', /xn--80ak6aa92e is written in Cyrillic/],
      ['https://xn--80ak6aa92e.com/pay', /xn--80ak6aa92e is written in Cyrillic/],
      ['https://аpple.com/pay', /xn--pple-43d mixes scripts/],
      ['https://APPLE.xn--zz.com/pay', /xn--zz is not a valid internationalized label/],
    ] as const) {
      const outcome = await t.catalog.recordSettlement(settlement({ url, payTo: PAY_TO_B }));
      expect(outcome, url).toMatchObject({ status: 'rejected', code: 'bazaar_resource_url_invalid' });
      expect((outcome as { rejectedReason: string }).rejectedReason).toMatch(cause);
    }
    for (const url of ['https://münchen.example/pay', 'https://пример.рф/pay', 'https://例え.jp/pay']) {
      expect(await t.catalog.recordSettlement(settlement({ url, payTo: PAY_TO_B })), url).toEqual({ status: 'success' });
    }
    const listed = (await t.catalog.list({}, { limit: 10, offset: 0 })).items.map((l) => (l as { resource: string }).resource).sort();
    expect(listed).toEqual([
      'https://apple.com/pay',
      'https://xn--e1afmkfd.xn--p1ai/pay',
      'https://xn--mnchen-3ya.example/pay',
      'https://xn--r8jz45g.jp/pay',
    ]);
  });
});
