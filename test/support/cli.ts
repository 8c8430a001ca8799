/**
 * Runs the `oddsgate` command: in this process by default (runCli, what the bin runs, writing to
 * captured streams; no node start-up per call), or as a process of its own for the tests about the
 * process: `serve`, its signals and ports, the built bin.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { promisify } from "node:util";
import { runCli } from "../../src/cli/main.js";

const run = promisify(execFile);
export const CLI_MAIN = path.resolve("src/cli/main.ts");
/** The bundle `npm run build` makes: what `npm start` and the `oddsgate` bin run. */
export const CLI_BIN = path.resolve("dist/cli/main.js");

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
 * `oddsgate ...args` as a process of its own, from the sources (or `command`, e.g. [CLI_BIN]), with
 * `env` (quiet logs unless asked); rejects when it exits non-zero.
 */
export function oddsgateProcess(
  args: string[],
  env: Record<string, string>,
  command: readonly string[] = ["--import", "tsx", CLI_MAIN],
): Promise<CliOutput> {
  return run(process.execPath, [...command, ...args], { env: childEnv({ LOG_LEVEL: "silent", ...env }) });
}

/** A stream keeping the text written to it, as a pipe from a process would carry it. */
class CapturedText extends Writable {
  text = "";

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString("utf8");
    done();
  }
}
