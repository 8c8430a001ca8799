/**
 * Optional response signing (contract §10): a request that carries `x-sign-request: true` gets its
 * response signed with the venue's ed25519 response-signing key as an RFC 9421 HTTP Message Signature,
 * over its status, content type, RFC 9530 `content-digest` and the request's `x-request-id`. The
 * public key is published as a JWKS at SIGNING_DIRECTORY_PATH (draft-meunier-http-message-signatures-
 * directory), whose `kid` is the base58 key the signatures name as `keyid`.
 *
 * What is signed is what goes on the wire: the digest covers the exact body bytes sent (a streamed body
 * is read into memory first, up to MAX_SIGNED_STREAM_BYTES), and the empty content of a HEAD answer or a
 * 204/304. Nothing compresses responses after this hook (no @fastify/compress), so the digest is of the
 * identity representation; a compressing proxy in front must leave signed responses alone.
 * WebSocket upgrades are never signed, a refused one included (§8: signing is REST only).
 */
import crypto from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/**
 * The request ids the venue accepts from a caller: short and plain, so they cannot forge a log line or
 * a line of a signature base. Any other offered id is replaced by a generated one (see build-app.ts).
 */
export const REQUEST_ID_PATTERN = /^[\w.:-]{1,128}$/;

/** Where the venue publishes its response-signing key. */
export const SIGNING_DIRECTORY_PATH = "/.well-known/http-message-signatures-directory";
export const SIGNING_DIRECTORY_MEDIA_TYPE = "application/http-message-signatures-directory+json";

/** The label of the venue's signature in `signature-input` and `signature`, as the reference uses. */
export const SIGNATURE_LABEL = "sig1";

/** A streamed body is read whole to digest it; one larger than this fails the request instead. */
export const MAX_SIGNED_STREAM_BYTES = 16 * 1024 * 1024;

/** The response headers a browser script must be allowed to read to verify a signature. */
const EXPOSED_HEADERS = ["signature", "signature-input", "content-digest"];
const EMPTY = Buffer.alloc(0);
// base58 (what the keyid is) is also safe inside an RFC 8941 string without escaping.
const BASE58_TEXT = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
// A component value must be one line of visible ASCII, or it could add lines to the signature base.
const COMPONENT_VALUE = /^[\x20-\x7e]*$/;

/** The venue's response-signing key: a chain `Keypair` fits. */
export interface ResponseSigningKey {
  /** The public key in base58: the `keyid` of every signature and the directory's `kid`. */
  readonly address: string;
  /** The raw 32-byte ed25519 public key. */
  readonly publicKey: Uint8Array;
  /** The ed25519 signature of `message`. */
  sign(message: Uint8Array): Uint8Array;
}

/** One covered component of a signature and its value in the message. */
export interface CoveredComponent {
  /** `@status` or a lowercase field name. */
  readonly name: string;
  /** Whether the value is the request's (`;req`), not the response's. */
  readonly fromRequest: boolean;
  readonly value: string;
}

/** What a response's signature covers, as the hook gathers it. */
export interface SignedResponseParts {
  status: number;
  /** The `content-type` sent, if any (covered only when present). */
  contentType: string | undefined;
  /** The exact content sent (empty for HEAD, 204 and 304). */
  body: Uint8Array;
  /** The id of the request, covered as `"x-request-id";req`. */
  requestId: string;
  /** Unix seconds. */
  created: number;
}

/** The headers that carry a response's signature. */
export type SignatureHeaders = {
  "content-digest": string;
  "signature-input": string;
  signature: string;
};

/** The RFC 9530 `content-digest` of a body: `sha-256=:<base64>:`. */
export function contentDigest(body: Uint8Array): string {
  return `sha-256=:${crypto.createHash("sha256").update(body).digest("base64")}:`;
}

/** A component identifier as RFC 9421 serializes it: `"name"`, or `"name";req` for the request's. */
function componentId(component: CoveredComponent): string {
  return `"${component.name}"${component.fromRequest ? ";req" : ""}`;
}

