/**
 * zstd for the `base64+zstd` account encoding. Node 20's zlib has none: this is a WebAssembly build
 * of the reference library, loaded once when this module is first imported.
 */
import { compressUsingDict, createCCtx, init } from "@bokuweb/zstd-wasm";

await init();

// One compression context for every frame: the one-shot ZSTD_compress builds and frees its own on
// each call, which costs about ten times the compression of a token account.
const context = createCCtx();
const NO_DICTIONARY = new Uint8Array(0);
// Agave's encoder asks for level 0, which zstd reads as its default, 3.
const LEVEL = 3;

/** One zstd frame holding `bytes`. */
export function zstdCompress(bytes: Uint8Array): Uint8Array {
  return compressUsingDict(context, bytes, NO_DICTIONARY, LEVEL);
}
