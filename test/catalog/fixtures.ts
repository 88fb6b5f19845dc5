/**
 * Builders for catalog tests: settled envelopes shaped like an upstream bazaar declaration after
 * enrichment (info.input.method set, schema validating info), and catalogs on temp files.
 */
import type { OwnershipMode } from '../../src/catalog/ownership.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCatalog, type Catalog } from '../../src/catalog/index.ts';
import type { CatalogLogger, SettledPayment } from '../../src/catalog/types.ts';
import type { ListingDraft } from '../../src/catalog/ingest/settlement.ts';

export const PAY_TO_A = 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF';
export const PAY_TO_B = 'GBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
export const ASSET = 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA';

export interface RecordedLog {
  level: 'warn' | 'error';
  obj: object;
  msg: string;
}

export function recordingLogger(): CatalogLogger & { lines: RecordedLog[] } {
  const lines: RecordedLog[] = [];
  return {
    lines,
    warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
  };
}

export function tempDir(prefix = 'svc-catalog-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  // maxRetries: a catalog thread closing as the cleanup runs may still remove its WAL and shm files
  // (ENOTEMPTY seen once in a clean-clone run); Node retries such errors with a short back-off.
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }) };
}

/**
 * Deadlines and a seller-schema bound far above any honest operation, for a test's catalog (tempCatalog's, and
 * startTestServer's through ServiceOverrides.catalogBounds): a loaded CI machine must not turn a slow answer into a
 * missing one, or a starved schema thread into a write left for later (the deadlines are tested in
 * fair-scheduling.test.ts, the schema bounds in broken.test.ts and test/security/). Without a standby, a catalog that
 * validates a schema starts one thread fewer (about 0.2 CPU-s): only a thread terminated on a hostile schema (or retired
 * after 1,000 jobs) ever uses it.
 */
export const BUSY_MACHINE_BOUNDS = { readDeadlineMs: 30_000, writeDeadlineMs: 30_000, schemaWallMs: 10_000, schemaStandby: false } as const;

/**
 * A catalog on a fresh temp file with a controllable clock; with `databaseUrl`, on that (empty)
 * PostgreSQL database instead (test/helpers/postgres.ts freshDatabase()).
 */
export function tempCatalog(
  start = Date.parse('2026-01-01T00:00:00.000Z'),
  options: {
    databaseUrl?: string | undefined;
    listingTtlDays?: number;
    listingPurgeDays?: number;
    livenessGraceMs?: number;
    ownership?: OwnershipMode;
    /** A warm standby beside the schema thread (svc's default); off unless a test sends hostile schemas. */
    schemaStandby?: boolean;
  } = {},
) {
  const { dir, cleanup } = tempDir();
  const logger = recordingLogger();
  let now = start;
  const dbPath = join(dir, 'catalog.sqlite');
  const { databaseUrl } = options;
  const open = (): Catalog =>
    openCatalog({
      dbPath,
      databaseUrl,
      logger,
      clock: () => new Date(now),
      ...(options.listingTtlDays !== undefined ? { listingTtlDays: options.listingTtlDays } : {}),
      ...(options.livenessGraceMs !== undefined ? { livenessGraceMs: options.livenessGraceMs } : {}),
      ...(options.listingPurgeDays !== undefined ? { listingPurgeDays: options.listingPurgeDays } : {}),
      ...(options.ownership !== undefined ? { ownership: options.ownership } : {}),
      ...BUSY_MACHINE_BOUNDS,
      ...(options.schemaStandby !== undefined ? { schemaStandby: options.schemaStandby } : {}),
    });
  const catalog = open();
  return {
    catalog,
    dbPath,
    databaseUrl,
    dir,
    logger,
    /** Another catalog on the same store and options (a test that set the store back opens it again). */
    reopen: open,
    /** The catalog's clock. */
    clock: () => new Date(now),
    tick(ms = 1000) {
      now += ms;
    },
    setNow(ms: number) {
      now = ms;
    },
    close() {
      void catalog.close();
      cleanup();
    },
  };
}

export interface SettlementOptions {
  url?: string;
  payTo?: string;
  amount?: string;
  network?: string;
  scheme?: string;
  method?: string;
  description?: string;
  mimeType?: string;
  serviceName?: unknown;
  tags?: unknown;
  iconUrl?: unknown;
  routeTemplate?: unknown;
  queryParams?: Record<string, unknown>;
  /** Extra properties for the query-param schema (name → schema). */
  paramSchema?: Record<string, unknown>;
  mcpTool?: string;
  /** Replace the whole bazaar extension. */
  bazaar?: unknown;
  /** Replace the whole extensions block. */
  extensions?: unknown;
}

