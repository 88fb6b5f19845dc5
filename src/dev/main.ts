/**
 * `npm run dev`: the whole system on this machine, offline, in one command. Starts the devnet
 * (HTTP and HTTPS), funds the demo accounts, starts svc against it (two submitters, a fee-bump
 * account, a fresh catalog under ./data/dev/), starts the demo sellers, runs a buyer through the
 * whole story with a readable trace, then leaves everything running with the URLs printed until
 * Ctrl-C, which stops every piece and frees every port.
 *
 *   npm run dev                 # fixed ports: svc 4021, sellers 4100 (HTTP) / 4101 (MCP), devnet 8000 / 8443
 *   npm run dev -- --once       # tell the story, then stop (exit 0 when it succeeded)
 *   npm run dev -- --ephemeral  # free ports and a temporary data directory (a second run beside the first)
 *   npm run dev -- --data-dir DIR
 *
 * A run owns its data directory (src/dev/lock.ts): a second run on the same directory refuses
 * before it touches anything, naming the first; --ephemeral without --data-dir uses a fresh
 * temporary directory, removed when the run stops. Fixed ports are checked before anything starts.
 *   npm run dev -- --postgres   # two svc instances on an embedded PostgreSQL behind a round-robin front (docs/SCALING.md)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { DemoSellers, SellerEvent } from './sellers.ts';
import type { Stack } from './stack.ts';
import type { StoryResult } from './story.ts';
import { createTrace } from './trace.ts';
import { DEV_PORTS } from './ports.ts';
import { DataDirInUseError, lockDataDir, type DataDirLock } from './lock.ts';
import { ALLOW_PRIVATE_TARGETS } from '../net/private-addresses.ts';
import { DEV_ALLOW_PRIVATE_TARGETS, devMcpClientConfig } from './mcp-client.ts';

// The dev stack, and only it, lets svc's catalog and paid_call reach loopback, where its sellers listen.
process.env[ALLOW_PRIVATE_TARGETS] ??= DEV_ALLOW_PRIVATE_TARGETS;

/**
 * The stack, the sellers, the story and the agent, loaded once the run knows it will start them:
 * a run that refuses (an unknown option, a data directory in use, a port taken) answers without
 * loading them, in about a second instead of four.
 */
async function loadStack() {
  const [{ pino }, { createLogger }, { createFacilitatorClient }, agent, sellers, { startStack }, { runStory }] = await Promise.all([
    import('pino'),
    import('../log.ts'),
    import('../client/facilitator.ts'),
    import('./agent.ts'),
    import('./sellers.ts'),
    import('./stack.ts'),
    import('./story.ts'),
  ]);
  return { pino, createLogger, createFacilitatorClient, ...agent, ...sellers, startStack, runStory };
}

const DEFAULT_DATA_DIR = './data/dev';

const USAGE = `usage: npm run dev -- [--once] [--ephemeral] [--postgres] [--data-dir ${DEFAULT_DATA_DIR}]
  --once        run the story, print the result, stop everything and exit (0 = the story succeeded)
  --postgres    two svc instances sharing an embedded PostgreSQL (journal, submitter leases, catalog)
                behind a round-robin front on svc's port (docs/SCALING.md)
  --ephemeral   pick free ports instead of ${Object.values(DEV_PORTS).join(', ')}, and (without --data-dir)
                use a fresh temporary data directory, removed when the run stops
  --data-dir    where the catalog, svc's log, story.json and devnet-ca.pem go (default ${DEFAULT_DATA_DIR}).
                A run locks it (dev.lock): a second run on the same directory refuses. Its files are
                replaced each run`;

