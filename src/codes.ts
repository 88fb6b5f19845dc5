/**
 * The one registry of machine-readable codes (openapi.yaml: VerifyCode, SettleCode, ServiceCode, BazaarCode, ValidateCode, DelistCode; mcp-codes.yaml: McpCode). Every code svc can emit is
 * defined here exactly once, with the condition text that becomes its default human message
 * and its description in openapi.yaml. A test checks these lists against the enums in openapi.yaml.
 */

/** The 30 upstream verify codes, verbatim (docs/SCHEME.md). */
export const VERIFY_CODES = {
  invalid_x402_version: 'The payload declares an unsupported protocol version.',
  unsupported_scheme: 'The scheme in the payload or the requirements is not `exact`.',
  network_mismatch: 'paymentPayload.accepted.network differs from paymentRequirements.network.',
  invalid_network: 'The network is not a known Stellar network.',
  invalid_exact_stellar_payload_malformed: 'payload.transaction is missing or is not decodable transaction XDR.',
  invalid_exact_stellar_payload_wrong_operation:
    'The transaction does not have exactly one invoke-host-function operation invoking a contract.',
  invalid_exact_stellar_payload_unsafe_tx_or_op_source: 'The transaction or operation source is a facilitator signing address.',
  invalid_exact_stellar_payload_wrong_asset: 'The invoked contract differs from the required asset.',
  invalid_exact_stellar_payload_wrong_function_name: 'The invocation is not `transfer` with exactly three arguments.',
  invalid_exact_stellar_payload_facilitator_is_payer: 'The transfer `from` is a facilitator signing address.',
  invalid_exact_stellar_payload_wrong_recipient: 'The transfer `to` differs from payTo.',
  invalid_exact_stellar_payload_wrong_amount: 'The transfer amount differs from the required amount.',
  invalid_exact_stellar_payload_simulation_failed: 'Re-simulation against the current ledger state did not succeed.',
  invalid_exact_stellar_payload_fee_exceeds_maximum: 'The derived settlement fee exceeds the configured ceiling.',
  invalid_exact_stellar_payload_event_not_transfer: 'A simulated event is not a SEP-41 transfer event.',
  invalid_exact_stellar_payload_event_missing_contract_id: 'A transfer event has no contract id.',
  invalid_exact_stellar_payload_event_wrong_asset: 'A transfer event came from a contract other than the asset.',
  invalid_exact_stellar_payload_no_transfer_events: 'The simulation emitted no transfer event.',
  invalid_exact_stellar_payload_multiple_transfers: 'The simulation emitted more than one transfer event.',
  invalid_exact_stellar_payload_event_wrong_from: 'The simulated debit is from an address other than the payer.',
  invalid_exact_stellar_payload_event_wrong_to: 'The simulated credit is to an address other than payTo.',
  invalid_exact_stellar_payload_event_wrong_amount: 'The simulated amount differs from the required amount.',
  invalid_exact_stellar_payload_no_auth_entries: 'The operation carries no authorization entries.',
  invalid_exact_stellar_payload_unsupported_credential_type: 'An authorization entry uses credentials other than address credentials.',
  invalid_exact_stellar_payload_facilitator_in_auth: 'A facilitator address appears in an authorization entry.',
  invalid_exact_stellar_signature_expiration_too_far: 'An authorization entry expires beyond the allowed ledger bound.',
  invalid_exact_stellar_payload_has_subinvocations: 'An authorization entry authorizes sub-invocations beyond the transfer.',
  invalid_exact_stellar_payload_missing_payer_signature: "The payer's authorization entry is unsigned.",
  invalid_exact_stellar_payload_unexpected_pending_signatures: 'An authorization entry still awaits a signature.',
  unexpected_verify_error: 'An unexpected error occurred inside the scheme while verifying.',
} as const;

/** The 7 upstream settle codes, verbatim (docs/SCHEME.md). */
export const SETTLE_CODES = {
  verification_failed: 'The independent re-verification inside settle did not pass.',
  settle_exact_stellar_signer_selection_failed: 'No signing account could be selected.',
  settle_exact_stellar_transaction_signing_failed: 'Signing the rebuilt transaction failed.',
  settle_exact_stellar_fee_bump_signing_failed: 'Signing the fee-bump wrapper failed.',
  settle_exact_stellar_transaction_submission_failed: 'The network rejected the submission.',
  settle_exact_stellar_transaction_failed: 'The transaction was submitted but did not reach SUCCESS on-chain.',
  unexpected_settle_error: 'An unexpected error occurred inside the scheme while settling.',
} as const;

