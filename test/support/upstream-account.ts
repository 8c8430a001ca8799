/**
 * A simulator on loopback with an account for the venue, as Kalshi keeps one for a key: the RSA key
 * written to a PEM file the venue's UPSTREAM_PRIVATE_KEY_FILE names, and signed reads of the account.
 */
import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CatalogueFile } from "../../src/contract/markets.js";
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { type RunningSimulator, startSimulator } from "../../src/simulator/index.js";
import { kalshiSignatureHeaders, loadKalshiCredentials } from "../../src/upstream/signing.js";

export interface SimulatorAccount {
  simulator: RunningSimulator;
  /** What it serves: today's demo, as a fresh venue stores it. */
  catalogue: CatalogueFile;
  keyId: string;
  keyFile: string;
  /** The settings that make a venue trade on it with this account. */
  settings: Record<string, string>;
  /** A signed GET of `path` (under trade-api/v2) for the account. */
  read<T>(path: string): Promise<T>;
  /** The account's position in `ticker`, in contracts. */
  position(ticker: string): Promise<number>;
}

/**
 * Starts a simulator over today's demo (the one a fresh venue stores) with an account whose key is
 * written in `dir`; `now` fixes its clock (its books then move only by what orders take from them).
 */
export async function simulatorWithAccount(
  dir: string,
  { keyId = "venue-upstream-key", now }: { keyId?: string; now?: () => number } = {},
): Promise<SimulatorAccount> {
  const keys = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const keyFile = join(dir, "kalshi.pem");
  writeFileSync(keyFile, keys.privateKey);
  const catalogue = generateDemoCatalogue({ anchor: Math.floor(Date.now() / 86_400_000) * 86_400 });
  const simulator = await startSimulator({
    catalogue,
    port: 0,
    ...(now ? { now } : {}),
    accounts: { [keyId]: { publicKeyPem: keys.publicKey, balanceCents: 10_000_000 } },
  });
  const credentials = loadKalshiCredentials(keyId, keyFile);
  const read = async <T>(path: string): Promise<T> => {
    const url = new URL(`${simulator.url}/${path}`);
    const response = await fetch(url, { headers: kalshiSignatureHeaders(credentials, "GET", url.pathname) });
    if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
    return (await response.json()) as T;
  };
  return {
    simulator,
    catalogue,
    keyId,
    keyFile,
    settings: {
      UPSTREAM_URL: simulator.url,
      UPSTREAM_KEY_ID: keyId,
      UPSTREAM_PRIVATE_KEY_FILE: keyFile,
      UPSTREAM_TRADING: "true",
    },
    read,
    async position(ticker) {
      const { market_positions } = await read<{
        market_positions: { ticker: string; position_fp: string }[];
      }>(`portfolio/positions?ticker=${ticker}`);
      return Number(market_positions.find((p) => p.ticker === ticker)?.position_fp ?? 0);
    },
  };
}
