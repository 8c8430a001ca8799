/**
 * Surfpool's clock cheatcodes on the sandbox chain, over its JSON-RPC as a test suite calls them:
 * `surfnet_timeTravel` moves slot, block height and block time forward and expires blockhashes, a
 * target in the past is refused, `surfnet_pauseClock` freezes the slot until `surfnet_resumeClock`,
 * a travel survives a restart, and a production chain knows none of them.
 */
import { createSolanaRpc, generateKeyPairSigner, type Signature } from "@solana/kit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EpochInfo } from "../../src/chain/sandbox/cheatcodes.js";
import { SLOT_MS, SLOTS_PER_EPOCH } from "../../src/chain/sandbox/slot-clock.js";
import { BACKENDS, tempDir } from "../support/backends.js";
import { oddsgate } from "../support/cli.js";
import { rpcSend, solTransfer, startTestChain, type TestChain } from "./harness.js";

interface RpcAnswer<T> {
  result?: T;
  error?: { code: number; message: string; data?: { err?: unknown } };
}

async function call<T>(url: string, method: string, params: unknown[] = []): Promise<RpcAnswer<T>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as RpcAnswer<T>;
}

/** A cheatcode's result; fails the test with the error if it was refused. */
async function cheat<T = EpochInfo>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const answer = await call<T>(url, method, params);
  expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
  return answer.result as T;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("clock cheatcodes", () => {
  let dir: ReturnType<typeof tempDir>;
  let chain: TestChain;
  let rpc: ReturnType<typeof createSolanaRpc>;
  beforeAll(async () => {
    dir = tempDir();
    chain = await startTestChain({ DATA_DIR: dir.dir }, { markets: [] });
    rpc = createSolanaRpc(chain.rpcUrl);
  }, 60_000);
  afterAll(async () => {
    await chain?.stop();
    await dir?.cleanup();
  });

  it("moves slot, block height and block time forward, and expires a blockhash", async () => {
    const payer = await generateKeyPairSigner();
    await chain.chain.requestAirdrop(payer.address, 1_000_000_000n);
    const stale = await solTransfer(chain.chain, payer, (await generateKeyPairSigner()).address, 10_000_000n);
    const { value: before } = await rpc.getLatestBlockhash().send();
    const target = Number(before.lastValidBlockHeight) + 10;

    const info = await cheat(chain.rpcUrl, "surfnet_timeTravel", [{ absoluteSlot: target }]);
    expect(info).toEqual({
      absoluteSlot: expect.any(Number),
      blockHeight: expect.any(Number),
      epoch: Math.floor(info.absoluteSlot / SLOTS_PER_EPOCH),
      slotIndex: info.absoluteSlot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount: expect.any(Number),
    });
    expect(info.absoluteSlot).toBeGreaterThanOrEqual(target);
    expect(info.absoluteSlot).toBeLessThan(target + 5);
    expect(Number(await rpc.getSlot().send())).toBeGreaterThanOrEqual(target);
    expect(Number(await rpc.getBlockHeight().send())).toBeGreaterThan(Number(before.lastValidBlockHeight));
    expect((await rpc.isBlockhashValid(before.blockhash).send()).value).toBe(false);

    // Signed before the travel: its blockhash is past its last valid block height now.
    const refused = await rpcSend(chain.rpcUrl, stale);
    expect(refused.error).toMatchObject({
      code: -32002,
      message: "Transaction simulation failed: Blockhash not found",
      data: { err: "BlockhashNotFound" },
    });

    // A transaction landing now carries the new block time, as does the Clock sysvar.
    const clock = await cheat<{ slot: number; unixTimestamp: number }>(chain.rpcUrl, "surfnet_getClock");
    expect(clock.slot).toBeGreaterThanOrEqual(target);
    const wire = await solTransfer(chain.chain, payer, (await generateKeyPairSigner()).address, 10_000_000n);
    const sent = await rpcSend(chain.rpcUrl, wire);
    expect(sent.error).toBeUndefined();
    const landed = await rpc
      .getTransaction(sent.result as Signature, { encoding: "json", maxSupportedTransactionVersion: 0 })
      .send();
    expect(Number(landed?.slot)).toBeGreaterThanOrEqual(target);
    expect(Number(landed?.blockTime)).toBeGreaterThanOrEqual(clock.unixTimestamp);
  });

  it("travels to a timestamp (ms) and to an epoch", async () => {
    const now = await cheat<{ unixTimestamp: number }>(chain.rpcUrl, "surfnet_getClock");
    const timestampMs = (now.unixTimestamp + 3_600) * 1_000;
    await cheat(chain.rpcUrl, "surfnet_timeTravel", [{ absoluteTimestamp: timestampMs }]);
    const later = await cheat<{ unixTimestamp: number }>(chain.rpcUrl, "surfnet_getClock");
    // A program reads no earlier second than the one travelled to.
    expect(later.unixTimestamp).toBeGreaterThanOrEqual(now.unixTimestamp + 3_600);
    expect(later.unixTimestamp).toBeLessThan(now.unixTimestamp + 3_610);

    const info = await cheat(chain.rpcUrl, "surfnet_timeTravel", [{ absoluteEpoch: 2 }]);
    expect(info.epoch).toBe(2);
    expect(info.slotIndex).toBeLessThan(5);
    expect((await rpc.getEpochInfo().send()).epoch).toBe(2n);
  });

  it("refuses to go back, and junk params, as invalid params", async () => {
    const { absoluteSlot, epoch } = await cheat(chain.rpcUrl, "surfnet_pauseClock");
    try {
      const back = await call(chain.rpcUrl, "surfnet_timeTravel", [{ absoluteSlot: absoluteSlot - 1 }]);
      expect(back.error).toEqual({
        code: -32602,
        message: `Cannot travel to past slot: target=${absoluteSlot - 1}, current=${absoluteSlot}`,
      });
      const earlier = await call(chain.rpcUrl, "surfnet_timeTravel", [{ absoluteEpoch: epoch - 1 }]);
      expect(earlier.error?.message).toBe(
        `Cannot travel to past epoch: target=${epoch - 1}, current=${epoch}`,
      );
      const past = await call(chain.rpcUrl, "surfnet_timeTravel", [
        { absoluteTimestamp: Date.now() - 1_000 },
      ]);
      expect(past.error?.message).toMatch(/^Cannot travel to past timestamp: target=\d+, current=\d+$/);
      for (const params of [
        [],
        [{}],
        [{ absoluteSlot: absoluteSlot + 1, absoluteEpoch: epoch + 1 }],
        [{ slot: absoluteSlot + 1 }],
        [{ absoluteSlot: -1 }],
        [{ absoluteSlot: "12" }],
        [{ absoluteSlot: 1.5 }],
        [{ absoluteSlot: Number.MAX_SAFE_INTEGER }],
        [{ absoluteEpoch: 10 ** 12 }],
        [[absoluteSlot + 1]],
        [{ absoluteSlot: absoluteSlot + 1 }, {}],
      ]) {
        const answer = await call(chain.rpcUrl, "surfnet_timeTravel", params);
        expect(answer.error?.code, JSON.stringify(params)).toBe(-32602);
      }
      expect((await call(chain.rpcUrl, "surfnet_pauseClock", [1])).error?.code).toBe(-32602);
      // Nothing refused moved the clock.
      expect(Number(await rpc.getSlot().send())).toBe(absoluteSlot);
    } finally {
      await cheat(chain.rpcUrl, "surfnet_resumeClock");
    }
  });

  it("moves and reads the clock from the command line: oddsgate chain time-travel, oddsgate chain clock", async () => {
    const env = { DATA_DIR: dir.dir, SOLANA_RPC_URL: chain.rpcUrl };
    const before = await cheat<{ slot: number }>(chain.rpcUrl, "surfnet_getClock");
    const slot = before.slot + 1_000;
    const info = JSON.parse(
      (await oddsgate(["chain", "time-travel", "--slot", String(slot), "--json"], env)).stdout,
    );
    expect(info.absoluteSlot).toBeGreaterThanOrEqual(slot);
    const { stdout } = await oddsgate(["chain", "time-travel", "--timestamp", "2031-01-01T00:00:00Z"], env);
    expect(stdout).toMatch(/^the chain's clock is now at slot \d+, epoch \d+, 2031-01-01T00:00:0\d\.000Z\n$/);
    expect((await oddsgate(["chain", "clock"], env)).stdout).toMatch(/^slot \d+, epoch \d+, 2031-01-01T/);
    const back = await oddsgate(["chain", "time-travel", "--epoch", "0"], env).catch(
      (error: unknown) => error,
    );
    expect(back).toMatchObject({ code: 1 });
    expect((back as { stderr: string }).stderr).toMatch(
      /^oddsgate: the chain refused: Cannot travel to past epoch: target=0, current=\d+\n$/,
    );
    const neither = await oddsgate(["chain", "time-travel"], env).catch((error: unknown) => error);
    expect((neither as { stderr: string }).stderr).toBe(
      "oddsgate: give exactly one of --slot, --timestamp or --epoch\n",
    );
  }, 60_000);

  it("freezes the slot while paused and runs on from there once resumed", async () => {
    const paused = await cheat(chain.rpcUrl, "surfnet_pauseClock");
    await sleep(3 * SLOT_MS);
    expect(Number(await rpc.getSlot().send())).toBe(paused.absoluteSlot);
    // A travel while paused moves the frozen clock, which stays frozen.
    const moved = await cheat(chain.rpcUrl, "surfnet_timeTravel", [
      { absoluteSlot: paused.absoluteSlot + 100 },
    ]);
    expect(moved.absoluteSlot).toBe(paused.absoluteSlot + 100);
    await sleep(2 * SLOT_MS);
    expect(Number(await rpc.getSlot().send())).toBe(paused.absoluteSlot + 100);

    const resumed = await cheat(chain.rpcUrl, "surfnet_resumeClock");
    expect(resumed.absoluteSlot).toBe(paused.absoluteSlot + 100);
    await sleep(3 * SLOT_MS);
    const running = Number(await rpc.getSlot().send());
    expect(running).toBeGreaterThan(resumed.absoluteSlot + 1);
    expect(running).toBeLessThan(resumed.absoluteSlot + 10);
  });
});

for (const backend of BACKENDS) {
  describe.skipIf(!backend.available)(`clock cheatcodes across a restart on ${backend.name}`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    it("keeps a travel and a pause: the restarted chain is never earlier", async () => {
      const { settings, cleanup } = await backend.create();
      cleanups.push(cleanup);
      let chain = await startTestChain(settings, { markets: [] });
      const start = Number(await chain.chain.getSlot());
      const travelled = await cheat(chain.rpcUrl, "surfnet_timeTravel", [{ absoluteSlot: start + 10_000 }]);
      await chain.stop();

      chain = await startTestChain(settings, { markets: [] });
      cleanups.push(() => chain.stop());
      const afterRestart = Number(await chain.chain.getSlot());
      expect(afterRestart).toBeGreaterThanOrEqual(travelled.absoluteSlot);
      expect(afterRestart).toBeLessThan(travelled.absoluteSlot + 100);

      const paused = await cheat(chain.rpcUrl, "surfnet_pauseClock");
      await chain.stop();
      chain = await startTestChain(settings, { markets: [] });
      expect(Number(await chain.chain.getSlot())).toBe(paused.absoluteSlot);
      await cheat(chain.rpcUrl, "surfnet_resumeClock");
    }, 60_000);
  });
}

describe("clock cheatcodes in production", () => {
  it("are unknown methods: -32601 Method not found, as any method the chain lacks", async () => {
    const dir = tempDir();
    const chain = await startTestChain({ DATA_DIR: dir.dir }, { markets: [], mode: "production" });
    try {
      const slot = Number(await chain.chain.getSlot());
      const unknown = await call(chain.rpcUrl, "surfnet_noSuchMethod", []);
      expect(unknown.error).toEqual({ code: -32601, message: "Method not found" });
      for (const [method, params] of [
        ["surfnet_timeTravel", [{ absoluteSlot: slot + 1_000 }]],
        ["surfnet_pauseClock", []],
        ["surfnet_resumeClock", []],
        ["surfnet_getClock", []],
      ] as const) {
        expect((await call(chain.rpcUrl, method, [...params])).error).toEqual(unknown.error);
      }
      expect(Number(await chain.chain.getSlot())).toBeLessThan(slot + 100);
    } finally {
      await chain.stop();
      await dir.cleanup();
    }
  });
});
