/**
 * Every bound the venue puts on what a client can send or hold, in one place. Each is checked before
 * the input it bounds is parsed or kept; the limits table in docs/reference/access-and-security.md
 * lists them.
 */

/** Every HTTP listener (API, JSON-RPC, PubSub upgrades): time and size of one request. */
export const HTTP_LIMITS = {
  /** The request head must arrive within this (slowloris). */
  headersTimeoutMs: 10_000,
  /** The whole request, body included, must arrive within this. */
  requestTimeoutMs: 30_000,
  /** An idle keep-alive connection is closed after this: longer than a load balancer's usual 60 s, so the balancer closes first. */
  keepAliveTimeoutMs: 65_000,
  /** A socket with no traffic either way (a response its client stopped reading, say) is closed after this. */
  idleTimeoutMs: 120_000,
  /** Request head size (Node's default, stated). Larger heads get 431. */
  maxHeaderBytes: 16 * 1024,
  /** Request body of the HTTP API. */
  apiBodyBytes: 64 * 1024,
} as const;

/** Solana JSON-RPC of the sandbox chain. */
export const RPC_LIMITS = {
  /** Whole request body: a batch of 100 base64 transactions fits. */
  bodyBytes: 256 * 1024,
  /** Calls in one batch. */
  batchCalls: 100,
  /** Addresses in one getMultipleAccounts (Solana's own bound). */
  multipleAccounts: 100,
  /** Signatures in one getSignatureStatuses (Solana's own bound). */
  signatureStatuses: 256,
} as const;

/** Solana PubSub of the sandbox chain. */
export const PUBSUB_LIMITS = {
  /** Largest inbound frame. */
  frameBytes: 64 * 1024,
  /** Live subscriptions one socket may hold. */
  subscriptionsPerSocket: 1_000,
  /** Bytes queued for a socket that does not read; past this it is closed (1008). */
  outboundBufferBytes: 4 * 1024 * 1024,
  /** Pings this often; a socket silent for two intervals is closed. */
  pingMs: 15_000,
  /** Open sockets per client address. */
  socketsPerAddress: 64,
} as const;

/** Encoded sizes, checked before any decoding. */
export const WIRE_LIMITS = {
  /** A base58 public key is 32 to 44 characters. */
  addressChars: { min: 32, max: 44 },
  /** A base58 signature is 64 to 88 characters. */
  signatureChars: { min: 64, max: 88 },
  /** Solana's packet size bounds a wire transaction. */
  transactionBytes: 1_232,
  /** base64 of 1,232 bytes. */
  transactionBase64Chars: 1_644,
  /** base58 of 1,232 bytes (log 256 / log 58 ≈ 1.366 characters a byte, rounded up). */
  transactionBase58Chars: 1_684,
} as const;

/**
 * Firm quotes: output reserved for a user until its transaction lands or expires (about a minute).
 * Defaults of FIRM_QUOTES_PER_WALLET, FIRM_QUOTES_PER_CLIENT and the pool shares.
 */
export const RESERVATION_LIMITS = {
  /** Live firm quotes of one wallet. */
  perWallet: 8,
  /** Live firm quotes asked for by one client: its API key, or its address without one. */
  perClientAddress: 1_024,
  /**
   * The most of one pool's output reserve one client's live firm quotes may hold, in basis points:
   * every holder prices the quotes of all others worse, so no one client may hold much of a pool.
   */
  poolShareBpsPerClient: 1_000,
  /**
   * The most of one pool's output reserve all live firm quotes together may hold, in basis points:
   * quotes are priced as if every held one lands first, so this bounds how far quotes never paid move
   * anyone's price, to (1 − 20%)² of it; more than one client's share, so no one client fills it.
   */
  poolHoldBps: 2_000,
} as const;

/** The time and head limits of one HTTP listener: HTTP_LIMITS', or shorter ones a test gives. */
export interface ListenerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  idleTimeoutMs: number;
}

/** Options of Node's `http.createServer` that enforce `limits` (the head size of HTTP_LIMITS unless given). */
export function nodeServerOptions(limits: ListenerTimeouts & { maxHeaderBytes?: number }) {
  return {
    maxHeaderSize: limits.maxHeaderBytes ?? HTTP_LIMITS.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // How often Node looks for requests past their time: 30 s by default, which would let a 10 s limit run to 40 s.
    connectionsCheckingInterval: Math.max(
      10,
      Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)),
    ),
  };
}

/** Fastify's options for a listener bounded by `limits` (it sets these on the server it creates). */
export function fastifyListenerOptions(limits: ListenerTimeouts) {
  return {
    bodyLimit: HTTP_LIMITS.apiBodyBytes,
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: nodeServerOptions(limits),
  };
}
