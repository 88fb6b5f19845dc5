/**
 * dist/openapi.json (scripts/build.mjs) is what loadContract reads instead of parsing openapi.yaml,
 * and only while it was made from the same text: it holds the document the YAML parses to, and a
 * changed text is parsed again rather than answered with the build's stale copy.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { OPENAPI_PATH, PARSED_OPENAPI_PATH, parseDocument } from '../../src/http/contract.ts';
import { ensureBuilt } from '../helpers/build.ts';

describe("the build's parse of openapi.yaml", () => {
  it('is the document the YAML parses to, used for that text only', () => {
    ensureBuilt();
    const yaml = readFileSync(OPENAPI_PATH, 'utf8');
    const built = (JSON.parse(readFileSync(PARSED_OPENAPI_PATH, 'utf8')) as { document: unknown }).document;
    const parsed = parse(yaml) as { info: { title: string } };
    expect(built).toEqual(parsed);
    expect(parseDocument(yaml)).toEqual(built);
    // Another text (openapi.yaml edited after the build) is parsed, not taken from dist/.
    const edited = yaml.replace(`title: ${parsed.info.title}`, 'title: Edited after the build');
    expect(edited).not.toBe(yaml);
    expect((parseDocument(edited) as { info: { title: string } }).info.title).toBe('Edited after the build');
  });
});
