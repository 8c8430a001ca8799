/**
 * Loaded with `node --import` before the MCP conformance CLI on Node 20: its import of node:fs is
 * answered with node:fs plus `globSync` (fs-with-glob.mjs). The package's own files are not touched.
 */
import { register } from "node:module";

register("./node20-hooks.mjs", import.meta.url);
