/**
 * Verifies the venue's signed responses (contract §10): RFC 9421 HTTP Message Signatures with ed25519
 * over `@status`, `content-type`, an RFC 9530 `content-digest` of the body and the request's
 * `x-request-id`. It stands alone (the server's signer is not imported), so it checks the venue rather
 * than agreeing with itself.
 *
 * Send your own random `x-request-id` with each request and give the same id here: the signature then
 * ties the response to that request, and a signed answer to someone else's request does not verify.
 */
import crypto from "node:crypto";
import { getBase58Decoder, getBase58Encoder } from "@solana/kit";

/** Where the venue publishes its response-signing key (a JWKS). */
export const SIGNING_DIRECTORY_PATH = "/.well-known/http-message-signatures-directory";

/** Why a response failed verification. */
export type ResponseSignatureFailure =
  /** `signature-input`, `signature` or `content-digest` is absent, or has no `sig1`. */
  | "missing"
  /** A header does not parse, is too long, or a covered component is absent from the response. */
  | "malformed"
  /** A component, parameter or algorithm this verifier does not check. */
  | "unsupported"
  /** The signature leaves out a component the venue always covers. */
  | "incomplete"
  /** The signature names another key than the one given. */
  | "wrong_key"
  /** `created` is older than the maximum age, or past `expires`. */
  | "expired"
  /** `created` lies further in the future than the allowed clock skew. */
  | "not_yet_valid"
  /** The body is not the one the digest names. */
  | "digest_mismatch"
  /** The signature does not verify over the rebuilt signature base. */
  | "bad_signature";

/** A response that did not verify, and why. */
export class ResponseSignatureError extends Error {
  override name = "ResponseSignatureError";
  constructor(
    readonly reason: ResponseSignatureFailure,
    message: string,
  ) {
    super(message);
  }
}

/** What this verifier needs of a Headers object: a field's lines joined by ", ", or null. */
export interface HeaderLookup {
  get(name: string): string | null;
}

/** A response as received: its status, headers and exact body bytes. */
export interface ReceivedResponse {
  status: number;
  /** fetch's Headers (or any with its `get`), or a plain record such as Node's `IncomingHttpHeaders`. */
  headers: HeaderLookup | Readonly<Record<string, string | readonly string[] | undefined>>;
  body: Uint8Array;
}

export interface VerifyResponseOptions {
  /** The venue's key: base58 (its `keyid`) or the raw 32 bytes. */
  publicKey: string | Uint8Array;
  /**
   * The `x-request-id` the request carried. A request sent without one (or with one the venue
   * refused) is covered under the id the venue made up, echoed in the response's `x-request-id`.
   */
  requestId: string;
  /** Oldest `created` accepted, in seconds (default 300). */
  maxAgeSeconds?: number;
  /** How far `created` may lie in the future, in seconds (default 60). */
  clockSkewSeconds?: number;
  /** Unix seconds now (default: the clock). */
  now?: number;
  /** The signature's label (default `sig1`). */
  label?: string;
}

/** What a verified signature said. */
export interface VerifiedResponse {
  keyid: string;
  /** Unix seconds. */
  created: number;
  /** The covered components, serialized, e.g. `"x-request-id";req`. */
  components: string[];
  /** The RFC 9421 signature base the signature was checked over. */
  signatureBase: string;
}

/** The venue's signing key as its directory lists it. */
export interface VenueSigningKey {
  /** base58: the `keyid` its signatures carry. */
  keyid: string;
  publicKey: Uint8Array;
}

// Headers longer than this are refused before parsing; the venue's are under 300 characters.
const MAX_HEADER_CHARS = 4096;
const MAX_DIRECTORY_BYTES = 64 * 1024;
const BASE58_KEY = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/**
 * Checks a signed response: its `content-digest` against the body, the signature parameters
 * (`alg="ed25519"`, `keyid` the given key, `created` within the maximum age), the coverage of every
 * component the venue covers, and the ed25519 signature over the rebuilt signature base. Throws a
 * ResponseSignatureError when any of it fails.
 */
