/**
 * Kalshi's API-key authentication, verified as Kalshi does: KALSHI-ACCESS-SIGNATURE is base64 RSA-PSS
 * (SHA-256, salt = digest length) over `timestamp + METHOD + path`, the path without its query and with
 * `/trade-api/v2`, by the key KALSHI-ACCESS-KEY names; KALSHI-ACCESS-TIMESTAMP is milliseconds. Refusals
 * carry the 401 bodies Kalshi's demo sends (recorded by a client's fixtures: unknown key `NOT_FOUND`, bad
 * signature `INCORRECT_API_KEY_SIGNATURE`, a stale timestamp `header_timestamp_expired`).
 */
import { constants, createPublicKey, type KeyObject, verify } from "node:crypto";
import { ExchangeRequestError } from "./market-data.js";

/**
 * How far a timestamp may be from the signature clock, in milliseconds. Kalshi accepts 5 s either way
 * and refuses 30 s late and 5 min early; the simulator allows 20 s late (a loaded test machine) and
 * 60 s early (a client's clock ahead).
 */
export const SIGNATURE_WINDOW_MS = { late: 20_000, early: 60_000 } as const;

/** The longest header values read: a key id is a UUID, a 4096-bit signature 684 base64 characters. */
const MAX_KEY_ID = 128;
const MAX_SIGNATURE = 1_024;

/** A key the simulator knows, and whose account it opens. */
export interface AccountKey {
  keyId: string;
  publicKey: KeyObject;
}

/** Reads an RSA public key (PEM, SPKI or PKCS#1) or refuses it. */
export function rsaPublicKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (error) {
    throw new ExchangeRequestError(400, "bad_request", `not a public key: ${(error as Error).message}`);
  }
  if (key.asymmetricKeyType !== "rsa") {
    throw new ExchangeRequestError(400, "bad_request", `the key must be RSA, not ${key.asymmetricKeyType}`);
  }
  return key;
}

const unauthorized = (code: string, message: string, details?: string) =>
  new ExchangeRequestError(401, code, message, details);

/** The keys the simulator accepts, and the check of one request's signature against them. */
export class KalshiKeyring {
  private readonly keys = new Map<string, AccountKey>();

  /** `clockMs` is the clock timestamps are held to: the wall clock, which clients sign with. */
  constructor(private readonly clockMs: () => number = Date.now) {}

  add(key: AccountKey): void {
    this.keys.set(key.keyId, key);
  }

  has(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  /** The key that signed `method path`, or Kalshi's 401 for a request it did not sign. */
  verify(headers: Record<string, string | string[] | undefined>, method: string, path: string): AccountKey {
    const header = (name: string) => {
      const value = headers[name];
      return typeof value === "string" && value !== "" ? value : undefined;
    };
    const keyId = header("kalshi-access-key");
    const timestamp = header("kalshi-access-timestamp");
    const signature = header("kalshi-access-signature");
    if (signature === undefined) {
      throw unauthorized("signature_is_missing_from_headers", "signature is missing from headers");
    }
    if (keyId === undefined) throw unauthorized("key_is_missing_from_headers", "key is missing from headers");
    if (timestamp === undefined) {
      throw unauthorized("timestamp_is_missing_from_headers", "timestamp is missing from headers");
    }
    const key = keyId.length <= MAX_KEY_ID ? this.keys.get(keyId) : undefined;
    if (!key) throw unauthorized("authentication_error", "authentication_error", "NOT_FOUND");
    const age = /^\d{1,15}$/.test(timestamp) ? this.clockMs() - Number(timestamp) : Number.NaN;
    if (!(age <= SIGNATURE_WINDOW_MS.late && age >= -SIGNATURE_WINDOW_MS.early)) {
      throw unauthorized("header_timestamp_expired", "header timestamp expired");
    }
    if (
      !(
        signature.length <= MAX_SIGNATURE &&
        this.signedBy(key, timestamp + method.toUpperCase() + path, signature)
      )
    ) {
      throw unauthorized("authentication_error", "authentication_error", "INCORRECT_API_KEY_SIGNATURE");
    }
    return key;
  }

  private signedBy(key: AccountKey, message: string, signature: string): boolean {
    try {
      return verify(
        "sha256",
        Buffer.from(message),
        {
          key: key.publicKey,
          padding: constants.RSA_PKCS1_PSS_PADDING,
          saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
        },
        Buffer.from(signature, "base64"),
      );
    } catch {
      // A signature of the wrong length for the key is a wrong signature.
      return false;
    }
  }
}
