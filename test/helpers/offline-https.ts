/**
 * The named boundary for tests that run stock @x402 code against the devnet over https:
 * the devnet's self-signed certificate joins this process's default CA list (Node 24
 * `tls.setDefaultCACertificates`, which axios in the nested sdk 14 honours), and every
 * non-loopback DNS lookup of the https global agent fails at once, so stock code that
 * reaches for Horizon falls back offline instead of touching (or hanging on) the internet.
 */
import dns from 'node:dns';
import https from 'node:https';
import tls from 'node:tls';

export interface OfflineHttps {
  /** Host names the stock code tried to resolve and was refused. */
  blockedLookups: string[];
  /** Restore the default CA list and DNS lookup. */
  restore(): void;
}

export function trustCertAndBlockDns(caCertPem: string): OfflineHttps {
  const savedCAs = tls.getCACertificates('default');
  const blockedLookups: string[] = [];
  tls.setDefaultCACertificates([...savedCAs, caCertPem]);
  (https.globalAgent.options as { lookup?: unknown }).lookup = (
    hostname: string,
    options: dns.LookupOptions,
    cb: (err: NodeJS.ErrnoException | null, address?: unknown, family?: number) => void,
  ) => {
    if (hostname === 'localhost' || hostname === '127.0.0.1') return dns.lookup(hostname, options, cb as never);
    blockedLookups.push(hostname);
    const err = Object.assign(new Error(`offline test: no DNS for ${hostname}`), { code: 'ENOTFOUND' });
    process.nextTick(() => cb(err));
  };
  return {
    blockedLookups,
    restore() {
      tls.setDefaultCACertificates(savedCAs);
      delete (https.globalAgent.options as { lookup?: unknown }).lookup;
    },
  };
}
