/**
 * The steady mixed load on both instances, in rounds: every `roundMs` each instance gets an event
 * read, a market list, an order book (relayed from the upstream), a quote-only `GET /order` and an
 * intent (`GET /intent` with a funded wallet, signed, `POST /submit-intent`). A round is fully
 * successful when every one of its requests answered 200; every answer is kept with its time, so
 * each fault's window can be read back (answers, errors by code, the first good round after it).
 */
import {
  type Address,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  partiallySignTransaction,
} from "@solana/kit";
import { demoTokens } from "../../src/chain/demo-tokens.js";
import { RpcChain } from "../../src/chain/rpc-client.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import type { IntentQuoteResponse, SubmitIntentResponse } from "../../src/contract/trade.js";
import { random, sleep } from "../support.js";
import { type Cluster, type InstanceName, VENUE_SEED } from "./cluster.js";

export type RequestKind = "event" | "markets" | "orderbook" | "quote" | "intent";

/** One request's answer: 200, or what went wrong (`503 not_ready`, `ECONNREFUSED`, `timeout`...). */
export interface Answer {
  at: number;
  instance: InstanceName;
  kind: RequestKind;
  ok: boolean;
  code: string;
  /** How long the answer took. */
  ms: number;
}

export interface Round {
  startedAt: number;
  endedAt: number;
  ok: boolean;
}

/** An intent sent with `POST /submit-intent`: acknowledged when it answered 200 with its signature. */
export interface Submission {
  at: number;
  instance: InstanceName;
  wallet: Address;
  /** The open transaction's signature, known before sending (the wallet signed it). */
  signature: string;
  acknowledged: boolean;
  /** What the POST answered: `200`, `400 open_transaction_simulation_failed`, `timeout`... */
  code: string;
}

/** The demo tokens intents buy with USDC (each has a direct USDC pool). */
const OUTPUTS = ["dETH", "dBTC", "dJUP", "dBONK", "dRAY"];
/** Each wallet's grant: enough USDC for every intent the run can give it, SOL for fees and budgets. */
const WALLET_USDC = 500_000_000n;
const WALLET_LAMPORTS = 3_000_000_000n;
/** How long one request may take before it counts as a `timeout`. */
const REQUEST_TIMEOUT_MS = 5_000;

/** What a request failed with, as one short code. */
function failureCode(error: unknown): string {
  const named = error as { name?: string; cause?: { code?: string; name?: string } };
  if (named.name === "TimeoutError" || named.name === "AbortError") return "timeout";
  return named.cause?.code ?? named.cause?.name ?? named.name ?? "error";
}

async function call(
  url: string,
  init: RequestInit = {},
): Promise<{ ok: boolean; code: string; body?: unknown }> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.status === 200) return { ok: true, code: "200", body };
    const code = (body as { code?: string } | undefined)?.code;
    return { ok: false, code: `${response.status}${code ? ` ${code}` : ""}` };
  } catch (error) {
    return { ok: false, code: failureCode(error) };
  }
}

export class Load {
  readonly answers: Answer[] = [];
  readonly rounds: Round[] = [];
  readonly submissions: Submission[] = [];
  readonly outputMints: Address[];
  private running = false;
  private loop: Promise<void> | undefined;
  private nextWallet = 0;
  private readonly pick = random(22);
  private readonly inFlight = new Set<Promise<void>>();

  private constructor(
    private readonly cluster: Cluster,
    readonly wallets: KeyPairSigner[],
    private readonly events: string[],
    private readonly markets: string[],
    private readonly roundMs: number,
  ) {
    const tokens = demoTokens(VENUE_SEED);
    this.outputMints = OUTPUTS.map(
      (symbol) => tokens.find((token) => token.symbol === symbol)?.address as Address,
    );
  }