/** Service envelope codes (openapi.yaml, ServiceCode). */
export const SERVICE_CODES = {
  svc_malformed_request_body: 'The request body is absent, not valid JSON, or not a JSON object.',
  svc_missing_payment_payload: 'The request has no paymentPayload object.',
  svc_missing_payment_requirements: 'The request has no paymentRequirements object.',
  svc_unsupported_x402_version: 'paymentPayload.x402Version is not served by this facilitator.',
  svc_unsupported_kind: 'The (scheme, network) pair is not advertised; check GET /supported.',
  svc_unknown_route: 'No route is mounted at this method and path.',
  svc_invalid_query_parameter:
    'limit or offset is not a non-negative integer, a parameter is repeated or undeclared, or the search query exceeds 2,048 characters.',
  svc_missing_search_query: 'The search query is missing or blank.',
  svc_invalid_search_cursor: 'The cursor was not issued for this query and filter combination; restart without a cursor.',
  svc_internal_error: 'The service failed; this says nothing about payment validity.',
  svc_request_timeout: 'The request head or body did not arrive within the configured timeouts; the connection is closed.',
  svc_catalog_busy: 'The catalog is overloaded (queue full or deadline passed); retry shortly.',
  svc_catalog_unavailable:
    'The catalog database cannot be used (it could not be opened, its file was deleted, replaced or made read-only, or its PostgreSQL server cannot be reached); GET /ready names the cause. Payments are unaffected.',
  svc_payment_identifier_invalid:
    'The payment-identifier extension in paymentPayload.extensions is malformed (its info needs a boolean `required` and an id of 16-128 letters, digits, `-` or `_`); nothing was verified or submitted.',
  svc_rate_limited:
    'Too many requests from this client to a rate-limited route (POST /mcp: MCP_RATE_PER_MINUTE; POST /verify and POST /settle: VERIFY_RATE_PER_MINUTE and SETTLE_RATE_PER_MINUTE when set); retry after Retry-After seconds.',
  svc_origin_not_allowed:
    "The request's Origin is not in MCP_ALLOWED_ORIGINS, or (that unset) names another host than POST /mcp answers while svc listens on loopback or MCP_ALLOWED_HOSTS is set.",
  svc_host_not_allowed:
    "The request's Host is not a loopback name while svc listens on loopback, or not in MCP_ALLOWED_HOSTS when set: POST /mcp's DNS-rebinding protection.",
} as const;

/**
 * Settlement journal and payment policy codes, in `errorReason` of a SettleResponse (and
 * `svc_settlement_not_found`, `svc_invalid_transaction_hash` in the ErrorEnvelope of GET /settlements/{transaction}); docs/OPERATIONS.md. Every policy refusal happens before submission, so it costs no fee.
 */
export const SETTLEMENT_CODES = {
  svc_settlement_outcome_unknown:
    'This payment is being settled by another request right now (or, with no journal, the RPC could not confirm its outcome in time); retry later with the same Idempotency-Key.',
  settlement_pending:
    'The transaction was submitted and its outcome is not confirmed yet; `transaction` is its hash. Send the same request again (the x402 SDKs do, once) to get the outcome; it is never submitted twice.',
  svc_idempotency_key_conflict:
    'The Idempotency-Key or payment-identifier id was first used with another payment or other requirements (HTTP 409); nothing was submitted.',
  svc_policy_self_payment: 'The payer is the payTo address; self-payments are refused.',
  svc_policy_amount_below_minimum: 'The amount is below the configured minimum for this asset.',
  svc_policy_authorization_expiring:
    'An authorization entry expires fewer than 2 ledgers after the latest one, too soon for the transaction to be included before it; nothing was submitted. Sign with a later expiry.',
  svc_policy_payer_balance_archived:
    "The payer's balance entry of the asset is archived (its TTL ran out); nothing was submitted. The payer restores it (a RestoreFootprint transaction) and pays again; svc does not sponsor restores.",
  svc_fee_budget_daily_exhausted: "Today's sponsored-fee budget is spent; nothing was submitted.",
  svc_fee_budget_payer_exhausted: "This payer's share of today's sponsored-fee budget is spent; nothing was submitted.",
  svc_fee_budget_payto_exhausted:
    "Today's sponsored-fee budget for payments to this payTo address is spent (smaller for an address without history); nothing was submitted.",
  svc_fee_budget_new_paytos_exhausted:
    "Today's sponsored-fee budget shared by payTo addresses without history is spent; nothing was submitted. Addresses paid before today are not affected.",
  svc_policy_payer_cooling_down:
    "Too many of this payer's recent settlements failed on chain; its payments are refused until the failures leave the window; nothing was submitted.",
  svc_journal_unavailable:
    'The settlement journal cannot record the payment now (storage full, read-only or unreachable, or its file deleted or replaced); nothing was submitted.',
  svc_settlement_not_found: 'The journal has no settlement with this transaction hash.',
  svc_invalid_transaction_hash:
    'The value in the path of GET /settlements/{transaction} is not 64 hexadecimal characters; no settlement has it.',
} as const;

