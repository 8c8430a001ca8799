/**
 * The spot tokens the venue trades (`/tokens-with-decimals`), their labels, and exact conversions
 * between UI amounts ("12.5") and base units (12500000n): bigint and decimal strings only, since a
 * float loses units past 2^53 and rounds fractions like 0.1.
 */
import { getJson, settings, USDC_MINT, units } from "../api";

export const WRAPPED_SOL_MINT = "So11111111111111111111111111111111111111112";
const CASH_MINT = "CASHx9KJUStyftLFWGvEVf59SGeG9sh5FfcnZMVPCASH";
/** The largest amount a token account holds: 2^64 − 1 base units. */
export const U64_MAX = 2n ** 64n - 1n;

/** Symbols of the mints every instance has; the server may name more (its demo tokens). */
const WELL_KNOWN: Readonly<Record<string, string>> = {
  [USDC_MINT]: "USDC",
  [WRAPPED_SOL_MINT]: "wSOL",
  [CASH_MINT]: "CASH",
};

/** Names by symbol: the well-known tokens' and the sandbox's demo tokens' (src/chain/demo-tokens.ts). */
const NAMES: Readonly<Record<string, string>> = {
  USDC: "USD Coin",
  wSOL: "Wrapped SOL",
  CASH: "CASH dollar",
  dBTC: "Demo Bitcoin",
  dETH: "Demo Ether",
  dUSDT: "Demo Tether USD",
  dJUP: "Demo Jupiter",
  dBONK: "Demo Bonk",
  dJTO: "Demo Jito",
  dPYTH: "Demo Pyth",
  dRAY: "Demo Raydium",
  dORCA: "Demo Orca",
  dmSOL: "Demo Marinade SOL",
};

/** What the swap view buys with USDC when it opens, the first of these the venue lists. */
const DEFAULT_OUTPUTS = [WRAPPED_SOL_MINT];

export interface Token {
  mint: string;
  decimals: number;
  /** The symbol, when the venue says it; null shows a short mint instead. */
  symbol: string | null;
  /** The token's name, when known. */
  name: string | null;
}

/** The symbol and name, e.g. "dJUP · Demo Jupiter", as a picker lists a token. */
export function describe(token: Token): string {
  return token.name ? `${label(token)} · ${token.name}` : label(token);
}

/**
 * Whether `token` answers the search `query`: its symbol or name contains it (case-insensitive), or
 * it is a mint of 4 characters or more that the token's mint starts with or equals.
 */
export function matches(token: Token, query: string): boolean {
  const text = query.trim().toLowerCase();
  if (!text) return true;
  if (token.symbol?.toLowerCase().includes(text) || token.name?.toLowerCase().includes(text)) return true;
  return text.length >= 4 && token.mint.toLowerCase().startsWith(text);
}

/**
 * The tokens a picker offers for `query`: with no query only the named ones (the venue lists every
 * outcome mint too, thousands of them), else up to `limit` matches, named first. `keep` (the
 * picked token) is always among them, first when it does not match.
 */
export function offered(tokens: readonly Token[], query: string, keep: string, limit = 50): Token[] {
  const found = tokens.filter((token) => (query.trim() ? matches(token, query) : token.symbol !== null));
  const shown = found.slice(0, limit);
  const kept = tokens.find((token) => token.mint === keep);
  return kept && !shown.includes(kept) ? [kept, ...shown] : shown;
}

/** The output the swap view opens with: a token `input` routes to, else the first other named one. */
export function defaultOutput(tokens: readonly Token[], input: string): string {
  const listed = new Set(tokens.map((token) => token.mint));
  return (
    DEFAULT_OUTPUTS.find((mint) => mint !== input && listed.has(mint)) ??
    tokens.find((token) => token.mint !== input)?.mint ??
    ""
  );
}

/** The symbol, or the mint shortened to its first and last four characters. */
export function label(token: Token): string {
  return token.symbol ?? `${token.mint.slice(0, 4)}…${token.mint.slice(-4)}`;
}

let listed: Promise<Token[]> | null = null;
/** The tokens of `/tokens-with-decimals`, named ones first (asked once per page; retried after a failure). */
export function loadTokens(): Promise<Token[]> {
  listed ??= getJson<[string, number][]>("/tokens-with-decimals").then(
    (pairs) => {
      const named = { ...WELL_KNOWN, ...settings.value.tokens };
      return pairs
        .map(([mint, decimals]) => {
          const symbol = named[mint] ?? null;
          return { mint, decimals, symbol, name: symbol ? (NAMES[symbol] ?? null) : null };
        })
        .sort(
          (a, b) => Number(b.symbol !== null) - Number(a.symbol !== null) || label(a).localeCompare(label(b)),
        );
    },
    (error: unknown) => {
      listed = null;
      throw error;
    },
  );
  return listed;
}

/** What a typed amount is: base units, or why it is refused (in words for the page). */
export type Parsed = { units: bigint } | { error: string };

/** Digits and one point; long enough for any u64 amount at any decimals, bounded before BigInt sees it. */
const AMOUNT_TEXT = /^(\d{0,40})(?:\.(\d{0,40}))?$/;

/** `text` (UI units, e.g. "5" or "0.25") as base units of a token with `decimals`, exactly. */
export function parseAmount(text: string, decimals: number, symbol: string): Parsed {
  const trimmed = text.trim().replace(/,/g, "");
  if (trimmed === "" || trimmed === ".") return { error: "Enter an amount." };
  const match = AMOUNT_TEXT.exec(trimmed);
  if (!match) return { error: "Amounts are digits with at most one decimal point." };
  const whole = match[1] ?? "";
  const fraction = (match[2] ?? "").replace(/0+$/, "");
  if (fraction.length > decimals) return { error: `${symbol} has ${decimals} decimals at most.` };
  const value = BigInt(`${whole || "0"}${fraction.padEnd(decimals, "0")}`);
  if (value === 0n) return { error: "The amount must be more than zero." };
  if (value > U64_MAX) {
    return {
      error: `That is more than 2^64 − 1 base units (${units(U64_MAX, decimals)} ${symbol}), the most a token account can hold.`,
    };
  }
  return { units: value };
}

/**
 * `numerator / denominator` of two amounts in base units (with their decimals) as a decimal string
 * of about `significant` digits, e.g. the output tokens one input token buys.
 */
export function ratio(
  numerator: bigint,
  numeratorDecimals: number,
  denominator: bigint,
  denominatorDecimals: number,
  significant = 6,
): string {
  if (denominator === 0n) return "—";
  // Scaled by 10^places so the quotient keeps enough digits even for tiny prices (1 USDC in dBTC).
  const places = 24;
  const scaled =
    (numerator * 10n ** BigInt(denominatorDecimals + places)) /
    (denominator * 10n ** BigInt(numeratorDecimals));
  const text = units(scaled, places);
  return roundToSignificant(text, significant);
}

/** A decimal string cut (not rounded: it is only shown) to `significant` significant digits. */
function roundToSignificant(text: string, significant: number): string {
  const [whole = "0", fraction = ""] = text.split(".");
  if (whole !== "0") {
    if (whole.length >= significant) return whole;
    const kept = fraction.slice(0, significant - whole.length).replace(/0+$/, "");
    return kept ? `${whole}.${kept}` : whole;
  }
  const zeros = /^0*/.exec(fraction)?.[0].length ?? 0;
  const kept = fraction.slice(0, zeros + significant).replace(/0+$/, "");
  return kept ? `0.${kept}` : "0";
}
