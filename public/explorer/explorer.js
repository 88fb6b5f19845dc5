// svc catalog explorer (docs/EXPLORER.md): a page over svc's public API only — GET /supported for
// the filter choices, GET /discovery/resources to browse (offset pages), GET /discovery/search to
// search (cursor pages), POST /discovery/validate for "Check my listing". Listing content is the sellers' and is untrusted: it only ever becomes
// text nodes or attribute values set one by one (never HTML), links and icons only when http(s).

const PAGE_SIZE = 20;
const TYPING_PAUSE_MS = 150;
const knownAssets = JSON.parse(document.getElementById('svc-assets').textContent || '[]');

const $ = (id) => document.getElementById(id);
const form = $('search-form');
const queryInput = $('query');
const statusLine = $('status');
const results = $('results');
const previousButton = $('previous');
const nextButton = $('next');
const pageLabel = $('page-label');
const detail = $('detail');

/** Replaces `parent`'s children, leaving out absent ones (replaceChildren would write null as the text "null"). */
function put(parent, ...children) {
  parent.replaceChildren(...children.flat().filter((child) => child !== undefined && child !== null && child !== false));
}

/** An element with text children; `attrs` are set one by one (no HTML parsing anywhere). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  for (const child of children.flat())
    if (child !== undefined && child !== null && child !== false) node.append(child instanceof Node ? child : String(child));
  return node;
}

const isWebUrl = (value) => {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
};

// ---- money --------------------------------------------------------------------------------

/** `amount` base units in the asset's units ("0.01 USDC"), or base units when the asset is unknown. */
function formatPrice(requirement) {
  const amount = String(requirement.amount ?? '');
  const asset = knownAssets.find((a) => a.network === requirement.network && a.asset === requirement.asset);
  if (!/^\d+$/.test(amount) || !asset) return `${amount} base units of ${requirement.asset}`;
  const digits = amount.padStart(asset.decimals + 1, '0');
  const whole = digits.slice(0, digits.length - asset.decimals);
  const fraction = digits.slice(digits.length - asset.decimals).replace(/0+$/, '');
  return `${whole}${fraction ? `.${fraction}` : ''} ${asset.code}`;
}

/** A price in the asset's units ("0.01") as base units ("100000" at 7 decimals), or undefined when it is not one. */
function toBaseUnits(value, decimals) {
  const match = /^(\d*)(?:\.(\d*))?$/.exec(value);
  if (!match || (match[1] === '' && !match[2]) || (match[2] ?? '').length > decimals) return undefined;
  return (match[1] + (match[2] ?? '').padEnd(decimals, '0')).replace(/^0+(?=\d)/, '');
}

/** The listing's quality signals (openapi.yaml ListingQuality) as a short phrase. */
function demandOf(listing) {
  const q = listing.quality;
  if (!q) return '';
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return `${plural(q.l30DaysTotalCalls, 'payment')} by ${plural(q.l30DaysUniquePayers, 'payer')} in 30 days`;
}

/** svc's last liveness check of the listing (openapi.yaml ListingLiveness) as a short phrase. */
function livenessOf(listing) {
  const l = listing.liveness;
  if (!l) return 'not checked since last paid';
  const words = {
    live: 'answers with a 402',
    unreachable: 'unreachable',
    not_payable: 'not asking for payment',
    terms_changed: 'pays someone else now',
  };
  return `${words[l.status] ?? l.status} (checked ${new Date(l.checkedAt).toLocaleString()})`;
}

const cheapest = (accepts) =>
  [...(accepts ?? [])].sort((a, b) =>
    BigInt(/^\d+$/.test(a.amount) ? a.amount : 0) < BigInt(/^\d+$/.test(b.amount) ? b.amount : 0) ? -1 : 1,
  )[0];

// ---- the listing's calling convention ----------------------------------------------------