/** The `@signature-params` value: the covered components and the signature's parameters (RFC 9421 §2.3). */
export function signatureParams(
  components: readonly CoveredComponent[],
  created: number,
  keyid: string,
): string {
  if (!Number.isSafeInteger(created) || created < 0) throw new Error("created must be Unix seconds");
  if (!BASE58_TEXT.test(keyid)) throw new Error("the keyid must be a base58 public key");
  return `(${components.map(componentId).join(" ")});created=${created};keyid="${keyid}";alg="ed25519"`;
}

/**
 * The signature base of RFC 9421 §2.5: one `"name": value` line per covered component, then the
 * `"@signature-params"` line, joined by LF with no trailing newline.
 */
export function signatureBase(components: readonly CoveredComponent[], params: string): string {
  const lines = components.map((component) => {
    if (!COMPONENT_VALUE.test(component.value)) {
      throw new Error(`the value of ${componentId(component)} is not one line of visible ASCII`);
    }
    return `${componentId(component)}: ${component.value}`;
  });
  lines.push(`"@signature-params": ${params}`);
  return lines.join("\n");
}

/** The components the venue covers for a response: status, content type when sent, digest, request id. */
export function coveredComponents(parts: SignedResponseParts, digest: string): CoveredComponent[] {
  return [
    { name: "@status", fromRequest: false, value: String(parts.status) },
    ...(parts.contentType === undefined
      ? []
      : [{ name: "content-type", fromRequest: false, value: parts.contentType }]),
    { name: "content-digest", fromRequest: false, value: digest },
    { name: "x-request-id", fromRequest: true, value: parts.requestId },
  ];
}

/** Signs one response: the `content-digest`, `signature-input` and `signature` headers to send with it. */
export function signResponse(parts: SignedResponseParts, key: ResponseSigningKey): SignatureHeaders {
  if (!REQUEST_ID_PATTERN.test(parts.requestId)) throw new Error("the request id is not a plain, short id");
  const digest = contentDigest(parts.body);
  const components = coveredComponents(parts, digest);
  const params = signatureParams(components, parts.created, key.address);
  const signature = key.sign(Buffer.from(signatureBase(components, params), "ascii"));
  return {
    "content-digest": digest,
    "signature-input": `${SIGNATURE_LABEL}=${params}`,
    signature: `${SIGNATURE_LABEL}=:${Buffer.from(signature).toString("base64")}:`,
  };
}

/** The JWKS the venue publishes at SIGNING_DIRECTORY_PATH: its one key, `kid` the base58 keyid. */
export function signingDirectory(key: ResponseSigningKey) {
  return {
    keys: [
      {
        kty: "OKP",
        crv: "Ed25519",
        x: Buffer.from(key.publicKey).toString("base64url"),
        kid: key.address,
        use: "sig",
      },
    ],
  };
}

/** Answers with the signing directory. */
function sendSigningDirectory(reply: FastifyReply, key: ResponseSigningKey): FastifyReply {
  // Short-lived in caches, so a rotated key is picked up within minutes. Sent as bytes: Fastify would
  // add a charset parameter to text, which this JSON media type does not define.
  return reply
    .code(200)
    .header("cache-control", "public, max-age=300")
    .type(SIGNING_DIRECTORY_MEDIA_TYPE)
    .send(Buffer.from(JSON.stringify(signingDirectory(key))));
}

export interface ResponseSigningOptions {
  /** Milliseconds since the epoch; tests pin it. */
  now?: () => number;
  /** Largest streamed body read to be signed (default MAX_SIGNED_STREAM_BYTES). */
  maxStreamBytes?: number;
}

/**
 * Serves the signing directory and signs every response whose request asks for it. Install it before
 * any plugin with routes, so that its hook reaches them (errors, 404s and refusals included).
 */
