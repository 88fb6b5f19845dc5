/**
 * svc's client toolkit as one import for scripts: `import { createFacilitatorClient, delist } from 'svc/client'`
 * (package.json `exports`; resolves from anywhere in the checkout, e.g. scratch/, through tsx).
 * The typed facilitator client, the seller toolkit (paid HTTP routes and MCP tools declaring
 * `bazaar`), and a listing's withdrawal signed by its owner.
 */
export { createFacilitatorClient, FacilitatorUnreachableError } from './facilitator.ts';
export type { FacilitatorClient, FacilitatorClientOptions, FacilitatorResult } from './facilitator.ts';
export { delist, signedDelist } from './delist.ts';
export type { ListingIdentity } from './delist.ts';
export { startPaidHttpServer } from './seller-http.ts';
export type { PaidHttpRoute, PaidHttpServer } from './seller-http.ts';
export { startPaidMcpServer } from './seller-mcp.ts';
export type { PaidMcpServer, PaidTool } from './seller-mcp.ts';
