/**
 * The benchmark's baseline: a bare node:http + node:sqlite server over the same catalog file,
 * running the same index queries as svc (term rows for search, listing keys for list) with no
 * framework, no validation, no worker threads and no JSON shaping beyond the stored body.
 *
 *   npx tsx bench/catalog/lib/catalog-baseline.ts <dbPath> <port>
 */
import http from 'node:http';
import { DatabaseSync } from 'node:sqlite';

const [dbPath, port] = process.argv.slice(2);
const db = new DatabaseSync(dbPath!, { readOnly: true });
db.exec('PRAGMA cache_size = -32768');
const byId = db.prepare('SELECT resource, type, last_updated, body FROM listings WHERE id = ?');
const oneTerm = db.prepare(`SELECT t.listing_id AS id FROM search_terms t
  WHERE t.term = ? AND t.to_seq IS NULL ORDER BY t.milli DESC, t.listing_id ASC LIMIT ?`);
const twoTerms = db.prepare(`SELECT t.listing_id AS id, count(*) * 1000000 + CAST(round(sum(t.score) * 1000) AS INTEGER) AS rank
  FROM search_terms t WHERE t.term IN (?, ?) AND t.to_seq IS NULL
  GROUP BY t.rev ORDER BY rank DESC, id ASC LIMIT ?`);
const page = db.prepare(
  'SELECT listing_id AS id FROM listing_keys WHERE kind = ? AND value = ? ORDER BY last_updated DESC, listing_id DESC LIMIT ? OFFSET ?',
);
const total = db.prepare('SELECT n FROM listing_counts WHERE kind = ? AND value = ?');

const rows = (ids: Array<{ id: number }>) => ids.map(({ id }) => byId.get(id));
http
  .createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const limit = Number(url.searchParams.get('limit') ?? 20);
    let body: unknown;
    if (url.pathname === '/discovery/search') {
      const terms = (url.searchParams.get('query') ?? '')
        .toLowerCase()
        .split(/[^a-z0-9]+/)
        .filter(Boolean);
      body = {
        resources: rows(
          (terms.length === 1 ? oneTerm.all(terms[0]!, limit) : twoTerms.all(terms[0]!, terms[1]!, limit)) as Array<{ id: number }>,
        ),
      };
    } else {
      const [kind, value] = url.searchParams.has('network')
        ? ['network', url.searchParams.get('network')!]
        : url.searchParams.has('payTo')
          ? ['payTo', url.searchParams.get('payTo')!]
          : ['all', ''];
      const offset = Number(url.searchParams.get('offset') ?? 0);
      body = {
        items: rows(page.all(kind, value, limit, offset) as Array<{ id: number }>),
        total: (total.get(kind, value) as { n: number } | undefined)?.n ?? 0,
      };
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(body));
  })
  .listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
