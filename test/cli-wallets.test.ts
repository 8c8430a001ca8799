import { generateKeyPairSigner } from "@solana/kit";
import { afterEach, describe, expect, it } from "vitest";
import { BACKENDS, tempDir } from "./support/backends.js";
import { oddsgate } from "./support/cli.js";
import { startTestServer } from "./support/server.js";

/** A command expected to fail: its exit code and stderr. */
async function failing(args: string[], env: Record<string, string>) {
  const failure = (await oddsgate(args, env).then(
    (result) => {
      throw new Error(`oddsgate ${args.join(" ")} succeeded: ${result.stdout}`);
    },
    (error: unknown) => error,
  )) as { code: number; stderr: string };
  return { code: failure.code, stderr: failure.stderr };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe.each(BACKENDS)("oddsgate wallets on $name", (backend) => {
  it.skipIf(!backend.available)("verifies a wallet with a note, lists it, and unverifies it", async () => {
    const storage = await backend.create();
    cleanups.push(storage.cleanup);
    const env = { ...storage.settings };
    const { address } = await generateKeyPairSigner();

    const verified = await oddsgate(["wallets", "verify", address, "--note", "KYC case 17"], env);
    expect(verified.stdout).toMatch(new RegExp(`^verified ${address}  verified \\S+  "KYC case 17"\\n$`));
    const again = await oddsgate(["wallets", "verify", address, "--note", "KYC case 18"], env);
    expect(again.stdout).toContain(`already verified ${address}`);
    expect(again.stdout).toContain('"KYC case 18"');

    const listed = JSON.parse((await oddsgate(["wallets", "list", "--json"], env)).stdout);
    expect(listed).toEqual([{ address, note: "KYC case 18", verifiedAt: expect.any(String) }]);
    // Verifying again keeps the time it was first verified.
    expect(verified.stdout).toContain(listed[0].verifiedAt);

    expect((await oddsgate(["wallets", "unverify", address], env)).stdout).toContain(`unverified ${address}`);
    const gone = await failing(["wallets", "unverify", address], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toBe(`oddsgate: ${address} is not verified (see: oddsgate wallets list)\n`);
    expect((await oddsgate(["wallets", "list"], env)).stdout).toContain("no verified wallets yet");
  });
});

describe("oddsgate wallets errors", () => {
  it("refuses a malformed address and a bad note with a message, exiting 1", async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const env = { DATA_DIR: dir };
    const malformed = await failing(["wallets", "verify", "0xNOTBASE58"], env);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toBe('oddsgate: "0xNOTBASE58" is not a wallet address (base58 of 32 bytes)\n');
    const { address } = await generateKeyPairSigner();
    const long = await failing(["wallets", "verify", address, "--note", "n".repeat(201)], env);
    expect(long.code).toBe(1);
    expect(long.stderr).toContain("at most 200 are kept");
    expect(long.stderr).not.toMatch(/\n\s+at /);
    const multiline = await failing(["wallets", "verify", address, "--note", "first\nsecond"], env);
    expect(multiline.stderr).toContain("may not contain control characters");
  });
});

describe("oddsgate wallets and a running venue", () => {
  it("has the venue answer GET /verify/{address} true once `wallets verify` has run", async () => {
    const t = await startTestServer();
    cleanups.push(() => t.stop());
    const { address } = await generateKeyPairSigner();
    const verify = async () =>
      ((await (await fetch(`${t.url}/verify/${address}`)).json()) as { verified: boolean }).verified;
    expect(await verify()).toBe(false);
    const dataDir = t.settings.DATA_DIR;
    if (!dataDir) throw new Error("the test server has no DATA_DIR");
    await oddsgate(["wallets", "verify", address], { DATA_DIR: dataDir });
    // The venue follows the list by polling storage: eventually, not at once.
    await expect.poll(verify, { timeout: 10_000, interval: 20 }).toBe(true);
  });
});
