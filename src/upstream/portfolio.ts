/**
 * The venue's own account on the upstream exchange: Kalshi's portfolio API (or the simulator's), each
 * request signed with the account's key. The order keeper executes a prediction-market fill here
 * before it settles it on chain: an immediate-or-cancel limit order, named by a client order id the
 * keeper chose and stored first, so that placing it again after a crash finds the first one (Kalshi
 * answers 409 `order_already_exists`) instead of trading twice. What it filled is read off its fills.
 */
import type { Agent } from "undici";
import { UpstreamError } from "./errors.js";
import { type KalshiCredentials, kalshiSignatureHeaders } from "./signing.js";

/** One fill's order on the upstream, as the keeper stored it before placing it. */
export interface UpstreamTicket {
  /** Unique per venue order: the upstream refuses a second order under it. */
  clientOrderId: string;
  ticker: string;
  action: "buy" | "sell";
  side: "yes" | "no";
  /** Whole contracts. */
  count: number;
  /** The side's limit price in cents: the most a buy pays, the least a sale takes, per contract. */
  limitCents: number;
}

/** What an order filled on the upstream. */
export interface UpstreamExecution {
  orderId: string;
  /** Whole contracts filled (0 when the book had nothing within the limit). */
  filled: number;
  /** Millionths of a dollar the fills cost (a buy) or paid (a sale), at the side's prices. */
  amountMicros: bigint;
  /** Millionths of a dollar of the upstream's fees on them. */
  feesMicros: bigint;
}

/** The upstream refused the order outright (a closed market, a bad ticket, no balance): nothing traded. */
export class UpstreamOrderRefused extends Error {
  override name = "UpstreamOrderRefused";

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the order keeper needs of the upstream account. */
export interface UpstreamPortfolio {
  /**
   * Places `ticket` (or finds it, placed before under its client order id) and returns what it filled.
   * Throws UpstreamOrderRefused when the upstream refused it, UpstreamError when the upstream could not
   * be asked (then it is placed again later, under the same id).
   */
  execute(ticket: UpstreamTicket): Promise<UpstreamExecution>;
  close(): Promise<void>;
}

/** The longest portfolio answer read (a page of 200 orders is ~200 KB). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Orders per page, and pages (newest first), read looking for an order placed before a crash. */
const SEARCH_PAGE = 200;
const SEARCH_PAGES = 20;

interface KalshiOrder {
  order_id: string;
  client_order_id?: string;
  fill_count_fp?: string;
  fill_count?: number;
}

interface KalshiFill {
  order_id: string;
  count_fp?: string;
  count?: number;
  yes_price_dollars?: string;
  no_price_dollars?: string;
  fee_cost?: string;
}

/**
 * Kalshi's portfolio API at `baseUrl` (…/trade-api/v2), signed with the credentials `credentials`
 * gives: asked at each call, so that they can be made when first needed.
 */
export class KalshiPortfolio implements UpstreamPortfolio {
  private readonly base: URL;
  private agent: Promise<Agent> | undefined;

