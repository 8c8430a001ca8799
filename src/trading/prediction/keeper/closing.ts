import { advanceOrder, type OrderRecord } from "../order-store.js";
import type { OrderKeeperOptions } from "./options.js";

/** How long a settled intent's escrow stays open when the keeper is given no delay: a minute. */
const ESCROW_SWEEP_DELAY_MS = 60_000;

/** A settling transaction sent: the order closes once it lands, and opens again if it never can. */
export async function checkClose(
  options: OrderKeeperOptions,
  order: OrderRecord,
): Promise<OrderRecord | undefined> {
  const { chain, db } = options;
  const close = order.close;
  if (!close) return advanceOrder(db, order, { status: "open", close: null });
  const [status] = await chain.getSignatureStatuses([close.signature]);
  if (status && !status.err) {
    const { fill, revert } = close.plan;
    return advanceOrder(db, order, {
      status: "closed",
      fills: fill ? [...order.fills, { signature: close.signature, ...fill }] : order.fills,
      reverts: revert ? [...order.reverts, { signature: close.signature, ...revert }] : order.reverts,
      // An intent's settlement leaves its escrow open for the client to read; swept back later.
      ...(order.kind === "intent"
        ? { sweepAfter: Date.now() + (options.escrowSweepDelayMs ?? ESCROW_SWEEP_DELAY_MS) }
        : {}),
    });
  }
  // It failed (the escrow is untouched: transactions are atomic), or it can no longer land: try again.
  if (status?.err || options.book.clock.blockHeight > close.validHeight) {
    return advanceOrder(db, order, { status: "open", close: null });
  }
  await chain.sendTransaction(Buffer.from(close.wire, "base64")).catch(() => {});
  return undefined;
}
