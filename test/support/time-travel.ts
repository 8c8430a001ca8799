/** Moving a sandbox chain's clock over its JSON-RPC, as a surfpool test suite does (cheatcodes.ts). */
import { expect } from "vitest";
import type { EpochInfo, TimeTravelTarget } from "../../src/chain/sandbox/cheatcodes.js";

/** Calls `surfnet_timeTravel` on the chain at `rpcUrl`; fails the test if it is refused. */
export async function timeTravel(rpcUrl: string, target: TimeTravelTarget): Promise<EpochInfo> {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "surfnet_timeTravel", params: [target] }),
  });
  const answer = (await response.json()) as { result?: EpochInfo; error?: unknown };
  expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
  return answer.result as EpochInfo;
}
