/**
 * Surfpool's account cheatcodes: `surfnet_setAccount`, `surfnet_setTokenAccount` and
 * `surfnet_resetAccount` write through the commit path (read back by web3.js, heard by PubSub,
 * stored across a restart), refuse bad params with -32602, and do not exist in production.
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { Connection, PublicKey } from "@solana/web3.js";
import { findAssociatedTokenPda } from "@solana-program/token";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { MAX_ACCOUNT_DATA_BYTES } from "../../src/chain/sandbox/account-cheatcodes.js";
import { createCheatcodeMethods } from "../../src/chain/sandbox/cheatcodes.js";
import { USDC_MINT } from "../../src/contract/markets.js";
import { tempDir } from "../support/backends.js";
import { oddsgate } from "../support/cli.js";
import { startTestChain, type TestChain } from "./harness.js";

interface RpcAnswer<T> {
  result?: T;
  error?: { code: number; message: string };
}

async function call<T>(url: string, method: string, params: unknown[] = []): Promise<RpcAnswer<T>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as RpcAnswer<T>;
}

async function cheat(url: string, method: string, params: unknown[]): Promise<unknown> {
  const answer = await call(url, method, params);
  expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
  return answer.result;
}

/** The jsonParsed info of a token account, as web3.js reads it. */
async function parsedInfo(connection: Connection, account: Address): Promise<Record<string, unknown>> {
  const parsed = await connection.getParsedAccountInfo(new PublicKey(account));
  const data = parsed.value?.data as { parsed: { info: Record<string, unknown> } } | undefined;
  return data?.parsed.info ?? {};
}

async function usdcAta(owner: Address): Promise<Address> {
  return (await findAssociatedTokenPda({ owner, mint: USDC_MINT, tokenProgram: TOKEN_PROGRAM }))[0];
}

