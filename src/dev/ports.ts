/** The fixed ports of `npm run dev` (README "Try it"); `--ephemeral` uses free ones instead. */
export const DEV_PORTS = { svc: 4021, sellers: 4100, mcpSeller: 4101, devnet: 8000, devnetHttps: 8443 } as const;
