/**
 * The `base64+zstd` account encoding, as Agave answers it: `[base64(zstd(bytes)), "base64+zstd"]`
 * from getAccountInfo, getMultipleAccounts, getProgramAccounts, accountSubscribe and
 * programSubscribe, a data slice taken before compression. A third-party decoder (fzstd, not the
 * library the node compresses with) reads each back to the bytes `base64` answers with.
 */

import { randomBytes } from "node:crypto";
import { type Address, generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import { decompress } from "fzstd";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { faucet } from "../../src/chain/faucet.js";
import { TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { tempDir } from "../support/backends.js";
import { rpcCall, startTestChain, type TestChain, usdcAccountOf, usdcTransfer } from "./harness.js";

const WAIT_MS = 10_000;
// Every zstd frame starts with this magic number (little-endian 0xFD2FB528).
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

interface EncodedAccount {
  data: [string, string];
}

/** The bytes of an account answered as `[base64(zstd(bytes)), "base64+zstd"]`, decompressed by fzstd. */
function unzstd(account: EncodedAccount): Buffer {
  expect(account.data[1]).toBe("base64+zstd");
  const frame = Buffer.from(account.data[0], "base64");
  expect([...frame.subarray(0, 4)]).toEqual(ZSTD_MAGIC);
  return Buffer.from(decompress(frame));
}

function base64Of(account: EncodedAccount): Buffer {
  expect(account.data[1]).toBe("base64");
  return Buffer.from(account.data[0], "base64");
}

describe("base64+zstd account encoding", () => {
  const dir = tempDir();
  let chain: TestChain;
  let wallet: KeyPairSigner;
  let owner: Address;
  let usdc: Address;

  beforeAll(async () => {
    chain = await startTestChain({ DATA_DIR: dir.dir });
    wallet = await generateKeyPairSigner();
    owner = wallet.address;
    await chain.chain.requestAirdrop(owner, 1_000_000_000n);
    await faucet(chain.chain, chain.signers, owner, USDC_MINT, 12_345_678n);
    usdc = await usdcAccountOf(owner);
  });
  afterAll(async () => {
    await chain?.stop();
    await dir.cleanup();
  });

  async function result<T>(method: string, params: unknown[]): Promise<T> {
    const answer = await rpcCall(chain.rpcUrl, method, params);
    expect(answer.error).toBeUndefined();
    return answer.result as T;
  }

  it("getAccountInfo and getMultipleAccounts: the same bytes as base64, whole or sliced", async () => {
    const plain = await result<{ value: EncodedAccount }>("getAccountInfo", [usdc, { encoding: "base64" }]);
    const zipped = await result<{ value: EncodedAccount & { space: number } }>("getAccountInfo", [
      usdc,
      { encoding: "base64+zstd" },
    ]);
    const bytes = base64Of(plain.value);
    expect(bytes).toHaveLength(165);
    expect(unzstd(zipped.value)).toEqual(bytes);
    expect(zipped.value.space).toBe(165);

    const slice = { offset: 64, length: 8 };
    const sliced = await result<{ value: EncodedAccount }>("getAccountInfo", [
      usdc,
      { encoding: "base64+zstd", dataSlice: slice },
    ]);
    expect(unzstd(sliced.value).readBigUInt64LE(0)).toBe(12_345_678n);

    const nobody = (await generateKeyPairSigner()).address;
    const many = await result<{ value: (EncodedAccount | null)[] }>("getMultipleAccounts", [
      [USDC_MINT, usdc, owner, nobody],
      { encoding: "base64+zstd" },
    ]);
    const mint = await result<{ value: EncodedAccount }>("getAccountInfo", [
      USDC_MINT,
      { encoding: "base64" },
    ]);
    expect(unzstd(many.value[0] as EncodedAccount)).toEqual(base64Of(mint.value));
    expect(unzstd(many.value[1] as EncodedAccount)).toEqual(bytes);
    // A wallet holds no data: a frame of nothing. An address without an account: null, in every encoding.
    expect(unzstd(many.value[2] as EncodedAccount)).toHaveLength(0);
    expect(many.value[3]).toBeNull();
  });

  it("getProgramAccounts: each account compressed on its own", async () => {
    const config = (encoding: string) => ({
      encoding,
      filters: [{ dataSize: 165 }, { memcmp: { offset: 32, bytes: owner } }],
    });
    const plain = await result<{ pubkey: string; account: EncodedAccount }[]>("getProgramAccounts", [
      TOKEN_PROGRAM,
      config("base64"),
    ]);
    const zipped = await result<{ pubkey: string; account: EncodedAccount }[]>("getProgramAccounts", [
      TOKEN_PROGRAM,
      config("base64+zstd"),
    ]);
    expect(zipped.map((item) => item.pubkey)).toEqual([usdc]);
    expect(zipped.map((item) => unzstd(item.account))).toEqual(plain.map((item) => base64Of(item.account)));
  });

  it("simulateTransaction: the accounts asked for, as the transaction left them", async () => {
    const recipient = (await generateKeyPairSigner()).address;
    await faucet(chain.chain, chain.signers, recipient, USDC_MINT, 1n);
    const wire = Buffer.from(await usdcTransfer(chain.chain, wallet, recipient, 345_678n)).toString("base64");
    const simulated = await result<{ value: { err: unknown; accounts: EncodedAccount[] } }>(
      "simulateTransaction",
      [wire, { encoding: "base64", accounts: { addresses: [usdc], encoding: "base64+zstd" } }],
    );
    expect(simulated.value.err).toBeNull();
    expect(unzstd(simulated.value.accounts[0] as EncodedAccount).readBigUInt64LE(64)).toBe(12_000_000n);
  });

  it("accountSubscribe and programSubscribe notify in base64+zstd", async () => {
    const socket = new WebSocket(chain.wsUrl);
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    const notifications = new Map<string, EncodedAccount>();
    const subscribed = new Map<number, number>();
    socket.on("message", (raw) => {
      const message = JSON.parse(String(raw));
      if (typeof message.id === "number") subscribed.set(message.id, message.result);
      if (message.method === "accountNotification") notifications.set("account", message.params.result.value);
      if (message.method === "programNotification") {
        notifications.set("program", message.params.result.value.account);
      }
    });
    const send = (id: number, method: string, params: unknown[]) =>
      socket.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    send(1, "accountSubscribe", [usdc, { encoding: "base64+zstd", commitment: "confirmed" }]);
    send(2, "programSubscribe", [
      TOKEN_PROGRAM,
      { encoding: "base64+zstd", filters: [{ memcmp: { offset: 32, bytes: owner } }] },
    ]);
    await until(() => subscribed.size === 2);
    expect([...subscribed.values()].every((id) => typeof id === "number")).toBe(true);

    await faucet(chain.chain, chain.signers, owner, USDC_MINT, 1n);
    await until(() => notifications.size === 2);
    const after = await result<{ value: EncodedAccount }>("getAccountInfo", [usdc, { encoding: "base64" }]);
    const bytes = base64Of(after.value);
    expect(bytes.readBigUInt64LE(64)).toBe(12_345_679n);
    expect(unzstd(notifications.get("account") as EncodedAccount)).toEqual(bytes);
    expect(unzstd(notifications.get("program") as EncodedAccount)).toEqual(bytes);
    socket.close();
  });

  it("getProgramAccounts: answers other requests while it compresses a large scan", async () => {
    // 600 accounts of 100 KB (60 MB) of a program's own, of random nibbles (half compressible, the
    // slow case for zstd): compressing them takes most of a second.
    const program = (await generateKeyPairSigner()).address;
    const data = Buffer.from(randomBytes(100_000).map((byte) => byte & 15));
    const accounts = await Promise.all(
      Array.from({ length: 600 }, async () => ({
        address: (await generateKeyPairSigner()).address,
        lamports: 1_000_000_000n,
        owner: program,
        executable: false,
        data,
      })),
    );
    await chain.chain.installAccounts(accounts);

    // Its answer's headers leave the node once the whole answer is encoded: until then, a node that
    // never yields answers nothing else.
    let encoded = false;
    const scan = fetch(chain.rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "getProgramAccounts",
        params: [program, { encoding: "base64+zstd" }],
      }),
    }).then((response) => {
      encoded = true;
      return response.json() as Promise<{ result: { pubkey: string; account: EncodedAccount }[] }>;
    });
    let answeredDuringScan = 0;
    while (!encoded) {
      const health = await rpcCall(chain.rpcUrl, "getHealth", []);
      expect(health.result).toBe("ok");
      if (!encoded) answeredDuringScan++;
    }
    const value = (await scan).result;
    expect(value).toHaveLength(600);
    expect(unzstd((value[0] as { account: EncodedAccount }).account)).toEqual(data);
    // Without turns of the event loop, a health check sent after the scan would wait for all of it.
    expect(answeredDuringScan).toBeGreaterThan(1);
  });
});

/** Waits until `check` holds (an answer or a notification has arrived). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
