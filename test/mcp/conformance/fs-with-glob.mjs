/**
 * node:fs with `globSync`, which Node 22 added and the conformance CLI imports (for its tier report,
 * which these tests do not run): the patterns it uses, `**∕name`, found by a recursive listing.
 */
import fs from "node:fs";
import path from "node:path";

export * from "node:fs";
export default fs;

export function globSync(pattern, options = {}) {
  const match = /^\*\*\/([^*?[\]{}/]+)$/.exec(String(pattern));
  if (!match)
    throw new Error(`this Node has no fs.globSync; only **/name patterns are provided, not ${pattern}`);
  const cwd = options.cwd ?? process.cwd();
  return fs
    .readdirSync(cwd, { recursive: true })
    .map(String)
    .filter((entry) => path.basename(entry) === match[1]);
}
