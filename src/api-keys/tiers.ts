/** The rate tiers an API key may have (contract §4); a module of its own so the CLI can list them cheaply. */
export const KEY_TIERS = ["standard", "pro"] as const;
export type KeyTier = (typeof KEY_TIERS)[number];