export function installResponseSigning(
  app: FastifyInstance,
  key: ResponseSigningKey,
  options: ResponseSigningOptions = {},
): void {
  const now = options.now ?? Date.now;
  const maxStreamBytes = options.maxStreamBytes ?? MAX_SIGNED_STREAM_BYTES;
  // Checked once here rather than on the first signed response.
  signatureParams([], 0, key.address);
  // Public: a caller needs the key before it has an API key.
  app.get(
    SIGNING_DIRECTORY_PATH,
    { schema: { hide: true }, config: { public: true } },
    async (_request, reply) => sendSigningDirectory(reply, key),
  );
  app.addHook("onSend", async (request, reply, payload) => {
    if (!wantsSignature(request)) return payload;
    const body = await payloadBytes(payload, maxStreamBytes);
    signReply(request, reply, body, key, now());
    // A stream was read to digest it: the bytes read are what is sent.
    return typeof payload === "string" || payload instanceof Uint8Array ? payload : body;
  });
}

/**
 * Adds the signature headers for `body`, the bytes about to be sent, to a reply whose status and
 * headers are final. The onSend hook calls it; so must a reply Fastify sends without running onSend
 * hooks (its `frameworkErrors`, answered before routing).
 */
export function signReply(
  request: FastifyRequest,
  reply: FastifyReply,
  body: Uint8Array,
  key: ResponseSigningKey,
  nowMs: number = Date.now(),
): void {
  const status = reply.statusCode;
  // Fastify drops the content type of a 1xx or 204 (they have no content) after the onSend hooks.
  const hasNoContent = status < 200 || status === 204;
  const contentType = hasNoContent ? undefined : headerText(reply.getHeader("content-type"));
  const sentEmpty = hasNoContent || status === 304 || request.method === "HEAD";
  const headers = signResponse(
    {
      status,
      contentType,
      body: sentEmpty ? EMPTY : body,
      requestId: request.id,
      created: Math.floor(nowMs / 1000),
    },
    key,
  );
  reply.headers(headers);
  reply.header("x-request-id", request.id);
  reply.header("access-control-expose-headers", exposeList(reply.getHeader("access-control-expose-headers")));
}

/** Whether the caller asked for a signature: `x-sign-request: true` on a plain HTTP request. */
export function wantsSignature(request: FastifyRequest): boolean {
  const asked = request.headers["x-sign-request"];
  return (
    typeof asked === "string" &&
    asked.trim().toLowerCase() === "true" &&
    request.headers.upgrade === undefined
  );
}

/** A header as one line of text, as RFC 9421 §2.1 takes it: values trimmed and joined by ", ". */
function headerText(value: string | number | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  return (Array.isArray(value) ? value.map((part) => part.trim()).join(", ") : String(value)).trim();
}

/** An existing `access-control-expose-headers` (the CORS setup's) with the signature headers added. */
function exposeList(existing: string | number | string[] | undefined): string {
  const names = (headerText(existing) ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  const present = new Set(names.map((name) => name.toLowerCase()));
  for (const name of EXPOSED_HEADERS) if (!present.has(name)) names.push(name);
  return names.join(", ");
}

/** The bytes of an onSend payload: text as UTF-8, bytes as they are, a stream read whole (bounded). */
async function payloadBytes(payload: unknown, maxStreamBytes: number): Promise<Buffer> {
  if (payload === undefined || payload === null) return EMPTY;
  if (typeof payload === "string") return Buffer.from(payload, "utf8");
  if (payload instanceof Uint8Array)
    return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (isAsyncIterable(payload)) {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of payload) {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunkBytes(chunk);
      size += bytes.length;
      if (size > maxStreamBytes) {
        // Destroyed by the iterator's return: the rest of the stream is never read.
        throw new Error(`a streamed body over ${maxStreamBytes} bytes cannot be signed`);
      }
      chunks.push(bytes);
    }
    return Buffer.concat(chunks, size);
  }
  // A fetch Response as payload, say: Fastify would send bytes this hook never saw.
  throw new Error("cannot sign a response payload that is neither text, bytes nor a stream");
}

function chunkBytes(chunk: unknown): Buffer {
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new Error("a streamed body yielded something other than text or bytes");
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}