  constructor(
    baseUrl: string,
    private readonly credentials: () => Promise<KalshiCredentials>,
    private readonly timeoutMs: number,
  ) {
    this.base = new URL(baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`);
  }

  async execute(ticket: UpstreamTicket): Promise<UpstreamExecution> {
    const placed = await this.call("POST", "portfolio/orders", undefined, {
      ticker: ticket.ticker,
      client_order_id: ticket.clientOrderId,
      action: ticket.action,
      side: ticket.side,
      count: ticket.count,
      type: "limit",
      time_in_force: "immediate_or_cancel",
      [ticket.side === "yes" ? "yes_price" : "no_price"]: ticket.limitCents,
    });
    let order: KalshiOrder | undefined;
    if (placed.status === 201 || placed.status === 200)
      order = (placed.body as { order?: KalshiOrder }).order;
    else if (placed.status === 409 && errorCode(placed.body) === "order_already_exists") {
      order = await this.find(ticket);
    } else {
      throw new UpstreamOrderRefused(
        placed.status,
        errorCode(placed.body) ?? "unknown",
        `the upstream refused order ${ticket.clientOrderId} (${placed.status} ${JSON.stringify(placed.body).slice(0, 300)})`,
      );
    }
    if (!order?.order_id)
      throw new UpstreamError("unavailable", "the upstream's order answer names no order_id");
    const filled = wholeContracts(order.fill_count_fp ?? order.fill_count ?? 0);
    if (filled === 0) return { orderId: order.order_id, filled, amountMicros: 0n, feesMicros: 0n };
    return this.sumFills(order.order_id, ticket.side, filled);
  }

  async close(): Promise<void> {
    await (await this.agent)?.close();
  }

  /** The connection pool, made with the first call: undici takes ~50 ms to load (as in client.ts). */
  private pool(): Promise<Agent> {
    // Through `default` (module.exports): the bundle's chunk of this CommonJS package exports nothing else.
    this.agent ??= import("undici").then(({ default: { Agent } }) => new Agent({ connections: 8 }));
    return this.agent;
  }

  /**
   * The order placed under `ticket`'s client order id, among the market's orders listed newest first
   * (by ticker, not time: the exchange's clock need not be ours).
   */
  private async find(ticket: UpstreamTicket): Promise<KalshiOrder> {
    let cursor = "";
    for (let page = 0; page < SEARCH_PAGES; page++) {
      const query = new URLSearchParams({
        ticker: ticket.ticker,
        limit: String(SEARCH_PAGE),
        ...(cursor ? { cursor } : {}),
      });
      const listed = await this.call("GET", "portfolio/orders", query);
      if (listed.status !== 200)
        throw new UpstreamError("unavailable", `listing orders answered ${listed.status}`);
      const body = listed.body as { orders?: KalshiOrder[]; cursor?: string };
      const found = body.orders?.find((order) => order.client_order_id === ticket.clientOrderId);
      if (found) return found;
      if (!body.cursor) break;
      cursor = body.cursor;
    }
    throw new UpstreamError(
      "unavailable",
      `the upstream says order ${ticket.clientOrderId} exists, but lists no such order in ${ticket.ticker}`,
    );
  }

  /** What the order's fills cost or paid, at the prices of the ticket's side, and their fees. */
  private async sumFills(orderId: string, side: "yes" | "no", filled: number): Promise<UpstreamExecution> {
    const query = new URLSearchParams({ order_id: orderId, limit: String(SEARCH_PAGE) });
    const listed = await this.call("GET", "portfolio/fills", query);
    if (listed.status !== 200)
      throw new UpstreamError("unavailable", `listing fills answered ${listed.status}`);
    const fills = ((listed.body as { fills?: KalshiFill[] }).fills ?? []).filter(
      (f) => f.order_id === orderId,
    );
    let contracts = 0;
    let amountMicros = 0n;
    let feesMicros = 0n;
    for (const fill of fills) {
      const count = wholeContracts(fill.count_fp ?? fill.count ?? 0);
      const price = side === "yes" ? fill.yes_price_dollars : fill.no_price_dollars;
      contracts += count;
      amountMicros += BigInt(count) * dollarMicros(price);
      feesMicros += fill.fee_cost === undefined ? 0n : dollarMicros(fill.fee_cost);
    }
    // Fills still being listed would make the sum short: ask again later rather than settle on it.
    if (contracts !== filled) {
      throw new UpstreamError(
        "unavailable",
        `order ${orderId} filled ${filled} contracts, its fills list ${contracts}`,
      );
    }
    return { orderId, filled, amountMicros, feesMicros };
  }

  private async call(
    method: "GET" | "POST",
    path: string,
    query?: URLSearchParams,
    body?: unknown,
  ): Promise<{ status: number; body: unknown }> {
    const url = new URL(path + (query ? `?${query}` : ""), this.base);
    const headers: Record<string, string> = {
      accept: "application/json",
      ...kalshiSignatureHeaders(await this.credentials(), method, url.pathname),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    };
    try {
      const response = await (await this.pool()).request({
        origin: url.origin,
        path: url.pathname + url.search,
        method,
        headers,
        signal: AbortSignal.timeout(this.timeoutMs),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await readBounded(response.body);
      if (response.statusCode === 429 || response.statusCode >= 500) {
        throw new UpstreamError("unavailable", `${method} ${url.pathname} answered ${response.statusCode}`);
      }
      return { status: response.statusCode, body: text === "" ? null : JSON.parse(text) };
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      throw new UpstreamError("unavailable", `${method} ${url.pathname} failed: ${(error as Error).message}`);
    }
  }
}

async function readBounded(body: AsyncIterable<Buffer>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new UpstreamError("unavailable", `answered with a body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

const errorCode = (body: unknown): string | undefined =>
  (body as { error?: { code?: string } } | null)?.error?.code;

/** A count of whole contracts (`"5.00"` or 5); the venue trades no fractions of one. */
function wholeContracts(value: string | number): number {
  const text = String(value);
  if (!/^\d{1,12}(\.0*)?$/.test(text))
    throw new UpstreamError("unavailable", `not a whole contract count: ${text}`);
  return Number.parseInt(text, 10);
}

/** `"0.5200"` dollars as 520000 millionths, exactly; at most six decimals. */
export function dollarMicros(value: string | undefined): bigint {
  const match = value === undefined ? null : /^(\d{1,12})(?:\.(\d{1,6}))?$/.exec(value);
  if (!match) throw new UpstreamError("unavailable", `not a dollar amount: ${value}`);
  return BigInt(match[1] as string) * 1_000_000n + BigInt((match[2] ?? "").padEnd(6, "0"));
}
