/**
 * The settle hook's write rules (docs/CATALOG.md): each soft-drop code, each field-level drop, schema
 * neutralization, and "never throws" for arbitrary input. Runs through recordSettlement on a
 * real catalog file, so a rejection is also checked to have written nothing. Also: a schema svc
 * could not judge in time is no verdict (the settlement journal tries the listing again).
 */
import { fc, test as fcTest } from '@fast-check/vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { openapiDocument } from '../helpers/contract.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRouteTemplate, sanitizeIconUrl, sanitizeServiceName, sanitizeTags } from '../../src/catalog/ingest/sanitize.ts';
import { join } from 'node:path';
import { CatalogEngine } from '../../src/catalog/threads/engine.ts';
import { validateAgainstSchema } from '../../src/catalog/ingest/schema.ts';
import { CatalogStore } from '../../src/catalog/sqlite/store.ts';
import { SchemaNotJudgedError, type BazaarOutcome, type CatalogStorePort } from '../../src/catalog/types.ts';
import { httpBazaar, recordingLogger, settlement, tempCatalog, tempDir, type SettlementOptions } from './fixtures.ts';

type Listing = Record<string, any>;
let t: ReturnType<typeof tempCatalog>;
beforeAll(async () => {
  t = tempCatalog();
});
afterAll(() => t.close());

let n = 0;
/** Records on a fresh URL (unless given) and returns the outcome plus what got listed there. */
async function record(o: SettlementOptions) {
  const url = o.url ?? `https://svc${++n}.example.com/r`;
  const before = (await t.catalog.list({}, { limit: 1, offset: 0 })).pagination.total;
  const outcome = await t.catalog.recordSettlement(settlement({ ...o, url }));
  const items = (await t.catalog.list({}, { limit: 100, offset: 0 })).items as Listing[];
  const listing = items.find((l) => new URL(l.resource).host === new URL(url).host);
  return { outcome, listing, added: (await t.catalog.list({}, { limit: 1, offset: 0 })).pagination.total - before };
}
async function rejected(o: SettlementOptions, code: string) {
  const r = await record(o);
  expect(r.outcome).toMatchObject({ status: 'rejected', code });
  expect((r.outcome as { rejectedReason: string }).rejectedReason).toMatch(/\S/);
  expect(r.added).toBe(0);
  return r;
}

