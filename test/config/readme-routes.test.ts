/**
 * README.md "Routes" is the newcomer's map of svc: every operation of openapi.yaml named once
 * (a row names one, or several alike), and no row for an operation the contract does not have. A route added to the contract
 * without a row (or a row left after a route is gone) fails here.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const CONTRACT = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, unknown>>;
};
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** "METHOD /path" of every operation in openapi.yaml. */
const operations = () =>
  Object.entries(CONTRACT.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((key) => METHODS.includes(key))
      .map((method) => `${method.toUpperCase()} ${path}`),
  );

/** The first cell of each row of README's Routes table, unquoted. */
function readmeRoutes(): string[] {
  const start = README.indexOf('\n## Routes\n');
  expect(start).toBeGreaterThan(0);
  const section = README.slice(start, README.indexOf('\n## ', start + 1)).split('\n');
  const header = section.findIndex((line) => line.startsWith('| Method and path'));
  expect(header).toBeGreaterThan(0);
  const rows: string[] = [];
  for (let i = header + 2; i < section.length && section[i]!.startsWith('|'); i++) rows.push(section[i]!);
  // A row may name several operations in its first cell (e.g. the CORS preflights), each in backticks.
  return rows.flatMap((row) => {
    const first = row.split(' | ')[0]!;
    const named = [...first.matchAll(/`([A-Z]+ \/[^`]*)`/g)].map((m) => m[1]!);
    return named.length ? named : [row];
  });
}

describe("README's routes table", () => {
  it('has one row per operation of openapi.yaml, each once, and nothing else', () => {
    const documented = readmeRoutes();
    expect(new Set(documented).size).toBe(documented.length);
    const contract = operations();
    expect(contract.length).toBeGreaterThan(10);
    expect(contract.filter((op) => !documented.includes(op)).sort(), 'operations without a README row').toEqual([]);
    expect(
      documented.filter((op) => !contract.includes(op)),
      'README rows without an operation',
    ).toEqual([]);
  });

  it("states the extensions GET /supported advertises as openapi.yaml's example does", () => {
    const example = (
      CONTRACT.paths['/supported'] as {
        get: { responses: { '200': { content: { 'application/json': { example: { extensions: string[] } } } } } };
      }
    ).get.responses['200'].content['application/json'].example.extensions;
    const row = README.split('\n').find((line) => line.startsWith('| `GET /supported`'))!;
    for (const extension of example) expect(row).toContain(`\`${extension}\``);
  });
});
