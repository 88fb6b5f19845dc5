/**
 * docs/SELLER.md ("Your own seller") run as a newcomer runs it, against a real `npm run dev`
 * (--ephemeral, its own data directory; the run test/interop/first-contact.test.ts starts): every TypeScript block of the docs marked to be saved
 * under scratch/ (`<!-- scratch/NAME.ts -->` before it) is saved there as written, and every shell
 * command of SELLER.md runs in order as written, answering what the page says: a stock
 * @x402/express seller starts, validate says it would be listed, the stock buyer pays it through
 * svc, search finds it, the toolkit's delist withdraws it, search no longer does. Only the run's
 * own ports, data directory and printed keys are filled in, and the scripts go to a folder of this
 * run inside scratch/ (a developer's own scratch/ files are left alone). The other marked blocks
 * run too, and no TypeScript block of the docs imports svc's sources by a relative path: from
 * scratch/ (or anywhere in the checkout) svc's own modules are `svc/...` (package.json `exports`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Keypair } from '@stellar/stellar-sdk';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFacilitatorClient, delist } from '../../src/client/index.ts';
import { REPO_ROOT } from '../../src/dev/agent.ts';
import { DEV_PORTS } from '../../src/dev/stack.ts';
import type { DevRun } from '../helpers/dev-run.ts';
import { freePort } from '../helpers/svc-process.ts';

const DOCS = [
  'README.md',
  ...readdirSync(join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (doc: string) => readFileSync(join(REPO_ROOT, doc), 'utf8');
const SELLER_PORT_AS_WRITTEN = 4200;
/** This run's folder inside scratch/, where the saved scripts go instead of scratch/ itself. */
const RUN_DIR = `scratch/.doc-run-${process.pid}`;

/** The ```ts blocks of a doc, with the scratch/ file a marker before each names (if any). */
function tsBlocks(doc: string): Array<{ file?: string; code: string }> {
  return [...read(doc).matchAll(/(?:<!-- (scratch\/[\w.-]+\.ts) -->\n\n)?^```ts\n([\s\S]*?)^```$/gm)].map((m) => ({
    file: m[1],
    code: m[2]!,
  }));
}

/** The commands of SELLER.md's ```sh blocks, in order (continued lines joined). */
function sellerCommands(): string[] {
  const blocks = [...read('docs/SELLER.md').matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!.trimEnd().split('\n'));
  const commands: string[] = [];
  for (const lines of blocks) {
    let current = '';
    for (const line of lines) {
      current += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line;
      if (!line.endsWith('\\')) {
        commands.push(current);
        current = '';
      }
    }
  }
  return commands;
}

let dev: DevRun;
let sellerPort: number;
let fill: Array<[string, string]>;
let seller: ChildProcess | undefined;
let sellerOutput = '';

/** Text as written, with this run's ports, paths and keys in place of README's fixed ones and the placeholders. */
const filled = (text: string) => fill.reduce((out, [written, actual]) => out.replaceAll(written, actual), text);

/**
 * Runs one shell command from the checkout, as a newcomer's terminal would. Not spawnSync: a
 * blocked event loop does not expire this process's idle keep-alive sockets, and a fetch after a
 * long command then reused one svc had closed meanwhile ("other side closed").
 */
async function run(command: string): Promise<string> {
  const child = spawn('bash', ['-c', command], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: 90_000 });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  expect(code, `${command}\n${stdout}\n${stderr}`).toBe(0);
  return stdout;
}