/** Catalog soft-drop codes (docs/CATALOG.md), only inside the `bazaar` object of EXTENSION-RESPONSES. */
export const BAZAAR_CODES = {
  bazaar_extension_not_object: 'The bazaar extension is not an object with `info` and `schema`.',
  bazaar_extensions_too_large: 'The extensions block is larger than 64 KiB.',
  bazaar_spec_validation_failed: 'The bazaar extension violates the protocol invariants.',
  bazaar_schema_validation_failed: '`info` does not validate against the client-supplied schema.',
  bazaar_schema_too_complex:
    'The client schema exceeds the caps (2000 nodes, 64 levels, 8 costly keywords, 64 references), refers to itself without descending into the data, or ran out of its validation time budget.',
  bazaar_resource_url_invalid:
    'resource.url is not an absolute http(s) URL without credentials, or its host is a loopback, private, link-local, multicast or metadata address literal, or an internationalized name that may imitate another host (mixed scripts, a Latin look-alike script).',
  bazaar_listing_owned_by_other_payee: 'The listing is owned by a different payTo; nothing was written.',
  bazaar_description_too_long: 'The description is longer than 2048 characters.',
  bazaar_accepts_too_large: 'The accepted terms exceed 2048 bytes of JSON, or the listing already carries 32 distinct terms.',
  bazaar_origin_names_other_payee:
    "The resource's own server, asked unpaid with svc's check request, answered a 402 whose accepts do not name this payTo; nothing was listed.",
  bazaar_origin_not_payable:
    "The resource's own server, asked unpaid with svc's check request, answered without a usable 402 (a free answer, an error, or a 402 without a valid PaymentRequired); nothing was listed.",
  bazaar_origin_unreachable:
    "The resource's own server did not answer svc's unpaid request in time, or its address or redirect is one svc does not follow; nothing was listed.",
  bazaar_claims_backlog_full:
    "This payTo already has 256 claims waiting for their origins' checks; this settlement's claim was not recorded (the payment was settled). Settle again once they are checked.",
  bazaar_path_params_invalid:
    'The route template has no literal path segment, or a pathParams value is empty, a dot segment (`.`, `..`) or holds `/`, `\\` or a percent-encoded one, so the filled URL would leave its template; nothing was requested.',
} as const;

/**
 * POST /discovery/validate (docs/CATALOG.md "Checking a listing"): the codes of its `problems`
 * beyond the BazaarCode ones (what the live 402 itself lacks), and its rate limit (429).
 */
export const VALIDATE_CODES = {
  svc_validate_rate_limited:
    'Too many validate requests from this address or from everyone (VALIDATE_RATE_PER_MINUTE, VALIDATE_GLOBAL_PER_MINUTE); retry after Retry-After seconds.',
  svc_validate_url_invalid: 'The url is not an absolute http(s) URL without credentials, or its host may imitate another.',
  svc_validate_target_forbidden:
    'The target is, or resolves to, a loopback, private, link-local, multicast or metadata address; ALLOW_PRIVATE_TARGETS allows one in development.',
  svc_validate_redirect_refused:
    "The target answered with a redirect; svc's checks follow none (each hop would be one more request of the host, and a buyer pays the URL it is given).",
  svc_validate_unreachable: 'The target did not answer within the time bound, or is not a working MCP streamable-HTTP endpoint.',
  svc_validate_no_payment_required: 'The unpaid request was answered without asking for payment (no 402), so a buyer never pays.',
  svc_validate_payment_required_invalid:
    'The target answered with an error, or a 402 without a PaymentRequired @x402/core can decode (PAYMENT-REQUIRED header or JSON body).',
  svc_validate_no_settleable_accept: 'No entry of `accepts` is one svc can settle (scheme, network, asset; GET /supported).',
  svc_validate_no_bazaar_extension: 'The 402 declares no `bazaar` extension, so a settlement would list nothing.',
  svc_validate_origin_paced:
    "svc asked this host less than PROBE_HOST_INTERVAL_SECONDS ago (its checks, validate and re-checks together ask one host at most once in that time), or the route answered svc's safe request as one that answers only its declared method; nothing more was requested. Ask again after the time in the reason.",
  svc_validate_not_judged: 'svc could not judge the seller schema now (busy); nothing is wrong with the listing yet. Retry shortly.',
} as const;

/**
 * POST /discovery/delist (docs/CATALOG.md "Withdrawing a listing"): why a withdrawal was refused
 * (400, 403, 404, 409) and its rate limit (429).
 */
