/** Agent resource ids: canonical encoding, round trip, and strict rejection of malformed ids. */
import { describe, expect, it } from 'vitest';
import { fc, test } from '@fast-check/vitest';
import { encodeResourceId, parseResourceId, type ListingRef } from '../../src/mcp/resource-id.ts';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
const id = (text: string) => `svc1:${b64(text)}`;

describe('encodeResourceId', () => {
  it('is svc1: + unpadded base64url of JSON [type, resource, toolName]', () => {
    const http = encodeResourceId({ type: 'http', resource: 'https://api.example.com/weather', toolName: '' });
    expect(http).toBe(`svc1:${b64('["http","https://api.example.com/weather",""]')}`);
    expect(http).toMatch(/^svc1:[A-Za-z0-9_-]+$/);
    const mcp = encodeResourceId({ type: 'mcp', resource: 'https://t.example.com/mcp', toolName: 'forecast' });
    expect(Buffer.from(mcp.slice(5), 'base64url').toString()).toBe('["mcp","https://t.example.com/mcp","forecast"]');
  });

  test.prop([
    fc.constantFrom<'http' | 'mcp'>('http', 'mcp'),
    fc.webUrl({ withQueryParameters: false, withFragments: false }),
    fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
  ])('round-trips every valid listing identity', (type, resource, tool) => {
    const ref: ListingRef = { type, resource, toolName: type === 'http' ? '' : tool };
    expect(parseResourceId(encodeResourceId(ref))).toEqual({ ok: true, ref });
  });
});

describe('parseResourceId rejects malformed ids', () => {
  const valid = encodeResourceId({ type: 'mcp', resource: 'https://t.example.com/mcp', toolName: 'forecast' });
  const cases: Array<[string, unknown, RegExp]> = [
    ['not a string', 42, /not a string/],
    ['empty', '', /start with svc1:/],
    ['wrong prefix', valid.replace('svc1:', 'svc2:'), /start with svc1:/],
    ['upper-case prefix', valid.replace('svc1:', 'SVC1:'), /start with svc1:/],
    ['prefix only', 'svc1:', /base64url/],
    ['standard base64 alphabet (+ /)', `svc1:${Buffer.from('["http","https://a.example/??>",""]').toString('base64')}`, /base64url/],
    ['padding', `svc1:${Buffer.from('["http","https://a.example/x",""]!').toString('base64')}`, /base64url/],
    ['whitespace inside', `${valid.slice(0, 10)} ${valid.slice(10)}`, /base64url/],
    [
      'non-canonical trailing bits',
      `${valid.slice(0, -1)}${String.fromCharCode(valid.charCodeAt(valid.length - 1) + 1)}`,
      /canonical|JSON/,
    ],
    ['impossible length', `${valid}A`, /canonical|JSON/],
    ['invalid UTF-8', `svc1:${Buffer.from([0x5b, 0x22, 0xff, 0xfe, 0x22, 0x5d]).toString('base64url')}`, /UTF-8/],
    ['not JSON', id('http https://a.example/x'), /JSON/],
    ['a JSON object', id('{"type":"http","resource":"https://a.example/x","toolName":""}'), /exactly 3/],
    ['two elements', id('["http","https://a.example/x"]'), /exactly 3/],
    ['four elements', id('["http","https://a.example/x","",""]'), /exactly 3/],
    ['a number element', id('["http","https://a.example/x",0]'), /strings/],
    ['null toolName', id('["mcp","https://a.example/x",null]'), /strings/],
    ['unknown type', id('["sse","https://a.example/x",""]'), /type must be/],
    ['type case', id('["HTTP","https://a.example/x",""]'), /type must be/],
    ['http with a toolName', id('["http","https://a.example/x","forecast"]'), /empty toolName/],
    ['mcp without a toolName', id('["mcp","https://a.example/x",""]'), /non-empty toolName/],
    ['relative resource', id('["http","/weather",""]'), /absolute/],
    ['non-http scheme', id('["mcp","mcp://tool/forecast","forecast"]'), /absolute/],
    ['credentials in the URL', id('["http","https://user:pw@a.example/x",""]'), /credentials/],
    ['non-canonical JSON (spaces)', id('[ "http", "https://a.example/x", "" ]'), /canonical encoding/],
    ['too long', `svc1:${'A'.repeat(9000)}`, /longer than/],
  ];
  it.each(cases)('%s', (_name, input, reason) => {
    const parsed = parseResourceId(input);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.reason).toMatch(/^Malformed resource id: /);
      expect(parsed.reason).toMatch(reason);
    }
  });

  it(`covers at least 11 malformed ids (${cases.length})`, () => expect(cases.length).toBeGreaterThanOrEqual(11));
});
