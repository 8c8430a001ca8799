/**
 * zstd for the `base64+zstd` account encoding. Node 20's zlib has none: this is a WebAssembly build
 * of the reference library, loaded once when this module is first imported.
 */
import { compress, init } from "@bokuweb/zstd-wasm";

await init();

// Agave's encoder asks for level 0, which zstd reads as its default, 3.
const LEVEL = 3;

/** One zstd frame holding `bytes`. */
export function zstdCompress(bytes: Uint8Array): Uint8Array {
  return compress(bytes, LEVEL);
}