export const DELIST_CODES = {
  svc_delist_rate_limited:
    'Too many delist requests from this client address (DELIST_RATE_PER_MINUTE); nothing was changed. Retry after Retry-After seconds.',
  svc_delist_stale:
    "issuedAt is more than 5 minutes before svc's clock or more than 1 minute after it (the allowed clock skew); sign the text GET /discovery/delist hands out, issued now.",
  svc_delist_signature_invalid:
    'signature is not the SEP-53 signature by payTo of the delist text naming this catalog (GET /discovery/delist; another key signed, or another text); nothing was changed.',
  svc_delist_other_catalog:
    "The message was signed for another catalog (the body's catalog is not this catalog's identifier); nothing was changed. Sign the text this catalog's GET /discovery/delist hands out.",
  svc_delist_unknown_listing:
    'No listing has this resource, type and toolName; the reason names the listings at that URL, if any (copy them from the listing as discovery shows it).',
  svc_delist_not_owner:
    'payTo is not the listing\'s owner (by default the payTo the resource\'s own server names in its 402, as svc checked it; docs/CATALOG.md "Ownership and refresh"); nothing was changed.',
  svc_delist_replayed:
    'A withdrawal of this listing signed at issuedAt or later was already accepted; a signed message withdraws once. Sign a new one with the current time.',
  svc_recheck_no_claim:
    'payTo holds no pending or rejected claim on this listing that svc can check again (POST /discovery/recheck); nothing was requested. A settlement with the bazaar extension makes one.',
} as const;

/** Agent tool codes (docs/MCP.md), in structuredContent.errorCode. */
export const MCP_CODES = {
  svc_mcp_wallet_not_configured: 'paid_call needs CLIENT_STELLAR_PRIVATE_KEY, which is not set.',
  svc_mcp_invalid_arguments: 'Neither resourceId nor url was given, or toolName is missing for an MCP target.',
  svc_mcp_unknown_resource_id: 'The id does not decode to a listing in the catalog.',
  svc_mcp_facilitator_unreachable: 'The facilitator did not answer at transport level.',
  svc_mcp_search_failed: 'The facilitator rejected discovery without a recognized code.',
  svc_mcp_resource_unreachable: 'The target did not answer at transport level.',
  svc_mcp_target_forbidden:
    'The target is, or resolves to, a loopback, private, link-local, multicast or metadata address; nothing was requested or paid.',
  svc_mcp_resource_error: 'The target answered with a non-payment error; nothing was paid.',
  svc_mcp_payment_declined_by_policy: 'The demanded payment exceeds the spend cap; nothing was paid.',
  svc_mcp_payment_not_settled: 'A payment was attempted but no successful receipt was returned.',
  svc_mcp_tool_call_failed: 'The MCP tool call to the target failed.',
  svc_mcp_internal_error: 'The tool server failed.',
  svc_mcp_listing_not_live:
    "svc's last check found the listing not live (unreachable, not_payable or terms_changed); nothing was requested or paid. ignoreLiveness: true calls it anyway.",
} as const;

export type VerifyCode = keyof typeof VERIFY_CODES;
export type SettleCode = keyof typeof SETTLE_CODES;
export type ServiceCode = keyof typeof SERVICE_CODES;
export type SettlementCode = keyof typeof SETTLEMENT_CODES;
/**
 * The settlement codes that are payment policy or fee budget refusals: /verify answers them too
 * (`invalidReason`), so verify and settle agree on what will be refused (PolicyCode in openapi.yaml).
 */
export const POLICY_CODES = [
  'svc_policy_self_payment',
  'svc_policy_amount_below_minimum',
  'svc_policy_authorization_expiring',
  'svc_policy_payer_balance_archived',
  'svc_fee_budget_daily_exhausted',
  'svc_fee_budget_payer_exhausted',
  'svc_fee_budget_payto_exhausted',
  'svc_fee_budget_new_paytos_exhausted',
  'svc_policy_payer_cooling_down',
] as const satisfies readonly SettlementCode[];
export type PolicyCode = (typeof POLICY_CODES)[number];
export type BazaarCode = keyof typeof BAZAAR_CODES;
export type McpCode = keyof typeof MCP_CODES;
export type ValidateCode = keyof typeof VALIDATE_CODES;
export type DelistCode = keyof typeof DELIST_CODES;
/** Codes a scheme may return: 30 verify + 7 settle = the 37 scheme codes. */
export type SchemeCode = VerifyCode | SettleCode;

const ALL_MESSAGES: Record<string, string> = {
  ...VERIFY_CODES,
  ...SETTLE_CODES,
  ...SERVICE_CODES,
  ...SETTLEMENT_CODES,
  ...BAZAAR_CODES,
  ...VALIDATE_CODES,
  ...DELIST_CODES,
  ...MCP_CODES,
};

/** The default human sentence for a code (used when a component leaves the message empty). */
export function defaultMessage(code: string): string {
  return ALL_MESSAGES[code] ?? `Rejected with code ${code}.`;
}