describe('soft-drop codes (whole listing)', () => {
  it('bazaar_extensions_too_large: 64 KiB + 1', async () => {
    // Build an extensions block of exactly 65536 bytes, then one more byte.
    const base = { bazaar: httpBazaar(), pad: '' };
    const size = (x: unknown) => Buffer.byteLength(JSON.stringify(x));
    const exact = { ...base, pad: 'x'.repeat(65536 - size(base)) };
    expect(size(exact)).toBe(65536);
    expect((await record({ extensions: exact })).outcome).toEqual({ status: 'success' });
    await rejected({ extensions: { ...exact, pad: `${exact.pad}x` } }, 'bazaar_extensions_too_large');
    // Multi-byte characters count as bytes, not characters.
    await rejected({ extensions: { ...base, pad: 'é'.repeat(33000) } }, 'bazaar_extensions_too_large');
  });

  it('bazaar_extension_not_object', async () => {
    for (const bazaar of [
      null,
      'x',
      42,
      [],
      [{ info: {}, schema: {} }],
      {},
      { info: {} },
      { schema: {} },
      { info: 'x', schema: {} },
      { info: {}, schema: 'x' },
    ]) {
      await rejected({ bazaar }, 'bazaar_extension_not_object');
    }
  });

  it('bazaar_spec_validation_failed: protocol invariants', async () => {
    const base = httpBazaar() as Listing;
    const withInput = (input: unknown) => ({ info: { input }, schema: {} });
    const cases: unknown[] = [
      { info: {}, schema: {} },
      withInput('http'),
      withInput({ type: 'ftp' }),
      withInput({ type: 'http', method: 'TRACE' }),
      withInput({ type: 'http', method: 'get' }),
      withInput({ type: 'http', method: 'GET', bodyType: 'json', body: {} }),
      withInput({ type: 'http', method: 'POST', bodyType: 'xml', body: {} }),
      withInput({ type: 'mcp', inputSchema: {} }),
      withInput({ type: 'mcp', toolName: '', inputSchema: {} }),
      withInput({ type: 'mcp', toolName: 't' }),
      withInput({ type: 'mcp', toolName: 't', inputSchema: [] }),
      withInput({ type: 'mcp', toolName: 't', inputSchema: {}, transport: 'websocket' }),
    ];
    for (const bazaar of cases) await rejected({ bazaar }, 'bazaar_spec_validation_failed');
    // And the valid variants pass.
    expect((await record({ bazaar: withInput({ type: 'http', method: 'POST', bodyType: 'json', body: { a: 1 } }) })).outcome).toEqual({
      status: 'success',
    });
    expect((await record({ bazaar: withInput({ type: 'mcp', toolName: 't', inputSchema: {}, transport: 'sse' }) })).outcome).toEqual({
      status: 'success',
    });
    expect(base.info.input.method).toBe('GET');
  });

  it("an MCP toolName is listed exactly when openapi.yaml's BazaarMcpInput.toolName accepts it", async () => {
    const ajv = new Ajv2020({ strict: false });
    const accepts = ajv.compile(openapiDocument.components.schemas.BazaarMcpInput.properties.toolName);
    const names = [
      'get_forecast',
      'a b',
      ' x ',
      'é',
      '🌦',
      'x'.repeat(256),
      'x'.repeat(257),
      '',
      '   ',
      '\t',
      'a\u0000b',
      'a\nb',
      'a\u007fb',
      'a\u0085b',
      'a\u009fb',
      'a\u00a0b',
      '\u00a0',
      '\ufeff',
      '🌦'.repeat(256),
      '🌦'.repeat(257),
    ];
    for (const toolName of names) {
      const { outcome } = await record({ bazaar: { info: { input: { type: 'mcp', toolName, inputSchema: {} } }, schema: {} } });
      expect({ toolName, listed: outcome?.status === 'success' }).toEqual({ toolName, listed: accepts(toolName) });
    }
  });

  it('bazaar_schema_validation_failed: info does not match, external references, uncompilable schemas', async () => {
    const b = httpBazaar() as Listing;
    await rejected({ bazaar: { ...b, info: { ...b.info, input: { ...b.info.input, extra: 1 } } } }, 'bazaar_schema_validation_failed');
    for (const ref of ['https://evil.example.com/s.json', 'file:///etc/passwd', 'other.json#/x']) {
      await rejected({ bazaar: { ...b, schema: { $ref: ref } } }, 'bazaar_schema_validation_failed');
      await rejected({ bazaar: { ...b, schema: { properties: { input: { $id: ref } } } } }, 'bazaar_schema_validation_failed');
    }
    expect((await record({ bazaar: { ...b, schema: { $defs: { any: { type: 'object' } }, $ref: '#/$defs/any' } } })).outcome).toEqual({
      status: 'success',
    });
    // Local ids in one seller's schema cannot collide with another's (validators are cached).
    for (const type of ['object', 'object', 'string']) {
      const outcome = (await record({ bazaar: { ...b, schema: { $id: '#', properties: { input: { $id: '#', type } } } } })).outcome;
      expect(outcome).toEqual(
        type === 'object' ? { status: 'success' } : expect.objectContaining({ code: 'bazaar_schema_validation_failed' }),
      );
    }
    await rejected({ bazaar: { ...b, schema: { type: 'no-such-type' } } }, 'bazaar_schema_validation_failed');
    await rejected({ bazaar: { ...b, schema: { $ref: '#/$defs/missing' } } }, 'bazaar_schema_validation_failed');
    await rejected({ bazaar: { ...b, schema: { minLength: -1 } } }, 'bazaar_schema_validation_failed');
  });

  it('bazaar_schema_too_complex: more than 2000 nodes or too deep', async () => {
    const b = httpBazaar() as Listing;
    await rejected({ bazaar: { ...b, schema: { enum: Array.from({ length: 2000 }, (_, i) => i) } } }, 'bazaar_schema_too_complex');
    expect(
      (await record({ bazaar: { ...b, schema: { enum: [b.info, ...Array.from({ length: 1996 }, (_, i) => i)] } } })).outcome,
    ).toMatchObject({ status: 'rejected' });
    let deep: Listing = { type: 'object' };
    for (let i = 0; i < 100; i++) deep = { not: { not: deep } };
    await rejected({ bazaar: { ...b, schema: deep } }, 'bazaar_schema_too_complex');
  });

  it('bazaar_resource_url_invalid', async () => {
    for (const url of [
      '/relative',
      'ftp://x.example.com/f',
      'https://user:pw@x.example.com/',
      'https://user@x.example.com/',
      'javascript:alert(1)',
      'not a url',
      'mcp://tool/x',
    ]) {
      const s = settlement({ url });
      const outcome = await t.catalog.recordSettlement(s);
      expect(outcome).toMatchObject({ status: 'rejected', code: 'bazaar_resource_url_invalid' });
    }
    const s = settlement();
    delete s.paymentPayload.resource;
    expect(await t.catalog.recordSettlement(s)).toMatchObject({ status: 'rejected', code: 'bazaar_resource_url_invalid' });
  });
});