describe("account cheatcodes", () => {
  const dir = tempDir();
  let chain: TestChain;
  let connection: Connection;

  beforeAll(async () => {
    chain = await startTestChain({ DATA_DIR: dir.dir });
    connection = new Connection(chain.rpcUrl, "confirmed");
  });
  afterAll(async () => {
    await chain?.stop();
    await dir.cleanup();
  });

  it("sets an account's lamports, hex data and owner, and resets it to nothing", async () => {
    const target = (await generateKeyPairSigner()).address;
    const owner = (await generateKeyPairSigner()).address;
    const result = await cheat(chain.rpcUrl, "surfnet_setAccount", [
      target,
      { lamports: 5_000_000_000, data: "0102ff", owner, executable: false, rentEpoch: 0 },
    ]);
    expect(result).toEqual({ context: { slot: expect.any(Number) }, value: null });
    const info = await connection.getAccountInfo(new PublicKey(target));
    expect(info?.lamports).toBe(5_000_000_000);
    expect(info?.owner.toBase58()).toBe(owner);
    expect([...(info?.data ?? [])]).toEqual([1, 2, 255]);

    // Only the lamports change: the rest stays.
    await cheat(chain.rpcUrl, "surfnet_setAccount", [target, { lamports: 7 }]);
    expect((await connection.getAccountInfo(new PublicKey(target)))?.data.length).toBe(3);
    expect(await connection.getBalance(new PublicKey(target))).toBe(7);

    await cheat(chain.rpcUrl, "surfnet_resetAccount", [target]);
    expect(await connection.getAccountInfo(new PublicKey(target))).toBeNull();
  });

  it("creates and updates an owner's associated token account, read by web3.js", async () => {
    const owner = (await generateKeyPairSigner()).address;
    const delegate = (await generateKeyPairSigner()).address;
    const ata = await usdcAta(owner);
    await cheat(chain.rpcUrl, "surfnet_setTokenAccount", [owner, USDC_MINT, { amount: 123_000_000 }]);
    const balance = await connection.getTokenAccountBalance(new PublicKey(ata));
    expect(balance.value).toMatchObject({ amount: "123000000", decimals: 6, uiAmountString: "123" });

    await cheat(chain.rpcUrl, "surfnet_setTokenAccount", [
      owner,
      USDC_MINT,
      { delegate, delegatedAmount: 5, state: "frozen" },
      TOKEN_PROGRAM,
    ]);
    expect(await parsedInfo(connection, ata)).toMatchObject({
      owner,
      mint: USDC_MINT,
      state: "frozen",
      delegate,
      tokenAmount: { amount: "123000000" },
      delegatedAmount: { amount: "5" },
    });
    await cheat(chain.rpcUrl, "surfnet_setTokenAccount", [
      owner,
      USDC_MINT,
      { delegate: "null", state: "initialized" },
    ]);
    expect((await parsedInfo(connection, ata)).delegate).toBeUndefined();
  });

  it("resets a genesis account to what genesis gave it", async () => {
    const before = await connection.getAccountInfo(new PublicKey(USDC_MINT));
    await cheat(chain.rpcUrl, "surfnet_setAccount", [USDC_MINT, { data: "00" }]);
    expect((await connection.getAccountInfo(new PublicKey(USDC_MINT)))?.data.length).toBe(1);
    await cheat(chain.rpcUrl, "surfnet_resetAccount", [USDC_MINT, { includeOwnedAccounts: false }]);
    const after = await connection.getAccountInfo(new PublicKey(USDC_MINT));
    expect(after?.data.equals(before?.data as Buffer)).toBe(true);
    expect(after?.lamports).toBe(before?.lamports);
  });

  it("notifies an account subscription of a cheatcode's write", async () => {
    const target = (await generateKeyPairSigner()).address;
    const ws = new Connection(chain.rpcUrl, { commitment: "confirmed", wsEndpoint: chain.wsUrl });
    const heard = new Promise<number>((resolve) => {
      const id = ws.onAccountChange(new PublicKey(target), (account) => {
        resolve(account.lamports);
        void ws.removeAccountChangeListener(id);
      });
    });
    const before = chain.pubsubStats().subscriptions;
    while (chain.pubsubStats().subscriptions === before)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await cheat(chain.rpcUrl, "surfnet_setAccount", [target, { lamports: 42 }]);
    expect(await heard).toBe(42);
    // Nothing left subscribed: web3.js closes its socket (after its idle half second), before the chain stops.
    while (chain.pubsubStats().sockets > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  });

  it("sets balances and resets accounts from the command line", async () => {
    const env = { DATA_DIR: dir.dir, SOLANA_RPC_URL: chain.rpcUrl };
    const wallet = (await generateKeyPairSigner()).address;
    expect((await oddsgate(["chain", "set-balance", wallet, "2.5"], env)).stdout).toBe(
      `${wallet} now holds 2.5 SOL\n`,
    );
    expect(await connection.getBalance(new PublicKey(wallet))).toBe(2_500_000_000);
    await oddsgate(["chain", "set-token-balance", wallet, "USDC", "12.5"], env);
    expect(await chain.chain.getTokenAccountBalance(await usdcAta(wallet))).toBe(12_500_000n);
    await oddsgate(["chain", "reset-account", wallet], env);
    expect(await connection.getAccountInfo(new PublicKey(wallet))).toBeNull();
    const bad = await oddsgate(["chain", "set-balance", "nope", "1"], env).catch((error: unknown) => error);
    expect((bad as { stderr: string }).stderr).toMatch(/^oddsgate: the address must be a base58 address/);
  }, 60_000);

  it("refuses bad params with -32602 and data past Solana's largest account", async () => {
    const address = (await generateKeyPairSigner()).address;
    const refused: [string, unknown[]][] = [
      ["surfnet_setAccount", []],
      ["surfnet_setAccount", [address]],
      ["surfnet_setAccount", ["nope", {}]],
      ["surfnet_setAccount", [address, { lamports: -1 }]],
      ["surfnet_setAccount", [address, { lamports: 2 ** 64 }]],
      ["surfnet_setAccount", [address, { data: "abc" }]],
      ["surfnet_setAccount", [address, { data: "zz" }]],
      ["surfnet_setAccount", [address, { owner: "x" }]],
      ["surfnet_setAccount", [address, { executable: "yes" }]],
      ["surfnet_setAccount", [address, []]],
      ["surfnet_setTokenAccount", [address, USDC_MINT]],
      ["surfnet_setTokenAccount", [address, USDC_MINT, { state: "gone" }]],
      ["surfnet_setTokenAccount", [address, USDC_MINT, { delegate: "not-an-address" }]],
      ["surfnet_setTokenAccount", [address, USDC_MINT, {}, address]],
      ["surfnet_setTokenAccount", [address, USDC_MINT, { amount: 1.5 }]],
      ["surfnet_resetAccount", []],
      ["surfnet_resetAccount", [address, { includeOwnedAccounts: "yes" }]],
    ];
    for (const [method, params] of refused) {
      expect(
        (await call(chain.rpcUrl, method, params)).error?.code,
        `${method} ${JSON.stringify(params)}`,
      ).toBe(-32602);
    }
    // Past the HTTP body bound, straight to the method: the size is refused before any decoding.
    const methods = createCheatcodeMethods(chain.chain);
    const huge = "00".repeat(MAX_ACCOUNT_DATA_BYTES + 1);
    await expect(methods.surfnet_setAccount?.([address, { data: huge }])).rejects.toMatchObject({
      code: -32602,
    });
    expect(await connection.getAccountInfo(new PublicKey(address))).toBeNull();
  });
});

describe("account cheatcodes across a restart, and in production", () => {
  it("keeps what they wrote after a restart", async () => {
    const dir = tempDir();
    let chain = await startTestChain({ DATA_DIR: dir.dir }, { markets: [] });
    try {
      const owner = (await generateKeyPairSigner()).address;
      const target = (await generateKeyPairSigner()).address;
      await cheat(chain.rpcUrl, "surfnet_setAccount", [target, { lamports: 1_234, data: "beef" }]);
      await cheat(chain.rpcUrl, "surfnet_setTokenAccount", [owner, USDC_MINT, { amount: 77 }]);
      await chain.stop();
      chain = await startTestChain({ DATA_DIR: dir.dir }, { markets: [] });
      const account = await chain.chain.getAccountInfo(target);
      expect(account?.lamports).toBe(1_234n);
      expect([...(account?.data ?? [])]).toEqual([0xbe, 0xef]);
      expect(await chain.chain.getTokenAccountBalance(await usdcAta(owner))).toBe(77n);
    } finally {
      await chain.stop();
      await dir.cleanup();
    }
  }, 60_000);

  it("are unknown methods in production: -32601 Method not found", async () => {
    const dir = tempDir();
    const chain = await startTestChain({ DATA_DIR: dir.dir }, { markets: [], mode: "production" });
    try {
      const address = (await generateKeyPairSigner()).address;
      const unknown = await call(chain.rpcUrl, "surfnet_noSuchMethod", []);
      expect(unknown.error).toEqual({ code: -32601, message: "Method not found" });
      for (const [method, params] of [
        ["surfnet_setAccount", [address, { lamports: 1 }]],
        ["surfnet_setTokenAccount", [address, USDC_MINT, { amount: 1 }]],
        ["surfnet_resetAccount", [address]],
      ] as const) {
        expect((await call(chain.rpcUrl, method, [...params])).error).toEqual(unknown.error);
      }
      expect(await chain.chain.getAccountInfo(address)).toBeNull();
    } finally {
      await chain.stop();
      await dir.cleanup();
    }
  }, 60_000);
});
