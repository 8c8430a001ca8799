/** Dependencies for tests that build the app alone (no storage, no keys): development, no limits. */
import type { AccessControl } from "../../src/http/auth.js";
import { MemoryRateStore } from "../../src/http/rate-limit.js";

/** Settings of a quiet development app. */
export const QUIET_DEVELOPMENT = {
  LOG_LEVEL: "silent",
  TRUST_PROXY: 0,
  MODE: "development",
  CORS_ORIGINS: undefined,
} as const;

/** Access control that knows no keys and limits nothing. */
export function openAccess(): AccessControl {
  return {
    mode: "development",
    keys: { lookup: () => undefined, check: async () => undefined },
    rateStore: new MemoryRateStore(),
    limits: { anonymous: 0, standard: 0, pro: 0 },
  };
}
