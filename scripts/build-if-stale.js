/**
 * Rebuilds dist/ (`tsc -b`, incremental, then the bundle) only when a source file or build setting changed since the
 * last build, so `npm run cli` starts at once otherwise: comparing file times takes milliseconds,
 * where tsc's own up-to-date check first loads the compiler, about a second.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const BUILD_INFO = "dist/.tsbuildinfo";
// The bundle holds the dependencies too: a lockfile or a bundle setting changes it as a source does.
const INPUTS = [
  "src",
  "tsconfig.json",
  "tsconfig.build.json",
  "package.json",
  "package-lock.json",
  "scripts/bundle.mjs",
];

/** The latest modification time under `entry`, directories included. */
function lastChange(entry) {
  const stat = fs.statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  // A directory's own time moves when an entry is added, removed or renamed, which no file shows.
  let latest = stat.mtimeMs;
  for (const name of fs.readdirSync(entry)) latest = Math.max(latest, lastChange(path.join(entry, name)));
  return latest;
}

// The older of the compile and the bundle: a bundle that failed after its compile is made again.
const built = Math.min(
  ...[BUILD_INFO, "dist/cli/main.js"].map(
    (file) => fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0,
  ),
);
if (INPUTS.some((input) => lastChange(input) > built)) {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const build = spawnSync(process.execPath, [tsc, "-b", "tsconfig.build.json"], { stdio: "inherit" });
  // dist/cli/main.js is the bundle of the whole command: remade after every compile, or it runs old code.
  const bundle =
    build.status === 0 ? spawnSync(process.execPath, ["scripts/bundle.mjs"], { stdio: "inherit" }) : build;
  process.exitCode = bundle.status ?? 1;
}
