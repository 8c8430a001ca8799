/**
 * A trade route's query parameters, each declared once: its reference code, its description, its
 * default and how its text is read. The route's zod schema, its code table and the type of its values
 * derive from the declaration. The schema takes every parameter as text (the published document types
 * it as the reference does): the route reads the value itself, so that each bad value is refused with
 * the parameter's reference code and a message naming the bound it failed.
 */
import type { Address } from "@solana/kit";
import { z } from "zod";
import { isAddressText } from "../../chain/base58.js";
import { ApiError, type ErrorCode } from "../../contract/errors.js";

/** Refuses the parameter being read, with its code. */
export type Refuse = (message: string) => never;

export interface Param<T> {
  /** The code a missing or malformed value is refused with. */
  readonly code: ErrorCode;
  readonly description: string;
  /** Sent always: the route's schema refuses a request without it. */
  readonly required?: true;
  /** The value taken when the parameter is not sent, as the published document shows it. */
  readonly default?: string | number | boolean;
  readonly example?: string;
  /** The type the reference's document gives the parameter, which the venue's documents publish. */
  readonly published?: Published;
  /**
   * The value of `text` (undefined when the parameter is not sent); throws an `ApiError` when it is
   * bad. What it reads for undefined must be a constant: it is read once per declaration.
   */
  read(text: string | undefined, name: string, refuse: Refuse): T;
}

export type Params = Readonly<Record<string, Param<unknown>>>;
export type Published = Readonly<Record<string, unknown>>;

/** The types the reference's document gives text parameters. */
export const PUBLISHED = {
  boolean: { type: "boolean" },
  int32: { type: "integer", format: "int32", minimum: 0 },
  int64: { type: "integer", format: "int64", minimum: 0 },
  slippage: {
    oneOf: [
      { type: "integer", format: "int32", minimum: 0, description: "Basis points" },
      { type: "string", enum: ["auto"], description: "Chosen by the venue" },
    ],
  },
} as const satisfies Record<string, Published>;
export type ParamValues<P extends Params> = { -readonly [K in keyof P]: ReturnType<P[K]["read"]> };
/** A query as sent: text per parameter (a route's schema has already dropped unknown ones). */
export type RawQuery<P extends Params> = Partial<Record<keyof P & string, string>>;
type TextSchema<P extends Params> = {
  [K in keyof P]: P[K] extends { required: true } ? z.ZodString : z.ZodOptional<z.ZodString>;
};

export const U64_MAX = 2n ** 64n - 1n;
export const U32_MAX = 2 ** 32 - 1;

/** What `parseUnsigned` gives for a number of more digits than any bound here has: past them all. */
const PAST_EVERY_BOUND = 10n ** 40n;

/** The route's querystring schema: what Fastify checks and the OpenAPI document shows. */
export function querySchema<P extends Params>(params: P): z.ZodObject<TextSchema<P>> {
  const shape = Object.fromEntries(
    Object.entries(params).map(([name, param]) => {
      const text = param.required ? z.string() : z.string().optional();
      const { description, example, published } = param;
      const shown = param.default === undefined ? {} : { default: param.default };
      // `published` is read by the OpenAPI transform (http/openapi.ts), which types the parameter with it.
      const meta = {
        description,
        ...(example ? { example } : {}),
        ...shown,
        ...(published ? { published } : {}),
      };
      return [name, text.meta(meta)];
    }),
  );
  return z.object(shape) as unknown as z.ZodObject<TextSchema<P>>;
}

/** The code each parameter is refused with when missing or malformed. */
export function paramCodes<P extends Params>(params: P): { readonly [K in keyof P]: ErrorCode } {
  return Object.fromEntries(Object.entries(params).map(([name, param]) => [name, param.code])) as {
    [K in keyof P]: ErrorCode;
  };
}

/** A declaration as read on every request: its parameters in order, and what each is when not sent. */
interface CompiledParams {
  entries: [string, Param<unknown>][];
  absent: Record<string, unknown>;
  /** The keys beyond the parameters that every copy of `absent` carries (see `parseParams`). */
  derived: readonly string[];
}

const compiled = new WeakMap<Params, CompiledParams>();

// What a parameter reads as when not sent depends on nothing else (a default, or undefined), so it is
// read once per declaration: a request pays only for the parameters it sends. Built in one go (not
// property by property), the object keeps V8's fast properties, so each request's copy is cheap.
function compile(params: Params, derived: readonly string[]): CompiledParams {
  const entries = Object.entries(params);
  const absent = Object.fromEntries([
    ...entries.map(([name, param]) => [
      name,
      param.required
        ? undefined
        : param.read(undefined, name, (message) => {
            throw new Error(`${name} must read as a value when not sent: ${message}`);
          }),
    ]),
    ...derived.map((key) => [key, undefined]),
  ]);
  return { entries, absent, derived };
}

/**
 * Reads each parameter of `params` from `query`, in the order declared; throws at the first bad one.
 * `derived` names the keys the caller adds to the values afterwards, present (undefined) from the
 * start: on Node 20, a copy of an object given a key its original lacks promoted about a kilobyte a
 * request to the old space, so major collections ran several times as often under load.
 */
