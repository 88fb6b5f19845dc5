/**
 * `npm run dev` as a newcomer runs it, kept serving for a test or a script: `--ephemeral` ports
 * (unless `ephemeral: false`: README's fixed ports) and a fresh temporary `--data-dir`, so a
 * developer's own run is left alone. `startDevRun`
 * resolves once the stack serves ("Ctrl-C stops everything"), with what it printed: the URLs, the
 * dev-only agent secret and the MCP client configuration block (README "Try it").
 *
 *   const dev = await startDevRun();
 *   await fetch(`${dev.svcUrl}/supported`);
 *   await dev.stop();   // SIGINT, as Ctrl-C: every piece stops, the data directory is removed
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface DevRun {
  svcUrl: string;
  sellerUrl: string;
  mcpSellerUrl: string;
  rpcUrl: string;
  /** The devnet's JSON-RPC over HTTPS (its certificate is `devnet-ca.pem` in the data directory). */
  httpsRpcUrl: string;
  agentSecret: string;
  /** The dev-only secret of the demo sellers' payTo, which owns their listings. */
  sellerSecret: string;
  /** The dev-only secret of the demo buyer (100 USDC). */
  buyerSecret: string;
  /** The printed MCP client configuration, parsed. */
  mcpConfig: { mcpServers: { svc: { command: string; args: string[]; env: Record<string, string> } } };
  dataDir: string;
  /** The process itself, e.g. to interrupt it without removing its data directory (stop() removes it). */
  process: DevProcess;
  output: () => string;
  stop: () => Promise<number | null>;
}

const printed = (stdout: string, label: string): string => {
  const match = new RegExp(`^  ${label}\\s+(\\S+)`, 'm').exec(stdout);
  if (!match) throw new Error(`npm run dev printed no "${label}" line:\n${stdout}`);
  return match[1]!;
};

/** The indented JSON block after "…with this config:", up to the line after it. */
function printedMcpConfig(stdout: string): DevRun['mcpConfig'] {
  const start = stdout.indexOf('\n', stdout.indexOf('with this config:')) + 1;
  const end = stdout.indexOf('\n  (the key above', start);
  return JSON.parse(stdout.slice(start, end)) as DevRun['mcpConfig'];
}

/** A started `npm run dev` process (its own tsx under this Node), with what it printed so far. */
export interface DevProcess {
  child: ChildProcess;
  /** Resolves with its exit code. */
  exited: Promise<number | null>;
  output: () => { stdout: string; stderr: string };
  /** Resolves with the first match of `pattern` in its stdout; rejects after `timeoutMs`, or once it exited without, with what it printed. */
  waitFor: (pattern: RegExp, timeoutMs: number) => Promise<RegExpMatchArray>;
}

/**
 * Starts `npm run dev` with `args` as `npm run dev` runs it (this Node with tsx): with `--ephemeral`
 * unless `ephemeral` is false, and `--data-dir dataDir` when one is given. The caller stops it.
 */
export function spawnDev(args: string[], { ephemeral = true, dataDir }: { ephemeral?: boolean; dataDir?: string } = {}): DevProcess {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/dev/main.ts', ...(ephemeral ? ['--ephemeral'] : []), ...(dataDir ? ['--data-dir', dataDir] : []), ...args],
    { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, FORCE_COLOR: '0' } },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let closed = false;
  child.once('close', () => (closed = true));
  const waitFor = (pattern: RegExp, timeoutMs: number) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const m = stdout.match(pattern);
        if (m) {
          clearInterval(poll);
          clearTimeout(timer);
          resolve(m);
        } else if (closed) {
          clearInterval(poll);
          clearTimeout(timer);
          reject(new Error(`exited (code ${child.exitCode}) before printing ${pattern}; stdout:\n${stdout}\nstderr:\n${stderr}`));
        }
      };
      const poll = setInterval(check, 50);
      const timer = setTimeout(() => {
        clearInterval(poll);
        reject(new Error(`no ${pattern} within ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`));
      }, timeoutMs);
      check();
    });
  return { child, exited, waitFor, output: () => ({ stdout, stderr }) };
}

export async function startDevRun({ ephemeral = true, readyTimeoutMs = 120_000 } = {}): Promise<DevRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-dev-run-'));
  const dev = spawnDev([], { ephemeral, dataDir });
  const { child, exited } = dev;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await exited;
    clearTimeout(timer);
    rmSync(dataDir, { recursive: true, force: true });
    return code;
  };
  const ready = await dev.waitFor(/Ctrl-C stops everything/, readyTimeoutMs).then(
    () => true,
    () => false,
  );
  const { stdout, stderr } = dev.output();
  if (!ready) {
    const why = child.exitCode !== null ? `exited with code ${child.exitCode}` : `did not serve within ${readyTimeoutMs} ms`;
    await stop();
    throw new Error(`npm run dev ${why}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  }
  return {
    svcUrl: printed(stdout, 'svc \\(facilitator\\)'),
    sellerUrl: printed(stdout, 'demo seller \\(HTTP\\)'),
    mcpSellerUrl: printed(stdout, 'demo seller \\(MCP\\)'),
    rpcUrl: printed(stdout, 'devnet RPC'),
    httpsRpcUrl: /^ {2}devnet RPC\s+\S+\s+https: (\S+)/m.exec(stdout)![1]!,
    agentSecret: /^ {2}agent\s+\S+\s+secret \(dev-only\) (S[A-Z2-7]{55})$/m.exec(stdout)![1]!,
    buyerSecret: /^ {2}buyer\s+\S+\s+secret \(dev-only\) (S[A-Z2-7]{55})$/m.exec(stdout)![1]!,
    sellerSecret: /^ {2}seller\s+\S+\s+secret \(dev-only\) (S[A-Z2-7]{55}) /m.exec(stdout)![1]!,
    mcpConfig: printedMcpConfig(stdout),
    dataDir,
    process: dev,
    output: () => dev.output().stdout,
    stop,
  };
}