describe('schema neutralization', () => {
  it('strips pattern, patternProperties and format (keyword position only) before validating', async () => {
    const b = httpBazaar() as Listing;
    const schema = {
      type: 'object',
      properties: {
        input: {
          type: 'object',
          properties: { method: { type: 'string', pattern: '^(a+)+$', format: 'email' }, pattern: { type: 'string' } },
          patternProperties: { '^q': { type: 'number' } },
          propertyNames: { pattern: '^[a-z]$' },
          required: ['pattern'],
        },
      },
    };
    // A property *named* pattern is kept: info without it fails `required`.
    await rejected({ bazaar: { ...b, schema } }, 'bazaar_schema_validation_failed');
    const info = { ...b.info, input: { ...b.info.input, pattern: 'x' } };
    expect((await record({ bazaar: { ...b, info, schema } })).outcome).toEqual({ status: 'success' });
  });
});

describe('field-level drops keep the listing', () => {
  it('routeTemplate: invalid templates are dropped; the resource falls back to the pathname', async () => {
    const r = await record({ url: 'https://rt.example.com/users/42', routeTemplate: '/users/%2e%2e/admin' });
    expect(r.outcome).toEqual({ status: 'success' });
    expect(r.listing!.resource).toBe('https://rt.example.com/users/42');
    expect(r.listing!.extensions.bazaar).not.toHaveProperty('routeTemplate');
  });

  it('serviceName, tags, iconUrl: invalid values are dropped, valid ones kept', async () => {
    const r = await record({
      serviceName: 'Ünïcode',
      tags: ['ok', 'OK', 'x'.repeat(33), 'b\u0000', 7, 'c', 'd', 'e', 'f', 'g'],
      iconUrl: 'https://127.0.0.1/i.png',
    });
    expect(r.outcome).toEqual({ status: 'success' });
    expect(r.listing).not.toHaveProperty('serviceName');
    expect(r.listing).not.toHaveProperty('iconUrl');
    expect(r.listing!.tags).toEqual(['ok', 'c', 'd', 'e', 'f']);
    const good = await record({ serviceName: 'Weather API', tags: ['weather'], iconUrl: 'https://cdn.example.com/icon.png' });
    expect(good.listing).toMatchObject({ serviceName: 'Weather API', tags: ['weather'], iconUrl: 'https://cdn.example.com/icon.png' });
  });

  it('a dropped field on refresh keeps the previous valid value', async () => {
    const url = 'https://keep.example.com/r';
    await record({ url, serviceName: 'Good', iconUrl: 'https://cdn.example.com/i.png' });
    const r = await record({ url, serviceName: 'x'.repeat(40), iconUrl: 'http://localhost/i.png' });
    expect(r.listing).toMatchObject({ serviceName: 'Good', iconUrl: 'https://cdn.example.com/i.png' });
  });
});

