/**
 * The sandbox controls the development-only tools use: wallets by name (keypair files in
 * DATA_DIR/wallets, as `oddsgate wallet` keeps them), funding them from the sandbox's faucet,
 * settling a market on the simulated exchange, and moving the clocks on. The same modules the CLI's
 * `wallet`, `sim` and the sandbox's cheatcodes use; nothing here runs in production.
 */
import fs from "node:fs";
import type { Address } from "@solana/kit";
import type { Chain } from "../chain/chain.js";
import type { Keypair } from "../chain/ed25519.js";
import { readKeypairFile } from "../chain/keypair-file.js";
import { SLOT_MS } from "../chain/sandbox/slot-clock.js";
import type { VenueSigners } from "../chain/venue-keys.js";
import { airdropSol, createWallet, faucetTokens, walletFile } from "../chain/wallet.js";
import { USDC_MINT } from "../contract/markets.js";
import { ToolRefusal } from "./error-hints.js";

/** How the tools reach the simulated exchange: its `/_sim` controls, and a catalogue sync after a change. */
export interface SimulatorAccess {
  call(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown>;
  /** Syncs the venue's catalogue from the simulator now (a no-op where the call already did). */
  syncNow(): Promise<void>;
}

export interface SandboxSettings {
  dataDir: string;
  chain: Chain;
  /** The sandbox chain's JSON-RPC URL, for its surfnet_* cheatcodes. */
  rpcUrl: string;
  venueSigners(): Promise<VenueSigners>;
  simulator?: SimulatorAccess;
}

export interface FundedWallet {
  name: string;
  address: string;
  created: boolean;
  sol: string;
  usdc: string;
  signatures: string[];
}

export interface SandboxControls {
  /** The keypair of the sandbox wallet `name`, or undefined when there is none. */
  wallet(name: string): Keypair | undefined;
  fundWallet(name: string, amounts: { sol: string; usdc: string }): Promise<FundedWallet>;
  settleMarket(ticker: string, result: "yes" | "no"): Promise<{ ticker: string; status: string }>;
  timeTravel(seconds: number): Promise<{ chainUnixTimestamp: number; exchangeNow: number | null }>;
}

const NO_SIMULATOR = new ToolRefusal(
  "not_found",
  "this venue has no simulated exchange to control (its upstream is a real exchange)",
  "settle and move time only against a development venue running its embedded simulator",
);

/** Sandbox controls over `settings`. */
export function sandboxControls(settings: SandboxSettings): SandboxControls {
  const { dataDir, chain } = settings;
  const wallet = (name: string): Keypair | undefined => {
    const file = walletFile(dataDir, name);
    return fs.existsSync(file) ? readKeypairFile(file) : undefined;
  };
  return {
    wallet,
    async fundWallet(name, amounts) {
      const existing = wallet(name);
      const address = (existing?.address ?? createWallet(walletFile(dataDir, name))) as Address;
      const signatures: string[] = [];
      if (Number(amounts.sol) > 0) signatures.push(await airdropSol(chain, address, amounts.sol));
      if (Number(amounts.usdc) > 0) {
        const signers = await settings.venueSigners();
        signatures.push((await faucetTokens(chain, signers, address, USDC_MINT, amounts.usdc)).signature);
      }
      return { name, address, created: !existing, sol: amounts.sol, usdc: amounts.usdc, signatures };
    },
    async settleMarket(ticker, result) {
      if (!settings.simulator) throw NO_SIMULATOR;
      const answer = (await settings.simulator.call(
        "POST",
        `/_sim/markets/${encodeURIComponent(ticker)}/lifecycle`,
        { status: "determined", result },
      )) as { market: { ticker: string; status: string } };
      // The venue settles its side at its next sync: now, so the next tool call sees it.
      await settings.simulator.syncNow();
      return { ticker: answer.market.ticker, status: answer.market.status };
    },
    async timeTravel(seconds) {
      // Counted in slots from the current one: the clock's unixTimestamp is whole seconds of the slot's
      // start, and that plus one second may already have passed (the chain then refuses the target).
      const clock = (await cheatcode(settings.rpcUrl, "surfnet_getClock", [])) as { slot: number };
      await cheatcode(settings.rpcUrl, "surfnet_timeTravel", [
        { absoluteSlot: clock.slot + Math.ceil((seconds * 1000) / SLOT_MS) },
      ]);
      const after = (await cheatcode(settings.rpcUrl, "surfnet_getClock", [])) as { unixTimestamp: number };
      let exchangeNow: number | null = null;
      if (settings.simulator) {
        const moved = (await settings.simulator.call("POST", "/_sim/clock", { advanceSeconds: seconds })) as {
          now: number;
        };
        exchangeNow = moved.now;
        await settings.simulator.syncNow();
      }
      return { chainUnixTimestamp: after.unixTimestamp, exchangeNow };
    },
  };
}

/** One of the sandbox chain's surfnet_* methods over its JSON-RPC; refuses with the chain's words. */
async function cheatcode(rpcUrl: string, method: string, params: unknown[]): Promise<unknown> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(10_000),
  });
  const answer = (await response.json()) as { result?: unknown; error?: { message?: string } };
  if (answer.error)
    throw new ToolRefusal(
      "bad_request",
      `the sandbox chain refused ${method}: ${answer.error.message ?? "no message"}`,
      "time only moves forward, and only on a development venue's sandbox chain",
    );
  return answer.result;
}

/** Simulator access straight to its `/_sim` routes (the venue's own embedded simulator). */
export function simulatorAt(
  url: string,
  syncNow: () => Promise<void>,
  pathOf: (simPath: string) => string = (simPath) => simPath,
): SimulatorAccess {
  return {
    async call(method, path, body) {
      const response = await fetch(new URL(pathOf(path), url), {
        method,
        ...(body === undefined
          ? {}
          : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await response.text();
      if (!response.ok)
        throw new ToolRefusal(
          response.status === 404 ? "market_not_found" : "bad_request",
          `the simulator refused (${response.status}): ${text.slice(0, 300)}`,
          "check the ticker with get_market; a settled market cannot be settled again",
        );
      return text === "" ? {} : JSON.parse(text);
    },
    syncNow,
  };
}

/**
 * Simulator access through a running development venue's explorer relay (`/explorer/sim/*`), which
 * syncs the venue itself after a change.
 */
export function simulatorViaVenue(venueUrl: string): SimulatorAccess {
  return simulatorAt(
    venueUrl,
    async () => {},
    (simPath) => simPath.replace(/^\/_sim\//, "/explorer/sim/"),
  );
}
