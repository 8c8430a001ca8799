/**
 * Orders found by their open transaction's signature. An async order's open transaction is signed and
 * sent by the user, so the venue first learns its signature when asked: it reads the transaction from
 * the chain, finds the order id in its memo, and records the signature.
 */
import type { Signature } from "@solana/kit";
import type { Kysely } from "kysely";
import type { Chain } from "../../chain/chain.js";
import { parseWireTransaction } from "../../chain/wire.js";
import type { Tables } from "../../storage/database.js";
import { openMemoOf } from "./escrow.js";
import { type OrderRecord, orderById, orderBySignature, recordOpenSignature } from "./order-store.js";

/** The order opened by the transaction with this signature, if any. */
export async function orderByOpenSignature(
  deps: { db: Kysely<Tables>; chain: Chain },
  signature: Signature,
): Promise<OrderRecord | undefined> {
  return (await orderBySignature(deps.db, signature)) ?? (await learnFromChain(deps, signature));
}

/** The async order an open transaction on the chain names in its memo, now also found by this signature. */
async function learnFromChain(
  deps: { db: Kysely<Tables>; chain: Chain },
  signature: Signature,
): Promise<OrderRecord | undefined> {
  const record = await deps.chain.getTransaction(signature);
  if (!record) return undefined;
  const memo = openMemoOf(parseWireTransaction(record.wire));
  const order = memo ? await orderById(deps.db, memo.orderId) : undefined;
  if (order?.kind !== "async") return undefined;
  await recordOpenSignature(deps.db, order.id, signature);
  return { ...order, openSignature: signature };
}