  /** Reads the catalogue's active events and markets and funds `walletCount` wallets through instance A. */
  static async prepare(cluster: Cluster, walletCount: number, roundMs: number): Promise<Load> {
    const a = cluster.instances.A.url;
    const events = (await (await fetch(`${a}/api/v1/events?status=active&limit=50`)).json()) as {
      events: { ticker: string }[];
    };
    const markets = (await (await fetch(`${a}/api/v1/markets?status=active&limit=50`)).json()) as {
      markets: { ticker: string }[];
    };
    const chain = new RpcChain({ url: cluster.rpcUrl, pollIntervalMs: 100 });
    const wallets = await Promise.all(Array.from({ length: walletCount }, () => generateKeyPairSigner()));
    for (let i = 0; i < wallets.length; i += 8) {
      await Promise.all(
        wallets.slice(i, i + 8).map(async (wallet) => {
          await chain.requestAirdrop(wallet.address, WALLET_LAMPORTS);
          const grant = await fetch(`${a}/dev/faucet`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ wallet: wallet.address, mint: USDC_MINT, amount: WALLET_USDC.toString() }),
          });
          if (grant.status !== 200)
            throw new Error(`/dev/faucet answered ${grant.status}: ${await grant.text()}`);
        }),
      );
    }
    return new Load(
      cluster,
      wallets,
      events.events.map((e) => e.ticker),
      markets.markets.map((m) => m.ticker),
      roundMs,
    );
  }

  /** USDC each wallet was given. */
  get walletUsdc(): bigint {
    return WALLET_USDC;
  }

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        const started = performance.now();
        const round = this.round();
        this.inFlight.add(round);
        void round.finally(() => this.inFlight.delete(round));
        await sleep(Math.max(0, this.roundMs - (performance.now() - started)));
      }
    })();
  }

  /** Stops starting rounds and waits for those in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await Promise.all([...this.inFlight]);
  }

  /** One round: every request to both instances at once. */
  private async round(): Promise<void> {
    const startedAt = Date.now();
    const results = await Promise.all(
      (["A", "B"] as const).flatMap((instance) => {
        const base = this.cluster.instances[instance].url;
        const event = this.events[Math.floor(this.pick() * this.events.length)];
        const market = this.markets[Math.floor(this.pick() * this.markets.length)];
        const output = this.outputMints[Math.floor(this.pick() * this.outputMints.length)] as Address;
        return [
          this.timed(instance, "event", () => call(`${base}/api/v1/event/${event}?withNestedMarkets=true`)),
          this.timed(instance, "markets", () => call(`${base}/api/v1/markets?status=active&limit=20`)),
          this.timed(instance, "orderbook", () => call(`${base}/api/v1/orderbook/${market}`)),
          this.timed(instance, "quote", () =>
            call(`${base}/order?inputMint=${USDC_MINT}&outputMint=${output}&amount=2000000`),
          ),
          this.timed(instance, "intent", () => this.intent(instance, base, output)),
        ];
      }),
    );
    this.rounds.push({ startedAt, endedAt: Date.now(), ok: results.every(Boolean) });
  }

  private async timed(
    instance: InstanceName,
    kind: RequestKind,
    request: () => Promise<{ ok: boolean; code: string }>,
  ): Promise<boolean> {
    const at = Date.now();
    const { ok, code } = await request();
    this.answers.push({ at, instance, kind, ok, code, ms: Date.now() - at });
    return ok;
  }

  /** GET /intent for the next wallet, its signature on the open transaction, POST /submit-intent. */
  private async intent(
    instance: InstanceName,
    base: string,
    output: Address,
  ): Promise<{ ok: boolean; code: string }> {
    const wallet = this.wallets[this.nextWallet++ % this.wallets.length] as KeyPairSigner;
    const amount = 1_000_000 + Math.floor(this.pick() * 2_000_000);
    const quote = await call(
      `${base}/intent?inputMint=${USDC_MINT}&outputMint=${output}&amount=${amount}&userPublicKey=${wallet.address}&slippageBps=300`,
    );
    const body = quote.body as IntentQuoteResponse | undefined;
    if (!quote.ok || !body?.openTransaction) return { ok: false, code: `intent ${quote.code}` };
    const decoded = getTransactionDecoder().decode(Buffer.from(body.openTransaction, "base64"));
    const signedTransaction = await partiallySignTransaction([wallet.keyPair], decoded);
    const signed = getBase64EncodedWireTransaction(signedTransaction);
    const submission: Submission = {
      at: Date.now(),
      instance,
      wallet: wallet.address,
      signature: getSignatureFromTransaction(signedTransaction),
      acknowledged: false,
      code: "",
    };
    this.submissions.push(submission);
    const answer = await call(`${base}/submit-intent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ quoteResponse: body, signedOpenTransaction: signed }),
    });
    const signature = (answer.body as SubmitIntentResponse | undefined)?.openTransactionSignature;
    submission.acknowledged = answer.ok && signature === submission.signature;
    submission.code = answer.ok && !submission.acknowledged ? "200 without its signature" : answer.code;
    return { ok: submission.acknowledged, code: answer.ok ? submission.code : `submit ${answer.code}` };
  }
}
