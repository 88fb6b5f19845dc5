/**
 * The svc process the memory benches measure (bench/lib/schema-soak-server.ts: the real HTTP app and
 * catalog, a scheme that settles at once) and its RSS, read from /proc/<pid>/status.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** The requirements every memory-bench payment carries (the soak server's scheme settles any). */
export const SOAK_REQUIREMENTS = {
  scheme: 'exact',
  network: 'stellar:testnet',
  asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
  amount: '100000',
  payTo: 'GBZXN7PIRZGNMHGA7MUUUF4GWPY5AYPV6LY4UV2GL6VJGIQRXFDNMADI',
  maxTimeoutSeconds: 60,
  extra: { areFeesSponsored: true },
};

export interface SoakProcess {
  url: string;
  child: ChildProcess;
  rssMb(): number;
  stop(): void;
}

export function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kb / 1024;
}

/** svc on `dbPath` (a catalog seeded beforehand), or on a fresh file in a temp dir removed at stop. */
export async function startSoakProcess(dbPath?: string): Promise<SoakProcess> {
  const dir = dbPath ? undefined : mkdtempSync(join(tmpdir(), 'svc-soak-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/lib/schema-soak-server.ts', dbPath ?? join(dir!, 'catalog.sqlite')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return {
    url,
    child,
    rssMb: () => rssMb(child.pid!),
    stop: () => {
      child.kill();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
