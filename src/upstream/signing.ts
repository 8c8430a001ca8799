/**
 * Kalshi API-key request signing: RSA-PSS (SHA-256, salt length = digest length) over
 * `timestamp + method + path`, where the path excludes the query string and the timestamp is in
 * milliseconds. Kalshi wants them on its portfolio API, and so does the simulator.
 */
import { constants, createPrivateKey, type KeyObject, sign } from "node:crypto";
import { readFileSync } from "node:fs";

export interface KalshiCredentials {
  keyId: string;
  privateKey: KeyObject;
}

/** Reads an RSA private key (PEM, PKCS#1 or PKCS#8) for signing upstream requests. */
export function loadKalshiCredentials(keyId: string, privateKeyFile: string): KalshiCredentials {
  let pem: string;
  try {
    pem = readFileSync(privateKeyFile, "utf8");
  } catch (error) {
    throw new Error(`cannot read UPSTREAM_PRIVATE_KEY_FILE ${privateKeyFile}: ${(error as Error).message}`);
  }
  const privateKey = createPrivateKey(pem);
  if (privateKey.asymmetricKeyType !== "rsa") {
    throw new Error(`UPSTREAM_PRIVATE_KEY_FILE must hold an RSA key, got ${privateKey.asymmetricKeyType}`);
  }
  return { keyId, privateKey };
}

/** The three KALSHI-ACCESS-* headers for one request. */
export function kalshiSignatureHeaders(
  credentials: KalshiCredentials,
  method: string,
  path: string,
  nowMs = Date.now(),
): Record<string, string> {
  const timestamp = String(nowMs);
  const signature = sign("sha256", Buffer.from(timestamp + method.toUpperCase() + path), {
    key: credentials.privateKey,
    padding: constants.RSA_PKCS1_PSS_PADDING,
    saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
  });
  return {
    "KALSHI-ACCESS-KEY": credentials.keyId,
    "KALSHI-ACCESS-TIMESTAMP": timestamp,
    "KALSHI-ACCESS-SIGNATURE": signature.toString("base64"),
  };
}