export function verifyResponse(response: ReceivedResponse, options: VerifyResponseOptions): VerifiedResponse {
  const publicKey = keyBytes(options.publicKey);
  const keyid = getBase58Decoder().decode(publicKey);
  const label = options.label ?? "sig1";
  const header = (name: string) => headerValue(response.headers, name);

  const inputText = header("signature-input");
  const signatureText = header("signature");
  const digestText = header("content-digest");
  if (inputText === undefined || signatureText === undefined || digestText === undefined) {
    throw new ResponseSignatureError(
      "missing",
      "the response carries no signature (signature-input, signature, content-digest)",
    );
  }
  const input = parseDictionary(inputText, "signature-input").get(label);
  const signatureMember = parseDictionary(signatureText, "signature").get(label);
  if (input === undefined || signatureMember === undefined) {
    throw new ResponseSignatureError("missing", `the response carries no signature labelled ${label}`);
  }
  if (input.kind !== "inner") throw malformed(`signature-input ${label} is not an inner list`);
  if (signatureMember.kind !== "item" || signatureMember.item.bare.type !== "bytes") {
    throw malformed(`signature ${label} is not a byte sequence`);
  }
  const signature = signatureMember.item.bare.value;

  const params = new Map(input.params);
  const alg = params.get("alg");
  if (alg === undefined || alg.type !== "string" || alg.value !== "ed25519") {
    throw new ResponseSignatureError("unsupported", 'only alg="ed25519" signatures are verified');
  }
  const signedKeyid = params.get("keyid");
  if (signedKeyid === undefined || signedKeyid.type !== "string")
    throw malformed("the signature names no keyid");
  if (signedKeyid.value !== keyid) {
    throw new ResponseSignatureError("wrong_key", `signed by ${signedKeyid.value}, not by ${keyid}`);
  }
  const created = params.get("created");
  if (created === undefined || created.type !== "integer")
    throw malformed("the signature has no created time");
  checkTimes(created.value, params.get("expires"), options);

  const components = input.items.map((item) => coveredValue(item, response, options.requestId));
  checkCoverage(
    input.items.map((item) => serializeItem(item)),
    header("content-type") !== undefined,
  );
  checkDigest(digestText, response.body);

  const base = [
    ...components.map(([id, value]) => `${id}: ${value}`),
    `"@signature-params": ${serializeInnerList(input.items, input.params)}`,
  ].join("\n");
  if (
    signature.length !== 64 ||
    !crypto.verify(null, Buffer.from(base, "ascii"), importKey(publicKey), signature)
  ) {
    throw new ResponseSignatureError("bad_signature", "the signature does not verify over the response");
  }
  return {
    keyid,
    created: created.value,
    components: components.map(([id]) => id),
    signatureBase: base,
  };
}

/**
 * Reads the venue's signing key from its directory JSON (a JWKS of OKP/Ed25519 keys), checking that
 * each key's `kid` is its base58 public key. Pin the key you get once rather than fetching it for every
 * check: a directory fetched over the same connection as the responses vouches for nothing.
 */
export function signingKeyFromDirectory(directory: unknown, keyid?: string): VenueSigningKey {
  const keys = isRecord(directory) && Array.isArray(directory.keys) ? directory.keys : [];
  for (const jwk of keys) {
    if (!isRecord(jwk) || jwk.kty !== "OKP" || jwk.crv !== "Ed25519" || typeof jwk.x !== "string") continue;
    if (!/^[\w-]{43}$/.test(jwk.x)) continue;
    const publicKey = new Uint8Array(Buffer.from(jwk.x, "base64url"));
    const kid = getBase58Decoder().decode(publicKey);
    if (jwk.kid !== undefined && jwk.kid !== kid) {
      throw new Error(`the directory's key ${String(jwk.kid)} is not the base58 form of its x`);
    }
    if (keyid === undefined || keyid === kid) return { keyid: kid, publicKey };
  }
  throw new Error(
    keyid ? `the directory lists no Ed25519 key ${keyid}` : "the directory lists no Ed25519 key",
  );
}

