/**
 * The checks that do not believe responses: every order of the run's wallets as storage holds it, its
 * settling transactions as the chain has them, each wallet's balances on the chain against what its
 * orders say moved, and every stream client's trades against the upstream's own tape.
 */
import type { Address, Signature } from "@solana/kit";
import type { Pool } from "pg";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { sleep } from "../support.js";
import type { Submission } from "./load.js";
import type { TrackedClient } from "./streams.js";

const TERMINAL = new Set(["closed", "expired", "failed"]);

interface Fill {
  signature: string;
  inputMint: string;
  inAmount: string;
  outputMint: string;
  outAmount: string;
}

export interface StoredOrder {
  status: string;
  user: string;
  openSignature: string | null;
  fills: Fill[];
  reverts: { signature: string; mint: string; amount: string }[];
}

/** What became of one acknowledged intent, from storage and the chain. */
export type Fate = "filled" | "refunded" | "expired" | "failed" | "lost" | "doubled";

export interface OrdersAudit {
  /** Fate of each submission storage recorded (or that lost funds without a record), by its signature. */
  fates: Map<string, Fate>;
  /** Why each lost or doubled one is so. */
  problems: string[];
  /** Orders in storage that no acknowledged submission names (their POST failed or timed out). */
  unacknowledged: number;
  /** Wallets whose chain balances differ from what their orders moved. */
  walletMismatches: string[];
  /** Orders still not at an end when the drain gave up. */
  unsettled: number;
}

/** Reads the run's wallets' orders until all are at an end (or `drainMs` passes). */
async function settledOrders(sql: Pool, wallets: string[], drainMs: number): Promise<StoredOrder[]> {
  const deadline = Date.now() + drainMs;
  for (;;) {
    const { rows } = await sql.query<{
      status: string;
      user_key: string;
      open_signature: string | null;
      fills: string;
      reverts: string;
    }>("select status, user_key, open_signature, fills, reverts from orders where user_key = any($1)", [
      wallets,
    ]);
    const orders = rows.map((row) => ({
      status: row.status,
      user: row.user_key,
      openSignature: row.open_signature,
      fills: JSON.parse(row.fills) as Fill[],
      reverts: JSON.parse(row.reverts) as StoredOrder["reverts"],
    }));
    if (orders.every((order) => TERMINAL.has(order.status)) || Date.now() > deadline) return orders;
    await sleep(1_000);
  }
}

/** How many of the wallets' orders are not at an end now (the orders "open" at a kill). */
export async function openOrders(sql: Pool, wallets: string[]): Promise<number> {
  const {
    rows: [row],
  } = await sql.query<{ n: string }>(
    `select count(*) as n from orders
    where user_key = any($1) and status not in ('closed', 'expired', 'failed')`,
    [wallets],
  );
  return Number(row?.n ?? 0);
}