describe('sanitizers', () => {
  it('routeTemplate hardening', async () => {
    const ok = ['/users/:id', '/a/b-c_d.e~f', '/files/%20name', '/x/%2541'];
    for (const v of ok) expect(checkRouteTemplate(v), v).toEqual({ ok: true, template: v });
    const bad = [
      '/a/../b',
      '/a/%2e%2e/b',
      '/a/%252e%252e/b',
      '/a/%25252e%25252e/b',
      '/a/%2E%2E',
      '/x/http://evil',
      '/x/http%3A%2F%2Fevil',
      '/x/http%253A%252F%252Fevil',
      '/x%5cwin',
      '/x%255cwin',
      '/x%00',
      '/x%2500',
      '/x%250',
      '//evil.example.com/x',
      '/%2fevil.example.com',
      '/%252f%252fevil',
      'relative',
      '',
      '/a b',
      '/a?x=1',
      '/a#f',
      '/%',
      '/%zz',
      '/x%0a',
      '/x%7f',
      42,
      null,
      `/${'%25'.repeat(6)}41`,
      '/' + 'a'.repeat(3000),
    ];
    for (const v of bad) expect(checkRouteTemplate(v).ok, String(v)).toBe(false);
  });

  it('serviceName and tags', async () => {
    expect(sanitizeServiceName('A'.repeat(32))).toBe('A'.repeat(32));
    for (const v of ['A'.repeat(33), '', '   ', 'tab\there', 'naïve', '\u0000', 12, null]) expect(sanitizeServiceName(v)).toBeUndefined();
    expect(sanitizeTags(['a', 'b', 'c', 'd', 'e', 'f'])).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(sanitizeTags(['Ai', 'AI', 'ai'])).toEqual(['Ai']);
    expect(sanitizeTags(['日本', 'x'.repeat(33)])).toBeUndefined();
    expect(sanitizeTags('a,b')).toBeUndefined();
  });

  it('iconUrl hostile hosts, including encoded and integer forms', async () => {
    const bad = [
      'http://127.0.0.1/i.png',
      'http://2130706433/i.png',
      'http://0x7f000001/i.png',
      'http://0177.0.0.1/i.png',
      'http://127.1/i.png',
      'http://%31%32%37.0.0.1/i.png',
      'http://%32%31%33%30%37%30%36%34%33%33/i.png',
      'http://[::1]/i.png',
      'http://[::ffff:127.0.0.1]/i.png',
      'http://localhost/i.png',
      'http://LOCALHOST./i.png',
      'http://%6c%6f%63%61%6c%68%6f%73%74/i.png',
      'http://api.localhost/i.png',
      'http://10.0.0.1/i.png',
      'http://169.254.169.254/latest',
      'http://user@cdn.example.com/i.png',
      'http://user:pw@cdn.example.com/i.png',
      'http://cdn.example.com%40evil.example.com/i.png',
      'ftp://cdn.example.com/i.png',
      'data:image/png;base64,AAAA',
      'javascript:alert(1)',
      `https://cdn.example.com/${'a'.repeat(2048)}`,
      'https://cdn.example.com/\u0000.png',
      '/relative.png',
      '',
      5,
    ];
    for (const v of bad) expect(sanitizeIconUrl(v), String(v)).toBeUndefined();
    for (const v of ['https://cdn.example.com/i.png', 'http://icons.example.org:8080/a/b.svg?v=1', 'https://xn--bcher-kva.example/i.png']) {
      expect(sanitizeIconUrl(v)).toBe(v);
    }
  });
});

