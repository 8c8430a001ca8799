/**
 * The TEST WALLET's own trading history, kept in this browser's local storage beside the wallet: one
 * record per fill the wallet made through the page (a buy, a sale or a redemption), with what
 * `/order-status` said it filled and what the chain says it cost in SOL. Positions read their average
 * cost, realized P&L and their settled/redeemed history from it; the market page marks these fills
 * among its recent trades. Free of @solana/kit, so the market page can read it without the signing
 * chunk.
 */
import { signal } from "@preact/signals";
import { getJson } from "../api";

const ADDRESS = "oddsgate.testWallet.address";
const HISTORY = "oddsgate.testWallet.history.";
/** One contract is 10^6 units of its outcome token. */
export const CONTRACT = 1_000_000n;

export interface FillRecord {
  /** The settling transaction's signature (the fill). */
  signature: string;
  /** The open transaction the wallet signed. */
  orderSignature: string;
  kind: "buy" | "sell" | "redeem";
  ticker: string;
  side: "yes" | "no";
  /** The outcome token's mint. */
  mint: string;
  /** Outcome units bought or given up (10^6 per contract). */
  contracts: string;
  /** USDC units paid (a buy, fees included) or received (a sale or a redemption). */
  usdc: string;
  /** SOL (lamports) the order took from the wallet, net, read from the chain; null when not measured. */
  lamports: string | null;
  /** Unix seconds. */
  time: number;
}

/** Bumped whenever a fill is recorded, so views re-read the history. */
export const historyVersion = signal(0);

/** The address of this browser's test wallet (kept by wallet.ts), or null. */
export function walletAddress(): string | null {
  return localStorage.getItem(ADDRESS);
}

export function rememberAddress(address: string | null): void {
  if (address) localStorage.setItem(ADDRESS, address);
  else localStorage.removeItem(ADDRESS);
}

/** Every fill of `address`, oldest first. */
export function fillsOf(address: string | null): FillRecord[] {
  if (!address) return [];
  try {
    const stored = JSON.parse(localStorage.getItem(HISTORY + address) ?? "[]") as unknown;
    return Array.isArray(stored) ? (stored as FillRecord[]) : [];
  } catch {
    return [];
  }
}

/** Records `fill` for `address` (once per settling signature). */
export function recordFill(address: string, fill: FillRecord): void {
  const fills = fillsOf(address).filter((known) => known.signature !== fill.signature);
  fills.push(fill);
  fills.sort((a, b) => a.time - b.time);
  localStorage.setItem(HISTORY + address, JSON.stringify(fills));
  historyVersion.value++;
}

/** A fill as the venue recorded it (`/api/v1/onchain-trades`). */
interface VenueFill {
  transactionSignature: string;
  inputMint: string;
  outputMint: string;
  inputAmount: number;
  outputAmount: number;
  createdAt: number;
  marketTicker: string | null;
  side: "yes" | "no" | null;
  usdPricePerContract: number;
}

const backfilled = new Set<string>();
/**
 * Adds the fills the venue recorded for `address` that this browser did not (made before it kept a
 * history, or from another browser with the same key): their SOL is not known. A sale of contracts
 * at exactly 1 USDC each on a market now settled is taken for a redemption. Asked once per page.
 */
export async function backfill(
  address: string,
  settled: (ticker: string) => Promise<boolean>,
): Promise<void> {
  if (backfilled.has(address)) return;
  backfilled.add(address);
  let venue: VenueFill[];
  try {
    venue = (
      await getJson<{ trades: VenueFill[] }>("/api/v1/onchain-trades", { wallet: address, limit: 250 })
    ).trades;
  } catch {
    backfilled.delete(address);
    return;
  }
  const known = new Set(fillsOf(address).map((fill) => fill.signature));
  const added: FillRecord[] = [];
  for (const trade of venue) {
    if (known.has(trade.transactionSignature) || !trade.marketTicker || !trade.side) continue;
    const bought = SETTLEMENT_MINTS.has(trade.inputMint);
    const kind: FillRecord["kind"] = bought
      ? "buy"
      : trade.usdPricePerContract === 1 && (await settled(trade.marketTicker))
        ? "redeem"
        : "sell";
    added.push({
      signature: trade.transactionSignature,
      orderSignature: "",
      kind,
      ticker: trade.marketTicker,
      side: trade.side,
      mint: bought ? trade.outputMint : trade.inputMint,
      contracts: String(bought ? trade.outputAmount : trade.inputAmount),
      usdc: String(bought ? trade.inputAmount : trade.outputAmount),
      lamports: null,
      time: trade.createdAt,
    });
  }
  if (added.length === 0) return;
  // Recorded meanwhile by this page: kept as recorded (with its SOL).
  const current = fillsOf(address);
  const now = new Set(current.map((fill) => fill.signature));
  const fills = [...current, ...added.filter((fill) => !now.has(fill.signature))].sort(
    (a, b) => a.time - b.time,
  );
  localStorage.setItem(HISTORY + address, JSON.stringify(fills));
  historyVersion.value++;
}

