/** Starts a sandbox chain on fresh storage for a test, and builds the transactions tests send. */
import { type Address, getTransactionEncoder, type KeyPairSigner } from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { findAssociatedTokenPda, getTransferCheckedInstruction } from "@solana-program/token";
import { buildSignedTransaction, signInstructions } from "../../src/chain/build-transaction.js";
import type { Chain } from "../../src/chain/chain.js";
import type { GenesisMarket } from "../../src/chain/market-ledger.js";
import { TOKEN_PROGRAM, USDC_DECIMALS } from "../../src/chain/programs.js";
import { ChainStore } from "../../src/chain/sandbox/chain-store.js";
import {
  type SandboxChainSettings,
  type StartedSandboxChain,
  startSandboxChain,
} from "../../src/chain/sandbox/start.js";
import { decodeMint, decodeTokenAccount } from "../../src/chain/token-layout.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { openStorage, type Storage } from "../../src/storage/database.js";
import type { BackendSettings } from "../support/backends.js";

export const TEST_VENUE_SEED = "test-venue-seed-0001";

export const TEST_MARKETS: GenesisMarket[] = [
  {
    marketLedger: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
    yesMint: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
    noMint: "4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R",
  },
];

export interface TestChain extends StartedSandboxChain {
  storage: Storage;
  /** Closes the chain and its storage. */
  stop(): Promise<void>;
}

/** What a test may set of the chain's settings; the rest default as below. */
export type TestChainOptions = Partial<Omit<SandboxChainSettings, "storage" | "dataDir">>;

/**
 * Starts a sandbox chain on the given storage settings: TEST_VENUE_SEED, TEST_MARKETS, RPC and PubSub
 * on free ports, unless `options` say otherwise (limits, logger, mode, authorize, host, clock...).
 */
export async function startTestChain(
  settings: BackendSettings,
  options: TestChainOptions = {},
): Promise<TestChain> {
  const storage = await openStorage(settings);
  const started = await startSandboxChain({
    storage,
    dataDir: settings.DATA_DIR,
    venueSeed: TEST_VENUE_SEED,
    rpcPort: 0,
    wsPort: 0,
    ...options,
    markets: options.markets ?? TEST_MARKETS,
  });
  return {
    ...started,
    storage,
    async stop() {
      await started.close();
      await storage.close();
    },
  };
}

/** One raw JSON-RPC call; its answer, result or error, as the node gave it. */
export async function rpcCall(url: string, method: string, params: unknown[] = []) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as {
    result?: unknown;
    error?: { code: number; message: string; data?: unknown };
  };
}

/**
 * One raw JSON-RPC sendTransaction of wire bytes (or their base64), as a wallet sends it, with
 * `config` beside base64 encoding; the answer.
 */
export async function rpcSend(
  rpcUrl: string,
  wire: Uint8Array | string,
  config: Record<string, unknown> = {},
): Promise<{ result?: string; error?: { code: number; message: string } }> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "sendTransaction",
      params: [
        typeof wire === "string" ? wire : Buffer.from(wire).toString("base64"),
        { encoding: "base64", ...config },
      ],
    }),
  });
  return (await response.json()) as { result?: string; error?: { code: number; message: string } };
}

/** One JSON-RPC simulateTransaction of a base64 transaction, signatures checked; the error it reports. */
export async function rpcSimulatedError(rpcUrl: string, transaction: string): Promise<unknown> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "simulateTransaction",
      params: [transaction, { encoding: "base64", sigVerify: true }],
    }),
  });
  return ((await response.json()) as { result: { value: { err: unknown } } }).result.value.err;
}

/** The associated USDC account of `owner`. */
export async function usdcAccountOf(owner: Address): Promise<Address> {
  const [ata] = await findAssociatedTokenPda({ owner, mint: USDC_MINT, tokenProgram: TOKEN_PROGRAM });
  return ata;
}

/** A signed USDC transfer between two wallets' associated accounts (the recipient's must exist). */
export async function usdcTransfer(
  chain: Pick<Chain, "getLatestBlockhash">,
  from: KeyPairSigner,
  to: Address,
  amount: bigint,
): Promise<Uint8Array> {
  return new Uint8Array(
    getTransactionEncoder().encode(await usdcTransferTransaction(chain, from, to, amount)),
  );
}

/** The same transfer as a kit transaction object (with its blockhash lifetime). */
export async function usdcTransferTransaction(
  chain: Pick<Chain, "getLatestBlockhash">,
  from: KeyPairSigner,
  to: Address,
  amount: bigint,
) {
  const instruction = getTransferCheckedInstruction({
    source: await usdcAccountOf(from.address),
    mint: USDC_MINT,
    destination: await usdcAccountOf(to),
    authority: from,
    amount,
    decimals: USDC_DECIMALS,
  });
  return signInstructions(from, [instruction], await chain.getLatestBlockhash());
}

/** A signed transfer of `lamports` from `from` to `to`, wire bytes. */
export async function solTransfer(
  chain: Pick<Chain, "getLatestBlockhash">,
  from: KeyPairSigner,
  to: Address,
  lamports: bigint,
): Promise<Uint8Array> {
  const instruction = getTransferSolInstruction({ source: from, destination: to, amount: lamports });
  return buildSignedTransaction(from, [instruction], await chain.getLatestBlockhash());
}

/** Every mint's supply and the sum of its token accounts' balances, from the stored (durable) state. */
export async function storedSupplies(
  storage: Storage,
): Promise<{ supplies: Map<string, bigint>; held: Map<string, bigint> }> {
  const supplies = new Map<string, bigint>();
  const held = new Map<string, bigint>();
  for (const account of await new ChainStore(storage.db).loadAccounts()) {
    const address = account.address as Address;
    const owner = account.owner as Address;
    const mint = decodeMint(address, owner, account.data);
    if (mint) supplies.set(address, mint.supply);
    const token = decodeTokenAccount(address, owner, account.data);
    if (token && !token.isNative) held.set(token.mint, (held.get(token.mint) ?? 0n) + token.amount);
  }
  return { supplies, held };
}