const inputOf = (listing) => listing.extensions?.bazaar?.info?.input ?? {};
/** The seller's example call: its query parameters, JSON body or MCP tool arguments. */
const exampleOf = (listing) => {
  const input = inputOf(listing);
  const example = listing.type === 'mcp' ? input.example : (input.body ?? input.queryParams);
  return example && typeof example === 'object' && !Array.isArray(example) ? example : {};
};
const inputSchemaOf = (listing) => {
  const input = inputOf(listing);
  if (input.type === 'mcp') return input.inputSchema;
  const declared = listing.extensions?.bazaar?.schema?.properties?.input?.properties ?? {};
  return declared.body ?? declared.queryParams;
};
const nameOf = (listing) => listing.serviceName || inputOf(listing).toolName || hostOf(listing.resource);
function hostOf(url) {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** The MCP tool server's id for a listing (docs/MCP.md): svc1: + base64url(JSON [type, resource, toolName]). */
function resourceIdOf(listing) {
  const toolName = listing.type === 'mcp' ? String(inputOf(listing).toolName ?? '') : '';
  const bytes = new TextEncoder().encode(JSON.stringify([listing.type, listing.resource, toolName]));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `svc1:${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/**
 * A value for one required parameter: the seller's example, else the schema's own example,
 * default, const or first allowed value, else a placeholder of the declared type.
 */
function sampleValue(name, field, example) {
  if (Object.hasOwn(example, name)) return example[name];
  const f = field && typeof field === 'object' ? field : {};
  if (Array.isArray(f.examples) && f.examples.length) return f.examples[0];
  for (const key of ['example', 'default', 'const']) if (Object.hasOwn(f, key)) return f[key];
  if (Array.isArray(f.enum) && f.enum.length) return f.enum[0];
  const type = Array.isArray(f.type) ? f.type.find((t) => t !== 'null') : f.type;
  if (type === 'integer' || type === 'number') return typeof f.minimum === 'number' ? f.minimum : 1;
  if (type === 'boolean') return false;
  if (type === 'array') return [];
  if (type === 'object') return {};
  return `<${name}>`;
}

/** paid_call's `input` (docs/MCP.md): every required parameter of the listing's input schema, valued. */
function callInputOf(listing) {
  const schema = inputSchemaOf(listing);
  const required = Array.isArray(schema?.required) ? schema.required.filter((n) => typeof n === 'string') : [];
  if (required.length === 0) return undefined;
  const properties = schema.properties && typeof schema.properties === 'object' ? schema.properties : {};
  const example = exampleOf(listing);
  return Object.fromEntries(required.map((name) => [name, sampleValue(name, properties[name], example)]));
}

function curlOf(listing) {
  const input = inputOf(listing);
  const quote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;
  if (listing.type === 'mcp') {
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: input.toolName, arguments: input.example ?? {} } };
    return `curl -i -X POST ${quote(listing.resource)} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -d ${quote(JSON.stringify(call))}`;
  }
  const method = String(input.method ?? 'GET').toUpperCase();
  if (['POST', 'PUT', 'PATCH'].includes(method)) {
    return `curl -i -X ${method} ${quote(listing.resource)} -H 'content-type: application/json' -d ${quote(JSON.stringify(input.body ?? {}))}`;
  }
  const query = new URLSearchParams(
    Object.entries(input.queryParams ?? {}).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  ).toString();
  return `curl -i${method === 'GET' ? '' : ` -X ${method}`} ${quote(listing.resource + (query ? `?${query}` : ''))}`;
}

/** A JSON Schema's properties as a table a person can read: name, type, required, description. */
function schemaTable(schema) {
  const properties = schema && typeof schema === 'object' ? (schema.properties ?? {}) : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  const rows = Object.entries(properties).map(([name, field]) =>
    el(
      'tr',
      {},
      el('td', {}, el('code', {}, name)),
      el(
        'td',
        {},
        typeof field?.type === 'string'
          ? field.type
          : Array.isArray(field?.type)
            ? field.type.join(' | ')
            : Array.isArray(field?.enum)
              ? 'one of'
              : 'any',
      ),
      el('td', {}, required.has(name) ? 'yes' : 'no'),
      el(
        'td',
        {},
        [field?.description, Array.isArray(field?.enum) ? `one of ${field.enum.map((v) => JSON.stringify(v)).join(', ')}` : null]
          .filter((v) => typeof v === 'string')
          .join(' — '),
      ),
    ),
  );
  if (rows.length === 0) return el('p', {}, 'No input parameters are described.');
  // On a screen narrower than the table's whole words, the table scrolls in its own box, not the page.
  const table = el(
    'table',
    {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col' }, 'Parameter'),
        el('th', { scope: 'col' }, 'Type'),
        el('th', { scope: 'col' }, 'Required'),
        el('th', { scope: 'col' }, 'Description'),
      ),
    ),
    el('tbody', {}, rows),
  );
  return el('div', { class: 'table-scroll', role: 'region', 'aria-label': 'Input parameters', tabindex: '0' }, table);
}

function snippet(label, text) {
  const pre = el('pre', {}, el('code', {}, text));
  const copy = el('button', { type: 'button', class: 'copy' }, `Copy ${label}`);
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text);
      copy.textContent = 'Copied';
    } catch {
      getSelection()?.selectAllChildren(pre);
      copy.textContent = 'Selected: press Ctrl+C';
    }
  });
  return el('div', { class: 'snippet' }, el('h4', {}, label), pre, copy);
}

// ---- views --------------------------------------------------------------------------------

function showDetail(listing, opener) {
  const input = inputOf(listing);
  const icon =
    typeof listing.iconUrl === 'string' && isWebUrl(listing.iconUrl)
      ? el('img', { src: listing.iconUrl, alt: '', referrerpolicy: 'no-referrer' })
      : null;
  const convention =
    listing.type === 'mcp'
      ? el('p', {}, 'MCP tool ', el('code', {}, String(input.toolName ?? '')), input.transport ? ` over ${input.transport}` : '')
      : el(
          'p',
          {},
          'HTTP ',
          el('code', {}, String(input.method ?? 'GET')),
          input.bodyType ? ` with a ${input.bodyType} body` : ' with query parameters',
        );
  const callInput = callInputOf(listing);
  const paidCall = { name: 'paid_call', arguments: { resourceId: resourceIdOf(listing), ...(callInput ? { input: callInput } : {}) } };
  const link = isWebUrl(listing.resource)
    ? el('a', { href: listing.resource, rel: 'noopener noreferrer nofollow' }, listing.resource)
    : listing.resource;
  put(
    detail,
    el('h2', { id: 'detail-title' }, icon, nameOf(listing)),
    listing.description ? el('p', { class: 'description' }, listing.description) : null,
    Array.isArray(listing.tags) && listing.tags.length
      ? el(
          'ul',
          { class: 'tags', 'aria-label': 'Tags' },
          listing.tags.map((t) => el('li', { class: 'badge' }, t)),
        )
      : null,
    el(
      'dl',
      {},
      el('dt', {}, 'Resource'),
      el('dd', {}, link),
      el('dt', {}, 'Type'),
      el('dd', {}, listing.type),
      ...(listing.accepts ?? []).flatMap((a) => [
        el('dt', {}, 'Price'),
        el('dd', { class: 'price' }, `${formatPrice(a)} (${a.scheme} on ${a.network})`),
        el('dt', {}, 'Pays to'),
        el(
          'dd',
          {},
          el('code', {}, a.payTo),
          ' ',
          el('a', { href: sellerHash(a.payTo), class: 'seller-link' }, 'All listings of this seller'),
        ),
      ]),
      el('dt', {}, 'Last updated'),
      el('dd', {}, el('time', { datetime: listing.lastUpdated }, new Date(listing.lastUpdated).toLocaleString())),
      ...(listing.quality
        ? [
            el('dt', {}, 'Payments (30 days)'),
            el('dd', { class: 'payments' }, String(listing.quality.l30DaysTotalCalls)),
            el('dt', {}, 'Distinct payers (30 days)'),
            el('dd', { class: 'payers' }, String(listing.quality.l30DaysUniquePayers)),
            el('dt', {}, 'Last paid'),
            el(
              'dd',
              { class: 'last-paid' },
              el('time', { datetime: listing.quality.lastCalledAt }, new Date(listing.quality.lastCalledAt).toLocaleString()),
            ),
          ]
        : []),
      el('dt', {}, 'Liveness'),
      el('dd', { class: `liveness ${listing.liveness?.status ?? 'unchecked'}` }, livenessOf(listing)),
    ),
    el('h3', {}, 'How to call it'),
    convention,
    schemaTable(inputSchemaOf(listing)),
    el('h3', {}, 'Try it'),
    snippet('curl (answers 402 with the payment requirements)', curlOf(listing)),
    snippet('MCP paid_call arguments', JSON.stringify(paidCall, null, 2)),
    el('button', { type: 'button', class: 'close' }, 'Close details'),
  );
  detail.querySelector('.close').addEventListener('click', () => closeDetail(opener));
  detail.hidden = false;
  detail.focus();
}

function closeDetail(opener) {
  detail.hidden = true;
  detail.replaceChildren();
  opener?.focus();
}

function renderResults(listings) {
  put(
    results,
    ...listings.map((listing) => {
      const price = cheapest(listing.accepts);
      const button = el(
        'button',
        { type: 'button', class: 'listing' },
        el('span', { class: 'name' }, nameOf(listing)),
        el(
          'span',
          { class: 'meta' },
          el('span', { class: 'badge' }, listing.type),
          price ? formatPrice(price) : '',
          ' · ',
          hostOf(listing.resource),
        ),
        listing.quality ? el('span', { class: 'demand' }, demandOf(listing)) : null,
        listing.liveness && listing.liveness.status !== 'live'
          ? el('span', { class: `liveness ${listing.liveness.status}` }, `Last check: ${livenessOf(listing)}`)
          : null,
        listing.description ? el('span', { class: 'description' }, listing.description) : null,
      );
      button.addEventListener('click', () => {
        for (const other of results.querySelectorAll('.listing')) other.removeAttribute('aria-current');
        button.setAttribute('aria-current', 'true');
        showDetail(listing, button);
      });
      return el('li', {}, button);
    }),
  );
}

// ---- state and fetching -------------------------------------------------------------------

/** Browse: offset pages. Search: cursor pages (a stack of the cursors that opened each page). */
const state = { offset: 0, cursors: [null], total: 0, nextCursor: null, generation: 0 };

/** A filter the reader must correct before anything is asked (said in the status line). */
class FilterError extends Error {}

/** A payee address as openapi.yaml's PayeeAddress states it; svc refuses anything else (400). */
const PAYEE_ADDRESS = /^(G[A-Z2-7]{55}|C[A-Z2-7]{55}|M[A-Z2-7]{68})$/;

function filters() {
  const data = new FormData(form);
  const chosen = {};
  for (const name of ['type', 'network', 'scheme', 'payTo', 'asset']) {
    const value = String(data.get(name) ?? '').trim();
    if (value) chosen[name] = value;
  }
  // Applied as it is typed: a partial address asks nothing yet, and says what it waits for.
  if (chosen.payTo !== undefined && !PAYEE_ADDRESS.test(chosen.payTo))
    throw new FilterError('Pays to takes a whole Stellar address: G…, C… or M…, in capitals.');
  // The max price is typed in the asset's units and sent as base units (maxAmount needs the asset).
  const maxPrice = String(data.get('maxPrice') ?? '').trim();
  if (maxPrice) {
    const asset = knownAssets.find((a) => a.asset === chosen.asset);
    if (!asset) throw new FilterError('Choose an asset to filter by price.');
    const base = toBaseUnits(maxPrice, asset.decimals);
    if (base === undefined) throw new FilterError(`Max price must be a number of ${asset.code} with at most ${asset.decimals} decimals.`);
    chosen.maxAmount = base;
  }
  return chosen;
}

/** An answer svc gave with an error status: the ErrorEnvelope's reason and code (openapi.yaml). */
class RefusedError extends Error {}

async function getJson(path, params) {
  const res = await fetch(`${path}?${new URLSearchParams(params)}`, { headers: { accept: 'application/json' } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const { code, reason } = body?.error ?? {};
    const detail = typeof reason === 'string' && reason ? reason : `HTTP ${res.status}`;
    throw new RefusedError(typeof code === 'string' && code ? `${detail} (${code}, HTTP ${res.status})` : detail);
  }
  return body;
}

async function load() {
  const generation = ++state.generation;
  const query = queryInput.value.trim();
  let chosen;
  try {
    chosen = filters();
  } catch (err) {
    if (!(err instanceof FilterError)) throw err;
    statusLine.textContent = err.message;
    results.replaceChildren();
    previousButton.disabled = nextButton.disabled = true;
    return;
  }
  const filtered = Object.keys(chosen).length > 0;
  statusLine.textContent = 'Loading…';
  try {
    let listings;
    let label;
    if (query) {
      const cursor = state.cursors.at(-1);
      const page = await getJson('/discovery/search', { query, limit: PAGE_SIZE, ...chosen, ...(cursor ? { cursor } : {}) });
      if (generation !== state.generation) return;
      listings = page.resources;
      state.nextCursor = page.pagination.cursor;
      label = `Page ${state.cursors.length}`;
      statusLine.textContent = listings.length
        ? `Results for “${query}”${page.partialResults ? ' (partial)' : ''}`
        : `No listing matches “${query}”${filtered ? ' with these filters' : ''}.`;
      previousButton.disabled = state.cursors.length <= 1;
      nextButton.disabled = !state.nextCursor;
    } else {
      const page = await getJson('/discovery/resources', { limit: PAGE_SIZE, offset: state.offset, ...chosen });
      if (generation !== state.generation) return;
      listings = page.items;
      state.total = page.pagination.total;
      const last = Math.min(state.offset + listings.length, state.total);
      label = state.total ? `${state.offset + 1}–${last} of ${state.total}` : '';
      statusLine.textContent = state.total
        ? `${state.total} listing${state.total === 1 ? '' : 's'}`
        : filtered
          ? 'No listing matches these filters.'
          : 'No listing yet.';
      previousButton.disabled = state.offset === 0;
      nextButton.disabled = last >= state.total;
    }
    pageLabel.textContent = label;
    renderResults(listings);
  } catch (err) {
    if (generation !== state.generation) return;
    statusLine.textContent =
      err instanceof RefusedError ? `The catalog refused the request: ${err.message}` : `The catalog did not answer: ${err.message}`;
    results.replaceChildren();
    previousButton.disabled = nextButton.disabled = true;
  }
}

function restart() {
  state.offset = 0;
  state.cursors = [null];
  closeDetail();
  void load();
}

// The filters fold away on a phone, so the first listings show on the first screen; their summary
// says how many are in use.
const filtersBox = $('filters');
if (matchMedia('(max-width: 40rem)').matches) filtersBox.open = false;
function showFiltersInUse() {
  const used = [...filtersBox.querySelectorAll('input, select')].filter((control) => control.value.trim() !== '').length;
  $('filters-in-use').textContent = used ? `(${used} in use)` : '';
}
form.addEventListener('input', showFiltersInUse);
form.addEventListener('change', showFiltersInUse);

// The two text boxes apply as you type (150 ms after the last keystroke); the selects at once.
const payToInput = $('filter-payTo');
const typed = [queryInput, payToInput, $('filter-maxPrice')];
let typingTimer;
for (const box of typed) {
  box.addEventListener('input', () => {
    clearTimeout(typingTimer);
    typingTimer = setTimeout(restart, TYPING_PAUSE_MS);
  });
}
form.addEventListener('change', (event) => {
  if (!typed.includes(event.target)) restart();
});
form.addEventListener('submit', (event) => {
  event.preventDefault();
  clearTimeout(typingTimer);
  restart();
});
nextButton.addEventListener('click', () => {
  if (queryInput.value.trim()) state.cursors.push(state.nextCursor);
  else state.offset += PAGE_SIZE;
  void load();
});
previousButton.addEventListener('click', () => {
  if (queryInput.value.trim()) state.cursors.pop();
  else state.offset = Math.max(0, state.offset - PAGE_SIZE);
  void load();
});
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && !detail.hidden) closeDetail(results.querySelector('[aria-current="true"]'));
});

async function fillFilterChoices() {
  const supported = await fetch('/supported')
    .then((r) => r.json())
    .catch(() => ({ kinds: [] }));
  const add = (select, values) => select.append(...[...new Set(values)].sort().map((v) => el('option', { value: v }, v)));
  add(
    $('filter-network'),
    supported.kinds.map((k) => k.network),
  );
  add(
    $('filter-scheme'),
    supported.kinds.map((k) => k.scheme),
  );
  // The assets svc knows, by code; the value is the contract address the asset filter takes.
  $('filter-asset').append(...knownAssets.map((a) => el('option', { value: a.asset }, `${a.code} (${a.network})`)));
}

// ---- a seller's page (#seller=<payTo>) ---------------------------------------------------

const sellerView = $('seller');
/** The list's page size and how many pages a seller's page walks (1,000 listings). */
const SELLER_PAGE_SIZE = 100;
const SELLER_MAX_PAGES = 10;
let sellerGeneration = 0;

function sellerHash(payTo) {
  return `#seller=${encodeURIComponent(payTo)}`;
}
function sellerOfHash() {
  const match = /^#seller=(.+)$/.exec(location.hash);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
}

const sumOf = (listings, field) => listings.reduce((n, l) => n + (Number(l.quality?.[field]) || 0), 0);
const lastPaidOf = (listings) =>
  listings
    .map((l) => l.quality?.lastCalledAt)
    .filter((t) => typeof t === 'string' && !Number.isNaN(Date.parse(t)))
    .sort()
    .at(-1);
const timeOf = (iso) => (iso ? el('time', { datetime: iso }, new Date(iso).toLocaleString()) : 'never');

function renderSeller(payTo, listings, total) {
  const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const lastPaid = lastPaidOf(listings);
  // Most paid first: the seller's busiest listings lead.
  const ordered = [...listings].sort(
    (a, b) => (b.quality?.l30DaysTotalCalls ?? 0) - (a.quality?.l30DaysTotalCalls ?? 0) || nameOf(a).localeCompare(nameOf(b)),
  );
  const rows = ordered.map((listing) => {
    const price = cheapest(listing.accepts);
    const open = el('button', { type: 'button', class: 'open-listing' }, nameOf(listing));
    open.addEventListener('click', () => showDetail(listing, open));
    return el(
      'tr',
      {},
      el('td', {}, open, el('span', { class: 'resource' }, listing.resource)),
      el('td', {}, listing.type),
      el('td', {}, price ? formatPrice(price) : ''),
      el('td', { class: 'payments' }, String(listing.quality?.l30DaysTotalCalls ?? 0)),
      el('td', { class: 'payers' }, String(listing.quality?.l30DaysUniquePayers ?? 0)),
      el('td', { class: 'last-paid' }, timeOf(listing.quality?.lastCalledAt)),
    );
  });
  const table = el(
    'table',
    {},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        ['Listing', 'Type', 'Price', 'Payments (30 days)', 'Distinct payers (30 days)', 'Last paid'].map((h) =>
          el('th', { scope: 'col' }, h),
        ),
      ),
    ),
    el('tbody', {}, rows),
  );
  put(
    sellerView,
    el('a', { href: '#', class: 'back' }, '← All listings'),
    el('h2', { id: 'seller-title' }, 'Seller ', el('code', {}, payTo)),
    el(
      'p',
      { class: 'seller-summary', role: 'status' },
      total === 0
        ? 'No listing pays to this address.'
        : `${plural(total, 'listing')} · ${plural(sumOf(listings, 'l30DaysTotalCalls'), 'payment')} in 30 days · last paid `,
      total === 0 ? null : timeOf(lastPaid),
      listings.length < total ? ` · the ${listings.length} most recently updated are shown` : '',
    ),
    rows.length
      ? el('div', { class: 'table-scroll', role: 'region', 'aria-label': 'Listings of this seller', tabindex: '0' }, table)
      : null,
    el(
      'p',
      { class: 'note' },
      'Distinct payers are counted per listing. The owner of these listings can withdraw one with a message signed by this address (',
      el('code', {}, 'POST /discovery/delist'),
      ', see the ',
      el('a', { href: '/docs' }, 'API reference'),
      ').',
    ),
  );
}