/** Checks every order of the run against storage and the chain. */
export async function auditOrders(options: {
  sql: Pool;
  rpcUrl: string;
  submissions: Submission[];
  wallets: Address[];
  walletUsdc: bigint;
  outputMints: Address[];
  drainMs: number;
}): Promise<OrdersAudit> {
  const orders = await settledOrders(options.sql, options.wallets, options.drainMs);
  const bySignature = new Map(
    orders.flatMap((order) => (order.openSignature ? [[order.openSignature, order]] : [])),
  );
  const chain = new RpcChain({ url: options.rpcUrl });

  // Which of the run's transactions landed without an error: settling ones storage names, and every open.
  const settling = orders.flatMap((order) => [...order.fills, ...order.reverts].map((s) => s.signature));
  const landed = new Set<string>();
  const all = [...settling, ...options.submissions.map((s) => s.signature)];
  for (let i = 0; i < all.length; i += 100) {
    const batch = all.slice(i, i + 100);
    const statuses = await chain.getSignatureStatuses(batch as Signature[]);
    statuses.forEach((status, j) => {
      if (status && !status.err) landed.add(batch[j] as string);
    });
  }

  // The fate of every submission storage recorded; one not acknowledged counts only when it lost funds.
  const fates = new Map<string, Fate>();
  const problems: string[] = [];
  for (const submission of options.submissions) {
    const { signature, acknowledged } = submission;
    const order = bySignature.get(signature);
    const said = `submitted to ${submission.instance}, answered ${submission.code}`;
    const lost = (why: string) => {
      fates.set(signature, "lost");
      problems.push(`lost ${signature} (${said}): ${why}`);
    };
    if (!order) {
      if (acknowledged) lost("no order in storage");
      else if (landed.has(signature)) lost("its open transaction landed, but storage has no order for it");
    } else if (!TERMINAL.has(order.status)) lost(`still ${order.status} after the drain`);
    else if (order.fills.length > 1) {
      fates.set(signature, "doubled");
      problems.push(`doubled ${signature} (${said}): ${order.fills.length} fills in storage`);
    } else if ([...order.fills, ...order.reverts].some((s) => !landed.has(s.signature)))
      lost("a settling transaction storage records is not on the chain");
    else if (order.status === "closed" && order.fills.length === 1) fates.set(signature, "filled");
    else if (order.status === "closed" && order.reverts.length > 0) fates.set(signature, "refunded");
    else if ((order.status === "expired" || order.status === "failed") && landed.has(signature))
      lost(`storage says ${order.status}, but its open transaction landed: the input sits in the escrow`);
    else if (order.status === "expired" || order.status === "failed") fates.set(signature, order.status);
    else lost(`${order.status} with neither a fill nor a refund`);
  }

  // Each wallet's balances on the chain against what its orders (acknowledged or not) moved.
  const walletMismatches: string[] = [];
  for (const wallet of options.wallets) {
    const own = orders.filter((order) => order.user === wallet);
    const expected = new Map<string, bigint>([[USDC_MINT, options.walletUsdc]]);
    for (const fill of own.flatMap((order) => order.fills)) {
      expected.set(fill.inputMint, (expected.get(fill.inputMint) ?? 0n) - BigInt(fill.inAmount));
      expected.set(fill.outputMint, (expected.get(fill.outputMint) ?? 0n) + BigInt(fill.outAmount));
    }
    for (const mint of [USDC_MINT, ...options.outputMints]) {
      const held = (await chain.getTokenAccountsByOwner(wallet, { mint })).reduce(
        (sum, a) => sum + a.amount,
        0n,
      );
      const want = expected.get(mint) ?? 0n;
      if (held !== want) walletMismatches.push(`${wallet} holds ${held} of ${mint}, its orders say ${want}`);
    }
  }
  const acknowledgedSignatures = new Set(
    options.submissions.filter((s) => s.acknowledged).map((s) => s.signature),
  );
  return {
    fates,
    problems,
    unacknowledged: orders.filter(
      (order) => !order.openSignature || !acknowledgedSignatures.has(order.openSignature),
    ).length,
    walletMismatches,
    unsettled: orders.filter((order) => !TERMINAL.has(order.status)).length,
  };
}

/** A trade on the upstream's tape. */
export interface TapeTrade {
  id: string;
  /** created_time, Unix ms (whole seconds). */
  at: number;
}

/** Every trade the simulator's tape holds from `fromMs` to `toMs`. */
export async function readTape(upstreamUrl: string, fromMs: number, toMs: number): Promise<TapeTrade[]> {
  const trades: TapeTrade[] = [];
  let cursor = "";
  do {
    const query = new URLSearchParams({ min_ts: String(Math.floor(fromMs / 1000)), limit: "1000" });
    if (cursor) query.set("cursor", cursor);
    const page = (await (await fetch(`${upstreamUrl}/markets/trades?${query}`)).json()) as {
      trades: { trade_id: string; created_time: string }[];
      cursor: string;
    };
    for (const trade of page.trades) {
      const at = Date.parse(trade.created_time);
      if (at >= fromMs && at <= toMs) trades.push({ id: trade.trade_id, at });
    }
    cursor = page.cursor;
  } while (cursor);
  return trades;
}

/** A trade a client never received: when it happened, and whether a gap frame told the client. */
export interface MissedTrade {
  client: number;
  at: number;
  told: boolean;
}

/**
 * The tape's trades each client should have received (from 2 s after its first subscription) and did
 * not. A miss is told when the client got a `gap` frame after the trade (1 s of slack for the tape's
 * whole seconds) and no later than `toldBy(trade time)`: the end of the fault's phase.
 */
export function missedTrades(
  clients: TrackedClient[],
  tape: TapeTrade[],
  toldBy: (at: number) => number,
): { missed: MissedTrade[]; expected: { at: number }[]; publishedToNobody: number } {
  const missed: MissedTrade[] = [];
  const expected: { at: number }[] = [];
  const received = new Set<string>();
  for (const client of clients) for (const id of client.trades.keys()) received.add(id);
  for (const client of clients) {
    const from = (client.subscribedAt ?? Number.POSITIVE_INFINITY) + 2_000;
    for (const trade of tape) {
      if (trade.at < from) continue;
      expected.push({ at: trade.at });
      if (client.trades.has(trade.id)) continue;
      const told = client.gapsAt.some((at) => at >= trade.at - 1_000 && at <= toldBy(trade.at));
      missed.push({ client: client.index, at: trade.at, told });
    }
  }
  return { missed, expected, publishedToNobody: tape.filter((trade) => !received.has(trade.id)).length };
}
