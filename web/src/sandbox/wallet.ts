/**
 * The sandbox's TEST WALLET: a keypair made in this browser and kept in local storage (never for real
 * funds), the chain calls the page needs (through the venue's `/explorer/rpc` relay), and the order
 * flow: quote with `/order`, sign with @solana/kit, send, follow `/order-status` to the fill.
 */
import { signal } from "@preact/signals";
import {
  createKeyPairSignerFromPrivateKeyBytes,
  getBase64EncodedWireTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  partiallySignTransaction,
} from "@solana/kit";
import { ApiError, getJson, postJson, USDC_MINT } from "../api";
import { type FillRecord, recordFill, rememberAddress } from "./history";

const STORAGE = "oddsgate.testWallet";
const TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
const TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb";

/** The wallet of this browser, once loaded. */
export const wallet = signal<KeyPairSigner | null>(null);
/** Bumped after anything that moves balances, so views re-read them. */
export const balancesVersion = signal(0);

const toHex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
const fromHex = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));

/** Loads the stored wallet, if any. */
export async function loadWallet(): Promise<void> {
  const stored = localStorage.getItem(STORAGE);
  if (stored && /^[0-9a-f]{64}$/.test(stored)) {
    wallet.value = await createKeyPairSignerFromPrivateKeyBytes(fromHex(stored));
    rememberAddress(wallet.value.address);
  }
}

/** Makes a new wallet (replacing any stored one) from 32 random bytes. */
export async function createWallet(): Promise<void> {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  localStorage.setItem(STORAGE, toHex(seed));
  wallet.value = await createKeyPairSignerFromPrivateKeyBytes(seed);
  rememberAddress(wallet.value.address);
  balancesVersion.value++;
}

/** Forgets the wallet. */
export function forgetWallet(): void {
  localStorage.removeItem(STORAGE);
  rememberAddress(null);
  wallet.value = null;
}