export function httpBazaar(o: SettlementOptions = {}): Record<string, unknown> {
  const method = o.method ?? 'GET';
  const queryParams = o.queryParams ?? { city: 'Lisbon' };
  const ext: Record<string, unknown> = {
    info: {
      input: { type: 'http', method, queryParams },
      output: { type: 'json', example: { temperature: 21 } },
    },
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        input: {
          type: 'object',
          properties: {
            type: { type: 'string', const: 'http' },
            method: { type: 'string', enum: [method] },
            queryParams: {
              type: 'object',
              properties: o.paramSchema ?? { city: { type: 'string', description: 'City name to forecast' } },
            },
          },
          required: ['type', 'method'],
          additionalProperties: false,
        },
        output: { type: 'object' },
      },
      required: ['input'],
    },
  };
  if (o.routeTemplate !== undefined) ext.routeTemplate = o.routeTemplate;
  return ext;
}

export function mcpBazaar(toolName: string, description = 'Tool input'): Record<string, unknown> {
  return {
    info: {
      input: {
        type: 'mcp',
        toolName,
        transport: 'streamable-http',
        inputSchema: { type: 'object', properties: { prompt: { type: 'string', description } } },
        example: { prompt: 'secret-example-value' },
      },
    },
    schema: {
      type: 'object',
      properties: {
        input: {
          type: 'object',
          properties: { type: { const: 'mcp' }, toolName: { type: 'string' }, inputSchema: { type: 'object' } },
          required: ['type', 'toolName', 'inputSchema'],
        },
      },
      required: ['input'],
    },
  };
}

export function settlement(o: SettlementOptions = {}): SettledPayment {
  const payTo = o.payTo ?? PAY_TO_A;
  const requirements = {
    scheme: o.scheme ?? 'exact',
    network: o.network ?? 'stellar:testnet',
    asset: ASSET,
    amount: o.amount ?? '100000',
    payTo,
    maxTimeoutSeconds: 60,
    extra: { areFeesSponsored: true },
  };
  const resource: Record<string, unknown> = { url: o.url ?? 'https://api.example.com/weather?city=Lisbon#x' };
  if (o.description !== undefined) resource.description = o.description;
  if (o.mimeType !== undefined) resource.mimeType = o.mimeType;
  if (o.serviceName !== undefined) resource.serviceName = o.serviceName;
  if (o.tags !== undefined) resource.tags = o.tags;
  if (o.iconUrl !== undefined) resource.iconUrl = o.iconUrl;
  const bazaar = o.bazaar !== undefined ? o.bazaar : o.mcpTool ? mcpBazaar(o.mcpTool) : httpBazaar(o);
  const extensions = o.extensions !== undefined ? o.extensions : { bazaar };
  return {
    paymentPayload: {
      x402Version: 2,
      resource,
      accepted: requirements,
      payload: { transaction: 'AAAA' },
      extensions,
    },
    paymentRequirements: requirements,
  };
}

/**
 * A listing draft as the catalog's ingest writes it (one accepted entry paid to PAY_TO_A at
 * `https://d<id>.example.com/r`), for tests that write corpora through a store directly.
 */
export function storeDraft(
  id: number,
  o: { network: string; asset: string; metadata: ListingDraft['metadata']; method?: string },
): ListingDraft {
  return {
    resource: `https://d${id}.example.com/r`,
    type: 'http',
    toolName: '',
    owner: PAY_TO_A,
    x402Version: 2,
    terms: { scheme: 'exact', network: o.network, asset: o.asset, amount: '100', payTo: PAY_TO_A, maxTimeoutSeconds: 60 },
    metadata: o.metadata,
    bazaar: { info: { input: { type: 'http', ...(o.method ? { method: o.method } : {}) } } },
    parameterText: '',
    dropped: [],
  };
}

/** A seeded xorshift32 generator for generated corpora: the same sequence for the same seed. */
export function seededRandom(seed: number): () => number {
  let s = seed;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

/** Words from `vocab`, word k drawn with probability ∝ 1/(k+1) (Zipf); `words` sometimes joins with commas. */
export function zipfWords(vocab: readonly string[], rand: () => number): { word: () => string; words: (n: number) => string } {
  const weights = vocab.map((_, k) => 1 / (k + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  let acc = 0;
  const cdf = weights.map((x) => (acc += x / total));
  const word = () => vocab[cdf.findIndex((c) => c >= rand())] ?? vocab[0]!;
  return { word, words: (n) => Array.from({ length: n }, word).join(rand() < 0.2 ? ', ' : ' ') };
}
