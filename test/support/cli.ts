/**
 * Runs the `oddsgate` command: in this process by default (runCli, what the bin runs, writing to
 * captured streams; no node start-up per call), or as the built bin in a process of its own for the
 * tests about the process: `serve`, its signals and ports.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { promisify } from "node:util";
import { runCli } from "../../src/cli/main.js";

const run = promisify(execFile);
/** The bundle `npm run build` makes: what `npm start` and the `oddsgate` bin run. */
export const CLI_BIN = path.resolve("dist/cli/main.js");

/**
 * Throws unless the build in dist/ is newer than every source file: a test of the built bin on a
 * stale build would pass or fail for code that is no longer there.
 */
export function assertFreshBuild(): void {
  if (!fs.existsSync(CLI_BIN)) throw new Error(`${CLI_BIN} is missing: run npm run build`);
  const built = fs.statSync(CLI_BIN).mtimeMs;
  const sources = fs.readdirSync("src", { recursive: true, withFileTypes: true });
  const newer = sources.find(
    (entry) => entry.isFile() && fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs > built,
  );
  if (newer)
    throw new Error(`dist/ is older than ${path.join(newer.parentPath, newer.name)}: run npm run build`);
}

/** What a run printed. A failed run rejects with these and its exit `code`, as execFile's rejection does. */
export interface CliOutput {
  stdout: string;
  stderr: string;
}

/** The test runner's environment, minus vitest's own MODE=test, which would be read as our MODE setting. */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { MODE: _vitestMode, ...inherited } = process.env;
  return { ...inherited, ...env };
}

/** `oddsgate ...args` in this process with `env` (quiet logs unless asked); rejects when it exits non-zero. */
export async function oddsgate(args: string[], env: Record<string, string>): Promise<CliOutput> {
  const stdout = new CapturedText();
  const stderr = new CapturedText();
  const code = await runCli(args, {
    env: childEnv({ LOG_LEVEL: "silent", ...env }),
    stdout,
    stderr,
    // Not a terminal: `reset` refuses to ask, as it does with stdin from a pipe.
    stdin: Readable.from([]),
    untilStopped: () =>
      Promise.reject(new Error("`serve` runs until stopped: start it with oddsgateProcess")),
  });
  const output = { stdout: stdout.text, stderr: stderr.text };
  if (code === 0) return output;
  throw Object.assign(new Error(`Command failed: oddsgate ${args.join(" ")}\n${output.stderr}`), {
    code,
    ...output,
  });
}

/**
 * `oddsgate ...args` as a process of its own, run from the built bin as a user runs it, with `env`
 * (quiet logs unless asked); rejects when it exits non-zero.
 */
export function oddsgateProcess(args: string[], env: Record<string, string>): Promise<CliOutput> {
  return run(process.execPath, [CLI_BIN, ...args], { env: childEnv({ LOG_LEVEL: "silent", ...env }) });
}

/** A stream keeping the text written to it, as a pipe from a process would carry it. */
class CapturedText extends Writable {
  text = "";

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString("utf8");
    done();
  }
}