let rpcId = 0;
/** One JSON-RPC call through the venue's relay. */
export async function rpc<T>(method: string, params: unknown[]): Promise<T> {
  const body = await postJson<{ result?: T; error?: { message: string } }>("/explorer/rpc", {
    jsonrpc: "2.0",
    id: ++rpcId,
    method,
    params,
  });
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

function requireWallet(): KeyPairSigner {
  if (!wallet.value) throw new Error("make a test wallet first");
  return wallet.value;
}

/** Asks the sandbox for `lamports` of SOL, waiting until the airdrop landed. */
export async function airdrop(lamports = 1_000_000_000): Promise<void> {
  const signature = await rpc<string>("requestAirdrop", [requireWallet().address, lamports]);
  await confirmed(signature);
  balancesVersion.value++;
}

/** Mints `amount` (smallest units) of `mint` to the wallet with the sandbox's `/dev/faucet`. */
export async function faucet(mint = USDC_MINT, amount = "100000000"): Promise<void> {
  await postJson("/dev/faucet", { wallet: requireWallet().address, mint, amount });
  balancesVersion.value++;
}

async function confirmed(signature: string): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const statuses = await rpc<{ value: ({ err: unknown } | null)[] }>("getSignatureStatuses", [[signature]]);
    const status = statuses.value[0];
    if (status) {
      if (status.err) throw new Error(`transaction failed: ${JSON.stringify(status.err)}`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error("the transaction was not confirmed");
}

export interface Holding {
  mint: string;
  amount: bigint;
  program: "token" | "token-2022";
}

interface ParsedAccount {
  account: { data: { parsed: { info: { mint: string; tokenAmount: { amount: string } } } } };
}

/** The wallet's SOL (lamports) and token holdings of both token programs. */
export async function balances(): Promise<{ lamports: bigint; holdings: Holding[] }> {
  const owner = requireWallet().address;
  const [sol, classic, extended] = await Promise.all([
    rpc<{ value: number }>("getBalance", [owner]),
    rpc<{ value: ParsedAccount[] }>("getTokenAccountsByOwner", [
      owner,
      { programId: TOKEN_PROGRAM },
      { encoding: "jsonParsed" },
    ]),
    rpc<{ value: ParsedAccount[] }>("getTokenAccountsByOwner", [
      owner,
      { programId: TOKEN_2022_PROGRAM },
      { encoding: "jsonParsed" },
    ]),
  ]);
  const holdings = new Map<string, Holding>();
  const add = (accounts: ParsedAccount[], program: Holding["program"]) => {
    for (const entry of accounts) {
      const info = entry.account.data.parsed.info;
      const held = holdings.get(info.mint);
      const amount = BigInt(info.tokenAmount.amount) + (held?.amount ?? 0n);
      holdings.set(info.mint, { mint: info.mint, amount, program });
    }
  };
  add(classic.value, "token");
  add(extended.value, "token-2022");
  return { lamports: BigInt(sol.value), holdings: [...holdings.values()] };
}

/** One leg of a quote's route: the venue and pool it trades through. */
export interface RouteLeg {
  venue: string;
  marketKey: string;
  inputMint: string;
  outputMint: string;
  inAmount: string;
  outAmount: string;
}

export interface OrderQuote {
  inputMint: string;
  outputMint: string;
  inAmount: string;
  outAmount: string;
  otherAmountThreshold: string;
  slippageBps: number;
  priceImpactPct: string;
  platformFee: { amount: string; feeBps: number; mode?: "outputMint" | "inputMint" } | null;
  executionMode: "sync" | "async";
  routePlan?: RouteLeg[];
  prioritizationFeeLamports?: number;
  computeUnitLimit?: number;
  lastValidBlockHeight?: number;
  initPredictionMarketCost?: number;
  transaction?: string;
}

/** A firm quote for the wallet (with its transaction to sign) from `/order`. */
export function quote(
  inputMint: string,
  outputMint: string,
  amount: bigint,
  slippageBps = 50,
): Promise<OrderQuote> {
  return getJson<OrderQuote>("/order", {
    inputMint,
    outputMint,
    amount: amount.toString(),
    slippageBps,
    userPublicKey: requireWallet().address,
  });
}

export interface OrderStatus {
  status: "pending" | "expired" | "failed" | "open" | "pendingClose" | "closed";
  inAmount?: string;
  outAmount?: string;
  fills?: { signature: string; inputMint: string; outputMint: string; inAmount: string; outAmount: string }[];
  reverts?: { signature: string; mint: string; amount: string }[];
  /** The open transaction's signature (set by `execute`, not by the venue). */
  openSignature?: string;
}

/**
 * Signs the quote's transaction with the wallet, sends it, and follows the order until it is settled;
 * `progress` hears each status on the way. Async (prediction-market) orders are escrowed and settled
 * later, so `/order-status` follows them to the fill. Sync (spot) orders are not escrowed (their
 * `/order-status` is 404 forever): they fill in the transaction itself, so its signature status is
 * the fill, at exactly the quoted amounts (a firm quote's legs pay exact amounts).
 */
export async function execute(order: OrderQuote, progress: (status: string) => void): Promise<OrderStatus> {
  if (!order.transaction) throw new Error("the quote carries no transaction");
  const signer = requireWallet();
  const bytes = Uint8Array.from(atob(order.transaction), (char) => char.charCodeAt(0));
  const signed = await partiallySignTransaction([signer.keyPair], getTransactionDecoder().decode(bytes));
  const signature = await rpc<string>("sendTransaction", [
    getBase64EncodedWireTransaction(signed),
    { encoding: "base64" },
  ]);
  progress(`sent ${signature.slice(0, 8)}…`);
  if (order.executionMode === "sync") return settledInTransaction(order, signature);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const status = await getJson<OrderStatus>("/order-status", { signature });
      progress(status.status);
      if (["closed", "expired", "failed"].includes(status.status)) {
        balancesVersion.value++;
        return { ...status, openSignature: signature };
      }
    } catch (error) {
      // Not known yet: the venue has not seen the transaction's escrow.
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error("the order did not settle within a minute");
}

async function settledInTransaction(order: OrderQuote, signature: string): Promise<OrderStatus> {
  try {
    await confirmed(signature);
  } finally {
    balancesVersion.value++;
  }
  const { inputMint, outputMint, inAmount, outAmount } = order;
  return {
    status: "closed",
    inAmount,
    outAmount,
    fills: [{ signature, inputMint, outputMint, inAmount, outAmount }],
  };
}

/** What an outcome order is about: its market, side and outcome mint, and which way it goes. */
export interface OutcomeTrade {
  ticker: string;
  side: "yes" | "no";
  mint: string;
  kind: FillRecord["kind"];
}

/** What an order took from the wallet, read from the chain before it was sent and after it settled. */
export interface Paid {
  lamports: bigint;
  usdc: bigint;
}

async function solAndUsdc(): Promise<Paid> {
  const read = await balances();
  const usdc = read.holdings.find((holding) => holding.mint === USDC_MINT)?.amount ?? 0n;
  return { lamports: read.lamports, usdc };
}

/**
 * Executes an outcome order (see `execute`) and records its fill in the wallet's history, with the
 * SOL and USDC the wallet's balances lost between sending it and its settlement (so a fee or a rent
 * the ticket did not show would show there).
 */
export async function tradeOutcome(
  order: OrderQuote,
  about: OutcomeTrade,
  progress: (status: string) => void,
): Promise<{ status: OrderStatus; paid: Paid }> {
  const before = await solAndUsdc();
  const status = await execute(order, progress);
  const after = await solAndUsdc();
  const paid = { lamports: before.lamports - after.lamports, usdc: before.usdc - after.usdc };
  const fill = status.fills?.[0];
  const owner = wallet.value?.address;
  if (status.status === "closed" && fill && owner) {
    const buying = about.kind === "buy";
    recordFill(owner, {
      signature: fill.signature,
      orderSignature: status.openSignature ?? "",
      kind: about.kind,
      ticker: about.ticker,
      side: about.side,
      mint: about.mint,
      contracts: buying ? fill.outAmount : fill.inAmount,
      usdc: buying ? fill.inAmount : fill.outAmount,
      lamports: paid.lamports.toString(),
      time: Math.floor(Date.now() / 1000),
    });
  }
  return { status, paid };
}

/** Redeems `amount` units of the winning outcome `mint` for USDC, recording it in the history. */
export async function redeem(
  about: Omit<OutcomeTrade, "kind">,
  amount: bigint,
  progress: (status: string) => void,
): Promise<{ status: OrderStatus; paid: Paid }> {
  const order = await quote(about.mint, USDC_MINT, amount);
  const result = await tradeOutcome(order, { ...about, kind: "redeem" }, progress);
  if (result.status.status !== "closed") throw new Error(`the redemption ended ${result.status.status}`);
  return result;
}