/** Settlement mints a buy pays in (USDC and CASH): what goes in on a buy, comes out of a sale. */
const SETTLEMENT_MINTS = new Set([
  "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
  "CASHx9KJUStyftLFWGvEVf59SGeG9sh5FfcnZMVPCASH",
]);

/** Forgets the history of `address` (with its wallet). */
export function forgetHistory(address: string): void {
  localStorage.removeItem(HISTORY + address);
  historyVersion.value++;
}

/** A position in one outcome token, from the wallet's own fills (average-cost method). */
export interface Ledger {
  /** Outcome units still held according to the fills. */
  held: bigint;
  /** USDC units the held contracts cost (their share of what the buys paid). */
  cost: bigint;
  /** USDC units gained or lost on contracts sold or redeemed: proceeds less their average cost. */
  realized: bigint;
  bought: bigint;
  sold: bigint;
  redeemed: bigint;
  /** USDC units received for the contracts redeemed. */
  redeemedFor: bigint;
  /** Lamports the fills took in SOL (fees and rent), where measured. */
  lamports: bigint;
  fills: FillRecord[];
}

/** The ledger of `mint` over `fills`: buys add at their price, sales and redemptions leave at the average cost. */
export function ledgerOf(fills: readonly FillRecord[], mint: string): Ledger {
  const ledger: Ledger = {
    held: 0n,
    cost: 0n,
    realized: 0n,
    bought: 0n,
    sold: 0n,
    redeemed: 0n,
    redeemedFor: 0n,
    lamports: 0n,
    fills: [],
  };
  for (const fill of fills) {
    if (fill.mint !== mint) continue;
    ledger.fills.push(fill);
    const contracts = BigInt(fill.contracts);
    const usdc = BigInt(fill.usdc);
    ledger.lamports += BigInt(fill.lamports ?? 0);
    if (fill.kind === "buy") {
      ledger.held += contracts;
      ledger.cost += usdc;
      ledger.bought += contracts;
      continue;
    }
    // What the contracts given up cost, at the average cost of those held.
    const basis = ledger.held > 0n ? (ledger.cost * contracts) / ledger.held : 0n;
    ledger.cost -= basis;
    ledger.held -= contracts;
    ledger.realized += usdc - basis;
    if (fill.kind === "redeem") {
      ledger.redeemed += contracts;
      ledger.redeemedFor += usdc;
    } else ledger.sold += contracts;
  }
  return ledger;
}

/** Average cost per contract in dollars, or null without contracts. */
export function averageCost(cost: bigint, units: bigint): number | null {
  return units > 0n ? Number(cost) / Number(units) : null;
}

/** A dollar price ("0.4500" or a number) in USDC units per contract: 450000n. */
export function priceUnits(dollars: string | number): bigint {
  return BigInt(Math.round(Number(dollars) * 1_000_000));
}

/** What `held` outcome units are worth at `unitPrice` (USDC units per contract). */
export function worthOf(held: bigint, unitPrice: bigint): bigint {
  return (held * unitPrice) / CONTRACT;
}

/** USDC units as a signed decimal: "+0.12", "−0.0345", "0". */
export function signedUsdc(amount: bigint): string {
  const magnitude = amount < 0n ? -amount : amount;
  const scale = 1_000_000n;
  const fraction = (magnitude % scale).toString().padStart(6, "0").replace(/0+$/, "");
  const text = fraction ? `${magnitude / scale}.${fraction}` : `${magnitude / scale}`;
  return amount > 0n ? `+${text}` : amount < 0n ? `−${text}` : text;
}
