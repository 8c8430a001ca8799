import {
  type Address,
  createSolanaRpcSubscriptions,
  devnet,
  generateKeyPairSigner,
  type Signature,
} from "@solana/kit";
import { Connection, type Logs, PublicKey } from "@solana/web3.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { faucet } from "../../src/chain/faucet.js";
import { SYSTEM_PROGRAM, TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { parseWireTransaction, transactionId } from "../../src/chain/wire.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { tempDir } from "../support/backends.js";
import { solTransfer, startTestChain, type TestChain, usdcAccountOf, usdcTransfer } from "./harness.js";

const WAIT_MS = 10_000;

/** Resolves with the first value `subscribe` hands its callback, within WAIT_MS. */
function firstOf<T>(name: string, subscribe: (callback: (value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${name} notification`)), WAIT_MS);
    subscribe((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}

/** The first item of a kit notification stream, within WAIT_MS. */
// kit hands a stream only what arrives while it is being read: each is read from before the send.
async function nextOf<T>(name: string, stream: AsyncIterable<T>): Promise<() => Promise<T>> {
  const next = stream[Symbol.asyncIterator]().next();
  return async () => {
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`no ${name} notification`)), WAIT_MS).unref(),
    );
    return (await Promise.race([next, timeout])).value as T;
  };
}

/** Waits until `check` holds (the server has taken a client's subscriptions). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function signatureOf(wire: Uint8Array): Signature {
  return transactionId(parseWireTransaction(wire));
}

describe("PubSub logs, program, root and signature subscriptions", () => {
  const dir = tempDir();
  let chain: TestChain;

  beforeAll(async () => {
    chain = await startTestChain({ DATA_DIR: dir.dir });
  });
  afterAll(async () => {
    await chain?.stop();
    await dir.cleanup();
  });

  async function fundedPair() {
    const alice = await generateKeyPairSigner();
    const bob = await generateKeyPairSigner();
    await chain.chain.requestAirdrop(alice.address, 1_000_000_000n);
    await faucet(chain.chain, chain.signers, alice.address, USDC_MINT, 5_000_000n);
    await faucet(chain.chain, chain.signers, bob.address, USDC_MINT, 1n);
    return { alice, bob };
  }

  it("notifies @solana/web3.js 1.x of logs, program accounts, roots and signatures, on one socket", async () => {
    const connection = new Connection(chain.rpcUrl, { commitment: "confirmed", wsEndpoint: chain.wsUrl });
    const { alice, bob } = await fundedPair();
    const before = chain.pubsubStats().subscriptions;
    const wire = await usdcTransfer(chain.chain, alice, bob.address, 1_000_000n);
    const signature = signatureOf(wire);
    const ids: number[] = [];

    const allLogs = firstOf<Logs>("allLogs", (callback) =>
      ids.push(connection.onLogs("all", callback, "confirmed")),
    );
    const mentioned = firstOf<Logs>("mentioned", (callback) =>
      ids.push(connection.onLogs(new PublicKey(alice.address), callback, "confirmed")),
    );
    const bobsAccount = firstOf<{ accountId: PublicKey; accountInfo: { data: Buffer } }>(
      "bobsAccount",
      (callback) =>
        ids.push(
          connection.onProgramAccountChange(new PublicKey(TOKEN_PROGRAM), (info) => callback(info), {
            commitment: "confirmed",
            filters: [{ dataSize: 165 }, { memcmp: { offset: 32, bytes: bob.address } }],
          }),
        ),
    );
    const root = firstOf<number>("root", (callback) => ids.push(connection.onRootChange(callback)));
    // web3.js ends its listener at the first notification, `received` included (and unsubscribes).
    const received = firstOf<unknown>("received", (callback) =>
      ids.push(
        connection.onSignatureWithOptions(signature, callback, {
          commitment: "confirmed",
          enableReceivedNotification: true,
        }),
      ),
    );
    const status = firstOf<unknown>("status", (callback) =>
      ids.push(connection.onSignatureWithOptions(signature, callback, { commitment: "confirmed" })),
    );
    await until(() => chain.pubsubStats().subscriptions === before + 6);

    await chain.chain.sendTransaction(wire);

    const logs = await allLogs;
    expect(logs.err).toBeNull();
    expect(logs.logs.some((line) => line.startsWith(`Program ${TOKEN_PROGRAM} invoke`))).toBe(true);
    const mention = await mentioned;
    expect(mention.signature).toBe(signature);
    const account = await bobsAccount;
    expect(account.accountId.toBase58()).toBe(await usdcAccountOf(bob.address));
    expect(account.accountInfo.data.readBigUInt64LE(64)).toBe(1_000_001n);
    expect(await root).toBeGreaterThan(0);
    expect(await received).toEqual({ type: "received" });
    expect(await status).toEqual({ type: "status", result: { err: null } });

    // Every subscription answered: none is retried, and web3.js keeps its one socket.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(chain.pubsubStats()).toMatchObject({ sockets: 1 });
    for (const id of ids.slice(0, 2)) await connection.removeOnLogsListener(id);
    await connection.removeProgramAccountChangeListener(ids[2] as number);
    await connection.removeRootChangeListener(ids[3] as number);
    // Nothing left subscribed: web3.js closes its socket (after its idle half second). One still open
    // when the chain stops would reconnect, and log its failure, for the rest of the worker's files.
    await until(() => chain.pubsubStats().sockets === 0);
    await until(() => chain.pubsubStats().subscriptions === before);
  });

  it("notifies @solana/kit's rpcSubscriptions of logs, program accounts, roots and signatures", async () => {
    const subscriptions = createSolanaRpcSubscriptions(devnet(chain.wsUrl));
    const abort = new AbortController();
    const { alice } = await fundedPair();
    const recipient = (await generateKeyPairSigner()).address;
    const wire = await solTransfer(chain.chain, alice, recipient, 5_000_000n);
    const signature = signatureOf(wire);
    const options = { abortSignal: abort.signal };
    const before = chain.pubsubStats().subscriptions;

    const logs = await subscriptions
      .logsNotifications({ mentions: [recipient] }, { commitment: "confirmed" })
      .subscribe(options);
    const programs = await subscriptions
      .programNotifications(SYSTEM_PROGRAM, {
        commitment: "confirmed",
        encoding: "base64",
        filters: [{ dataSize: 0n }],
      })
      .subscribe(options);
    const roots = await subscriptions.rootNotifications().subscribe(options);
    const statuses = await subscriptions
      .signatureNotifications(signature, { commitment: "confirmed", enableReceivedNotification: true })
      .subscribe(options);
    await until(() => chain.pubsubStats().subscriptions === before + 4);
    const [nextLog, nextProgram, nextRoot] = [
      await nextOf("logs", logs),
      await nextOf("programs", programs),
      await nextOf("roots", roots),
    ];
    const statusIterator = statuses[Symbol.asyncIterator]();
    const received = statusIterator.next();

    await chain.chain.sendTransaction(wire);

    const logged = await nextLog();
    expect(logged.value).toMatchObject({ signature, err: null });
    expect(logged.value.logs).toContain(`Program ${SYSTEM_PROGRAM} success`);
    const changed = await nextProgram();
    expect([alice.address, recipient]).toContain(changed.value.pubkey as Address);
    expect(changed.value.account.owner).toBe(SYSTEM_PROGRAM);
    expect(typeof (await nextRoot())).toBe("bigint");
    expect((await received).value?.value).toBe("receivedSignature");
    expect((await statusIterator.next()).value?.value).toEqual({ err: null });
    abort.abort();
  });

  it("refuses mentions of more than one address, too many filters and bad params, with -32602", async () => {
    const socket = new WebSocket(chain.wsUrl);
    await new Promise((resolve) => socket.on("open", resolve));
    const answers = new Map<number, { error?: { code: number; message: string }; result?: unknown }>();
    socket.on("message", (data) => {
      const message = JSON.parse(String(data));
      if (typeof message.id === "number") answers.set(message.id, message);
    });
    const address = (await generateKeyPairSigner()).address;
    const requests: [string, unknown[]][] = [
      ["logsSubscribe", [{ mentions: [address, address] }]],
      ["logsSubscribe", [{ mentions: [] }]],
      ["logsSubscribe", ["everything"]],
      [
        "programSubscribe",
        [
          TOKEN_PROGRAM,
          { filters: [{ dataSize: 1 }, { dataSize: 2 }, { dataSize: 3 }, { dataSize: 4 }, { dataSize: 5 }] },
        ],
      ],
      ["programSubscribe", [TOKEN_PROGRAM, { filters: [{ memcmp: { offset: 0, bytes: "1".repeat(500) } }] }]],
      ["programSubscribe", ["not-an-address"]],
      ["rootSubscribe", [1]],
      ["signatureSubscribe", ["1".repeat(64), { enableReceivedNotification: "yes" }]],
    ];
    for (const [id, [method, params]] of requests.entries()) {
      socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    }
    await until(() => answers.size === requests.length);
    for (const [id] of requests.entries()) expect(answers.get(id)?.error?.code).toBe(-32602);
    expect(answers.get(0)?.error?.message).toBe("Invalid Request: Only 1 address supported");
    expect(answers.get(3)?.error?.message).toBe("Too many filters provided; max 4");
    socket.close();
  });
});
