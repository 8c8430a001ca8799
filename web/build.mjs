/**
 * Builds the explorer into dist/web with Vite, unless the build is newer than every source of it
 * (web/, package-lock.json): `npm start` then pays a check of file times, not a bundle. `--force`
 * always builds.
 */
import { existsSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const web = fileURLToPath(new URL(".", import.meta.url));
const output = join(web, "..", "dist", "web");
const stamp = join(output, ".built");

/** The newest modification time under `path` (a file or a folder). */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const sources = [join(web, "src"), join(web, "public"), join(web, "index.html"), join(web, "vite.config.ts")];
const lock = join(web, "..", "package-lock.json");
const newestSource = Math.max(...sources.map(newest), existsSync(lock) ? statSync(lock).mtimeMs : 0);
if (process.argv.includes("--force") || !existsSync(stamp) || statSync(stamp).mtimeMs < newestSource) {
  // A production bundle whatever the caller's environment (vitest sets NODE_ENV=test, which would
  // bring in Preact's debug build).
  process.env.NODE_ENV = "production";
  const { build } = await import("vite");
  // Built beside the output and moved into place, so a server (or a second build) never sees half of it.
  const staging = `${output}.${process.pid}`;
  await build({
    configFile: join(web, "vite.config.ts"),
    mode: "production",
    logLevel: "warn",
    build: { outDir: staging },
  });
  writeFileSync(join(staging, ".built"), `${new Date().toISOString()}\n`);
  rmSync(output, { recursive: true, force: true });
  renameSync(staging, output);
}