describe('never throws', () => {
  fcTest.prop([fc.jsonValue(), fc.jsonValue(), fc.jsonValue()], { numRuns: 300 })(
    'arbitrary JSON in payload, resource and extensions',
    async (payloadExtra, resource, bazaar) => {
      const s = settlement();
      const payload = { ...s.paymentPayload, resource, extensions: { bazaar }, junk: payloadExtra };
      const outcome = await t.catalog.recordSettlement({ paymentPayload: payload, paymentRequirements: s.paymentRequirements });
      expect(outcome === null || outcome.status === 'success' || outcome.status === 'rejected').toBe(true);
      expect(outcome?.status).not.toBe('processing');
    },
  );

  fcTest.prop([fc.anything()], { numRuns: 200 })('non-JSON values (functions aside) anywhere in the envelope', async (value) => {
    const s = settlement();
    await expect(
      t.catalog.recordSettlement({
        paymentPayload: { ...s.paymentPayload, extensions: { bazaar: value } },
        paymentRequirements: s.paymentRequirements,
      }),
    ).resolves.not.toThrow();
    await expect(
      t.catalog.recordSettlement({
        paymentPayload: value as Record<string, unknown>,
        paymentRequirements: value as Record<string, unknown>,
      }),
    ).resolves.not.toThrow();
  });
});

describe('a schema svc could not judge', () => {
  it('a store lookup that took the whole schema budget: no verdict, nothing written; strict rejects so the listing is tried again, and the next try lists it', async () => {
    // The boundary: the store port, a real SQLite store whose owner lookup is slow the first time
    // (a loaded database), so the hook's 200 ms bound for the schema passes before it runs.
    const { dir, cleanup } = tempDir();
    const store = new CatalogStore(join(dir, 'catalog.sqlite'));
    let slowLookups = 2;
    const slowStore: CatalogStorePort = {
      ownerOf: async (...args) => {
        if (slowLookups-- > 0) await new Promise((r) => setTimeout(r, 250));
        return store.ownerOf(...args);
      },
      writeListing: (draft, now) => store.writeListing(draft, now),
      withdraw: (withdrawal, now) => store.withdraw(withdrawal, now),
      catalogId: () => store.catalogId(),
      list: (filters, page) => store.list(filters, page, new Date()),
      search: (...args) => store.search(...args),
      close: () => store.close(),
    };
    const logger = recordingLogger();
    const engine = new CatalogEngine(slowStore, logger);
    await validateAgainstSchema({ type: 'object' }, {}); // this thread's validator is up (past its start-up allowance)
    try {
      const paid = settlement({ url: 'https://slow-lookup.example.com/r' });
      await expect(engine.recordSettlement(paid, new Date(), true)).rejects.toBeInstanceOf(SchemaNotJudgedError);
      expect(await engine.recordSettlement(paid, new Date(), false)).toBeNull(); // not strict: header omitted
      expect(logger.lines.filter((l) => l.msg.startsWith('seller schema not validated'))).toHaveLength(2);
      expect(store.list({}, { limit: 10, offset: 0 }, new Date()).total).toBe(0);
      // The lookup is quick again: the same settlement lists. Tried again (as the journal would) while a busy machine leaves
      // the schema thread without CPU for the 200 ms bound this test needs: not judged then is a starved thread, not the
      // slow lookup (spent), and a verdict that stuck would still fail every try.
      let outcome: BazaarOutcome | null | undefined;
      for (let attempt = 1; outcome === undefined; attempt++)
        try {
          outcome = await engine.recordSettlement(paid, new Date(), true);
        } catch (err) {
          if (!(err instanceof SchemaNotJudgedError) || attempt === 5) throw err;
        }
      expect(outcome).toEqual({ status: 'success' });
      expect(store.list({}, { limit: 10, offset: 0 }, new Date()).total).toBe(1);
    } finally {
      engine.close();
      cleanup();
    }
  });
});
