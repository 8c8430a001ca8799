/** Runs the `oddsgate` command as a user does: a separate process, from the sources. */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
export const CLI_MAIN = path.resolve("src/cli/main.ts");

/** The test runner's environment, minus vitest's own MODE=test, which would be read as our MODE setting. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { MODE: _vitestMode, ...inherited } = process.env;
  return { ...inherited, ...env };
}

/** `oddsgate ...args` with `env` (quiet logs unless asked); rejects when it exits non-zero. */
export function oddsgate(args: string[], env: Record<string, string>) {
  return run(process.execPath, ["--import", "tsx", CLI_MAIN, ...args], {
    env: childEnv({ LOG_LEVEL: "silent", ...env }),
  });
}