/** SELLER.md's checks on the serving `run()` (they list a seller of their own and withdraw the demo's weather listing). */
export function describeSellerExample(devRun: () => DevRun): void {
  describe('docs/SELLER.md and the TypeScript blocks of the docs, on npm run dev', () => {
    beforeAll(async () => {
      dev = devRun();
      sellerPort = await freePort();
      fill = [
        [`http://127.0.0.1:${DEV_PORTS.svc}`, dev.svcUrl],
        [`http://127.0.0.1:${DEV_PORTS.sellers}`, dev.sellerUrl],
        [`https://localhost:${DEV_PORTS.devnetHttps}`, dev.httpsRpcUrl],
        [String(SELLER_PORT_AS_WRITTEN), String(sellerPort)],
        ['data/dev/devnet-ca.pem', join(dev.dataDir, 'devnet-ca.pem')],
        ['scratch/', `${RUN_DIR}/`],
        ['<the seller address G… npm run dev printed>', Keypair.fromSecret(dev.sellerSecret).publicKey()],
        ['<the dev-only seller secret npm run dev printed>', dev.sellerSecret],
        ['<the dev-only buyer secret npm run dev printed>', dev.buyerSecret],
      ];
      mkdirSync(join(REPO_ROOT, RUN_DIR), { recursive: true });
      for (const doc of DOCS) {
        for (const block of tsBlocks(doc)) {
          if (block.file) writeFileSync(join(REPO_ROOT, filled(block.file)), filled(block.code));
        }
      }
    });

    afterAll(() => {
      if (seller?.pid !== undefined && seller.exitCode === null) process.kill(-seller.pid, 'SIGINT');
      rmSync(join(REPO_ROOT, RUN_DIR), { recursive: true, force: true });
    });

    describe('docs/SELLER.md, as written, against npm run dev', () => {
      it('a stock @x402/express seller: validated, paid through svc, found, withdrawn by its owner, gone', async () => {
        const commands = sellerCommands();
        const resource = `http://127.0.0.1:${sellerPort}/joke`;
        const searchHits = (out: string) =>
          (JSON.parse(out) as { resources: Array<{ resource: string }> }).resources.map((r) => r.resource);
        // What each command must answer, in the page's order (its text says the same); `eventually`: run again until
        // it does, as its reader would (the listing follows the settle within seconds, the page says: svc first asks the
        // seller, unpaid, whose 402 it is; later on a busy machine).
        const answers: Array<[RegExp, (out: string) => void, eventually?: true]> = [
          [/npm run --silent ts -- scratch\/my-seller\.ts$/, () => undefined], // started below, in the background
          [
            /\/discovery\/validate/,
            (out) => {
              const answer = JSON.parse(out) as { wouldList: boolean; problems: unknown[]; listing: { resource: string } };
              expect(answer).toMatchObject({ wouldList: true, problems: [], listing: { resource } });
            },
          ],
          [/scratch\/stock-buyer\.ts '/, (out) => expect(out).toMatch(/^200 \{.*joke/s)],
          [/\/discovery\/search/, (out) => expect(searchHits(out)[0]).toBe(resource), true],
          [/scratch\/delist\.ts /, (out) => expect(out).toMatch(/\{ ok: true, data: \{ delisted: true \} \}/)],
          [/\/discovery\/search/, (out) => expect(searchHits(out)).not.toContain(resource)],
        ];
        expect(commands.map((c, i) => answers[i]?.[0].test(c))).toEqual(answers.map(() => true));

        // Its own process group, so stopping it stops npm and node alike (Ctrl-C in its terminal).
        seller = spawn('bash', ['-c', filled(commands[0]!)], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        seller.stdout!.on('data', (d: Buffer) => (sellerOutput += d.toString()));
        seller.stderr!.on('data', (d: Buffer) => (sellerOutput += d.toString()));
        await expect.poll(() => sellerOutput, { timeout: 60_000 }).toContain(`seller ready: ${resource}`);
        expect((await fetch(`${resource}?topic=cats`)).status).toBe(402);

        for (const [i, command] of commands.entries()) {
          if (i === 0) continue;
          const [, check, eventually] = answers[i]!;
          if (eventually) await vi.waitFor(async () => check(await run(filled(command))), { timeout: 60_000, interval: 500 });
          else check(await run(filled(command)));
          // The joke listed beside the demo's: "weather in a city" puts the weather first, the joke after every weather listing.
          if (eventually) {
            const found = (await (
              await fetch(`${devRun().svcUrl}/discovery/search?${new URLSearchParams({ query: 'weather in a city' }).toString()}`)
            ).json()) as { resources: Array<{ resource: string; match: { terms: Array<{ term: string }> } }> };
            const order = found.resources.map((r) => r.resource);
            expect(order[0]).toBe(`${devRun().sellerUrl}/weather`);
            const weatherRelated = found.resources
              .filter((r) => r.match.terms.some((t) => t.term === 'weather'))
              .map((r) => order.indexOf(r.resource));
            if (order.includes(resource)) expect(order.indexOf(resource)).toBeGreaterThan(Math.max(...weatherRelated));
          }
        }
      }, 240_000);

      // The command itself ran as written above; its three lines run here in this process (a second
      // script would cost about a CPU-second to load the same toolkit again) with the demo's URL.
      it("the demo's listings, a route and the MCP tool, are withdrawn with the seller secret npm run dev printed (what the same command does)", async () => {
        const delistCommand = sellerCommands().find((c) => c.includes('scratch/delist.ts '))!;
        const script = tsBlocks('docs/SELLER.md').find((b) => b.file === 'scratch/delist.ts')!.code;
        expect(delistCommand).toMatch(
          /^SELLER_SECRET=<[^>]+> npm run --silent ts -- scratch\/delist\.ts http:\/\/127\.0\.0\.1:4200\/joke$/,
        );
        expect(script).toContain(
          "const listing = toolName ? { resource, type: 'mcp' as const, toolName } : { resource, type: 'http' as const };",
        );
        expect(script).toContain("delist(createFacilitatorClient('http://127.0.0.1:4021'), owner, listing)");
        // The page's two demo withdrawals: the weather route, and the MCP tool by its server's URL and name.
        const seller = Keypair.fromSecret(dev.sellerSecret);
        const facilitator = createFacilitatorClient(dev.svcUrl);
        const demo = dev.sellerUrl + '/weather';
        expect(await delist(facilitator, seller, { resource: demo, type: 'http' })).toEqual({ ok: true, data: { delisted: true } });
        // The tool's URL as an http listing: the 404 names the mcp listing there.
        const tool = dev.mcpSellerUrl;
        expect(await delist(facilitator, seller, { resource: tool, type: 'http' })).toMatchObject({
          ok: false,
          status: 404,
          code: 'svc_delist_unknown_listing',
          reason: expect.stringContaining('there is an mcp listing (type "mcp", toolName "exchange_rate")') as string,
        });
        expect(await delist(facilitator, seller, { resource: tool, type: 'mcp', toolName: 'exchange_rate' })).toEqual({
          ok: true,
          data: { delisted: true },
        });
        const listed = (await (await fetch(`${dev.svcUrl}/discovery/resources`)).json()) as { items: Array<{ resource: string }> };
        expect(listed.items.map((item) => item.resource)).not.toContain(demo);
        expect(listed.items.map((item) => item.resource)).not.toContain(tool);
      }, 60_000);
    });

    describe('TypeScript blocks of the docs', () => {
      it('every block to be saved under scratch/ is run, here or by the page that uses it', () => {
        const saved = DOCS.flatMap((doc) => tsBlocks(doc).flatMap((b) => (b.file ? [b.file] : [])));
        expect(saved.sort()).toEqual(['scratch/delist-example.ts', 'scratch/delist.ts', 'scratch/my-seller.ts', 'scratch/stock-buyer.ts']);
      });

      it("docs/CATALOG.md's toolkit withdrawal runs from scratch/ as written (its example listing is unknown here: a coded 404)", async () => {
        const out = await run(`SELLER_SECRET=${dev.sellerSecret} npm run --silent ts -- ${RUN_DIR}/delist-example.ts`);
        expect(out).toMatch(/ok: false,\s+status: 404,\s+code: 'svc_delist_unknown_listing'/);
      }, 60_000);

      it("no block imports svc's sources by a relative path; every svc/… import is an entry of package.json exports", () => {
        const exportsMap = (JSON.parse(read('package.json')) as { exports: Record<string, string> }).exports;
        for (const doc of DOCS) {
          for (const { code } of tsBlocks(doc)) {
            for (const [, specifier] of code.matchAll(/from '([^']+)'/g)) {
              expect(specifier, `${doc}: ${specifier}`).not.toMatch(/(^|\/)src\//);
              if (specifier!.startsWith('svc/'))
                expect(Object.keys(exportsMap), `${doc}: ${specifier}`).toContain(`./${specifier!.slice(4)}`);
            }
          }
        }
      });
    });
  });
}
