/* Generated from openapi.yaml by `npm run codegen` (codegen/generate.ts). Do not edit. */

export interface paths {
    "/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Verify a payment without broadcasting anything
         * @description Envelope checks, in order: body is a JSON object (`svc_malformed_request_body`),
         *     `paymentPayload` is an object (`svc_missing_payment_payload`), `paymentRequirements` is an
         *     object (`svc_missing_payment_requirements`), `paymentPayload.x402Version` is 2
         *     (`svc_unsupported_x402_version`), then the request validates against FacilitatorRequest
         *     (`svc_malformed_request_body`). Then kind routing: (`paymentRequirements.scheme`,
         *     `paymentRequirements.network`) must be advertised in GET /supported, else a 200 rejection
         *     `svc_unsupported_kind`. Everything else is decided by the scheme. A query string is ignored.
         *
         *     **Verify and settle agree.** A payment the scheme finds valid is then judged by the payment
         *     policy and fee budget POST /settle applies before submission (docs/OPERATIONS.md), with the
         *     same codes (PolicyCode): `svc_policy_self_payment`, `svc_policy_amount_below_minimum`,
         *     `svc_policy_authorization_expiring` (an authorization with fewer than 2 ledgers left,
         *     docs/SCHEME.md "Authorization expiry"), `svc_policy_payer_balance_archived` (the payer's
         *     balance entry is archived, docs/SCHEME.md "Archived balances"), `svc_policy_payer_cooling_down` (the payer's recent
         *     settlements failed on chain), `svc_fee_budget_payer_exhausted`,
         *     `svc_fee_budget_payto_exhausted`, `svc_fee_budget_new_paytos_exhausted` and
         *     `svc_fee_budget_daily_exhausted` (docs/OPERATIONS.md "Sponsorship"). The budget is judged
         *     with the fee this verification's simulation derived, the fee settle would declare now;
         *     only a change in between (another settlement spending the budget) makes them differ.
         */
        post: operations["verifyPayment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/settle": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Verify again, submit, and wait for a terminal on-chain outcome
         * @description Same envelope checks and kind routing as /verify, answered in the SettleResponse shape.
         *     After `success:true` only, the catalog hook runs; its outcome is reported in the
         *     `EXTENSION-RESPONSES` header and never changes the body.
         *
         *     **Journal and idempotency** (docs/OPERATIONS.md). Every payment (identified by its signed
         *     authorization) is recorded before its transaction is submitted, and is submitted at most
         *     once. A key — the `Idempotency-Key` header, or the `id` of the x402 `payment-identifier`
         *     extension in `paymentPayload.extensions` (advertised in GET /supported) — is bound, when its
         *     payment is submitted, to that payment and to the digest of the whole request (payload and
         *     requirements, canonical JSON). A copy of a submitted payment is never submitted again: with
         *     a key bound to it and the same request it gets the recorded outcome (`success:true` with
         *     the same transaction, a recorded failure, or `settlement_pending` while the outcome is still
         *     being reconciled); a key bound to another payment or used with another payload or other
         *     requirements is refused with a **409** `svc_idempotency_key_conflict` (also after
         *     reconciliation; a failed attempt never re-binds a key, so the first key still finds a
         *     payment that landed on a later attempt). Without a bound key a copy is a replay and gets
         *     `invalid_exact_stellar_payload_simulation_failed`, as the chain would answer — except the
         *     retry of a request answered `settlement_pending`, below. A malformed `payment-identifier`
         *     is refused with `svc_payment_identifier_invalid` (by /verify too). Concurrent copies wait
         *     for the first. Before submission the payment policy and fee budget may refuse with
         *     a PolicyCode (`svc_policy_*`, `svc_fee_budget_*`; docs/OPERATIONS.md "Sponsorship").
         *
         *     **Pending outcomes** (the x402 SDKs' retry language). When the transaction was submitted but
         *     the RPC could not confirm its outcome within the time bound, or its outcome could not be
         *     recorded, the answer is a 200 with `success:false`, `errorReason: settlement_pending` and
         *     the broadcast hash in `transaction` — never a failure. The stock resource server
         *     (`@x402/core`) sends that exact request once more; the retry is answered from the journal
         *     (one chain lookup): the confirmed outcome, told once, or `settlement_pending` again. It is
         *     never submitted a second time.
         *
         *     **Storage faults** (docs/OPERATIONS.md "When the journal cannot write"). A payment the
         *     journal cannot record before submission (its storage is full, read-only or unreachable, or
         *     its file was deleted or replaced) is refused with `svc_journal_unavailable` and nothing is
         *     submitted; after such a fault no new payment is submitted until a write succeeds again
         *     (GET /ready fails meanwhile). When the outcome of a submitted payment cannot be recorded,
         *     the answer is the confirmed success, or else `settlement_pending`, never a failure; the
         *     record stays recoverable and a retry of the same request tells the outcome.
         */
        post: operations["settlePayment"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/settlements/{transaction}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The journal record of one settlement, by transaction hash
         * @description Public, like the chain: it shows only what the transaction itself publishes (payer, payTo,
         *     asset, amount, submitter, fee ceiling, validity bound) plus the journal's state and the
         *     times of its state changes. The signed payment, the resource and the Idempotency-Key are
         *     never shown. `state` is `submitted` (sent, awaiting its outcome), `settled`, `failed`
         *     (failed on-chain, rejected, or never included before `validUntil`) or `unknown` (the RPC
         *     could not tell; the reconciler resolves it). An unknown hash is a 404 `svc_settlement_not_found`;
         *     a value that is not a hash at all is a 400 `svc_invalid_transaction_hash`.
         */
        get: operations["getSettlement"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/supported": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Payment kinds, extensions and signer addresses served
         * @description The (x402Version, scheme, network) kinds this facilitator verifies and settles, the
         *     extensions it acts on (`bazaar`, and `payment-identifier` when settles are journaled), and
         *     its signer addresses per network. A client picks its
         *     payment requirements from these; a kind not listed here is `svc_unsupported_kind`.
         */
        get: operations["getSupported"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/.well-known/x402": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Facilitator manifest for indexers (experimental)
         * @description The well-known manifest by which indexers find a facilitator (x402's discovery draft,
         *     still moving: `experimental` is true and the shape may change with the draft). It names the
         *     facilitator's routes and mirrors GET /supported in `supported`, the same answer at the same
         *     moment. Publishing only: svc reads no other party's manifest.
         */
        get: operations["getFacilitatorManifest"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/discovery/resources": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Browse the catalog
         * @description No parameter may repeat (`svc_invalid_query_parameter`). `limit` defaults to 20; integer
         *     values outside [1, 100] are clamped, not rejected; anything that is not an integer is 400
         *     `svc_invalid_query_parameter`. `offset` defaults to 0 and must be a non-negative integer.
         *     A parameter this operation does not declare, or an empty filter value, is 400
         *     `svc_invalid_query_parameter` (filters are never silently ignored). An answer is at most
         *     4 MiB, what stock bazaar clients read: when `limit` listings would weigh more, the page
         *     holds the first ones that fit and `pagination.limit` says how many (the next page starts at
         *     `offset` + `limit`; docs/CATALOG.md "Page size").
         */
        get: operations["listDiscoveryResources"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/discovery/search": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Search the catalog with a natural-language query
         * @description `query` is required and must not be blank (`svc_missing_search_query`). No parameter may
         *     repeat (`svc_invalid_query_parameter`). `limit` as for the list. A `cursor` not issued for
         *     this query and filter combination is `svc_invalid_search_cursor`. A parameter this operation
         *     does not declare, or an empty filter value, is 400 `svc_invalid_query_parameter`. A query
         *     longer than 2,048 characters is 400 `svc_invalid_query_parameter`, the reason naming the cap.
         *     Any number of words is answered: a search budget keeps the rarest terms whose index rows fit
         *     it and ranks over those; the answer's `searchMethod`, `searchedTerms` and `droppedTerms` say
         *     what was searched (docs/CATALOG.md "The search budget"). An answer is at most 4 MiB: when `limit`
         *     results would weigh more, the page holds the first ones that fit, `pagination.limit` says
         *     how many, and the cursor (with `partialResults` true) continues right after them.
         *
         *     The rank (docs/CATALOG.md "Ranking"): function words (English stop words, and request words
         *     such as "find", "please", "api", "service") are not searched; each other word matches
         *     listings holding it, another form of it (Porter's English stem), a word related to it in
         *     meaning (WordNet 3.1) or one of its nearest words in GloVe word vectors, in that order of
         *     weight; each is weighed by how few listings hold it
         *     (BM25's idf) and by where the listing holds it (serviceName 4, tags 3, description 2,
         *     parameter text 1, saturating with repeats), and by the listing's quality level. When no
         *     listing holds some of the query's words and no result of a page holds an informative word,
         *     the page's results are ordered by how close their text is to the query in word vectors (the
         *     pages hold the same listings). Each result's `match` says what it holds and how; the answer's `relevance` says
         *     whether any result answers the query (`none`: most likely no such service). Send intent as a
         *     sentence.
         */
        get: operations["searchDiscoveryResources"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/discovery/merchant": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * One seller's listings (the CDP Bazaar's merchant lookup)
         * @description Every visible listing owned by `payTo` (the address its settlements paid), newest first,
         *     offset-paged, in the shape the CDP Bazaar's merchant route answers: `payTo`, `resources`
         *     and `pagination {limit, offset, total}`. The same listings as `GET
         *     /discovery/resources?payTo=` (docs/CATALOG.md "Merchant"). `limit` and `offset` follow the
         *     list's rules; `payTo` is required and must be a payee address (`svc_invalid_query_parameter`
         *     otherwise: a malformed address is the caller's mistake, not a seller without listings);
         *     another parameter is refused. At most 4 MiB, as the list: `pagination.limit` says how many
         *     listings a shrunk page holds.
         */
        get: operations["getMerchantResources"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/discovery/validate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Check, without paying, whether a resource would be listed
         * @description A seller's preflight (docs/CATALOG.md "Checking a listing"). svc makes the check request its
         *     ownership and liveness checks make (docs/SECURITY.md "Requests svc makes of sellers' hosts"),
         *     never a payment, at the URL a listing would have: `url` in the catalog's canonical form
         *     (origin and path), so a query or fragment in `url` is never sent — no query identifies a
         *     listing — and `listing.resource` is the URL that was asked. HTTP: GET without a body (HEAD
         *     or OPTIONS when `method` names it; `method` itself, still without a body, once the route
         *     answered GET with 404, 405 or 501). MCP (when `toolName` is given): an unpaid `tools/call`
         *     of that tool over streamable HTTP with svc's neutral arguments (from the inputSchema the
         *     server's tools/list declares; never an example). Every connection goes through the
         *     same address guard as paid_call (a loopback, private, link-local or metadata address is
         *     refused unless ALLOW_PRIVATE_TARGETS covers it), no redirect is followed, one host is asked
         *     at most once per PROBE_HOST_INTERVAL_SECONDS (`svc_validate_origin_paced` otherwise), the
         *     exchange has one deadline (PROBE_TIMEOUT_MS) and at most 256 KiB of an answer is read.
         *
         *     From the live 402 it decodes the PaymentRequired and runs exactly the checks the catalog
         *     write of a settlement runs, in the same code: for the first accept svc can settle (scheme,
         *     network, asset), the `bazaar` declaration, the seller schema (neutralized, validated in the
         *     sandbox), the resource URL and its canonical form, the route template and the current
         *     owner of the listing. `wouldList` is true only when none of them has a problem; `listing`
         *     is then the item a settlement with these terms would store (a new listing's form). Each
         *     problem carries a code (BazaarCode or ValidateCode) and a reason that names the cause and
         *     the fix. Answers 200 whatever the target did; the request itself can be refused: 400 for a
         *     body that is not `{url, method?, toolName?}` (`method` and `toolName` not both), 429 beyond the rate limits.
         *
         *     Anonymous and outbound, so it is rate-limited per client address
         *     (VALIDATE_RATE_PER_MINUTE) and for all clients together (VALIDATE_GLOBAL_PER_MINUTE).
         */
        post: operations["validateDiscoveryListing"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/mcp": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Search the catalog over MCP (stateless streamable HTTP)
         * @description The hosted discovery tool server (docs/MCP.md "Hosted discovery"): an MCP client adds svc by
         *     this URL and gets one tool, `search_resources`, with the same input and output schemas and
         *     read-only annotations as the stdio tool server of `npm run mcp`, answering what `GET
         *     /discovery/search` answers for the same query. `paid_call` is not offered here: it signs
         *     with the buyer's key, which stays with the agent in the local stdio server.
         *
         *     MCP 2026-07-28 and 2025-11-25 (and earlier): a request whose `params._meta` names
         *     `io.modelcontextprotocol/protocolVersion` is served in that revision (`server/discover`
         *     answers which; an unsupported one is JSON-RPC error -32022 listing the supported), any
         *     other as MCP 2025-11-25 clients send it.
         *
         *     Streamable HTTP without sessions (no `Mcp-Session-Id`): each POST carries one JSON-RPC
         *     message (a batch array is refused) and is answered on its own; `initialize` is answered
         *     but not required before `tools/list` or `tools/call`. A request is answered 200 with one
         *     JSON-RPC response as `application/json` (never an SSE stream: the server sends nothing but
         *     answers; protocol errors such as an unknown method or tool are JSON-RPC errors in a 200); a
         *     notification or a response is answered 202 without a body. `GET` and `DELETE` (the
         *     server-to-client stream and the end of a session) are 405 with `Allow: POST, OPTIONS`.
         *
         *     The request must send `Content-Type: application/json` (else 415). The answer is always
         *     JSON, so an `Accept` that takes `application/json` (that type, `application/*` or `*\/*`
         *     at a weight above 0), or none, is served; one that does not, e.g. `text/event-stream`
         *     alone, is 406. (MCP clients list both `application/json` and `text/event-stream`, as the
         *     streamable HTTP transport requires of them.) Both refusals are JSON-RPC error bodies. A JSON body is
         *     checked first: not one JSON-RPC 2.0 message of the form below, or an unsupported
         *     `MCP-Protocol-Version`, is 400 `svc_malformed_request_body`; over 256 KiB is 413.
         *
         *     Rate-limited per client address (`MCP_RATE_PER_MINUTE`, 429 `svc_rate_limited` with
         *     `Retry-After`) and, like the other discovery routes, held while payments keep svc busy
         *     (503 `svc_catalog_busy`).
         */
        post: operations["callHostedMcp"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/discovery/delist": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The text an owner signs to withdraw a listing from this catalog
         * @description The exact text to sign for POST /discovery/delist (docs/CATALOG.md "Withdrawing a listing"),
         *     issued now by svc's clock: eight lines joined by "\n" (no trailing newline): `svc delist`,
         *     `catalog <id>`, `network <network>`, type, resource, toolName, payTo, issuedAt. `catalog` is
         *     this catalog's identifier, created with its database and shared by every instance on it;
         *     `network` the network svc settles. A text signed for one catalog withdraws nothing from
         *     another. Nothing is looked up: the answer is the same whether or not the listing exists.
         */
        get: operations["getDelistText"];
        put?: never;
        /**
         * Withdraw a listing, signed by its owner
         * @description The owner of a listing withdraws it (docs/CATALOG.md "Withdrawing a listing"). The body names
         *     the listing as discovery shows it (`resource`, made canonical as validate and settlements make
         *     it, so a query string or a trailing slash is dropped; `type`; `toolName`: "" for http), the
         *     owner's `payTo`, the time of signing `issuedAt` (RFC 3339), optionally the `catalog` the text
         *     was signed for, and `signature`: the base64 SEP-53 signature by `payTo`
         *     (`Keypair.signMessage` of @stellar/stellar-sdk: ed25519 over SHA-256("Stellar Signed
         *     Message:\n" + message)) of the text GET /discovery/delist hands out for these fields.
         *
         *     The checks, in order: the body's shape (400 `svc_malformed_request_body`: a `signature` that
         *     is not the base64 of 64 bytes, an `issuedAt` that is not an RFC 3339 date-time, a `payTo`
         *     that is not an account address G…); `issuedAt` at most 5 minutes before svc's clock and at
         *     most 1 minute after it, the allowed clock skew (400 `svc_delist_stale`); `catalog`, when
         *     given, is this catalog's identifier (403 `svc_delist_other_catalog`); the signature by
         *     `payTo` of the text naming this catalog and network (403 `svc_delist_signature_invalid`);
         *     the listing (404 `svc_delist_unknown_listing`); `payTo` is its current owner (403
         *     `svc_delist_not_owner`); `issuedAt` later than that of the last withdrawal accepted for the
         *     same listing (409 `svc_delist_replayed`: a signed message is used once, so a replay cannot
         *     withdraw the listing again after a settlement re-listed it). A refused request changes nothing.
         *
         *     200 `{delisted: true}`: the listing is gone from list and search at once, with its quality
         *     signals and its owner binding, on every instance sharing the catalog. A later settlement
         *     with a bazaar extension lists the resource again as a new listing, owned by that
         *     settlement's payTo. Rate-limited per client address (DELIST_RATE_PER_MINUTE).
         */
        post: operations["delistDiscoveryListing"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/discovery/recheck": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The text a claimant signs to have its origin checked again, without paying
         * @description The exact text to sign for POST /discovery/recheck (docs/SELLER.md "Checked again without
         *     paying"), issued now by svc's clock: GET /discovery/delist's eight lines with `svc recheck`
         *     as the first, so a signed re-check can never be used as a withdrawal, nor a withdrawal as a
         *     re-check. Nothing is looked up.
         */
        get: operations["getRecheckText"];
        put?: never;
        /**
         * Check a pending or rejected claim's origin again, without paying, signed by its payTo
         * @description The payTo of a claim (a settlement whose listing waits for, or failed, the check of its
         *     resource's own server; validate's `ownership`) has svc ask that server again without
         *     another payment (docs/SELLER.md "Checked again without paying"; docs/CATALOG.md
         *     "Ownership and refresh"). The body is a DelistRequest signed exactly as a withdrawal is,
         *     over the text GET /discovery/recheck hands out (first line `svc recheck`), and is checked
         *     in the same order: shape (400 `svc_malformed_request_body`), time (400 `svc_delist_stale`),
         *     catalog (403 `svc_delist_other_catalog`), signature by `payTo` (403
         *     `svc_delist_signature_invalid`); then the claim: `payTo` must hold a pending or rejected
         *     claim on the listing (404 `svc_recheck_no_claim`).
         *
         *     svc then checks the claim as a settlement's check would (the same request, and the same
         *     bound: one request per host per PROBE_HOST_INTERVAL_SECONDS for every check together) and
         *     answers what it found, waiting at most PROBE_TIMEOUT_MS and a second: `listed` (the server
         *     named `payTo`; the listing is in list and search), `rejected` (with the check's code and
         *     reason), or `processing` (the host was asked less than the interval ago, or it did not
         *     answer usably yet: the check runs at the time `reason` names). Rate-limited with
         *     POST /discovery/validate (the same VALIDATE_RATE_PER_MINUTE and VALIDATE_GLOBAL_PER_MINUTE
         *     budget).
         */
        post: operations["recheckOwnershipClaim"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Liveness and a public configuration projection
         * @description Cheap liveness (no network or database call). Public addresses only; no internal URL or path, no seed or secret. `port` is the port actually bound. Readiness is GET /ready.
         */
        get: operations["getHealth"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/ready": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Readiness for payment traffic
         * @description Runs (or reuses, for up to 1 s) the readiness checks of docs/OPERATIONS.md — the RPC serves
         *     the configured network (its getNetwork passphrase) and answers with a recent latest ledger,
         *     every paying account holds the minimum balance, the settlement journal takes a real write
         *     through its own connection (and its file at DB_PATH is still the one open), the instance is
         *     not draining. The body names each check and each served network's state (`networks`). A
         *     network is ready when its own checks (`rpc`, `balances`; `rpc:<network>`,
         *     `balances:<network>` when NETWORK lists several) and the shared ones (`database`,
         *     `draining`) pass. 200 while at least one network is ready (READY_NETWORKS=`all`: every
         *     one), 503 otherwise: one network's outage does not take the others out of a load balancer.
         *     With `network`, the answer is that network's alone (its checks and the shared ones), for a
         *     load balancer that routes by network.
         */
        get: operations["getReadiness"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Prometheus metrics
         * @description Prometheus text exposition format 0.0.4; each metric is described in docs/OPERATIONS.md.
         */
        get: operations["getMetrics"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Catalog explorer page
         * @description The catalog for people (docs/EXPLORER.md): search as you type, filters, paging and a detail
         *     view per listing with its price in units, calling convention and snippets. The page uses
         *     only the public API (`/supported`, `/discovery/resources`, `/discovery/search`) and loads
         *     `/explorer.js` and `/explorer.css`; its Content-Security-Policy allows svc's own origin
         *     only, plus https images (sellers' icons).
         */
        get: operations["getExplorer"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/explorer.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Catalog explorer script
         * @description The ES module of the explorer page.
         */
        get: operations["getExplorerScript"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/explorer.css": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Catalog explorer styles
         * @description The stylesheet of the explorer page.
         */
        get: operations["getExplorerStyle"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * API reference page
         * @description This document rendered for people (Scalar, served from svc's own npm dependency: no CDN,
         *     works offline). The page loads `/docs/api-reference.js` and `/docs/openapi.json` (this
         *     document with examples from the catalog) and nothing else; its Content-Security-Policy
         *     allows svc's own origin only.
         */
        get: operations["getApiReference"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs/api-reference.js": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * API reference renderer
         * @description The browser bundle of `@scalar/api-reference` that /docs loads, as installed with svc.
         */
        get: operations["getApiReferenceScript"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The document the API reference page reads
         * @description This document as JSON, as /docs renders it: the same operations, schemas and examples but
         *     one, GET /discovery/merchant's `payTo` example, which names the seller of the catalog's
         *     newest listing (the document's own example when the catalog has none or is unavailable),
         *     so that the page's Test Request finds that seller's listings. It follows the catalog
         *     (`Cache-Control: no-cache`). Generated clients and tools read GET /openapi.yaml, verbatim.
         */
        get: operations["getApiReferenceDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.yaml": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * This document
         * @description This OpenAPI document, verbatim as YAML; the source for generated clients (docs/SDK.md).
         */
        get: operations["getOpenApiDocument"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /**
         * @description A Stellar address that can be paid: an account (G…) or contract (C…) strkey of 56
         *     characters, or a muxed account (M…) of 69, in upper case as the network writes them.
         */
        PayeeAddress: string;
        /**
         * @description One entry of a 402 `accepts` array, echoed back verbatim (x402 v2 PaymentRequirements, with the
         *     constraints of x402's own schema: `scheme`, `amount`, `asset` and `payTo` are not empty,
         *     `network` is a CAIP-2 identifier with a `:`, `maxTimeoutSeconds` is positive, `extra` is an
         *     object or null). A request whose requirements break one of these is refused at the envelope
         *     (400 `svc_malformed_request_body`), in `paymentRequirements` and in `paymentPayload.accepted`
         *     alike. Additional properties are allowed.
         */
        PaymentRequirements: {
            /**
             * @description Payment scheme; this deployment serves `exact`.
             * @example exact
             */
            scheme: string;
            /**
             * @description CAIP-2 identifier such as `stellar:testnet`.
             * @example stellar:testnet
             */
            network: string;
            /** @description Token contract address (SEP-41 contract id). */
            asset: string;
            /**
             * @description Integer in base units of the asset (USDC has 7 decimals, so `100000` is 0.01 USDC), in canonical
             *     decimal form: digits only, no sign, no leading zero (`0` itself is the one value that starts with
             *     0). A non-canonical amount such as `01000` is not read as 1000: /verify answers
             *     `invalid_exact_stellar_payload_wrong_amount` and /settle refuses it with the same reason.
             * @example 100000
             */
            amount: string;
            /** @description Recipient address the transfer must credit. */
            payTo: string;
            /** @description Upper bound on payment validity, in seconds; the authorization ledger bound derives from it. */
            maxTimeoutSeconds: number;
            /** @description Scheme extras, e.g. `areFeesSponsored`. */
            extra?: {
                [key: string]: unknown;
            } | null;
        } & {
            [key: string]: unknown;
        };
        /**
         * @description The client payload. A buyer builds the typed form, `ExactStellarPaymentPayload` (the `exact`
         *     scheme on Stellar). The service accepts any `PaymentPayloadEnvelope` as well, because the
         *     content of `resource`, `payload` and `extensions` is judged by the scheme and the catalog
         *     (with their own codes), not by the envelope validation; `accepted`, when present, is a
         *     PaymentRequirements in both forms.
         */
        PaymentPayload: components["schemas"]["ExactStellarPaymentPayload"] | components["schemas"]["PaymentPayloadEnvelope"];
        /** @description What the envelope validation requires of any payment payload; the rest is the scheme's to judge. */
        PaymentPayloadEnvelope: {
            /**
             * @description Protocol version; routing keys on it and only 2 is served (any other value is `svc_unsupported_x402_version`).
             * @example 2
             * @constant
             */
            x402Version: 2;
            /** @description Resource information: `url`, optional `description`, `mimeType`. Judged by the scheme and the catalog, so not type-checked here. */
            resource?: unknown;
            /**
             * @description The PaymentRequirements the client accepted, with the same constraints as `paymentRequirements`.
             *     Whether they match `paymentRequirements` is the scheme's to judge (e.g. `network_mismatch`); a
             *     payload without `accepted` is judged by `paymentRequirements` alone.
             */
            accepted?: components["schemas"]["PaymentRequirements"];
            /** @description Scheme payload; for `exact` on Stellar `{transaction: <base64 XDR>}`. A missing or undecodable transaction is the scheme code `invalid_exact_stellar_payload_malformed`, not an envelope error. */
            payload?: unknown;
            /** @description Echoed extensions, e.g. `bazaar`; judged by the catalog after a successful settle. */
            extensions?: unknown;
        } & {
            [key: string]: unknown;
        };
        /**
         * @description A complete x402 v2 payment for the `exact` scheme on Stellar, as a buyer builds it
         *     (docs/SCHEME.md): the requirements it accepted, the resource it pays for, the signed
         *     transaction, and optionally the seller's `bazaar` extension echoed for the catalog.
         */
        ExactStellarPaymentPayload: {
            /**
             * @description Protocol version.
             * @example 2
             * @constant
             */
            x402Version: 2;
            resource: components["schemas"]["ResourceInfo"];
            accepted: components["schemas"]["PaymentRequirements"];
            payload: components["schemas"]["ExactStellarPayload"];
            /** @description Extensions the seller declared in its 402, echoed by the buyer. */
            extensions?: {
                bazaar?: components["schemas"]["BazaarExtension"];
            } & {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /** @description The resource a payment is for, as the seller's 402 describes it. */
        ResourceInfo: {
            /**
             * @description Absolute http(s) URL of the resource (for MCP, the tool server's URL).
             * @example https://api.example.com/weather
             */
            url: string;
            /** @description What the resource is, in the seller's words. */
            description?: string;
            /**
             * @description Media type of the resource's response.
             * @example application/json
             */
            mimeType?: string;
            /** @description Short name for the catalog (kept when 1–32 printable ASCII characters; docs/CATALOG.md). */
            serviceName?: string;
            /** @description Catalog tags (up to 5 of 1–32 printable ASCII characters are kept). */
            tags?: string[];
            /** @description Absolute https URL of an icon for the catalog. */
            iconUrl?: string;
        } & {
            [key: string]: unknown;
        };
        /** @description The scheme payload of `exact` on Stellar. */
        ExactStellarPayload: {
            /**
             * @description Base64 TransactionEnvelope XDR with exactly one invokeHostFunction operation calling the
             *     asset contract's `transfer(payer, payTo, amount)`, its authorization entries signed by
             *     the payer (docs/SCHEME.md). The facilitator rebuilds the transaction with one of its
             *     submitters as source.
             */
            transaction: string;
        } & {
            [key: string]: unknown;
        };
        /**
         * @description The `bazaar` discovery extension (docs/CATALOG.md): `info` describes how to call the
         *     resource, `schema` is a JSON Schema that validates `info`. A successful settle whose payload
         *     echoes it lists the resource in the catalog.
         */
        BazaarExtension: {
            /** @description How to call the resource. */
            info: {
                input: components["schemas"]["BazaarHttpInput"] | components["schemas"]["BazaarMcpInput"];
                /** @description An example or description of the resource's output. */
                output?: {
                    [key: string]: unknown;
                };
            } & {
                [key: string]: unknown;
            };
            /** @description JSON Schema (draft 2020-12) that `info` must satisfy; it carries the input's schema. */
            schema?: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /** @description An HTTP resource; `queryParams` for GET, HEAD and DELETE, `bodyType` and `body` for POST, PUT and PATCH. */
        BazaarHttpInput: {
            /** @constant */
            type: "http";
            /** @enum {string} */
            method?: "GET" | "HEAD" | "DELETE" | "POST" | "PUT" | "PATCH";
            /** @description Example query parameters. */
            queryParams?: {
                [key: string]: unknown;
            };
            /** @enum {string} */
            bodyType?: "json" | "form-data" | "text";
            /** @description Example body. */
            body?: unknown;
        } & {
            [key: string]: unknown;
        };
        /** @description An MCP tool, paid through the x402 MCP transport. */
        BazaarMcpInput: {
            /** @constant */
            type: "mcp";
            /**
             * @description Not blank, at most 256 characters, no control characters (U+0000–U+001F, U+007F–U+009F);
             *     otherwise nothing is listed: `bazaar_spec_validation_failed` (docs/CATALOG.md).
             */
            toolName: string;
            /** @description The tool's JSON Schema input. */
            inputSchema: {
                [key: string]: unknown;
            };
            /** @enum {string} */
            transport?: "streamable-http" | "sse";
            description?: string;
            /** @description Example arguments. */
            example?: {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        /**
         * @description Body of /verify and /settle (x402 v2 facilitator request). Additional properties are allowed, except that an
         *     object key `"__proto__"` at any depth is refused with `svc_malformed_request_body` (NoPrototypeKeys).
         */
        FacilitatorRequest: ({
            /** @description Informational; routing keys on `paymentPayload.x402Version`. */
            x402Version?: number;
            paymentPayload: components["schemas"]["PaymentPayload"];
            paymentRequirements: components["schemas"]["PaymentRequirements"];
        } & {
            [key: string]: unknown;
        }) & components["schemas"]["NoPrototypeKeys"];
        /**
         * @description A JSON value with no object key `"__proto__"` at any depth, however it is spelled in the
         *     JSON text (`\u005f_proto__` too): such a key could pollute prototypes in JavaScript
         *     consumers, so every JSON request body is refused with `svc_malformed_request_body` when it
         *     holds one. svc checks it while reading the body (a walk only when the text can spell the key).
         */
        NoPrototypeKeys: unknown;
        /** @description The x402 v2 verify response. `invalidReason` and `invalidMessage` are present exactly when `isValid` is false. */
        VerifyResponse: {
            isValid: boolean;
            /** @description Machine-readable code (a scheme verify code, a service code, or the payment policy refusal settle would answer). */
            invalidReason?: components["schemas"]["VerifyCode"] | components["schemas"]["ServiceCode"] | components["schemas"]["PolicyCode"];
            /** @description Human-readable explanation, never a contract. */
            invalidMessage?: string;
            /** @description The client's paying address when recoverable; never a facilitator address (omitted when the transfer's `from` is one). */
            payer?: string;
            extensions?: {
                [key: string]: unknown;
            };
            extra?: {
                [key: string]: unknown;
            };
        };
        /** @description The x402 v2 settle response. `errorReason` and `errorMessage` are present exactly when `success` is false. */
        SettleResponse: {
            success: boolean;
            /** @description 64-character hex transaction hash on success, and the broadcast transaction's hash with `settlement_pending`; empty string on every other failure. */
            transaction: string;
            /** @description CAIP-2 network the settlement ran on (echoed from the request when known, else empty). */
            network: string;
            /** @description The client's paying address when recoverable; never a facilitator address (omitted when the transfer's `from` is one). */
            payer?: string;
            /** @description Machine-readable code (a scheme settle or verify code, or a service code). */
            errorReason?: components["schemas"]["SettleCode"] | components["schemas"]["VerifyCode"] | components["schemas"]["ServiceCode"] | components["schemas"]["SettlementCode"];
            /** @description Human-readable explanation. */
            errorMessage?: string;
            extensions?: {
                [key: string]: unknown;
            };
            extra?: {
                [key: string]: unknown;
            };
        };
        /** @description Decoded content of the `EXTENSION-RESPONSES` header of /settle. */
        ExtensionResponses: {
            bazaar?: components["schemas"]["BazaarOutcome"];
        } & {
            [key: string]: unknown;
        };
        /**
         * @description The catalog outcome of a settlement. `rejectedReason` and `code` accompany `rejected`.
         *     `processing`: the settlement would create the listing or give it a new owner, which
         *     happens once the resource's own server, asked with svc's check request, answers a 402 naming
         *     the settled payTo (within seconds; docs/CATALOG.md "Ownership and refresh"). Until then
         *     nothing is listed; POST /discovery/validate's `ownership` shows the check's outcome, and a
         *     later settlement to the same payTo answers `rejected` with its code while a failed check
         *     is remembered.
         */
        BazaarOutcome: {
            /** @enum {string} */
            status: "success" | "processing" | "rejected";
            rejectedReason?: string;
            code?: components["schemas"]["BazaarCode"];
        };
        SupportedKind: {
            x402Version: number;
            scheme: string;
            network: string;
            /** @description Scheme extras. The Stellar kind carries `areFeesSponsored:true`, the network's fee ceiling and the inclusion fee svc bids now (docs/SCHEME.md "Inclusion fee"): a payment whose derived settlement fee (resource fee plus the bid, counted twice when svc wraps the settlement in a fee bump) exceeds the ceiling is refused with `invalid_exact_stellar_payload_fee_exceeds_maximum`. */
            extra?: {
                areFeesSponsored?: boolean;
                /** @description The most svc declares for one settlement on this network, in stroops (MAX_TRANSACTION_FEE_STROOPS). */
                maxTransactionFeeStroops?: number;
                /** @description The inclusion fee svc bids per operation, in stroops: the base fee (100) unless recent ledgers were full, then one above the surge price they charged. As last read; reading this answer refreshes it when older than a few seconds. */
                inclusionFeeStroops?: number;
            } & {
                [key: string]: unknown;
            };
        };
        /** @description One kind the facilitator supports (x402 v2); all three fields required. */
        SupportedResponse: {
            kinds: components["schemas"]["SupportedKind"][];
            /** @description Extension identifiers with a reachable implementation; contains `bazaar`, and `payment-identifier` when settles are journaled (docs/OPERATIONS.md). */
            extensions: string[];
            /** @description Maps a CAIP-2 pattern (e.g. `stellar:*`) to the public addresses that source settlement transactions. */
            signers: {
                [key: string]: string[];
            };
        };
        /**
         * @description GET /.well-known/x402 (experimental, after x402's discovery draft): what this facilitator is,
         *     where its routes are (paths relative to the origin serving the manifest) and, in `supported`,
         *     the answer GET /supported gives.
         */
        FacilitatorManifest: {
            /** @constant */
            x402Version: 2;
            /**
             * @description The draft this follows is not final; the shape may change with it.
             * @constant
             */
            experimental: true;
            /** @constant */
            role: "facilitator";
            /** @description The routes, as paths on this origin. */
            endpoints: {
                /** @constant */
                verify: "/verify";
                /** @constant */
                settle: "/settle";
                /** @constant */
                supported: "/supported";
                /** @constant */
                discovery: "/discovery/resources";
                /** @constant */
                search: "/discovery/search";
                /** @constant */
                openapi: "/openapi.yaml";
            };
            supported: components["schemas"]["SupportedResponse"];
        };
        /**
         * @description What to check (POST /discovery/validate). With `toolName` the target is an MCP tool, else an
         *     HTTP route; `method` is for HTTP routes only, so a body with both is refused (400).
         */
        ValidateRequest: {
            /** @description The resource URL a buyer calls (for an MCP tool, its streamable-HTTP endpoint); svc asks it in its canonical form, without its query or fragment. */
            url: string;
            /**
             * @description HTTP method of the route (default GET); not with `toolName`.
             * @enum {string}
             */
            method?: "GET" | "HEAD" | "DELETE" | "POST" | "PUT" | "PATCH";
            /** @description The MCP tool to call unpaid, with svc's neutral arguments; makes the target an MCP tool. */
            toolName?: string;
        };
        ValidateResponse: {
            index: components["schemas"]["ListingIndexStatus"];
            /**
             * @description The ownership checks of settlements for this identity that svc still holds (docs/CATALOG.md
             *     "Ownership and refresh"), latest first: a settlement that would create the listing or give
             *     it a new owner is listed only once the resource's own server names its payTo. `processing`:
             *     the check has not finished (seconds); `rejected`: it failed, with the code and the reason
             *     a later settlement to that payTo answers while it is remembered. A check that passed leaves
             *     nothing here: the listing shows it. Empty when there is none.
             */
            ownership: components["schemas"]["OwnershipCheck"][];
            /** @description True when a settlement with the terms of the live 402 would list the resource (no problem found). */
            wouldList: boolean;
            /** @description The item such a settlement would store (present when `wouldList` is true). */
            listing?: components["schemas"]["DiscoveryResource"];
            /** @description Every problem found, in the order of the checks; empty when `wouldList` is true. */
            problems: {
                code: components["schemas"]["ValidateCode"] | components["schemas"]["BazaarCode"];
                /** @description The cause, and the fix where there is one. */
                reason: string;
            }[];
            /**
             * @description The checks run, in order (`reachable`, `payment_required`, `settleable_accept`,
             *     `bazaar_declared`, `catalog_rules`); a check after a failed one that needs its result is
             *     not run and not listed.
             */
            checks: {
                /** @enum {string} */
                name: "reachable" | "payment_required" | "settleable_accept" | "bazaar_declared" | "catalog_rules";
                ok: boolean;
                detail: string;
            }[];
        };
        OwnershipCheck: {
            /** @description The settled payTo that would own the listing. */
            payTo: string;
            /** @enum {string} */
            status: "processing" | "rejected";
            /**
             * Format: date-time
             * @description The last settlement to this payTo for the identity.
             */
            settledAt: string;
            /**
             * Format: date-time
             * @description When the resource's server was last asked; null while the first check runs.
             */
            checkedAt: string | null;
            code?: components["schemas"]["BazaarCode"];
            /** @description With `rejected`, what the resource's own server answered. */
            reason?: string;
            /**
             * Format: date-time
             * @description With `rejected`, from when a settlement to this payTo has its origin asked again (until then it answers `rejected`).
             */
            retryAfter?: string;
        };
        /**
         * @description Whether the resource is listed now (the CDP Bazaar's `index`): the listing of this identity
         *     (the canonical URL of the live 402's resource, else of `url`; `type`; `toolName`) as list and
         *     search show it. Independent of `wouldList`, which judges the live 402.
         */
        ListingIndexStatus: {
            /** @description The listing is in list and search now. */
            active: boolean;
            /**
             * @description Null when `active`. `not_listed`: no listing of this identity (never settled through svc,
             *     or withdrawn by its owner). `expired`: no settlement for LISTING_TTL_DAYS (the next one
             *     lists it again). `liveness`: its liveness checks have failed for longer than
             *     LIVENESS_GRACE_HOURS (a passing check or a settlement lists it again).
             */
            hiddenBy: null | ("not_listed" | "expired" | "liveness");
            /** @description The listing's quality signals (null when there is no listing). */
            quality: null | components["schemas"]["ListingQuality"];
            /** @description The listing's last liveness check (null when there is no listing or it was never checked). */
            liveness: null | components["schemas"]["ListingLiveness"];
        };
        /**
         * @description The 11 codes of POST /discovery/validate beyond BazaarCode: its problems' codes for what the live 402 lacks, and its rate limit (429).
         *
         *     - `svc_validate_rate_limited`: Too many validate requests from this address or from everyone (VALIDATE_RATE_PER_MINUTE, VALIDATE_GLOBAL_PER_MINUTE); retry after Retry-After seconds.
         *     - `svc_validate_url_invalid`: The url is not an absolute http(s) URL without credentials, or its host may imitate another.
         *     - `svc_validate_target_forbidden`: The target is, or resolves to, a loopback, private, link-local, multicast or metadata address; ALLOW_PRIVATE_TARGETS allows one in development.
         *     - `svc_validate_redirect_refused`: The target answered with a redirect; svc's checks follow none (each hop would be one more request of the host, and a buyer pays the URL it is given).
         *     - `svc_validate_unreachable`: The target did not answer within the time bound, or is not a working MCP streamable-HTTP endpoint.
         *     - `svc_validate_no_payment_required`: The unpaid request was answered without asking for payment (no 402), so a buyer never pays.
         *     - `svc_validate_payment_required_invalid`: The target answered with an error, or a 402 without a PaymentRequired @x402/core can decode (PAYMENT-REQUIRED header or JSON body).
         *     - `svc_validate_no_settleable_accept`: No entry of `accepts` is one svc can settle (scheme, network, asset; GET /supported).
         *     - `svc_validate_no_bazaar_extension`: The 402 declares no `bazaar` extension, so a settlement would list nothing.
         *     - `svc_validate_origin_paced`: svc asked this host less than PROBE_HOST_INTERVAL_SECONDS ago (its checks, validate and re-checks together ask one host at most once in that time), or the route answered svc's safe request as one that answers only its declared method; nothing more was requested. Ask again after the time in the reason.
         *     - `svc_validate_not_judged`: svc could not judge the seller schema now (busy); nothing is wrong with the listing yet. Retry shortly.
         * @enum {string}
         */
        ValidateCode: "svc_validate_rate_limited" | "svc_validate_url_invalid" | "svc_validate_target_forbidden" | "svc_validate_redirect_refused" | "svc_validate_unreachable" | "svc_validate_no_payment_required" | "svc_validate_payment_required_invalid" | "svc_validate_no_settleable_accept" | "svc_validate_no_bazaar_extension" | "svc_validate_origin_paced" | "svc_validate_not_judged";
        /**
         * @description A withdrawal signed by the listing's owner (POST /discovery/delist). `resource`, `type` and
         *     `toolName` name the listing exactly as discovery shows it; none may hold a control character
         *     (the signed message is line-based).
         */
        DelistRequest: {
            /** @description The listing's canonical resource URL, as GET /discovery/resources shows it. */
            resource: string;
            /** @description The listing's type (`http` or `mcp`). */
            type: string;
            /** @description The MCP tool's name; "" for an http listing. */
            toolName: string;
            /** @description The owner's account address (G…), the key that signed. */
            payTo: string;
            /**
             * Format: date-time
             * @description The `issuedAt` of the signed text (RFC 3339, as GET /discovery/delist gave it); at most 5
             *     minutes before svc's clock and at most 1 minute after it.
             */
            issuedAt: string;
            /**
             * @description The catalog the text was signed for (`catalog` of GET /discovery/delist). Optional: when
             *     given and not this catalog's, the request is refused with `svc_delist_other_catalog`.
             */
            catalog?: string;
            /** @description The base64 of the 64-byte SEP-53 signature by `payTo` of the text GET /discovery/delist hands out. */
            signature: string;
        };
        /** @description The text to sign to withdraw a listing from this catalog (GET /discovery/delist). */
        DelistText: {
            /**
             * @description The exact text to sign (SEP-53), eight lines joined by "\n": `svc delist`, `catalog <id>`,
             *     `network <network>`, type, resource, toolName, payTo, issuedAt.
             * @example svc delist
             *     catalog 0b7f4c52-8d0e-4c1a-9a53-2f1d6c9e4b10
             *     network stellar:testnet
             *     http
             *     https://api.example.com/weather
             *
             *     GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H
             *     2026-11-25T10:00:00.000Z
             */
            message: string;
            /**
             * Format: date-time
             * @description The time the text names (svc's clock when it was issued); send it back unchanged.
             */
            issuedAt: string;
            /** @description This catalog's identifier, created with its database and shared by every instance on it. */
            catalog: string;
            /**
             * @description The network svc settles (CAIP-2).
             * @example stellar:testnet
             */
            network: string;
        };
        DelistResponse: {
            /**
             * @description The listing was withdrawn from list and search.
             * @constant
             */
            delisted: true;
        };
        /** @description What POST /discovery/recheck's check of the claim found. */
        RecheckResponse: {
            /**
             * @description `listed`: the resource's server named `payTo`; the listing is in list and search.
             *     `rejected`: the check failed (`check` has its code and reason). `processing`: not
             *     checked within the wait (the host's next slot, or a retry after an answer svc could not
             *     use); `reason` says when svc asks.
             * @enum {string}
             */
            status: "listed" | "rejected" | "processing";
            /** @description What svc asked and what it found, or when it asks. */
            reason: string;
            check?: components["schemas"]["OwnershipCheck"];
        };
        /**
         * @description The 8 codes of the signed discovery requests: why POST /discovery/delist refused a withdrawal (and its rate limit, 429), and why POST /discovery/recheck refused a re-check (its signature is checked with the same codes).
         *
         *     - `svc_delist_rate_limited`: Too many delist requests from this client address (DELIST_RATE_PER_MINUTE); nothing was changed. Retry after Retry-After seconds.
         *     - `svc_delist_stale`: issuedAt is more than 5 minutes before svc's clock or more than 1 minute after it (the allowed clock skew); sign the text GET /discovery/delist hands out, issued now.
         *     - `svc_delist_signature_invalid`: signature is not the SEP-53 signature by payTo of the delist text naming this catalog (GET /discovery/delist; another key signed, or another text); nothing was changed.
         *     - `svc_delist_other_catalog`: The message was signed for another catalog (the body's catalog is not this catalog's identifier); nothing was changed. Sign the text this catalog's GET /discovery/delist hands out.
         *     - `svc_delist_unknown_listing`: No listing has this resource, type and toolName; the reason names the listings at that URL, if any (copy them from the listing as discovery shows it).
         *     - `svc_delist_not_owner`: payTo is not the listing's owner (by default the payTo the resource's own server names in its 402, as svc checked it; docs/CATALOG.md "Ownership and refresh"); nothing was changed.
         *     - `svc_delist_replayed`: A withdrawal of this listing signed at issuedAt or later was already accepted; a signed message withdraws once. Sign a new one with the current time.
         *     - `svc_recheck_no_claim`: payTo holds no pending or rejected claim on this listing that svc can check again (POST /discovery/recheck); nothing was requested. A settlement with the bazaar extension makes one.
         * @enum {string}
         */
        DelistCode: "svc_delist_rate_limited" | "svc_delist_stale" | "svc_delist_signature_invalid" | "svc_delist_other_catalog" | "svc_delist_unknown_listing" | "svc_delist_not_owner" | "svc_delist_replayed" | "svc_recheck_no_claim";
        /** @description A catalog listing (docs/CATALOG.md). Additional properties are allowed. */
        DiscoveryResource: {
            /** @description Canonical URL (origin + routeTemplate or pathname; query and fragment stripped). */
            resource: string;
            /** @description Resource type, e.g. `http` or `mcp`. */
            type: string;
            x402Version: number;
            /** @description Requirements observed at settle time; advisory only. */
            accepts: components["schemas"]["PaymentRequirements"][];
            /**
             * Format: date-time
             * @description ISO 8601 timestamp of the last settlement that touched the listing.
             */
            lastUpdated: string;
            description?: string;
            mimeType?: string;
            serviceName?: string;
            tags?: string[];
            iconUrl?: string;
            /** @description The echoed `bazaar` extension including `info.input`. */
            extensions?: {
                [key: string]: unknown;
            };
            quality: components["schemas"]["ListingQuality"];
            /** @description The last liveness check of this listing (docs/CATALOG.md "Liveness"): svc asks the resource again, unpaid, whether it still answers a live 402 naming the listing's payTo. null when it was never checked, or not since a settlement that followed failed checks (a settlement is itself evidence that the resource answers). */
            liveness: components["schemas"]["ListingLiveness"] | null;
        } & {
            [key: string]: unknown;
        };
        /** @description The result of svc's last unpaid check of a listed resource (docs/CATALOG.md "Liveness"). A listing whose checks have failed for longer than LIVENESS_GRACE_HOURS is left out of list and search until a check passes or it is paid again. */
        ListingLiveness: {
            /**
             * @description `live`: a 402 with an accepted term naming the listing's payTo. `terms_changed`: a 402 naming only other payTos. `not_payable`: an answer without a payment request (a free answer, an error status, a 402 without a valid PaymentRequired). `unreachable`: no answer in time, a refused connection, an address the guard refuses, or a redirect off the origin.
             * @enum {string}
             */
            status: "live" | "unreachable" | "not_payable" | "terms_changed";
            /**
             * Format: date-time
             * @description RFC 3339 time of the check.
             */
            checkedAt: string;
        };
        /** @description Evidence of demand, from the settlements svc itself made for this listing (docs/CATALOG.md "Quality signals"). The window is the last 30 days, counted in whole UTC days (today and the 29 days before it). Names as other bazaar discovery APIs return them. */
        ListingQuality: {
            /** @description Settled payments for this listing in the window. */
            l30DaysTotalCalls: number;
            /** @description Distinct payer addresses among those payments. */
            l30DaysUniquePayers: number;
            /**
             * Format: date-time
             * @description RFC 3339 time of the listing's last settled payment (for listings written before these signals were kept, its last settlement).
             */
            lastCalledAt: string;
        };
        /** @description One page of the catalog, offset-paged, newest first (docs/CATALOG.md). */
        DiscoveryListResponse: {
            x402Version: number;
            items: components["schemas"]["DiscoveryResource"][];
            pagination: {
                /** @description The page size this page was served with (the `limit` asked for, clamped; fewer when the page was shrunk to stay within 4 MiB). */
                limit: number;
                /** @description Start of this page. */
                offset: number;
                /** @description Total listings matching the filters; with `partialResults` true, the matches the `url` filter's walk found (more than `offset` + `limit` when it stopped with another match). */
                total: number;
            };
            /** @description Present exactly when `url` is given. True when more than 500 listings hold `url` (more than the URL index is read for), so the page and `total` are the matches a walk of the listings in page order found (those holding the other filters' list key that the fewest listings hold, or every listing without one): it stops at the page and one more match, or after 4,000 listings (a common substring fills its first pages; deeper or sparser matches may be missing); false when page and total are exact (docs/CATALOG.md "List"). */
            partialResults?: boolean;
        };
        /** @description One page of a seller's listings, offset-paged, newest first (GET /discovery/merchant). */
        DiscoveryMerchantResponse: {
            x402Version: number;
            /** @description The seller asked for. */
            payTo: string;
            resources: components["schemas"]["DiscoveryResource"][];
            pagination: {
                /** @description The page size this page was served with (the `limit` asked for, clamped; fewer when the page was shrunk to stay within 4 MiB). */
                limit: number;
                /** @description Start of this page. */
                offset: number;
                /** @description The seller's visible listings. */
                total: number;
            };
        };
        /** @description One page of search results, ranked, cursor-paged (docs/CATALOG.md). */
        DiscoverySearchResponse: {
            x402Version: number;
            /** @description Best first by relevance; each result says how it matched (`match`). */
            resources: (components["schemas"]["DiscoveryResource"] & {
                match?: components["schemas"]["SearchMatch"];
            })[];
            /**
             * @description How well the page answers the query: its best result's `match.relevance`. `none`: no
             *     listing holds an informative word of the query (or no listing matched at all): the
             *     catalog most likely has no such service, and any results are incidental. `weak`: the
             *     best result holds some of what was asked; `strong`: it holds a large share of it.
             * @enum {string}
             */
            relevance: "strong" | "weak" | "none";
            /**
             * @description True exactly when matches were truncated from this response: another page follows
             *     (`pagination.cursor`), or the search stopped at its work budget (`searchMethod`
             *     `text_partial`), where matches outside what it examined may be missing.
             */
            partialResults: boolean;
            pagination: {
                /**
                 * @description The page size this page was served with, as on the list: the `limit` asked for
                 *     (clamped to [1, 100]), or fewer when the page was shrunk to stay within 4 MiB. A page
                 *     holds at most this many results; fewer (even none) on the final page.
                 */
                limit: number;
                /** @description Opaque cursor for the next page; null on the final page. */
                cursor: string | null;
            };
            /**
             * @description How the page was searched (the CDP Bazaar's field). `text`: the rank over the
             *     listings' text (above, docs/CATALOG.md "Ranking") with every content word of the
             *     query found in the index. `text_budgeted`: the same rank
             *     over `searchedTerms` only; the search budget left out `droppedTerms` (docs/CATALOG.md
             *     "The search budget"). `text_partial`: a filtered search that neither its text nor its
             *     filters narrow stopped at its work budget: the page ranks, by the same rank, the
             *     listings passing the filters among the searched terms' first 4,000 index rows, so
             *     better matches may be missing (`partialResults` is true; docs/CATALOG.md "Search with
             *     filters"). `url`: no listing's text holds a query term under the filters, so the
             *     listings whose resource URL holds `searchedTerms` as host labels or path segments are
             *     ranked, most terms first (docs/CATALOG.md "When the text finds nothing"). Every page of
             *     a cursor walk searches as its first page did.
             * @enum {string}
             */
            searchMethod: "text" | "text_budgeted" | "url" | "text_partial";
            /**
             * @description The terms the rank is computed over (lowercased, diacritics removed, at most 64
             *     characters each), rarest first. A query term in neither list is found in no listing
             *     (then searched by its meaning alone: docs/CATALOG.md "Ranking"), or is a function word
             *     (not searched).
             */
            searchedTerms: string[];
            /** @description The query terms found in listings that the search budget left out, in query order. */
            droppedTerms: string[];
        };
        /**
         * @description How a search result matched its query (docs/CATALOG.md "Ranking"): the query words it
         *     holds, how, and where, and the share of the query's informative weight it holds.
         */
        SearchMatch: {
            /**
             * @description `strong`: it holds at least 35% of the query's weight (`score`). `weak`: less, but at
             *     least one informative word (not one most listings hold) in its own or another form.
             *     `none`: only related words or words most listings hold; or found by its URL alone
             *     (`weak` then, since a URL term was asked for).
             * @enum {string}
             */
            relevance: "strong" | "weak" | "none";
            /**
             * @description The share of the query's weight this result holds: each content word of the query
             *     weighs its idf (rare words more; words no listing holds count too), counted whole for
             *     the word itself, 0.9 for another form of it, 0.4 for a related word.
             */
            score: number;
            /** @description The query words it holds, each once. */
            terms: {
                /** @description The query word (lowercased, diacritics removed). */
                term: string;
                /**
                 * @description `exact`: the word itself; `stem`: another form of it (same English stem);
                 *     `related`: a word related by meaning (WordNet 3.1: a synonym, derived or broader word;
                 *     or one of its nearest words in GloVe word vectors).
                 * @enum {string}
                 */
                match: "exact" | "stem" | "related";
                /** @description Where it holds it (`params`: the input parameters' text; `resource`: the URL, for `url` answers). */
                fields: ("serviceName" | "tags" | "description" | "params" | "resource")[];
            }[];
        };
        /** @description A journaled settlement, limited to what the chain publishes (docs/OPERATIONS.md). */
        SettlementRecord: {
            transaction: string;
            network: string;
            /** @enum {string} */
            state: "submitted" | "settled" | "failed" | "unknown";
            payer: string;
            payTo: string;
            asset: string;
            amount: string;
            submitter: string;
            /** @description The fee ceiling the transaction declared (the chain charges at most this). */
            feeStroops: string;
            /** @description Unix seconds; the transaction cannot land after this. */
            validUntil: number;
            history: {
                /** @enum {string} */
                state: "submitted" | "settled" | "failed" | "unknown";
                /** Format: date-time */
                at: string;
            }[];
        };
        /**
         * @description One JSON-RPC 2.0 message as the MCP transport reads it (POST /mcp): a request (`id` and
         *     `method`), a notification (`method`, no `id`), or a response (`id` and `result`, or
         *     `error`). No other member is allowed at the top; `params` and `result` are objects.
         *     Request ids and error codes are integers within ±(2^53 − 1) or, for ids, strings. No object
         *     key `"__proto__"` at any depth (NoPrototypeKeys, in `params`, `result` and `error`).
         */
        JsonRpcMessage: {
            /** @constant */
            jsonrpc: "2.0";
            id: components["schemas"]["JsonRpcId"];
            method: string;
            params?: components["schemas"]["JsonRpcParams"];
        } | {
            /** @constant */
            jsonrpc: "2.0";
            method: string;
            params?: components["schemas"]["JsonRpcParams"];
        } | {
            /** @constant */
            jsonrpc: "2.0";
            id: components["schemas"]["JsonRpcId"];
            result: components["schemas"]["JsonRpcParams"];
        } | {
            /** @constant */
            jsonrpc: "2.0";
            id?: components["schemas"]["JsonRpcId"];
            error: ({
                code: number;
                message: string;
                data?: unknown;
            } & {
                [key: string]: unknown;
            }) & components["schemas"]["NoPrototypeKeys"];
        };
        /** @description A JSON-RPC request id as MCP allows it (no null, no fraction). */
        JsonRpcId: string | number;
        /** @description `params` of a request or notification, `result` of a response: an object whose `_meta`, when present, is MCP's; no key `__proto__` at any depth. */
        JsonRpcParams: ({
            _meta?: {
                progressToken?: components["schemas"]["JsonRpcId"];
                "io.modelcontextprotocol/related-task"?: {
                    taskId: string;
                } & {
                    [key: string]: unknown;
                };
            } & {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        }) & components["schemas"]["NoPrototypeKeys"];
        /** @description A JSON-RPC 2.0 result, the answer to a request of POST /mcp. */
        JsonRpcResultResponse: {
            /** @constant */
            jsonrpc: "2.0";
            id: components["schemas"]["JsonRpcId"];
            result: {
                [key: string]: unknown;
            };
        };
        /**
         * @description A JSON-RPC 2.0 error answered by POST /mcp: in a 200 for a request svc read (unknown method
         *     or tool, invalid params: `id` is the request's), or as the body of a transport refusal
         *     (400, 406, 415: `id` is null). `code` is the JSON-RPC error code, `message` says why.
         */
        JsonRpcErrorAnswer: {
            /** @constant */
            jsonrpc: "2.0";
            id: components["schemas"]["JsonRpcId"] | null;
            error: {
                code: number;
                message: string;
                data?: unknown;
            } & {
                [key: string]: unknown;
            };
        };
        /** @description Non-payment errors (the service envelope). Additional properties are allowed. */
        ErrorEnvelope: {
            error: {
                code: components["schemas"]["ServiceCode"] | components["schemas"]["SettlementCode"] | components["schemas"]["ValidateCode"] | components["schemas"]["DelistCode"];
                reason: string;
            } & {
                [key: string]: unknown;
            };
        } & {
            [key: string]: unknown;
        };
        ReadinessResponse: {
            /** @enum {string} */
            status: "ready" | "not_ready";
            checks: {
                [key: string]: {
                    ok: boolean;
                    detail: string;
                };
            };
            /** @description Each served network's state (its own checks and the shared ones pass); with `network`, that one alone. */
            networks?: {
                [key: string]: {
                    /** @enum {string} */
                    status: "ready" | "not_ready";
                };
            };
        };
        /** @description Liveness. Public addresses only; seeds and secrets never appear. */
        HealthResponse: {
            /** @enum {string} */
            status: "ok";
            x402Version: number;
            /** @description The served network, or every one comma-separated as NETWORK lists them (`stellar:testnet,stellar:pubnet`). */
            network: string;
            /** @description Every served network's submitter addresses. */
            submitters?: string[];
            feeBumpAddress?: string | null;
            port?: number;
            feeMode?: string;
            maxTransactionFeeStroops?: number;
            /** @description Present when svc serves several networks (`NETWORK` a list, docs/OPERATIONS.md "Several networks"), each with its own signers and fee ceiling. `network` above lists every network (comma-separated, as NETWORK does) and `submitters` every network's; `feeBumpAddress` and `maxTransactionFeeStroops` above are the first network's. */
            networks?: {
                network: string;
                submitters: string[];
                feeBumpAddress: string | null;
                maxTransactionFeeStroops: number;
            }[];
        };
        /**
         * @description The 30 scheme codes of the verify path, passed through verbatim in `invalidReason`; they also appear in `errorReason` on settle via re-verification.
         *
         *     - `invalid_x402_version`: The payload declares an unsupported protocol version.
         *     - `unsupported_scheme`: The scheme in the payload or the requirements is not `exact`.
         *     - `network_mismatch`: paymentPayload.accepted.network differs from paymentRequirements.network.
         *     - `invalid_network`: The network is not a known Stellar network.
         *     - `invalid_exact_stellar_payload_malformed`: payload.transaction is missing or is not decodable transaction XDR.
         *     - `invalid_exact_stellar_payload_wrong_operation`: The transaction does not have exactly one invoke-host-function operation invoking a contract.
         *     - `invalid_exact_stellar_payload_unsafe_tx_or_op_source`: The transaction or operation source is a facilitator signing address.
         *     - `invalid_exact_stellar_payload_wrong_asset`: The invoked contract differs from the required asset.
         *     - `invalid_exact_stellar_payload_wrong_function_name`: The invocation is not `transfer` with exactly three arguments.
         *     - `invalid_exact_stellar_payload_facilitator_is_payer`: The transfer `from` is a facilitator signing address.
         *     - `invalid_exact_stellar_payload_wrong_recipient`: The transfer `to` differs from payTo.
         *     - `invalid_exact_stellar_payload_wrong_amount`: The transfer amount differs from the required amount.
         *     - `invalid_exact_stellar_payload_simulation_failed`: Re-simulation against the current ledger state did not succeed.
         *     - `invalid_exact_stellar_payload_fee_exceeds_maximum`: The derived settlement fee exceeds the configured ceiling.
         *     - `invalid_exact_stellar_payload_event_not_transfer`: A simulated event is not a SEP-41 transfer event.
         *     - `invalid_exact_stellar_payload_event_missing_contract_id`: A transfer event has no contract id.
         *     - `invalid_exact_stellar_payload_event_wrong_asset`: A transfer event came from a contract other than the asset.
         *     - `invalid_exact_stellar_payload_no_transfer_events`: The simulation emitted no transfer event.
         *     - `invalid_exact_stellar_payload_multiple_transfers`: The simulation emitted more than one transfer event.
         *     - `invalid_exact_stellar_payload_event_wrong_from`: The simulated debit is from an address other than the payer.
         *     - `invalid_exact_stellar_payload_event_wrong_to`: The simulated credit is to an address other than payTo.
         *     - `invalid_exact_stellar_payload_event_wrong_amount`: The simulated amount differs from the required amount.
         *     - `invalid_exact_stellar_payload_no_auth_entries`: The operation carries no authorization entries.
         *     - `invalid_exact_stellar_payload_unsupported_credential_type`: An authorization entry uses credentials other than address credentials.
         *     - `invalid_exact_stellar_payload_facilitator_in_auth`: A facilitator address appears in an authorization entry.
         *     - `invalid_exact_stellar_signature_expiration_too_far`: An authorization entry expires beyond the allowed ledger bound.
         *     - `invalid_exact_stellar_payload_has_subinvocations`: An authorization entry authorizes sub-invocations beyond the transfer.
         *     - `invalid_exact_stellar_payload_missing_payer_signature`: The payer's authorization entry is unsigned.
         *     - `invalid_exact_stellar_payload_unexpected_pending_signatures`: An authorization entry still awaits a signature.
         *     - `unexpected_verify_error`: An unexpected error occurred inside the scheme while verifying.
         * @enum {string}
         */
        VerifyCode: "invalid_x402_version" | "unsupported_scheme" | "network_mismatch" | "invalid_network" | "invalid_exact_stellar_payload_malformed" | "invalid_exact_stellar_payload_wrong_operation" | "invalid_exact_stellar_payload_unsafe_tx_or_op_source" | "invalid_exact_stellar_payload_wrong_asset" | "invalid_exact_stellar_payload_wrong_function_name" | "invalid_exact_stellar_payload_facilitator_is_payer" | "invalid_exact_stellar_payload_wrong_recipient" | "invalid_exact_stellar_payload_wrong_amount" | "invalid_exact_stellar_payload_simulation_failed" | "invalid_exact_stellar_payload_fee_exceeds_maximum" | "invalid_exact_stellar_payload_event_not_transfer" | "invalid_exact_stellar_payload_event_missing_contract_id" | "invalid_exact_stellar_payload_event_wrong_asset" | "invalid_exact_stellar_payload_no_transfer_events" | "invalid_exact_stellar_payload_multiple_transfers" | "invalid_exact_stellar_payload_event_wrong_from" | "invalid_exact_stellar_payload_event_wrong_to" | "invalid_exact_stellar_payload_event_wrong_amount" | "invalid_exact_stellar_payload_no_auth_entries" | "invalid_exact_stellar_payload_unsupported_credential_type" | "invalid_exact_stellar_payload_facilitator_in_auth" | "invalid_exact_stellar_signature_expiration_too_far" | "invalid_exact_stellar_payload_has_subinvocations" | "invalid_exact_stellar_payload_missing_payer_signature" | "invalid_exact_stellar_payload_unexpected_pending_signatures" | "unexpected_verify_error";
        /**
         * @description The 7 scheme codes of the settle path, in `errorReason`.
         *
         *     - `verification_failed`: The independent re-verification inside settle did not pass.
         *     - `settle_exact_stellar_signer_selection_failed`: No signing account could be selected.
         *     - `settle_exact_stellar_transaction_signing_failed`: Signing the rebuilt transaction failed.
         *     - `settle_exact_stellar_fee_bump_signing_failed`: Signing the fee-bump wrapper failed.
         *     - `settle_exact_stellar_transaction_submission_failed`: The network rejected the submission.
         *     - `settle_exact_stellar_transaction_failed`: The transaction was submitted but did not reach SUCCESS on-chain.
         *     - `unexpected_settle_error`: An unexpected error occurred inside the scheme while settling.
         * @enum {string}
         */
        SettleCode: "verification_failed" | "settle_exact_stellar_signer_selection_failed" | "settle_exact_stellar_transaction_signing_failed" | "settle_exact_stellar_fee_bump_signing_failed" | "settle_exact_stellar_transaction_submission_failed" | "settle_exact_stellar_transaction_failed" | "unexpected_settle_error";
        /**
         * @description The 16 service envelope codes.
         *
         *     - `svc_malformed_request_body`: The request body is absent, not valid JSON, or not a JSON object.
         *     - `svc_missing_payment_payload`: The request has no paymentPayload object.
         *     - `svc_missing_payment_requirements`: The request has no paymentRequirements object.
         *     - `svc_unsupported_x402_version`: paymentPayload.x402Version is not served by this facilitator.
         *     - `svc_unsupported_kind`: The (scheme, network) pair is not advertised; check GET /supported.
         *     - `svc_unknown_route`: No route is mounted at this method and path.
         *     - `svc_invalid_query_parameter`: limit or offset is not a non-negative integer, a parameter is repeated or undeclared, or the search query exceeds 2,048 characters.
         *     - `svc_missing_search_query`: The search query is missing or blank.
         *     - `svc_invalid_search_cursor`: The cursor was not issued for this query and filter combination; restart without a cursor.
         *     - `svc_internal_error`: The service failed; this says nothing about payment validity.
         *     - `svc_request_timeout`: The request head or body did not arrive within the configured timeouts; the connection is closed.
         *     - `svc_catalog_busy`: The catalog is overloaded (queue full or deadline passed); retry shortly.
         *     - `svc_catalog_unavailable`: The catalog database cannot be used (it could not be opened, its file was deleted, replaced or made read-only, or its PostgreSQL server cannot be reached); GET /ready names the cause. Payments are unaffected.
         *     - `svc_payment_identifier_invalid`: The payment-identifier extension in paymentPayload.extensions is malformed (its info needs a boolean `required` and an id of 16-128 letters, digits, `-` or `_`); nothing was verified or submitted.
         *     - `svc_rate_limited`: Too many requests from this client to a rate-limited route (POST /mcp: MCP_RATE_PER_MINUTE; POST /verify and POST /settle: VERIFY_RATE_PER_MINUTE and SETTLE_RATE_PER_MINUTE when set); retry after Retry-After seconds.
         *     - `svc_origin_not_allowed`: The request's Origin is not in MCP_ALLOWED_ORIGINS, or (that unset) names another host than POST /mcp answers while svc listens on loopback or MCP_ALLOWED_HOSTS is set.
         *     - `svc_host_not_allowed`: The request's Host is not a loopback name while svc listens on loopback, or not in MCP_ALLOWED_HOSTS when set: POST /mcp's DNS-rebinding protection.
         * @enum {string}
         */
        ServiceCode: "svc_malformed_request_body" | "svc_missing_payment_payload" | "svc_missing_payment_requirements" | "svc_unsupported_x402_version" | "svc_unsupported_kind" | "svc_unknown_route" | "svc_invalid_query_parameter" | "svc_missing_search_query" | "svc_invalid_search_cursor" | "svc_internal_error" | "svc_request_timeout" | "svc_catalog_busy" | "svc_catalog_unavailable" | "svc_payment_identifier_invalid" | "svc_rate_limited" | "svc_origin_not_allowed" | "svc_host_not_allowed";
        /**
         * @description Settlement journal, payment policy and fee budget codes (docs/OPERATIONS.md), in `errorReason` of a SettleResponse; `svc_settlement_not_found` and `svc_invalid_transaction_hash` in the ErrorEnvelope of GET /settlements/{transaction}. Policy and budget refusals happen before submission and cost no fee.
         *
         *     - `svc_settlement_outcome_unknown`: This payment is being settled by another request right now (or, with no journal, the RPC could not confirm its outcome in time); retry later with the same Idempotency-Key.
         *     - `settlement_pending`: The transaction was submitted and its outcome is not confirmed yet; `transaction` is its hash. Send the same request again (the x402 SDKs do, once) to get the outcome; it is never submitted twice.
         *     - `svc_idempotency_key_conflict`: The Idempotency-Key or payment-identifier id was first used with another payment or other requirements (HTTP 409); nothing was submitted.
         *     - `svc_policy_self_payment`: The payer is the payTo address; self-payments are refused.
         *     - `svc_policy_amount_below_minimum`: The amount is below the configured minimum for this asset.
         *     - `svc_policy_authorization_expiring`: An authorization entry expires fewer than 2 ledgers after the latest one, too soon for the transaction to be included before it; nothing was submitted. Sign with a later expiry.
         *     - `svc_policy_payer_balance_archived`: The payer's balance entry of the asset is archived (its TTL ran out); nothing was submitted. The payer restores it (a RestoreFootprint transaction) and pays again; svc does not sponsor restores.
         *     - `svc_fee_budget_daily_exhausted`: Today's sponsored-fee budget is spent; nothing was submitted.
         *     - `svc_fee_budget_payer_exhausted`: This payer's share of today's sponsored-fee budget is spent; nothing was submitted.
         *     - `svc_fee_budget_payto_exhausted`: Today's sponsored-fee budget for payments to this payTo address is spent (smaller for an address without history); nothing was submitted.
         *     - `svc_fee_budget_new_paytos_exhausted`: Today's sponsored-fee budget shared by payTo addresses without history is spent; nothing was submitted. Addresses paid before today are not affected.
         *     - `svc_policy_payer_cooling_down`: Too many of this payer's recent settlements failed on chain; its payments are refused until the failures leave the window; nothing was submitted.
         *     - `svc_journal_unavailable`: The settlement journal cannot record the payment now (storage full, read-only or unreachable, or its file deleted or replaced); nothing was submitted.
         *     - `svc_settlement_not_found`: The journal has no settlement with this transaction hash.
         *     - `svc_invalid_transaction_hash`: The value in the path of GET /settlements/{transaction} is not 64 hexadecimal characters; no settlement has it.
         * @enum {string}
         */
        SettlementCode: "svc_settlement_outcome_unknown" | "settlement_pending" | "svc_idempotency_key_conflict" | "svc_policy_self_payment" | "svc_policy_amount_below_minimum" | "svc_policy_authorization_expiring" | "svc_policy_payer_balance_archived" | "svc_fee_budget_daily_exhausted" | "svc_fee_budget_payer_exhausted" | "svc_fee_budget_payto_exhausted" | "svc_fee_budget_new_paytos_exhausted" | "svc_policy_payer_cooling_down" | "svc_journal_unavailable" | "svc_settlement_not_found" | "svc_invalid_transaction_hash";
        /**
         * @description The settlement codes that are payment policy or fee budget refusals (docs/OPERATIONS.md): POST /settle answers them before submission (`errorReason`, SettlementCode) and POST /verify answers the same code for the same payment (`invalidReason`).
         * @enum {string}
         */
        PolicyCode: "svc_policy_self_payment" | "svc_policy_amount_below_minimum" | "svc_policy_authorization_expiring" | "svc_policy_payer_balance_archived" | "svc_fee_budget_daily_exhausted" | "svc_fee_budget_payer_exhausted" | "svc_fee_budget_payto_exhausted" | "svc_fee_budget_new_paytos_exhausted" | "svc_policy_payer_cooling_down";
        /**
         * @description The 14 catalog soft-drop codes; they appear only inside the `bazaar` object of the `EXTENSION-RESPONSES` header of /settle, never in a payment response.
         *
         *     - `bazaar_extension_not_object`: The bazaar extension is not an object with `info` and `schema`.
         *     - `bazaar_extensions_too_large`: The extensions block is larger than 64 KiB.
         *     - `bazaar_spec_validation_failed`: The bazaar extension violates the protocol invariants.
         *     - `bazaar_schema_validation_failed`: `info` does not validate against the client-supplied schema.
         *     - `bazaar_schema_too_complex`: The client schema exceeds the caps (2000 nodes, 64 levels, 8 costly keywords, 64 references), refers to itself without descending into the data, or ran out of its validation time budget.
         *     - `bazaar_resource_url_invalid`: resource.url is not an absolute http(s) URL without credentials, or its host is a loopback, private, link-local, multicast or metadata address literal, or an internationalized name that may imitate another host (mixed scripts, a Latin look-alike script).
         *     - `bazaar_listing_owned_by_other_payee`: The listing is owned by a different payTo; nothing was written.
         *     - `bazaar_description_too_long`: The description is longer than 2048 characters.
         *     - `bazaar_accepts_too_large`: The accepted terms exceed 2048 bytes of JSON, or the listing already carries 32 distinct terms.
         *     - `bazaar_origin_names_other_payee`: The resource's own server, asked unpaid with svc's check request, answered a 402 whose accepts do not name this payTo; nothing was listed.
         *     - `bazaar_origin_not_payable`: The resource's own server, asked unpaid with svc's check request, answered without a usable 402 (a free answer, an error, or a 402 without a valid PaymentRequired); nothing was listed.
         *     - `bazaar_origin_unreachable`: The resource's own server did not answer svc's unpaid request in time, or its address or redirect is one svc does not follow; nothing was listed.
         *     - `bazaar_claims_backlog_full`: This payTo already has 256 claims waiting for their origins' checks; this settlement's claim was not recorded (the payment was settled). Settle again once they are checked.
         *     - `bazaar_path_params_invalid`: The route template has no literal path segment, or a pathParams value is empty, a dot segment (`.`, `..`) or holds `/`, `\` or a percent-encoded one, so the filled URL would leave its template; nothing was requested.
         * @enum {string}
         */
        BazaarCode: "bazaar_extension_not_object" | "bazaar_extensions_too_large" | "bazaar_spec_validation_failed" | "bazaar_schema_validation_failed" | "bazaar_schema_too_complex" | "bazaar_resource_url_invalid" | "bazaar_listing_owned_by_other_payee" | "bazaar_description_too_long" | "bazaar_accepts_too_large" | "bazaar_origin_names_other_payee" | "bazaar_origin_not_payable" | "bazaar_origin_unreachable" | "bazaar_claims_backlog_full" | "bazaar_path_params_invalid";
    };
    responses: {
        /**
         * @description The MCP transport's protection against DNS rebinding (docs/MCP.md). While svc listens on
         *     loopback, or MCP_ALLOWED_HOSTS is set, a `Host` naming another host than localhost,
         *     127.0.0.1 and [::1] (or those listed) is `svc_host_not_allowed`, and so is a browser's
         *     `Origin` of another host `svc_origin_not_allowed`. With MCP_ALLOWED_ORIGINS set, an `Origin`
         *     not in it is `svc_origin_not_allowed`. A request without `Origin` (not from a browser) is
         *     not refused for it.
         */
        OriginNotAllowed: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_origin_not_allowed",
                 *         "reason": "The Origin \"https://evil.example\" is not in MCP_ALLOWED_ORIGINS; POST /mcp answers pages of the origins listed there."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /** @description The request could not be interpreted; the svc code is in `invalidReason`. */
        VerifyBadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "isValid": false,
                 *       "invalidReason": "svc_missing_payment_payload",
                 *       "invalidMessage": "The request has no paymentPayload object."
                 *     }
                 */
                "application/json": components["schemas"]["VerifyResponse"];
            };
        };
        /** @description The body exceeds 256 KiB. */
        VerifyTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "isValid": false,
                 *       "invalidReason": "svc_malformed_request_body",
                 *       "invalidMessage": "The request body exceeds 256 KiB."
                 *     }
                 */
                "application/json": components["schemas"]["VerifyResponse"];
            };
        };
        /**
         * @description Beyond VERIFY_RATE_PER_MINUTE requests from this client in a minute (off unless set;
         *     `svc_rate_limited`): nothing was verified. `Retry-After` says when to try again.
         */
        VerifyRateLimited: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "isValid": false,
                 *       "invalidReason": "svc_rate_limited",
                 *       "invalidMessage": "This address made more than 600 verify requests in a minute (VERIFY_RATE_PER_MINUTE); nothing was verified. Retry in 17 s."
                 *     }
                 */
                "application/json": components["schemas"]["VerifyResponse"];
            };
        };
        /** @description Service fault; says nothing about payment validity. */
        VerifyInternalError: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "isValid": false,
                 *       "invalidReason": "svc_internal_error",
                 *       "invalidMessage": "The service failed; this says nothing about payment validity."
                 *     }
                 */
                "application/json": components["schemas"]["VerifyResponse"];
            };
        };
        /** @description The request could not be interpreted; the svc code is in `errorReason`. */
        SettleBadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "success": false,
                 *       "transaction": "",
                 *       "network": "stellar:testnet",
                 *       "errorReason": "svc_unsupported_x402_version",
                 *       "errorMessage": "paymentPayload.x402Version is 1; this facilitator serves x402Version 2."
                 *     }
                 */
                "application/json": components["schemas"]["SettleResponse"];
            };
        };
        /**
         * @description The `Idempotency-Key` or `payment-identifier` id was first submitted with another payment,
         *     or with another payload or other requirements (`svc_idempotency_key_conflict`); nothing was
         *     submitted. Use a new key for a new request.
         */
        SettleKeyConflict: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "success": false,
                 *       "transaction": "",
                 *       "network": "stellar:testnet",
                 *       "errorReason": "svc_idempotency_key_conflict",
                 *       "errorMessage": "This Idempotency-Key was already used with another payment or other requirements; nothing was submitted. Use a new key for a new request."
                 *     }
                 */
                "application/json": components["schemas"]["SettleResponse"];
            };
        };
        /** @description The body exceeds 256 KiB. */
        SettleTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "success": false,
                 *       "transaction": "",
                 *       "network": "",
                 *       "errorReason": "svc_malformed_request_body",
                 *       "errorMessage": "The request body exceeds 256 KiB."
                 *     }
                 */
                "application/json": components["schemas"]["SettleResponse"];
            };
        };
        /**
         * @description Beyond SETTLE_RATE_PER_MINUTE requests from this client in a minute (off unless set;
         *     `svc_rate_limited`): nothing was verified or submitted. `Retry-After` says when to try again.
         */
        SettleRateLimited: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                "Retry-After": components["headers"]["RetryAfter"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "success": false,
                 *       "transaction": "",
                 *       "network": "",
                 *       "errorReason": "svc_rate_limited",
                 *       "errorMessage": "This address made more than 120 settle requests in a minute (SETTLE_RATE_PER_MINUTE); nothing was submitted. Retry in 17 s."
                 *     }
                 */
                "application/json": components["schemas"]["SettleResponse"];
            };
        };
        /** @description Service fault; says nothing about payment validity or whether anything was submitted. */
        SettleInternalError: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "success": false,
                 *       "transaction": "",
                 *       "network": "stellar:testnet",
                 *       "errorReason": "svc_internal_error",
                 *       "errorMessage": "The service failed; this says nothing about payment validity."
                 *     }
                 */
                "application/json": components["schemas"]["SettleResponse"];
            };
        };
        /** @description A bad query (`svc_invalid_query_parameter`, `svc_missing_search_query`, `svc_invalid_search_cursor`). */
        DiscoveryBadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_invalid_query_parameter",
                 *         "reason": "limit must be an integer, got \"ten\"."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /**
         * @description The catalog is overloaded: its bounded queue of discovery requests is full, or the request
         *     was not answered within its deadline (2 s), or payments kept the service busy for the 1 s
         *     the request waited for room (DISCOVERY_YIELD_PERCENT). Catalog reads run on their own
         *     worker threads and payments go first, so this degrades discovery only, never /verify or
         *     /settle. Retry after a moment (`svc_catalog_busy`).
         *
         *     Or the catalog database cannot be used: it could not be opened, its file was deleted,
         *     replaced or made read-only while svc ran, or its PostgreSQL server cannot be reached
         *     (`svc_catalog_unavailable`). Payments go on without
         *     listing; `GET /ready` names the cause, and discovery answers again once it is repaired.
         */
        DiscoveryBusy: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_catalog_busy",
                 *         "reason": "The catalog is busy (no catalog answer within 2000 ms); retry shortly."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /** @description The body is not a JSON object `{url, method?, toolName?}` (`svc_malformed_request_body`). */
        ValidateBadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_malformed_request_body",
                 *         "reason": "The request does not match the API: url is required."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /** @description The body exceeds 256 KiB (`svc_malformed_request_body`). */
        ValidateTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_malformed_request_body",
                 *         "reason": "The request body exceeds 256 KiB."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /**
         * @description Beyond VALIDATE_RATE_PER_MINUTE requests from this client address, or
         *     VALIDATE_GLOBAL_PER_MINUTE from all clients, in a minute (`svc_validate_rate_limited`).
         *     Nothing was requested of the target. `Retry-After` says when to try again.
         */
        ValidateRateLimited: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                /** @description Seconds until this client may validate again (a positive integer, RFC 9110 delay-seconds). */
                "Retry-After"?: string;
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_validate_rate_limited",
                 *         "reason": "This address made more than 10 validate requests in a minute (VALIDATE_RATE_PER_MINUTE); nothing was requested of the target. Retry in 42 s."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /**
         * @description Beyond DELIST_RATE_PER_MINUTE requests from this client address in a minute
         *     (`svc_delist_rate_limited`). Nothing was changed. `Retry-After` says when to try again.
         */
        DelistRateLimited: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                /** @description Seconds until this client may delist again (a positive integer, RFC 9110 delay-seconds). */
                "Retry-After"?: string;
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_delist_rate_limited",
                 *         "reason": "This address made more than 10 delist requests in a minute (DELIST_RATE_PER_MINUTE); nothing was changed. Retry in 42 s."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /** @description Service fault. */
        InternalError: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_internal_error",
                 *         "reason": "The service failed; this says nothing about payment validity."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /**
         * @description The HTTP parser refused the request before it reached the operation: a header name that is
         *     not a token, a header value with a control character, broken framing (e.g. a Content-Length
         *     that is not a number). The ErrorEnvelope with code `svc_malformed_request_body`; on /verify
         *     and /settle the refusal comes in their own shape instead (`VerifyBadRequest`,
         *     `SettleBadRequest`). The connection is closed after it.
         */
        RequestUnparseable: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_malformed_request_body",
                 *         "reason": "The HTTP request could not be parsed."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /**
         * @description The request line and headers together exceed 16 KiB, or the head has more than 1000 header
         *     fields. Node's HTTP parser refuses such a request before any route is determined, so the
         *     answer is always the ErrorEnvelope (never the payment shapes), with code
         *     `svc_malformed_request_body`.
         */
        RequestHeadTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_malformed_request_body",
                 *         "reason": "The request head (request line and headers) exceeds 16 KiB or 1000 header fields."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
        /**
         * @description The request head or body did not arrive within the configured timeouts. Always the
         *     ErrorEnvelope with code `svc_request_timeout`; the connection is closed after it.
         */
        RequestTimeout: {
            headers: {
                "X-Request-Id": components["headers"]["XRequestId"];
                [name: string]: unknown;
            };
            content: {
                /**
                 * @example {
                 *       "error": {
                 *         "code": "svc_request_timeout",
                 *         "reason": "The request was not received within 10 s (head) / 15 s (whole request)."
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["ErrorEnvelope"];
            };
        };
    };
    parameters: {
        /** @description Filter by resource type, e.g. `http` or `mcp`. */
        TypeFilter: string;
        /** @description Filter by the listing's verified payTo address: a Stellar account (G…), contract (C…) or muxed (M…) address, as in `accepts[].payTo`; anything else is 400 `svc_invalid_query_parameter`. */
        PayToFilter: components["schemas"]["PayeeAddress"];
        /** @description Filter by payment scheme, e.g. `exact`. */
        SchemeFilter: string;
        /** @description Filter by CAIP-2 network, e.g. `stellar:testnet`. */
        NetworkFilter: string;
        /** @description Filter by extension identifier, e.g. `bazaar`. */
        ExtensionsFilter: string;
        /** @description Only listings with an accepted payment in this asset (its contract address, as in `accepts[].asset`, in any letter case: a 56-character Stellar id is compared in upper case). With `scheme`/`network`/`maxAmount`/`maxUsdPrice`, one accepted entry must match them all. */
        AssetFilter: string;
        /** @description Only listings with an accepted payment in `asset` of at most this many base units (the `amount` of `accepts[]`). Requires `asset` (an amount means nothing without its asset): without it the request is refused with 400 `svc_invalid_query_parameter` (`x-requires-parameters`: a request with this parameter and without those does not conform). */
        MaxAmountFilter: string;
        /** @description Only listings whose resource URL contains this text, ignoring ASCII case (the CDP Bazaar's `url`): 3 to 2,048 characters, not all of them spaces (a blank filter is refused, as every filter's), every character literal (`%` and `_` are no wildcards), served by an index of the resource URLs (docs/CATALOG.md "List"). */
        UrlFilter: string;
        /** @description Only listings with an accepted payment of at most this many US dollars (the CDP Bazaar's `maxUsdPrice`, a decimal string): applied to the assets svc counts as USD-pegged (`USD_ASSETS`, by default Circle's USDC on Stellar testnet and pubnet), each amount read in its asset's decimals (a fraction of a base unit dropped); an entry in another asset does not match, whatever its price. With `asset`, `network`, `scheme` or `maxAmount` the same entry must match them too (docs/CATALOG.md "List"). */
        MaxUsdPriceFilter: string;
        /** @description Page size; default 20; integer values outside [1, 100] are clamped; a non-integer is 400. */
        Limit: number;
    };
    requestBodies: never;
    headers: {
        /** @description Seconds until this client may send again (a positive integer, RFC 9110 delay-seconds). */
        RetryAfter: string;
        /** @description The request id (the caller's sane `X-Request-Id`, else a generated UUID). */
        XRequestId: string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    verifyPayment: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description The x402 envelope. JSON, at most 256 KiB. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["FacilitatorRequest"];
            };
        };
        responses: {
            /** @description The verdict. A rejected payment is a 200 with `isValid:false`. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["VerifyResponse"];
                };
            };
            400: components["responses"]["VerifyBadRequest"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["VerifyTooLarge"];
            429: components["responses"]["VerifyRateLimited"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["VerifyInternalError"];
        };
    };
    settlePayment: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description Chosen by the caller (e.g. a UUID) and sent again, unchanged, on a retry of the same
                 *     request; the retry gets the recorded outcome instead of a replay refusal. Bound to the
                 *     payment and the request it was first submitted with: the same key with another payment,
                 *     payload or requirements is a 409 `svc_idempotency_key_conflict`. 1–255 printable
                 *     ASCII characters (space inside only): a control character cannot travel in an HTTP
                 *     header (the request is refused by the parser, 400), and other characters arrive as
                 *     whatever bytes the client chose to encode them in.
                 */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description The x402 envelope. JSON, at most 256 KiB. */
        requestBody: {
            content: {
                "application/json": components["schemas"]["FacilitatorRequest"];
            };
        };
        responses: {
            /** @description The settlement result. A rejected payment is a 200 with `success:false`. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /**
                     * @description Base64 of a JSON object keyed by extension name. For `bazaar`: `status` is `success`
                     *     (listed or refreshed), `processing` (a new listing, or a new owner, waits for the
                     *     resource's own server to name the settling payTo: docs/CATALOG.md "Ownership and
                     *     refresh"; POST /discovery/validate shows the outcome) or `rejected`; on `rejected`
                     *     it carries `rejectedReason` (human text) and `code` (one of BazaarCode). Omitted
                     *     when nothing was submitted for cataloging, on an internal indexer fault, and on
                     *     every `success:false` response.
                     * @example eyJiYXphYXIiOnsic3RhdHVzIjoic3VjY2VzcyJ9fQ==
                     */
                    "EXTENSION-RESPONSES"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SettleResponse"];
                };
            };
            400: components["responses"]["SettleBadRequest"];
            408: components["responses"]["RequestTimeout"];
            409: components["responses"]["SettleKeyConflict"];
            413: components["responses"]["SettleTooLarge"];
            429: components["responses"]["SettleRateLimited"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["SettleInternalError"];
        };
    };
    getSettlement: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /**
                 * @description The 64-hex transaction hash a settle reported (or logged), in either letter case. Anything
                 *     else is a 400 `svc_invalid_transaction_hash`: no settlement can have it.
                 * @example 3f1c0a9b7e2d4c5a6b8f9e0d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a6978867564
                 */
                transaction: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The record. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "transaction": "3f1c0a9b7e2d4c5a6b8f9e0d1c2b3a4f5e6d7c8b9a0f1e2d3c4b5a6978867564",
                     *       "network": "stellar:testnet",
                     *       "state": "settled",
                     *       "payer": "GCKFBEIYV2U22IO2BJ4KVJOIP7XPWQGQFKKWXR6DOSJBV7STMAQSMTGG",
                     *       "payTo": "GBZXN7PIRZGNMHGA7MUUUF4GWPY5AYPV6LY4UV2GL6VJGIQRXFDNMADI",
                     *       "asset": "CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA",
                     *       "amount": "100000",
                     *       "submitter": "GDQNY3PBOJOKYZSRMK2S7LHHGWZIUISD4QORETLMXEWXBI7KFZZMKTL3",
                     *       "feeStroops": "60123",
                     *       "validUntil": 1795000000,
                     *       "history": [
                     *         {
                     *           "state": "submitted",
                     *           "at": "2026-11-22T11:00:00.000Z"
                     *         },
                     *         {
                     *           "state": "settled",
                     *           "at": "2026-11-22T11:00:01.200Z"
                     *         }
                     *       ]
                     *     }
                     */
                    "application/json": components["schemas"]["SettlementRecord"];
                };
            };
            /**
             * @description The hash is not 64 hexadecimal characters (`svc_invalid_transaction_hash`), or the HTTP
             *     parser refused the request (`svc_malformed_request_body`, as RequestUnparseable).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_invalid_transaction_hash",
                     *         "reason": "The transaction hash \"0xabc\" is not 64 hexadecimal characters; no settlement has it."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description No settlement with this transaction hash is journaled. */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_settlement_not_found",
                     *         "reason": "The journal has no settlement with this transaction hash."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getSupported: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description What this deployment serves. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "kinds": [
                     *         {
                     *           "x402Version": 2,
                     *           "scheme": "exact",
                     *           "network": "stellar:testnet",
                     *           "extra": {
                     *             "areFeesSponsored": true,
                     *             "maxTransactionFeeStroops": 1100000,
                     *             "inclusionFeeStroops": 100
                     *           }
                     *         }
                     *       ],
                     *       "extensions": [
                     *         "bazaar",
                     *         "payment-identifier"
                     *       ],
                     *       "signers": {
                     *         "stellar:*": [
                     *           "GDQNY3PBOJOKYZSRMK2S7LHHGWZIUISD4QORETLMXEWXBI7KFZZMKTL3"
                     *         ]
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["SupportedResponse"];
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getFacilitatorManifest: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The manifest. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "x402Version": 2,
                     *       "experimental": true,
                     *       "role": "facilitator",
                     *       "endpoints": {
                     *         "verify": "/verify",
                     *         "settle": "/settle",
                     *         "supported": "/supported",
                     *         "discovery": "/discovery/resources",
                     *         "search": "/discovery/search",
                     *         "openapi": "/openapi.yaml"
                     *       },
                     *       "supported": {
                     *         "kinds": [
                     *           {
                     *             "x402Version": 2,
                     *             "scheme": "exact",
                     *             "network": "stellar:testnet",
                     *             "extra": {
                     *               "areFeesSponsored": true
                     *             }
                     *           }
                     *         ],
                     *         "extensions": [
                     *           "bazaar",
                     *           "payment-identifier"
                     *         ],
                     *         "signers": {
                     *           "stellar:*": [
                     *             "GDQNY3PBOJOKYZSRMK2S7LHHGWZIUISD4QORETLMXEWXBI7KFZZMKTL3"
                     *           ]
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["FacilitatorManifest"];
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    listDiscoveryResources: {
        parameters: {
            query?: {
                /** @description Filter by resource type, e.g. `http` or `mcp`. */
                type?: components["parameters"]["TypeFilter"];
                /** @description Filter by the listing's verified payTo address: a Stellar account (G…), contract (C…) or muxed (M…) address, as in `accepts[].payTo`; anything else is 400 `svc_invalid_query_parameter`. */
                payTo?: components["parameters"]["PayToFilter"];
                /** @description Filter by payment scheme, e.g. `exact`. */
                scheme?: components["parameters"]["SchemeFilter"];
                /** @description Filter by CAIP-2 network, e.g. `stellar:testnet`. */
                network?: components["parameters"]["NetworkFilter"];
                /** @description Filter by extension identifier, e.g. `bazaar`. */
                extensions?: components["parameters"]["ExtensionsFilter"];
                /** @description Only listings with an accepted payment in this asset (its contract address, as in `accepts[].asset`, in any letter case: a 56-character Stellar id is compared in upper case). With `scheme`/`network`/`maxAmount`/`maxUsdPrice`, one accepted entry must match them all. */
                asset?: components["parameters"]["AssetFilter"];
                /** @description Only listings with an accepted payment in `asset` of at most this many base units (the `amount` of `accepts[]`). Requires `asset` (an amount means nothing without its asset): without it the request is refused with 400 `svc_invalid_query_parameter` (`x-requires-parameters`: a request with this parameter and without those does not conform). */
                maxAmount?: components["parameters"]["MaxAmountFilter"];
                /** @description Only listings whose resource URL contains this text, ignoring ASCII case (the CDP Bazaar's `url`): 3 to 2,048 characters, not all of them spaces (a blank filter is refused, as every filter's), every character literal (`%` and `_` are no wildcards), served by an index of the resource URLs (docs/CATALOG.md "List"). */
                url?: components["parameters"]["UrlFilter"];
                /** @description Only listings with an accepted payment of at most this many US dollars (the CDP Bazaar's `maxUsdPrice`, a decimal string): applied to the assets svc counts as USD-pegged (`USD_ASSETS`, by default Circle's USDC on Stellar testnet and pubnet), each amount read in its asset's decimals (a fraction of a base unit dropped); an entry in another asset does not match, whatever its price. With `asset`, `network`, `scheme` or `maxAmount` the same entry must match them too (docs/CATALOG.md "List"). */
                maxUsdPrice?: components["parameters"]["MaxUsdPriceFilter"];
                /**
                 * @description Exact match on the listing's canonical resource URL (list only). With `type` and, for
                 *     `mcp` listings, `toolName` it selects one listing by its identity, without paging.
                 */
                resource?: string;
                /** @description Exact match on the MCP tool name of a listing (list only; `http` listings have none). */
                toolName?: string;
                /** @description Page size; default 20; integer values outside [1, 100] are clamped; a non-integer is 400. */
                limit?: components["parameters"]["Limit"];
                /** @description Start of the page; default 0; a non-negative integer. */
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of listings. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DiscoveryListResponse"];
                };
            };
            400: components["responses"]["DiscoveryBadRequest"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["DiscoveryBusy"];
        };
    };
    searchDiscoveryResources: {
        parameters: {
            query: {
                /**
                 * @description Natural-language query (the name is `query`, not `q`); not blank; at most 2,048 characters
                 *     (Unicode code points), any number of words. A term is a run of letters and digits
                 *     (combining marks do not split it; anything else does). Longer is refused with
                 *     `svc_invalid_query_parameter`, the reason naming the cap. Percent-encoded, the request
                 *     head's 16 KiB bound applies (431): 2,048 characters outside the BMP exceed it.
                 * @example find an api that returns the current weather forecast for a city please
                 */
                query: string;
                /** @description Filter by resource type, e.g. `http` or `mcp`. */
                type?: components["parameters"]["TypeFilter"];
                /** @description Filter by the listing's verified payTo address: a Stellar account (G…), contract (C…) or muxed (M…) address, as in `accepts[].payTo`; anything else is 400 `svc_invalid_query_parameter`. */
                payTo?: components["parameters"]["PayToFilter"];
                /** @description Filter by payment scheme, e.g. `exact`. */
                scheme?: components["parameters"]["SchemeFilter"];
                /** @description Filter by CAIP-2 network, e.g. `stellar:testnet`. */
                network?: components["parameters"]["NetworkFilter"];
                /** @description Filter by extension identifier, e.g. `bazaar`. */
                extensions?: components["parameters"]["ExtensionsFilter"];
                /** @description Only listings with an accepted payment in this asset (its contract address, as in `accepts[].asset`, in any letter case: a 56-character Stellar id is compared in upper case). With `scheme`/`network`/`maxAmount`/`maxUsdPrice`, one accepted entry must match them all. */
                asset?: components["parameters"]["AssetFilter"];
                /** @description Only listings with an accepted payment in `asset` of at most this many base units (the `amount` of `accepts[]`). Requires `asset` (an amount means nothing without its asset): without it the request is refused with 400 `svc_invalid_query_parameter` (`x-requires-parameters`: a request with this parameter and without those does not conform). */
                maxAmount?: components["parameters"]["MaxAmountFilter"];
                /** @description Only listings whose resource URL contains this text, ignoring ASCII case (the CDP Bazaar's `url`): 3 to 2,048 characters, not all of them spaces (a blank filter is refused, as every filter's), every character literal (`%` and `_` are no wildcards), served by an index of the resource URLs (docs/CATALOG.md "List"). */
                url?: components["parameters"]["UrlFilter"];
                /** @description Only listings with an accepted payment of at most this many US dollars (the CDP Bazaar's `maxUsdPrice`, a decimal string): applied to the assets svc counts as USD-pegged (`USD_ASSETS`, by default Circle's USDC on Stellar testnet and pubnet), each amount read in its asset's decimals (a fraction of a base unit dropped); an entry in another asset does not match, whatever its price. With `asset`, `network`, `scheme` or `maxAmount` the same entry must match them too (docs/CATALOG.md "List"). */
                maxUsdPrice?: components["parameters"]["MaxUsdPriceFilter"];
                /** @description Page size; default 20; integer values outside [1, 100] are clamped; a non-integer is 400. */
                limit?: components["parameters"]["Limit"];
                /**
                 * @description Opaque cursor from a previous `pagination.cursor`; one that svc did not issue, or older than
                 *     an hour, is `svc_invalid_search_cursor`. A walk serves each match of the catalog as of its
                 *     first page at most once: every one still visible when the walk reaches its rank, a listing
                 *     hidden then and back later included (docs/CATALOG.md "Response and cursor").
                 *     A cursor is two base64url parts joined by a dot, at
                 *     most 1024 characters; anything else (an empty value too) can never have been issued and is
                 *     refused with the same code.
                 */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of results, best first. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DiscoverySearchResponse"];
                };
            };
            400: components["responses"]["DiscoveryBadRequest"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["DiscoveryBusy"];
        };
    };
    getMerchantResources: {
        parameters: {
            query: {
                /**
                 * @description The seller's payee address (G…, C… or M…); anything else is 400 `svc_invalid_query_parameter`.
                 * @example GDQNY3PBOJOKYZSRMK2S7LHHGWZIUISD4QORETLMXEWXBI7KFZZMKTL3
                 */
                payTo: components["schemas"]["PayeeAddress"];
                /** @description Page size; default 20; integer values outside [1, 100] are clamped; a non-integer is 400. */
                limit?: components["parameters"]["Limit"];
                /** @description Start of the page; default 0; a non-negative integer. */
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description One page of the seller's listings. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DiscoveryMerchantResponse"];
                };
            };
            400: components["responses"]["DiscoveryBadRequest"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["DiscoveryBusy"];
        };
    };
    validateDiscoveryListing: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ValidateRequest"];
            };
        };
        responses: {
            /** @description What svc found; `wouldList` says whether a settlement would list the resource. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ValidateResponse"];
                };
            };
            400: components["responses"]["ValidateBadRequest"];
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["ValidateTooLarge"];
            429: components["responses"]["ValidateRateLimited"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["DiscoveryBusy"];
        };
    };
    callHostedMcp: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description The MCP protocol version of the request (2026-07-28: the one its `_meta` names) or the
                 *     one the client negotiated at `initialize`; optional (absent, svc assumes 2025-03-26).
                 *     Any other value is refused with 400.
                 */
                "MCP-Protocol-Version"?: "2026-07-28" | "2025-11-25" | "2025-06-18" | "2025-03-26" | "2024-11-05" | "2024-10-07";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["JsonRpcMessage"];
            };
        };
        responses: {
            /**
             * @description The JSON-RPC response to the request: a `result` (for `tools/call` of
             *     `search_resources`, a tool result whose `structuredContent` is `{hits, nextCursor,
             *     partialResults, searchMethod, searchedTerms, droppedTerms, relevance}`, each hit with
             *     its `match`, or, with `isError`, `{errorCode, reason}`; docs/MCP.md) or a JSON-RPC
             *     `error` (unknown method, unknown tool, invalid params). At most 4 MiB, as every discovery
             *     answer: a search whose hits would weigh more answers the first that fit, with
             *     `partialResults` true and a `nextCursor` continuing after them.
             */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["JsonRpcResultResponse"] | components["schemas"]["JsonRpcErrorAnswer"];
                };
            };
            /** @description The message was a notification or a response; nothing to answer (no body). */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            /**
             * @description The body is not one JSON-RPC 2.0 message of the declared form, or the
             *     `MCP-Protocol-Version` is not supported (`svc_malformed_request_body` in the
             *     ErrorEnvelope); a message the MCP transport itself cannot read is a JSON-RPC error body.
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_malformed_request_body",
                     *         "reason": "The request does not match the API: the request must match a schema in anyOf."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"] | components["schemas"]["JsonRpcErrorAnswer"];
                };
            };
            403: components["responses"]["OriginNotAllowed"];
            /** @description `Accept` does not take `application/json` (a JSON-RPC error body). */
            406: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "jsonrpc": "2.0",
                     *       "id": null,
                     *       "error": {
                     *         "code": -32000,
                     *         "message": "Not Acceptable: Client must accept both application/json and text/event-stream"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["JsonRpcErrorAnswer"];
                };
            };
            408: components["responses"]["RequestTimeout"];
            /** @description The body exceeds 256 KiB (`svc_malformed_request_body`). */
            413: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_malformed_request_body",
                     *         "reason": "The request body exceeds 256 KiB."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /** @description `Content-Type` is not `application/json` (a JSON-RPC error body). */
            415: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "jsonrpc": "2.0",
                     *       "id": null,
                     *       "error": {
                     *         "code": -32000,
                     *         "message": "Unsupported Media Type: Content-Type must be application/json"
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["JsonRpcErrorAnswer"];
                };
            };
            /**
             * @description Beyond MCP_RATE_PER_MINUTE requests from this client address in a minute
             *     (`svc_rate_limited`); the request was not read. `Retry-After` says when to try again.
             */
            429: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description Seconds until this client may send again (a positive integer, RFC 9110 delay-seconds). */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_rate_limited",
                     *         "reason": "This address made more than 120 POST /mcp requests in a minute (MCP_RATE_PER_MINUTE); the request was not read. Retry in 17 s."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["DiscoveryBusy"];
        };
    };
    getDelistText: {
        parameters: {
            query: {
                /**
                 * @description The listing's canonical resource URL, as GET /discovery/resources shows it.
                 * @example https://api.example.com/weather
                 */
                resource: string;
                /**
                 * @description The listing's type (`http` or `mcp`).
                 * @example http
                 */
                type: string;
                /** @description The MCP tool's name; absent or "" for an http listing (`toolName=` is the empty name, so it is allowed). */
                toolName?: string;
                /**
                 * @description The owner's account address (G…), the key that will sign.
                 * @example GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H
                 */
                payTo: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The text to sign, with the `issuedAt` it names (send it back unchanged in the POST). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DelistText"];
                };
            };
            /** @description A parameter is missing, repeated, undeclared or malformed (`svc_invalid_query_parameter`). */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_invalid_query_parameter",
                     *         "reason": "The request does not match the API: query parameter payTo is required."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["DiscoveryBusy"];
        };
    };
    delistDiscoveryListing: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DelistRequest"];
            };
        };
        responses: {
            /** @description The listing is withdrawn. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DelistResponse"];
                };
            };
            /**
             * @description The body is not a DelistRequest (`svc_malformed_request_body`), or `issuedAt` is more
             *     than 5 minutes before svc's clock or more than 1 minute after it (`svc_delist_stale`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_delist_stale",
                     *         "reason": "issuedAt 2026-11-25T09:00:00Z is 61 min before svc's clock (2026-11-25T10:01:00.000Z); it may be at most 5 min before it or 60 s after it. Ask GET /discovery/delist for the text to sign, issued now."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /**
             * @description The message was signed for another catalog (`svc_delist_other_catalog`), the signature is
             *     not by `payTo` of this catalog's text (`svc_delist_signature_invalid`), or `payTo` is not
             *     the listing's owner (`svc_delist_not_owner`). Nothing was changed.
             */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_delist_not_owner",
                     *         "reason": "The listing is owned by GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H, not GCKFBEIYV2U22IO2BJ4KVJOIP7XPWQGQFKKWXR6DOSJBV7STMAQSMTGG; nothing was changed. Only its owner's key can withdraw it: its owner is the payTo the resource's own server names in the 402 it answers an unpaid request with, which svc checked when a settlement claimed the listing."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /**
             * @description No listing has this (resource, type, toolName) (`svc_delist_unknown_listing`); the reason
             *     names the listings discovery shows at that URL (another type or tool), if any.
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_delist_unknown_listing",
                     *         "reason": "No http listing has resource https://api.example.com/weather; at that URL there is an mcp listing (type \"mcp\", toolName \"get_forecast\"): withdraw it with that type and toolName."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            408: components["responses"]["RequestTimeout"];
            /**
             * @description A withdrawal of this listing signed at `issuedAt` or later was already accepted
             *     (`svc_delist_replayed`); nothing was changed. Sign a new message with the current time.
             */
            409: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_delist_replayed",
                     *         "reason": "A withdrawal of this listing signed at 2026-11-25T10:00:00Z or later was already accepted; a signed message withdraws once. Sign a new one with the current time."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            413: components["responses"]["ValidateTooLarge"];
            429: components["responses"]["DelistRateLimited"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["DiscoveryBusy"];
        };
    };
    getRecheckText: {
        parameters: {
            query: {
                /**
                 * @description The claimed listing's canonical resource URL, as validate's `ownership` shows its identity.
                 * @example https://api.example.com/weather
                 */
                resource: string;
                /**
                 * @description The listing's type (`http` or `mcp`).
                 * @example http
                 */
                type: string;
                /** @description The MCP tool's name; absent or "" for an http listing (`toolName=` is the empty name, so it is allowed). */
                toolName?: string;
                /**
                 * @description The claimant's account address (G…), the payTo of the settlement that made the claim, the key that will sign.
                 * @example GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H
                 */
                payTo: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The text to sign, with the `issuedAt` it names (send it back unchanged in the POST). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DelistText"];
                };
            };
            /** @description A parameter is missing, repeated, undeclared or malformed (`svc_invalid_query_parameter`). */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["DiscoveryBusy"];
        };
    };
    recheckOwnershipClaim: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["DelistRequest"];
            };
        };
        responses: {
            /** @description What the check found. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecheckResponse"];
                };
            };
            /**
             * @description The body is not a DelistRequest (`svc_malformed_request_body`), or `issuedAt` is more
             *     than 5 minutes before svc's clock or more than 1 minute after it (`svc_delist_stale`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /**
             * @description The message was signed for another catalog (`svc_delist_other_catalog`), or the signature
             *     is not by `payTo` of this catalog's re-check text (`svc_delist_signature_invalid`). Nothing was requested.
             */
            403: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            /**
             * @description `payTo` holds no pending or rejected claim on this (resource, type, toolName) that svc can
             *     check again (`svc_recheck_no_claim`): settle a payment with the bazaar extension to make one.
             */
            404: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_recheck_no_claim",
                     *         "reason": "GBRPYHIL2CI3FNQ4BXLFMNDLFJUNPU2HY3ZMFSHONUCEOASW7QC7OX2H holds no pending or rejected claim on http https://api.example.com/weather; nothing was requested."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            408: components["responses"]["RequestTimeout"];
            413: components["responses"]["ValidateTooLarge"];
            429: components["responses"]["ValidateRateLimited"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
            503: components["responses"]["DiscoveryBusy"];
        };
    };
    getHealth: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The process is alive. Public addresses only; seeds, secrets and internal paths never appear. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ok",
                     *       "x402Version": 2,
                     *       "network": "stellar:testnet",
                     *       "submitters": [
                     *         "GDQNY3PBOJOKYZSRMK2S7LHHGWZIUISD4QORETLMXEWXBI7KFZZMKTL3"
                     *       ],
                     *       "feeBumpAddress": null,
                     *       "port": 4021,
                     *       "feeMode": "free",
                     *       "maxTransactionFeeStroops": 50000
                     *     }
                     */
                    "application/json": components["schemas"]["HealthResponse"];
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getReadiness: {
        parameters: {
            query?: {
                /**
                 * @description A network (CAIP-2, as NETWORK lists it); one this instance does not serve is not ready here (503).
                 * @example stellar:pubnet
                 */
                network?: "stellar:testnet" | "stellar:pubnet";
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ready (for the `network` asked about, when one is). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "ready",
                     *       "checks": {
                     *         "rpc:stellar:testnet": {
                     *           "ok": true,
                     *           "detail": "latest ledger 812 closed 1 s ago"
                     *         },
                     *         "balances:stellar:testnet": {
                     *           "ok": true,
                     *           "detail": "10 account(s) at or above 10.0000000 XLM"
                     *         },
                     *         "rpc:stellar:pubnet": {
                     *           "ok": false,
                     *           "detail": "RPC getLatestLedger failed: connect ECONNREFUSED"
                     *         },
                     *         "balances:stellar:pubnet": {
                     *           "ok": false,
                     *           "detail": "RPC getLedgerEntries failed: connect ECONNREFUSED"
                     *         },
                     *         "database": {
                     *           "ok": true,
                     *           "detail": "writable"
                     *         },
                     *         "draining": {
                     *           "ok": true,
                     *           "detail": "accepting"
                     *         }
                     *       },
                     *       "networks": {
                     *         "stellar:testnet": {
                     *           "status": "ready"
                     *         },
                     *         "stellar:pubnet": {
                     *           "status": "not_ready"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ReadinessResponse"];
                };
            };
            /**
             * @description A query parameter other than `network`, a `network` svc does not know or a repeated one
             *     (`svc_invalid_query_parameter`); or the HTTP parser refused the request
             *     (`svc_malformed_request_body`, as `RequestUnparseable`).
             */
            400: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "error": {
                     *         "code": "svc_invalid_query_parameter",
                     *         "reason": "network may be given once."
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ErrorEnvelope"];
                };
            };
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
            /** @description Not ready (for the `network` asked about, when one is); the body says which check failed. */
            503: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    /**
                     * @example {
                     *       "status": "not_ready",
                     *       "checks": {
                     *         "rpc": {
                     *           "ok": false,
                     *           "detail": "RPC serves stellar:testnet (passphrase \"Test SDF Network ; September 2015\"), not stellar:pubnet"
                     *         },
                     *         "balances": {
                     *           "ok": true,
                     *           "detail": "10 account(s) at or above 10.0000000 XLM"
                     *         },
                     *         "database": {
                     *           "ok": false,
                     *           "detail": "not writable (database or disk is full)"
                     *         },
                     *         "draining": {
                     *           "ok": true,
                     *           "detail": "accepting"
                     *         }
                     *       },
                     *       "networks": {
                     *         "stellar:pubnet": {
                     *           "status": "not_ready"
                     *         }
                     *       }
                     *     }
                     */
                    "application/json": components["schemas"]["ReadinessResponse"];
                };
            };
        };
    };
    getMetrics: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The metrics. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": string;
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getExplorer: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The HTML page. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description Scripts, styles and requests from svc's own origin only; images also from https. */
                    "Content-Security-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getExplorerScript: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description `public, max-age=300`. */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": string;
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getExplorerStyle: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The file. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description `public, max-age=300`. */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "text/css": string;
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getApiReference: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The HTML page. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description Allows scripts, styles, fonts, images and requests from svc's own origin only. */
                    "Content-Security-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getApiReferenceScript: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The JavaScript bundle. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description `public, max-age=86400`: the file changes only with the package version. */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "text/javascript": string;
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getApiReferenceDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1.0 document, as JSON, with that example. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    /** @description `no-cache`: the example follows the catalog. */
                    "Cache-Control"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
    getOpenApiDocument: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1.0 document, as YAML. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["XRequestId"];
                    [name: string]: unknown;
                };
                content: {
                    "application/yaml": Record<string, never>;
                };
            };
            400: components["responses"]["RequestUnparseable"];
            408: components["responses"]["RequestTimeout"];
            431: components["responses"]["RequestHeadTooLarge"];
            500: components["responses"]["InternalError"];
        };
    };
}
