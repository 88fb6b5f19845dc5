/**
 * `npm run devnet`: run the embedded devnet in the foreground and print how to reach it.
 * Options: --ledger-ms N (default 5000), --port N, --https-port N, --accounts N (default 3),
 * --network stellar:testnet|stellar:pubnet (the passphrase and USDC contract id it plays),
 * --no-https, --ca-file PATH (writes the HTTPS certificate there, the file NODE_EXTRA_CA_CERTS
 * names). Ctrl-C stops it cleanly.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEVNET_NETWORKS, startDevnet, type DevnetNetwork } from './index.ts';

function intOption(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`devnet: --${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'ledger-ms': { type: 'string' },
      port: { type: 'string' },
      'https-port': { type: 'string' },
      accounts: { type: 'string' },
      network: { type: 'string' },
      'no-https': { type: 'boolean', default: false },
      'ca-file': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(
      'usage: npm run devnet -- [--ledger-ms 5000] [--port 8000] [--https-port 8443] [--accounts 3] [--network stellar:testnet|stellar:pubnet] [--no-https] [--ca-file PATH]',
    );
    return;
  }
  if (values['ca-file'] !== undefined && values['no-https']) {
    console.error('devnet: --ca-file writes the HTTPS certificate; it cannot be combined with --no-https');
    process.exit(2);
  }
  const network = values.network ?? 'stellar:testnet';
  if (!Object.hasOwn(DEVNET_NETWORKS, network)) {
    console.error(`devnet: --network must be one of ${Object.keys(DEVNET_NETWORKS).join(', ')}, got ${JSON.stringify(network)}`);
    process.exit(2);
  }
  const devnet = await startDevnet({
    ledgerMs: intOption('ledger-ms', values['ledger-ms'], 5000),
    port: intOption('port', values.port, 8000),
    httpsPort: intOption('https-port', values['https-port'], 8443),
    demoAccounts: intOption('accounts', values.accounts, 3),
    https: !values['no-https'],
    network: network as DevnetNetwork,
  });
  const lines = [
    'svc embedded Stellar devnet (local only, nothing here is a real network)',
    `  RPC (http):    ${devnet.rpcUrl}`,
    ...(devnet.httpsRpcUrl ? [`  RPC (https):   ${devnet.httpsRpcUrl}   (self-signed; trust it with NODE_EXTRA_CA_CERTS)`] : []),
    `  friendbot:     ${devnet.friendbotUrl}?addr=G...&usdc=BASE_UNITS`,
    `  network:       ${devnet.network}   passphrase "${devnet.networkPassphrase}"`,
    `  USDC (SAC):    ${devnet.usdc.contractId}   issuer ${devnet.usdc.issuer}, 7 decimals`,
    `  SEP-41 token:  ${devnet.customToken.contractId}`,
    `  ledger close:  every ${intOption('ledger-ms', values['ledger-ms'], 5000)} ms`,
    '',
    'Funded demo accounts (10,000 XLM + 1,000 USDC each). DEV-ONLY SECRETS: never use them on a real network.',
    ...devnet.demoAccounts.map((a, i) => `  #${i + 1} public ${a.publicKey}\n     secret ${a.secret}   (dev-only)`),
  ];
  console.log(lines.join('\n'));
  if (devnet.caCertPem) console.log(`\nSelf-signed certificate (PEM):\n${devnet.caCertPem}`);
  const caFile = values['ca-file'];
  if (caFile !== undefined && devnet.caCertPem) {
    try {
      mkdirSync(dirname(resolve(caFile)), { recursive: true });
      writeFileSync(caFile, devnet.caCertPem);
    } catch (err) {
      console.error(`devnet: cannot write --ca-file ${caFile} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
      await devnet.stop();
      process.exit(2);
    }
    console.log(`Certificate written to ${caFile}: NODE_EXTRA_CA_CERTS=${resolve(caFile)} makes a Node client trust the HTTPS RPC.`);
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\ndevnet: ${signal}, stopping`);
    await devnet.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((e: unknown) => {
  console.error('devnet: failed to start:', e instanceof Error ? e.message : e);
  process.exit(1);
});