/**
 * Why `payTo` cannot be a seller's address, or undefined when it can: every network svc serves is a
 * Stellar one, whose payTo is an account (G…) or a contract (C…) address of 56 characters, or a
 * muxed account (M…) of 69.
 */
function invalidAddress(payTo) {
  const networks = knownAssets.map((a) => String(a.network));
  if (networks.length === 0 || !networks.every((n) => n.startsWith('stellar:'))) return undefined;
  if (/^[GC][A-Z2-7]{55}$/.test(payTo) || /^M[A-Z2-7]{68}$/.test(payTo)) return undefined;
  return 'This is not a seller address: a Stellar address starts with G (an account) or C (a contract) and has 56 characters (letters A–Z and digits 2–7). Check the link, or open a listing and follow its "Pays to" address.';
}

/** Opens the seller's page: every listing of `payTo`, walked through the list's payTo filter. */
async function showSeller(payTo) {
  const generation = ++sellerGeneration;
  document.body.dataset.view = 'seller';
  closeDetail();
  sellerView.hidden = false;
  const invalid = invalidAddress(payTo);
  put(
    sellerView,
    el('a', { href: '#', class: 'back' }, '← All listings'),
    el('h2', { id: 'seller-title' }, 'Seller ', el('code', {}, payTo)),
    el('p', { class: `seller-summary${invalid ? ' invalid' : ''}`, role: 'status' }, invalid ?? 'Loading…'),
  );
  sellerView.focus();
  if (invalid) return;
  try {
    const listings = [];
    let total = 0;
    for (let page = 0; page < SELLER_MAX_PAGES; page++) {
      const answer = await getJson('/discovery/resources', { payTo, limit: SELLER_PAGE_SIZE, offset: page * SELLER_PAGE_SIZE });
      if (generation !== sellerGeneration) return;
      listings.push(...answer.items);
      total = answer.pagination.total;
      if (listings.length >= total || answer.items.length === 0) break;
    }
    renderSeller(payTo, listings, total);
  } catch (err) {
    if (generation !== sellerGeneration) return;
    sellerView.querySelector('.seller-summary').textContent =
      err instanceof RefusedError ? `The catalog refused the request: ${err.message}` : `The catalog did not answer: ${err.message}`;
  }
}