function parseCli() {
  try {
    const { values } = parseArgs({
      options: {
        once: { type: 'boolean', default: false },
        ephemeral: { type: 'boolean', default: false },
        postgres: { type: 'boolean', default: false },
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
    return values;
  } catch (err) {
    process.stderr.write(`dev: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const args = parseCli();
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  // --ephemeral alone: a directory of this run's own, so it can never touch another run's files.
  const temporary = args.ephemeral && args['data-dir'] === undefined;
  const dataDir = temporary ? mkdtempSync(join(tmpdir(), 'svc-dev-')) : resolve(args['data-dir'] ?? DEFAULT_DATA_DIR);
  // Before anything in it is touched: a directory another live run holds is refused.
  const lock = takeDataDir(dataDir);
  // A run removes only what it created: its lock, and a temporary directory unless the run failed
  // by itself (then its log says why).
  let keepDataDir = !temporary;
  process.on('exit', () => {
    lock.release();
    if (!keepDataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  const ports = args.ephemeral ? { svc: 0, sellers: 0, mcpSeller: 0, devnet: 0, devnetHttps: 0 } : DEV_PORTS;
  const trace = createTrace();
  const started = performance.now();
  const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1).padStart(5)}s`;

  trace.line('svc dev: the facilitator, its catalog, a Stellar devnet and demo sellers, all on loopback (offline)');
  trace.line(
    `data directory ${shown(dataDir)} (held by this run, pid ${process.pid}${temporary ? '; temporary: removed when the run stops' : ''})`,
  );
  trace.line();

  const pieces: Array<{ name: string; stop: () => Promise<void> }> = [];
  let stopping: Promise<void> | undefined;
  const stopAll = () =>
    (stopping ??= (async () => {
      while (pieces.length) {
        const piece = pieces.pop()!;
        await piece.stop().catch((err: unknown) => process.stderr.write(`dev: stopping ${piece.name} failed: ${String(err)}\n`));
      }
    })());

  // Ctrl-C at any moment (starting, mid-story, serving) stops every piece that is up.
  let firstSignalAt = 0;
  const onSignal = (signal: string) => {
    if (firstSignalAt) {
      // One Ctrl-C can arrive twice (from the terminal and relayed by tsx); a later one forces exit.
      if (Date.now() - firstSignalAt > 1000) process.exit(130);
      return;
    }
    firstSignalAt = Date.now();
    trace.line(`\n${signal}: stopping the sellers, svc and the devnet…`);
    void stopAll().then(() => {
      trace.line('stopped; every port is free.');
      process.exit(0);
    });
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));

  let stack: Stack;
  let sellers: DemoSellers;
  let dev: Awaited<ReturnType<typeof loadStack>>;
  const events: SellerEvent[] = [];
  try {
    // Fixed ports another program holds are found before anything is started or replaced.
    await checkPortsFree(Object.values(ports).filter((port) => port > 0));
    dev = await loadStack();
    const { pino, createLogger, createFacilitatorClient, startStack, startDemoSellers, observedFacilitator, MCP_TOOL } = dev;
    const logPath = join(dataDir, 'svc.log');
    // The directory is this run's (locked): only the files a run writes are replaced, those of the
    // last run here (never the folder: --data-dir may point anywhere).
    for (const file of [logPath, join(dataDir, 'story.json'), join(dataDir, 'devnet-ca.pem')]) rmSync(file, { force: true });
    stack = await startStack({
      dataDir,
      svcPort: ports.svc,
      devnetPort: ports.devnet,
      devnetHttpsPort: ports.devnetHttps,
      // 1 s ledgers: each settlement waits at most about a second, and ledger-time estimates from
      // whole-second close times stay precise while the chain is only seconds old (at 250 ms a
      // buyer's signed expiry was once refused as too far on a loaded machine).
      ledgerMs: 1000,
      // svc's pino JSON lines go to a file, so this terminal shows the story.
      logger: createLogger('info', pino.destination({ dest: logPath, mkdir: true, sync: true })),
      progress: (step) => trace.line(`[${elapsed()}] ${step}`),
      postgres: args.postgres,
    });
    pieces.push({ name: 'svc and the devnet', stop: () => stack.stop() });
    trace.line(`[${elapsed()}] starting the demo sellers (HTTP: GET /weather, POST /summarize; MCP: ${MCP_TOOL})`);
    sellers = await startDemoSellers({
      facilitator: observedFacilitator(createFacilitatorClient(stack.svc.url), (event) => events.push(event)),
      payTo: stack.accounts.seller.publicKey,
      asset: stack.devnet.usdc.contractId,
      network: stack.config.network,
      httpPort: ports.sellers,
      mcpPort: ports.mcpSeller,
    });
    pieces.push({ name: 'the demo sellers', stop: () => sellers.close() });
    lock.update({ svcUrl: stack.svc.url, ports: runPorts(stack, sellers) });
    trace.line(
      `[${elapsed()}] ready: svc ${stack.svc.url}, sellers ${sellers.http.url} and ${sellers.mcp.url}, devnet ${stack.devnet.rpcUrl}`,
    );
  } catch (err) {
    keepDataDir ||= !firstSignalAt;
    const code = (err as NodeJS.ErrnoException).code;
    const port = (err as { port?: number }).port;
    process.stderr.write(
      code === 'EADDRINUSE'
        ? `dev: port ${port ?? ''} is already in use (another npm run dev?). Stop it, or run: npm run dev -- --ephemeral\n`
        : `dev: could not start: ${err instanceof Error ? err.message : String(err)}\n${temporary ? `(its data directory is kept for svc's log: ${dataDir})\n` : ''}`,
    );
    await stopAll();
    process.exit(1);
  }

  // The devnet's self-signed certificate, for stock clients that need https RPC (NODE_EXTRA_CA_CERTS).
  const caPath = join(dataDir, 'devnet-ca.pem');
  writeFileSync(caPath, stack.devnet.caCertPem ?? '');

  const { runStory, runAgent, MCP_TOOL } = dev;
  const result: StoryResult = await runStory({
    trace,
    stack,
    events,
    sellerUrl: sellers.http.url,
    agent: (agentTrace, rpc) =>
      runAgent(agentTrace, {
        facilitatorUrl: stack.svc.url,
        rpcUrl: stack.devnet.rpcUrl,
        walletSecret: stack.accounts.agent.secret,
        weatherUrl: sellers.http.urlOf('/weather'),
        mcp: { url: sellers.mcp.url, toolName: MCP_TOOL },
        rpc,
      }),
  });
  writeFileSync(join(dataDir, 'story.json'), `${JSON.stringify(result, null, 2)}\n`);
  // A story cut short by Ctrl-C (its services stopping under it) is no failure to keep a log of.
  if (!result.ok && !firstSignalAt) keepDataDir = true;
  trace.line();
  const settledCount = result.payments.length + (result.agent?.payments.length ?? 0);
  trace.line(
    result.ok
      ? `Story complete in ${elapsed().trim()}: ${settledCount} payments settled on the devnet (2 by the buyer, ${result.agent?.payments.length ?? 0} by the agent); the catalog lists every paid resource.`
      : `Story FAILED: ${result.error}\nsvc's log (one JSON line per request and per payment decision): ${join(dataDir, 'svc.log')}`,
  );
  if (stack.fleet) {
    trace.line(
      `The round-robin front spread svc's requests over the two instances: ${stack.fleet.served.join(' and ')}; both read and write one PostgreSQL database (${stack.fleet.database}).`,
    );
  }

  if (args.once) {
    await stopAll();
    process.exit(result.ok ? 0 : 1);
  }

  printRunning(trace, stack, sellers, dataDir, { mcpTool: MCP_TOOL, repoDir: resolve(dev.REPO_ROOT) });
}

/** A path as the user would type it: relative to the working directory when it is inside it. */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/** Locks the data directory, or says which run holds it and the ways out, and exits 1 having touched nothing. */
function takeDataDir(dataDir: string): DataDirLock {
  try {
    return lockDataDir(dataDir);
  } catch (err) {
    if (!(err instanceof DataDirInUseError)) throw err;
    const { owner } = err;
    process.stderr.write(
      `dev: ${shown(dataDir)} is in use by another npm run dev (pid ${owner.pid}, ${owner.svcUrl ? `svc ${owner.svcUrl}` : 'still starting'}), which is still running; nothing here was changed.\n` +
        'Stop that run (Ctrl-C in its terminal), or start this one beside it with a data directory of its own:\n' +
        '  npm run dev -- --ephemeral          # a fresh temporary directory and free ports\n' +
        '  npm run dev -- --data-dir <dir>     # a directory you choose (add --ephemeral for free ports)\n',
    );
    process.exit(1);
  }
}

/** Rejects with EADDRINUSE (naming the port) unless every port can be bound on loopback now. */
async function checkPortsFree(ports: number[]): Promise<void> {
  for (const port of ports) {
    await new Promise<void>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
    });
  }
}

/** The ports this run listens on, for its lock. */
function runPorts(stack: Stack, sellers: DemoSellers): Record<string, number> {
  const port = (url: string) => Number(new URL(url).port);
  return {
    svc: port(stack.svc.url),
    sellers: port(sellers.http.url),
    mcpSeller: port(sellers.mcp.url),
    devnet: port(stack.devnet.rpcUrl),
    ...(stack.devnet.httpsRpcUrl ? { devnetHttps: port(stack.devnet.httpsRpcUrl) } : {}),
  };
}

function printRunning(
  trace: ReturnType<typeof createTrace>,
  stack: Stack,
  sellers: DemoSellers,
  dataDir: string,
  { mcpTool, repoDir }: { mcpTool: string; repoDir: string },
): void {
  const sellerUrl = sellers.http.url;
  const { devnet, accounts } = stack;
  trace.line();
  trace.line('Everything keeps running. Try it (README "Try it"):');
  trace.line(
    `  svc (facilitator)     ${stack.svc.url}   (/supported /verify /settle /discovery/resources /discovery/search /health /openapi.yaml)`,
  );
  if (stack.fleet) {
    trace.line(`  svc instances         ${stack.fleet.instances.map((i) => i.url).join('  ')}   (behind the front above)`);
    trace.line(`  PostgreSQL            ${stack.fleet.database}   (embedded; gone when this stops)`);
  }
  trace.line(`  catalog explorer      ${stack.svc.url}/   (API reference: ${stack.svc.url}/docs)`);
  trace.line(`  hosted MCP discovery  ${stack.svc.url}/mcp   (search_resources over streamable HTTP: add it to an MCP client by URL)`);
  trace.line(`  demo seller (HTTP)    ${sellerUrl}   (GET /weather?city=… , POST /summarize)`);
  trace.line(`  demo seller (MCP)     ${sellers.mcp.url}   (paid tool ${mcpTool}, streamable HTTP)`);
  trace.line(`  devnet RPC            ${devnet.rpcUrl}   https: ${devnet.httpsRpcUrl}   friendbot: ${devnet.friendbotUrl}?addr=G…`);
  trace.line(`  network               ${devnet.network}   USDC ${devnet.usdc.contractId}`);
  trace.line(`  devnet certificate    ${join(dataDir, 'devnet-ca.pem')}   (NODE_EXTRA_CA_CERTS=… for clients that need https RPC)`);
  trace.line(`  catalog / svc log     ${stack.catalogPath}   ${join(dataDir, 'svc.log')}`);
  trace.line();
  trace.line(`  curl ${stack.svc.url}/supported`);
  trace.line(`  curl '${stack.svc.url}/discovery/search?query=weather'`);
  trace.line(`  curl -i '${sellerUrl}/weather?city=Oslo'          # 402 with the terms in PAYMENT-REQUIRED`);
  trace.line(`  curl -i ${sellerUrl}/summarize -H 'content-type: application/json' -d '{"text":"pay per call"}'`);
  trace.line();
  trace.line('Demo accounts on the devnet. DEV-ONLY keys: they exist only in this process, never use them anywhere else.');
  trace.line(`  buyer       ${accounts.buyer.publicKey}   secret (dev-only) ${accounts.buyer.secret}`);
  trace.line(`  agent       ${accounts.agent.publicKey}   secret (dev-only) ${accounts.agent.secret}`);
  trace.line(
    `  seller      ${accounts.seller.publicKey}   secret (dev-only) ${accounts.seller.secret}   (payTo of the demo sellers: owns their listings; docs/SELLER.md withdraws one with it)`,
  );
  trace.line(
    `  submitters  ${accounts.submitters.map((a) => a.publicKey).join(', ')}   fee-bump ${accounts.feeBump.publicKey}   (svc's; secrets not shown)`,
  );
  trace.line();
  trace.line("Connect your own MCP client (e.g. Claude Desktop, Cursor) to svc's agent tools with this config:");
  trace.line(
    JSON.stringify(
      devMcpClientConfig({ repoDir, facilitatorUrl: stack.svc.url, rpcUrl: devnet.rpcUrl, agentSecret: accounts.agent.secret }),
      null,
      2,
    )
      .split('\n')
      .map((l) => `  ${l}`)
      .join('\n'),
  );
  trace.line('  (the key above is the dev-only agent account of this devnet)');
  trace.line();
  trace.line('Ctrl-C stops everything.');
}

main().catch((err: unknown) => {
  process.stderr.write(`dev: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
