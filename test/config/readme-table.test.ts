/**
 * README.md "Configuration" documents every variable svc reads in one GFM table. A blank line
 * inside it ends the table, and the rows after it render as plain text; a variable added to the
 * code without a row is undocumented. Both are checked against what loadConfig actually reads.
 */
import { readFileSync } from 'node:fs';
import { Keypair } from '@stellar/stellar-sdk';
import { describe, expect, it } from 'vitest';
import { NETWORKS, PER_NETWORK_VARIABLES, networkSuffix } from '../../src/chains/stellar/index.ts';
import { loadConfig, PER_NETWORK_FEE_CAPS } from '../../src/config.ts';

/** Every variable a network may set for itself with its suffix: the chain's and the fee caps. */
const SUFFIXED = [...PER_NETWORK_VARIABLES, ...Object.values(PER_NETWORK_FEE_CAPS)];
import { ALLOW_PRIVATE_TARGETS } from '../../src/net/private-addresses.ts';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const SOURCES = ['../../src/config.ts', '../../src/chains/stellar/config.ts'].map((f) => readFileSync(new URL(f, import.meta.url), 'utf8'));

/** The lines of README's Configuration section. */
function configurationSection(): string[] {
  const start = README.indexOf('\n## Configuration\n');
  expect(start).toBeGreaterThan(0);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end).split('\n');
}

/** The variables loadConfig reads (every name it looks up in the environment), and the names the two configuration files mention. */
function variablesRead(): Set<string> {
  const read = new Set<string>();
  const given: Record<string, string> = { SUBMITTER_SECRET: Keypair.random().secret(), DB_PATH: ':memory:' };
  const env = new Proxy(given, {
    get: (target, name) => {
      if (typeof name === 'string') read.add(name);
      return target[name as string];
    },
  });
  loadConfig(env);
  // A network's own variable (RPC_URL_PUBNET) is documented by its unsuffixed row and the NETWORK row's rule (checked below).
  for (const name of [...read]) {
    const base = SUFFIXED.find((v) => NETWORKS.some((n) => name === `${v}_${networkSuffix(n)}`));
    if (base) read.delete(name);
  }
  // Node's error codes (ENOTDIR) are no variables.
  for (const source of SOURCES)
    for (const [, name] of source.matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)) if (!/^E[A-Z]+$/.test(name!)) read.add(name!);
  // The catalog and paid_call read the dev-only allow-list from the environment (docs/SECURITY.md).
  read.add(ALLOW_PRIVATE_TARGETS);
  return read;
}

describe("README's configuration table", () => {
  it('is one contiguous table that lists every variable svc reads, each once', () => {
    const lines = configurationSection();
    const header = lines.findIndex((l) => l.startsWith('| Variable'));
    expect(header).toBeGreaterThan(0);
    let end = header;
    while (end < lines.length && lines[end]!.startsWith('|')) end++;
    const rows = lines.slice(header + 2, end);
    // No table row outside the table (a blank line inside it would leave such rows).
    expect(lines.filter((l, i) => l.startsWith('|') && (i < header || i >= end))).toEqual([]);
    const documented = rows.map((row) => /^\| `([A-Z][A-Z0-9_]*)`/.exec(row)?.[1] ?? row);
    expect(new Set(documented).size).toBe(documented.length);
    const read = variablesRead();
    expect(read.size).toBeGreaterThan(20);
    expect([...read].filter((name) => !documented.includes(name)).sort()).toEqual([]);
    expect(documented.filter((name) => !read.has(name))).toEqual([]);
  });

  it('names every variable a network reads with its own suffix', () => {
    const networkRow = configurationSection().find((l) => l.startsWith('| `NETWORK`'))!;
    for (const variable of SUFFIXED) expect(networkRow).toContain(`\`${variable}\``);
    expect(networkRow).toContain('`RPC_URL_PUBNET`');
  });
});
