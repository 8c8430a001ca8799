/** Keypair files in solana-keygen's format (a JSON array of 64 bytes), readable by the owner only. */
import fs from "node:fs";
import path from "node:path";
import { generateKeypair, type Keypair, keypairFromSecretKey } from "./ed25519.js";

/** Reads a solana-keygen keypair file. */
export function readKeypairFile(file: string): Keypair {
  const parsed: unknown = JSON.parse(fs.readFileSync(file, "utf8"));
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 64 ||
    !parsed.every((b) => Number.isInteger(b) && b >= 0 && b < 256)
  ) {
    throw new Error(`${file} is not a keypair file (a JSON array of 64 bytes)`);
  }
  return keypairFromSecretKey(Uint8Array.from(parsed as number[]));
}

/** Writes a keypair file with mode 0600; refuses to overwrite an existing file. */
export function writeKeypairFile(file: string, keypair: Keypair): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, JSON.stringify(Array.from(keypair.secretKey)), { mode: 0o600, flag: "wx" });
  // The umask may have masked the mode; the key must not be group- or world-readable regardless.
  fs.chmodSync(file, 0o600);
}

/** Reads the keypair at `file`, creating it first when it does not exist. */
export function loadOrCreateKeypair(file: string): Keypair {
  if (fs.existsSync(file)) return readKeypairFile(file);
  const keypair = generateKeypair();
  try {
    writeKeypairFile(file, keypair);
  } catch (error) {
    // Another process created it between the check and the write: use theirs.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return readKeypairFile(file);
    throw error;
  }
  return keypair;
}
