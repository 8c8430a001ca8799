/**
 * Bodies the venue sends again and again (relay answers held in the upstream cache) go out compressed
 * when the client accepts it, as every browser and HTTP library does. Each body is compressed once per
 * encoding, on first demand, and the result lives exactly as long as the body does (a WeakMap on the
 * cached Buffer), so a cache hit costs a header lookup and a write of a few kilobytes instead of tens.
 * A forecast history compresses about 9:1; on this venue's hot path the bytes, not the code, were the
 * cost. Bodies sent once are never compressed: the deflate would cost more than the bytes it saves.
 */
import zlib from "node:zlib";
import { Negotiator } from "@fastify/accept-negotiator";
import type { FastifyReply } from "fastify";
import { LRUCache } from "lru-cache";
import { wantsSignature } from "./response-signing.js";

/** Below this a compressed body saves less than its headers and the work cost. */
const MIN_COMPRESSED_BYTES = 1024;

type Encoding = "br" | "gzip";

/** Brotli at quality 5 compresses a 15 kB JSON body in about 0.4 ms, within a few % of quality 11. */
const COMPRESS: Record<Encoding, (body: Buffer) => Buffer> = {
  br: (body) =>
    zlib.brotliCompressSync(body, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 5,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
  gzip: (body) => zlib.gzipSync(body),
};

// Clients send a handful of distinct accept-encoding values; bounded so varied ones cannot grow it.
const negotiator = new Negotiator<Encoding>({
  supportedValues: ["br", "gzip"],
  cache: new LRUCache<string, string>({ max: 256 }),
});

const encodedVariants = new WeakMap<Buffer, Partial<Record<Encoding, Buffer>>>();

/** The encoding to send a reused body in, if any: none for a signed response or a small body. */
function chosenEncoding(reply: FastifyReply, body: Buffer): Encoding | undefined {
  if (body.length < MIN_COMPRESSED_BYTES) return undefined;
  const { request } = reply;
  const accepted = request.headers["accept-encoding"];
  // A signature's content digest is of the bytes a client reads back; fetch decodes before it reads.
  if (typeof accepted !== "string" || wantsSignature(request)) return undefined;
  return negotiator.negotiate(accepted) ?? undefined;
}

/** Sends `body`, a Buffer the caller keeps and sends again, compressed once when the client accepts it. */
export function sendReusedBody(reply: FastifyReply, body: Buffer, contentType: string): FastifyReply {
  reply.type(contentType);
  if (body.length >= MIN_COMPRESSED_BYTES) appendVary(reply, "accept-encoding");
  const encoding = chosenEncoding(reply, body);
  if (!encoding) return reply.send(body);
  let variants = encodedVariants.get(body);
  if (!variants) {
    variants = {};
    encodedVariants.set(body, variants);
  }
  variants[encoding] ??= COMPRESS[encoding](body);
  return reply.header("content-encoding", encoding).send(variants[encoding]);
}

/** Adds `field` to the response's `vary` header, keeping what other hooks (CORS) put there. */
function appendVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader("vary");
  const text = Array.isArray(current) ? current.join(", ") : current === undefined ? "" : String(current);
  if (text.split(",").some((item) => item.trim().toLowerCase() === field || item.trim() === "*")) return;
  reply.header("vary", text ? `${text}, ${field}` : field);
}