export function parseParams<P extends Params, D extends string = never>(
  params: P,
  query: RawQuery<P>,
  derived: readonly D[] = [],
): ParamValues<P> & { [K in D]?: undefined } {
  let declared = compiled.get(params);
  if (!declared) {
    declared = compile(params, derived);
    compiled.set(params, declared);
  } else if (declared.derived !== derived && declared.derived.join() !== derived.join()) {
    throw new Error(
      `a declaration read with derived keys ${declared.derived.join()}, then ${derived.join()}`,
    );
  }
  const values: Record<string, unknown> = { ...declared.absent };
  let code: ErrorCode = "bad_request";
  const refuse: Refuse = (message) => {
    throw new ApiError(code, message);
  };
  for (const [name, param] of declared.entries) {
    const text = query[name as keyof P & string];
    if (text === undefined && !param.required) continue;
    code = param.code;
    values[name] = param.read(text, name, refuse);
  }
  return values as ParamValues<P> & { [K in D]?: undefined };
}

/** `param` as another route describes it (or refuses it with another code). */
export function like<T>(param: Param<T>, changes: Partial<Pick<Param<T>, "code" | "description">>): Param<T> {
  return { ...param, ...changes };
}

/** A parameter every request sends. */
function required<T>(param: Param<T>): Param<T> & { required: true } {
  return {
    ...param,
    required: true,
    read: (text, name, refuse) => {
      if (text === undefined || text === "") return refuse(`query parameter ${name} is required`);
      return param.read(text, name, refuse);
    },
  };
}

/** A base58 public key, or undefined when not sent. */
export function address(code: ErrorCode, description: string): Param<Address | undefined> {
  return {
    code,
    description,
    read: (text, name, refuse) => {
      if (text === undefined) return undefined;
      return isAddressText(text)
        ? text
        : refuse(`${name} must be a base58 public key, got ${JSON.stringify(text.slice(0, 64))}`);
    },
  };
}

/** A base58 public key every request sends. */
export function requiredAddress(code: ErrorCode, description: string): Param<Address> & { required: true } {
  return required(address(code, description)) as Param<Address> & { required: true };
}

/** A required parameter read by `read` once present (an amount, say). */
export function requiredText<T>(
  code: ErrorCode,
  description: string,
  read: (text: string, name: string, refuse: Refuse) => T,
  example?: string,
): Param<T> & { required: true } {
  return required({
    code,
    description,
    ...(example ? { example } : {}),
    read: (text, name, refuse) => read(text ?? "", name, refuse),
  });
}

/** `true` or `false`. */
export function flag(code: ErrorCode, description: string, fallback: boolean): Param<boolean> {
  return {
    code,
    description,
    default: fallback,
    published: PUBLISHED.boolean,
    read: (text, name, refuse) => {
      if (text === undefined) return fallback;
      if (text === "true") return true;
      if (text === "false") return false;
      return refuse(`${name} must be true or false, got ${JSON.stringify(text.slice(0, 64))}`);
    },
  };
}

interface Range {
  min: number;
  max: number;
  /** Words for the other values the parameter takes, added to the bound's message. */
  or?: string;
  /** How the reference's document types it; int32 unless stated. */
  format?: "int64";
}

/** An integer within [min, max] (both at most 2^53−1), compared exactly before it becomes a number. */
export function integer(code: ErrorCode, description: string, range: Range): Param<number | undefined>;
export function integer(code: ErrorCode, description: string, range: Range, fallback: number): Param<number>;
export function integer(
  code: ErrorCode,
  description: string,
  range: Range,
  fallback?: number,
): Param<number | undefined> {
  return {
    code,
    description,
    ...(fallback === undefined ? {} : { default: fallback }),
    published: range.format === "int64" ? PUBLISHED.int64 : PUBLISHED.int32,
    read: (text, name, refuse) => (text === undefined ? fallback : integerIn(range, text, name, refuse)),
  };
}

/** `text` as an integer within `range`, or a refusal naming the bounds. */
export function integerIn({ min, max, or = "" }: Range, text: string, name: string, refuse: Refuse): number {
  const parsed = parseUnsigned(text);
  if (parsed === undefined || parsed < BigInt(min) || parsed > BigInt(max))
    return refuse(
      `${name} must be an integer from ${min} to ${max}${or}, got ${JSON.stringify(text.slice(0, 64))}`,
    );
  return Number(parsed);
}

/** Basis points (0–10000), or `auto` (undefined, the venue's pick). */
export function bps(code: ErrorCode, description: string): Param<number | undefined> {
  const range = { min: 0, max: 10_000, or: ' or "auto"' };
  return {
    code,
    description,
    default: "auto",
    published: PUBLISHED.slippage,
    read: (text, name, refuse) =>
      text === undefined || text === "auto" ? undefined : integerIn(range, text, name, refuse),
  };
}

/** A comma-separated list (blank items dropped), or undefined when not sent. */
export function list(code: ErrorCode, description: string): Param<string[] | undefined> {
  return {
    code,
    description,
    read: (text) =>
      text
        ?.split(",")
        .map((item) => item.trim())
        .filter((item) => item !== ""),
  };
}

/**
 * The value of a decimal integer written in digits only (leading zeros allowed), exactly, as a bigint:
 * never rounded through a float. `undefined` for anything else (a sign, a point, an exponent, spaces).
 * A number of more digits than any bound here has is `PAST_EVERY_BOUND`, without parsing it.
 */
export function parseUnsigned(text: string): bigint | undefined {
  if (!/^\d+$/.test(text)) return undefined;
  const digits = text.replace(/^0+(?=\d)/, "");
  return digits.length > 39 ? PAST_EVERY_BOUND : BigInt(digits);
}