function showCatalog() {
  sellerGeneration++;
  delete document.body.dataset.view;
  sellerView.hidden = true;
  sellerView.replaceChildren();
  closeDetail();
}

/** The view the address asks for: a seller's page, or the catalog. */
function route() {
  const payTo = sellerOfHash();
  if (payTo) void showSeller(payTo);
  else if (document.body.dataset.view === 'seller') showCatalog();
}
window.addEventListener('hashchange', route);

// ---- check my listing (POST /discovery/validate) ------------------------------------------

const checkForm = $('check-form');
const checkResult = $('check-result');

/** The answer of POST /discovery/validate as text: the verdict, each problem's code and reason, each check. */
function renderCheck(answer) {
  const verdict = answer.wouldList
    ? el('p', { class: 'verdict ok' }, 'Would be listed: a settlement through svc with these terms lists it.')
    : el('p', { class: 'verdict refused' }, 'Would not be listed.');
  const problems = (answer.problems ?? []).map((p) => el('li', {}, el('code', {}, String(p.code)), ' ', String(p.reason)));
  const checks = (answer.checks ?? []).map((c) =>
    el('li', { class: c.ok ? 'ok' : 'refused' }, c.ok ? '✓ ' : '✗ ', el('code', {}, String(c.name)), ' ', String(c.detail)),
  );
  put(
    checkResult,
    verdict,
    ...(problems.length ? [el('h3', {}, 'Problems'), el('ul', { class: 'problems' }, problems)] : []),
    el('h3', {}, 'Checks'),
    el('ul', { class: 'checks' }, checks),
    ...(answer.listing ? [el('p', {}, 'Listed as ', el('code', {}, String(answer.listing.resource)))] : []),
  );
}

checkForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const url = $('check-url').value.trim();
  const toolName = $('check-tool').value.trim();
  const body = toolName ? { url, toolName } : { url, method: $('check-method').value };
  put(checkResult, el('p', {}, 'Checking…'));
  try {
    const res = await fetch('/discovery/validate', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = await res.json().catch(() => ({}));
    if (!res.ok) {
      const { code, reason } = answer?.error ?? {};
      put(
        checkResult,
        el(
          'p',
          { class: 'verdict refused' },
          `svc refused the check: ${reason ?? `HTTP ${res.status}`}${code ? ` (${code}, HTTP ${res.status})` : ''}`,
        ),
      );
      return;
    }
    renderCheck(answer);
  } catch (err) {
    put(checkResult, el('p', { class: 'verdict refused' }, `svc did not answer: ${err instanceof Error ? err.message : String(err)}`));
  }
});

// The hosted MCP endpoint (POST /mcp, docs/MCP.md "Hosted discovery") as an agent adds it: this origin's URL.
$('mcp-url').textContent = new URL('/mcp', location.href).href;

void fillFilterChoices();
void load();
route();
