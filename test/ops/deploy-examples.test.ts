/**
 * docs/OPERATIONS.md's systemd unit and container image start svc as `npm start` does, through
 * scripts/start.sh (whose Node flags and environment test/ops/start.test.ts checks in the running
 * process), and the unit is one systemd reads as written: systemd takes `#` as a comment only at a
 * line's start, so a comment after a value becomes part of it (the secrets' file path) or makes
 * systemd ignore the setting. `systemd-analyze verify` reads the unit as systemd would and names
 * each setting it ignores.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureDebianTool } from '../helpers/debian-package.ts';
import { fencedBlocks } from '../helpers/doc-blocks.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const OPERATIONS = readFileSync(join(ROOT, 'docs/OPERATIONS.md'), 'utf8');

/** The ```LANG block of docs/OPERATIONS.md whose first line is `first`, without that line. */
function example(lang: string, first: string): string {
  const block = fencedBlocks(OPERATIONS, lang).find((b) => b.startsWith(`${first}\n`));
  if (block === undefined) throw new Error(`docs/OPERATIONS.md has no example starting ${first}`);
  return block.slice(first.length + 1);
}

describe('the deployment examples of docs/OPERATIONS.md', () => {
  it('the systemd unit is read as written, and runs scripts/start.sh on the project’s Node', () => {
    const unit = example('ini', '# /etc/systemd/system/svc.service');
    const settings = new Map(
      unit
        .split('\n')
        .filter((line) => /^\w+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const),
    );
    expect(settings.get('ExecStart')).toBe('/bin/sh scripts/start.sh');
    expect(settings.get('Environment')).toBe(`PATH=${settings.get('WorkingDirectory')}/node_modules/.bin:/usr/local/bin:/usr/bin:/bin`);
    expect(existsSync(join(ROOT, 'scripts/start.sh'))).toBe(true);

    const analyze = ensureDebianTool('/usr/bin/systemd-analyze', 'systemd');
    const dir = mkdtempSync(join(tmpdir(), 'svc-unit-'));
    const verify = (text: string) => {
      writeFileSync(join(dir, 'svc.service'), text);
      const run = spawnSync(analyze, ['verify', '--man=no', join(dir, 'svc.service')], { encoding: 'utf8' });
      return `${run.stdout}${run.stderr}`;
    };
    try {
      expect(verify(unit)).toBe('');
      // The check itself: the same unit with a comment after a value loses that setting, and says so.
      expect(verify(unit.replace(/^TimeoutStopSec=60$/m, 'TimeoutStopSec=60  # after the value'))).toMatch(/ignoring: 60 +# after/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the container image copies scripts/start.sh and runs it', () => {
    const image = example('dockerfile', '# Containerfile');
    const final = image.slice(image.lastIndexOf('\nFROM '));
    expect(final).toMatch(/^COPY --from=build \/app\/scripts\/start\.sh \.\/scripts\/$/m);
    expect(final).toMatch(/^CMD \["sh", "scripts\/start\.sh"\]$/m);
  });
});