/** Fetches the venue's signing key from its well-known directory (trust on first use: then pin it). */
export async function fetchSigningKey(
  baseUrl: string,
  options: { fetch?: typeof fetch; keyid?: string } = {},
): Promise<VenueSigningKey> {
  const response = await (options.fetch ?? fetch)(`${baseUrl.replace(/\/+$/, "")}${SIGNING_DIRECTORY_PATH}`);
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`the signing directory answered ${response.status}`);
  }
  const body = await readBounded(response, MAX_DIRECTORY_BYTES);
  return signingKeyFromDirectory(JSON.parse(new TextDecoder().decode(body)), options.keyid);
}

/** A response's body, refused once it passes `maxBytes` (a directory is a few hundred bytes). */
async function readBounded(response: Response, maxBytes: number): Promise<Uint8Array> {
  const reader = response.body?.getReader();
  if (!reader) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel();
      throw new Error(`the signing directory is over ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
}

function malformed(message: string): ResponseSignatureError {
  return new ResponseSignatureError("malformed", message);
}

function keyBytes(key: string | Uint8Array): Uint8Array {
  if (typeof key !== "string") {
    if (key.length !== 32) throw new RangeError("an ed25519 public key is 32 bytes");
    return key;
  }
  if (!BASE58_KEY.test(key)) throw new RangeError("the public key is not base58 of 32 bytes");
  const bytes = new Uint8Array(getBase58Encoder().encode(key));
  if (bytes.length !== 32) throw new RangeError("the public key is not base58 of 32 bytes");
  return bytes;
}

function importKey(publicKey: Uint8Array): crypto.KeyObject {
  const x = Buffer.from(publicKey).toString("base64url");
  return crypto.createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
}

/** A field's value as RFC 9421 §2.1 takes it: lines joined by ", ", trimmed; undefined when absent. */
function headerValue(headers: ReceivedResponse["headers"], name: string): string | undefined {
  let value: string | undefined;
  if (isHeaderLookup(headers)) {
    value = headers.get(name) ?? undefined;
  } else {
    const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
    value = typeof entry === "string" ? entry : entry?.map((line) => line.trim()).join(", ");
  }
  if (value === undefined) return undefined;
  if (value.length > MAX_HEADER_CHARS) throw malformed(`${name} is over ${MAX_HEADER_CHARS} characters`);
  return value.trim();
}

/** The serialized identifier and the value of one covered component. */
function coveredValue(item: Item, response: ReceivedResponse, requestId: string): [string, string] {
  const id = serializeItem(item);
  if (item.bare.type !== "string") throw malformed(`${id} is not a component identifier`);
  const name = item.bare.value;
  const fromRequest = item.params.length === 1 && item.params[0]?.[0] === "req" && isTrue(item.params[0][1]);
  if (item.params.length > 0 && !fromRequest) {
    throw new ResponseSignatureError("unsupported", `component ${id}: only ;req is understood`);
  }
  let value: string | undefined;
  if (name === "@status" && !fromRequest) value = String(response.status);
  else if (name === "x-request-id" && fromRequest) value = requestId;
  else if (!name.startsWith("@") && !fromRequest) value = headerValue(response.headers, name);
  else throw new ResponseSignatureError("unsupported", `component ${id} is not one this verifier rebuilds`);
  if (value === undefined) throw malformed(`the covered ${id} is absent from the response`);
  // One line of visible ASCII, or the value could add lines to the signature base.
  if (!/^[\x20-\x7e]*$/.test(value)) throw malformed(`the value of ${id} is not one line of visible ASCII`);
  return [id, value];
}

/** Every component the venue covers must be covered once: a signature over less proves less. */
function checkCoverage(ids: string[], hasContentType: boolean): void {
  if (new Set(ids).size !== ids.length) throw malformed("a component is covered twice");
  const required = ['"@status"', '"content-digest"', '"x-request-id";req'];
  if (hasContentType) required.push('"content-type"');
  const missing = required.filter((id) => !ids.includes(id));
  if (missing.length > 0) {
    throw new ResponseSignatureError("incomplete", `the signature does not cover ${missing.join(", ")}`);
  }
}

function checkTimes(created: number, expires: Bare | undefined, options: VerifyResponseOptions): void {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const maxAge = options.maxAgeSeconds ?? 300;
  const skew = options.clockSkewSeconds ?? 60;
  if (created > now + skew) {
    throw new ResponseSignatureError(
      "not_yet_valid",
      `created ${created} is ${created - now} s in the future`,
    );
  }
  if (now - created > maxAge) {
    throw new ResponseSignatureError(
      "expired",
      `created ${created} is ${now - created} s old, over ${maxAge} s`,
    );
  }
  if (expires !== undefined) {
    if (expires.type !== "integer") throw malformed("expires is not an integer");
    if (now > expires.value)
      throw new ResponseSignatureError("expired", `the signature expired at ${expires.value}`);
  }
}

function checkDigest(text: string, body: Uint8Array): void {
  const member = parseDictionary(text, "content-digest").get("sha-256");
  if (member === undefined) throw new ResponseSignatureError("unsupported", "content-digest has no sha-256");
  if (member.kind !== "item" || member.item.bare.type !== "bytes")
    throw malformed("content-digest sha-256 is not bytes");
  const expected = member.item.bare.value;
  const actual = crypto.createHash("sha256").update(body).digest();
  if (expected.length !== actual.length || !crypto.timingSafeEqual(expected, actual)) {
    throw new ResponseSignatureError("digest_mismatch", "the body does not match its content-digest");
  }
}

// RFC 8941 structured fields, as far as signatures use them: dictionaries of items and inner lists,
// with strings, tokens, integers, booleans and byte sequences. Decimals are refused (none is used).

type Bare =
  | { type: "string"; value: string }
  | { type: "token"; value: string }
  | { type: "integer"; value: number }
  | { type: "boolean"; value: boolean }
  | { type: "bytes"; value: Uint8Array };
type Params = [string, Bare][];
interface Item {
  bare: Bare;
  params: Params;
}
type Member = { kind: "item"; item: Item } | { kind: "inner"; items: Item[]; params: Params };

function isTrue(bare: Bare): boolean {
  return bare.type === "boolean" && bare.value;
}

/** Parses a dictionary field (RFC 8941 §4.2.2); a later member of the same name replaces an earlier. */
function parseDictionary(text: string, field: string): Map<string, Member> {
  const parser = new FieldParser(text.replace(/^ +| +$/g, ""), field);
  const members = new Map<string, Member>();
  while (!parser.done()) {
    const key = parser.key();
    let member: Member;
    if (parser.accept("=")) member = parser.memberValue();
    else member = { kind: "item", item: { bare: { type: "boolean", value: true }, params: parser.params() } };
    members.set(key, member);
    parser.skipWhitespace();
    if (parser.done()) break;
    parser.expect(",");
    parser.skipWhitespace();
    if (parser.done()) parser.fail("a trailing comma");
  }
  return members;
}

const TOKEN_CHARS = /^[!#$%&'*+\-.^_`|~0-9A-Za-z:/]$/;

class FieldParser {
  private at = 0;

  constructor(
    private readonly text: string,
    private readonly field: string,
  ) {}

  done(): boolean {
    return this.at >= this.text.length;
  }

  fail(what: string): never {
    throw malformed(`${this.field} does not parse: ${what} at ${this.at}`);
  }

  accept(char: string): boolean {
    if (this.text[this.at] !== char) return false;
    this.at++;
    return true;
  }

  expect(char: string): void {
    if (!this.accept(char)) this.fail(`expected ${char}`);
  }

  skipWhitespace(): void {
    while (this.text[this.at] === " " || this.text[this.at] === "\t") this.at++;
  }

  private skipSpaces(): void {
    while (this.text[this.at] === " ") this.at++;
  }

  key(): string {
    const match = /^[a-z*][a-z0-9_\-.*]*/.exec(this.text.slice(this.at));
    if (!match) this.fail("expected a key");
    this.at += match[0].length;
    return match[0];
  }

  memberValue(): Member {
    if (!this.accept("(")) return { kind: "item", item: this.item() };
    const items: Item[] = [];
    for (;;) {
      this.skipSpaces();
      if (this.accept(")")) return { kind: "inner", items, params: this.params() };
      items.push(this.item());
      const next = this.text[this.at];
      if (next !== " " && next !== ")") this.fail("expected a space or )");
    }
  }

  item(): Item {
    return { bare: this.bare(), params: this.params() };
  }

  params(): Params {
    const params: Params = [];
    while (this.accept(";")) {
      this.skipSpaces();
      const key = this.key();
      const value: Bare = this.accept("=") ? this.bare() : { type: "boolean", value: true };
      const existing = params.findIndex(([name]) => name === key);
      if (existing === -1) params.push([key, value]);
      else params[existing] = [key, value];
    }
    return params;
  }

  bare(): Bare {
    const rest = this.text.slice(this.at);
    const char = rest[0] ?? "";
    if (char === "-" || (char >= "0" && char <= "9")) {
      const match = /^-?[0-9]{1,15}/.exec(rest);
      if (!match || rest[match[0].length] === ".") this.fail("expected an integer (decimals are not used)");
      this.at += match[0].length;
      return { type: "integer", value: Number(match[0]) };
    }
    if (char === '"') return this.string();
    if (char === ":") {
      const match = /^:([A-Za-z0-9+/=]*):/.exec(rest);
      if (!match) this.fail("expected a byte sequence");
      this.at += match[0].length;
      return { type: "bytes", value: new Uint8Array(Buffer.from(match[1] ?? "", "base64")) };
    }
    if (char === "?") {
      const value = rest[1];
      if (value !== "0" && value !== "1") this.fail("expected ?0 or ?1");
      this.at += 2;
      return { type: "boolean", value: value === "1" };
    }
    if (/^[A-Za-z*]$/.test(char)) {
      let end = 1;
      while (end < rest.length && TOKEN_CHARS.test(rest[end] ?? "")) end++;
      this.at += end;
      return { type: "token", value: rest.slice(0, end) };
    }
    return this.fail("expected an item");
  }

  private string(): Bare {
    this.at++;
    let value = "";
    for (;;) {
      const char = this.text[this.at++];
      if (char === undefined) this.fail("an unterminated string");
      if (char === '"') return { type: "string", value };
      if (char === "\\") {
        const escaped = this.text[this.at++];
        if (escaped !== '"' && escaped !== "\\") this.fail("a bad escape");
        value += escaped;
      } else if (char < " " || char > "~") {
        this.fail("a character outside printable ASCII");
      } else {
        value += char;
      }
    }
  }
}

/** The canonical serialization of RFC 8941 §4.1, as the `@signature-params` line takes it. */
function serializeInnerList(items: Item[], params: Params): string {
  return `(${items.map(serializeItem).join(" ")})${serializeParams(params)}`;
}

function serializeItem(item: Item): string {
  return serializeBare(item.bare) + serializeParams(item.params);
}

function serializeParams(params: Params): string {
  return params
    .map(([key, value]) => (isTrue(value) ? `;${key}` : `;${key}=${serializeBare(value)}`))
    .join("");
}

function serializeBare(bare: Bare): string {
  switch (bare.type) {
    case "string":
      return `"${bare.value.replace(/[\\"]/g, "\\$&")}"`;
    case "token":
      return bare.value;
    case "integer":
      return String(bare.value);
    case "boolean":
      return bare.value ? "?1" : "?0";
    case "bytes":
      return `:${Buffer.from(bare.value).toString("base64")}:`;
  }
}

function isHeaderLookup(headers: ReceivedResponse["headers"]): headers is HeaderLookup {
  return typeof headers.get === "function";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
