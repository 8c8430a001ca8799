/**
 * `oddsgate sim`: the testers' controls of the venue's simulated upstream, through its `/_sim` routes.
 * `sim settle TICKER yes|no` settles a market, `sim pause`/`resume` halt and reopen its trading,
 * `sim clock +2h` moves the exchange's clock on, `sim fault status 503` makes its requests fail,
 * `sim status` shows where it stands. The venue sees a market's change at its next sync (or at
 * `oddsgate sync`). Only a development venue's simulator has these controls.
 */
import type { Command } from "commander";
import type { Config } from "../config.js";
import {
  type Cli,
  CliError,
  configFrom,
  failingAsMessages,
  hostOf,
  printJson,
  withSettings,
} from "./support.js";

const SIM_SETTINGS: (keyof Config)[] = ["HOST", "UPSTREAM_URL", "SIMULATOR_PORT", "UPSTREAM_TIMEOUT_MS"];
/** Paused markets named in the lines for people; --json lists them all. */
const PAUSED_SHOWN = 10;
const FAULT_KINDS = ["status", "latency", "malformed", "hang", "reset"] as const;
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 };

interface SimStatus {
  now: number;
  clockOffsetSeconds: number;
  markets: Record<string, number>;
  paused: string[];
  faults: unknown[];
}

/** Adds `sim` and its subcommands. */
export function registerSimCommands(program: Command, cli: Cli): void {
  const sim = program
    .command("sim")
    .description(
      "control the venue's simulated upstream: settle, pause and resume markets, its clock, faults",
    );
  const command = (name: string, description: string) =>
    withSettings(
      sim.command(name).option("--json", "print the simulator's answer as JSON").description(description),
      SIM_SETTINGS,
    );

  command("status", "the simulator's clock, its markets by status, paused markets and faults").action(
    failingAsMessages(async (options) => {
      const status = (await simulatorOf(cli, options).call("GET", "/_sim/status")) as SimStatus;
      if (options.json) return printJson(cli, status);
      const counts = Object.entries(status.markets)
        .filter(([, count]) => count > 0)
        .map(([name, count]) => `${count} ${name}`)
        .join(", ");
      cli.console.log(
        `clock ${new Date(status.now * 1000).toISOString()} (${describeOffset(status.clockOffsetSeconds)})`,
      );
      cli.console.log(`markets: ${counts}`);
      const { paused } = status;
      const more = paused.length > PAUSED_SHOWN ? ` and ${paused.length - PAUSED_SHOWN} more (--json)` : "";
      if (paused.length > 0) cli.console.log(`paused: ${paused.slice(0, PAUSED_SHOWN).join(", ")}${more}`);
      cli.console.log(
        status.faults.length === 0 ? "faults: none" : `faults: ${JSON.stringify(status.faults)}`,
      );
    }),
  );

  command("settle", "determine a market's result: it stops trading and pays its winning side")
    .argument("<ticker>", "the market")
    .argument("<result>", "yes or no")
    .action(
      failingAsMessages(async (ticker: string, result: string, options) => {
        const outcome = result.toLowerCase();
        if (outcome !== "yes" && outcome !== "no")
          throw new CliError(`result must be yes or no, got ${result}`);
        await changeLifecycle(
          cli,
          options,
          ticker,
          { status: "determined", result: outcome },
          `settled ${outcome}`,
        );
      }),
    );
  command("pause", "halt a market's trading (Kalshi's paused: status inactive)")
    .argument("<ticker>", "the market")
    .action(
      failingAsMessages(async (ticker: string, options) =>
        changeLifecycle(cli, options, ticker, { status: "inactive" }, "paused"),
      ),
    );
  command("resume", "reopen a paused market's trading")
    .argument("<ticker>", "the market")
    .action(
      failingAsMessages(async (ticker: string, options) =>
        changeLifecycle(cli, options, ticker, { status: "active" }, "resumed"),
      ),
    );

  command("clock", "move the exchange's clock on (never back): +90s, +15m, +2h, +1d12h, +1w")
    .argument("<duration>", "how far, a + then amounts in s, m, h, d or w")
    .action(
      failingAsMessages(async (duration: string, options) => {
        const advanceSeconds = parseDuration(duration);
        const answer = (await simulatorOf(cli, options).call("POST", "/_sim/clock", { advanceSeconds })) as {
          now: number;
          clockOffsetSeconds: number;
        };
        if (options.json) return printJson(cli, answer);
        cli.console.log(
          `clock ${new Date(answer.now * 1000).toISOString()} (${describeOffset(answer.clockOffsetSeconds)})`,
        );
      }),
    );

  command(
    "fault",
    "make the simulator's next requests fail: status CODE, latency MS, malformed, hang, reset; or clear",
  )
    .argument("<kind>", `${FAULT_KINDS.join(", ")} or clear`)
    .argument("[value]", "the status code (status) or the delay in ms (latency)")
    .option("--match <text>", "only requests whose path contains this text")
    .option("--times <n>", "only the next n such requests")
    .action(
      failingAsMessages(async (kind: string, value: string | undefined, options) => {
        const simulator = simulatorOf(cli, options);
        if (kind === "clear") {
          await simulator.call("DELETE", "/_sim/faults");
          if (options.json) return printJson(cli, { faults: [] });
          return cli.console.log("faults cleared");
        }
        const answer = await simulator.call("PUT", "/_sim/faults", [faultRule(kind, value, options)]);
        if (options.json) return printJson(cli, answer);
        cli.console.log(`faults: ${JSON.stringify((answer as { faults: unknown[] }).faults)}`);
      }),
    );
}

/** `+1d12h` (the + optional) as seconds; refuses anything else. */
export function parseDuration(text: string): number {
  const match = /^\+?((?:\d{1,9}[smhdw])+)$/.exec(text.trim());
  if (!match)
    throw new CliError(`a duration is + then amounts in s, m, h, d or w (+90s, +2h, +1d12h), not ${text}`);
  let seconds = 0;
  for (const [, amount, unit] of (match[1] as string).matchAll(/(\d+)([smhdw])/g)) {
    seconds += Number(amount) * (UNIT_SECONDS[unit as string] as number);
  }
  if (seconds < 1) throw new CliError("the clock moves on by at least one second");
  return seconds;
}

function describeOffset(seconds: number): string {
  if (seconds === 0) return "real time";
  const parts: string[] = [];
  let left = seconds;
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (left >= size) {
      parts.push(`${Math.floor(left / size)}${unit}`);
      left %= size;
    }
  }
  return `real time +${parts.join("")}`;
}

function faultRule(kind: string, value: string | undefined, options: { match?: string; times?: string }) {
  if (!(FAULT_KINDS as readonly string[]).includes(kind)) {
    throw new CliError(`a fault is one of ${FAULT_KINDS.join(", ")} (or clear), not ${kind}`);
  }
  const number = (what: string) => {
    if (value === undefined || !/^\d{1,6}$/.test(value))
      throw new CliError(`sim fault ${kind} takes ${what}`);
    return Number(value);
  };
  const times = options.times === undefined ? undefined : Number(options.times);
  if (times !== undefined && !(Number.isInteger(times) && times >= 1)) {
    throw new CliError(`--times must be a whole number of at least 1, got ${options.times}`);
  }
  return {
    kind,
    ...(kind === "status" ? { status: number("a status code (400-599)") } : {}),
    ...(kind === "latency" ? { ms: number("a delay in ms") } : {}),
    ...(options.match ? { match: options.match } : {}),
    ...(times ? { times } : {}),
  };
}

async function changeLifecycle(
  cli: Cli,
  options: Record<string, string | undefined>,
  ticker: string,
  change: { status: string; result?: string },
  done: string,
): Promise<void> {
  const answer = (await simulatorOf(cli, options).call(
    "POST",
    `/_sim/markets/${encodeURIComponent(ticker)}/lifecycle`,
    change,
  )) as { market: { ticker: string; status: string } };
  if (options.json) return printJson(cli, answer);
  cli.console.log(
    `${answer.market.ticker} ${done} (${answer.market.status}); the venue sees it at its next sync, or at \`oddsgate sync\``,
  );
}

/** The simulator a command controls: UPSTREAM_URL's, else the running venue's on SIMULATOR_PORT. */
function simulatorOf(cli: Cli, options: Record<string, string | undefined>) {
  const config = configFrom(cli, options);
  const origin = config.UPSTREAM_URL
    ? new URL(config.UPSTREAM_URL).origin
    : `http://${hostOf(config)}:${config.SIMULATOR_PORT}`;
  return {
    async call(method: string, path: string, body?: unknown): Promise<unknown> {
      let response: Response;
      try {
        response = await fetch(`${origin}${path}`, {
          method,
          signal: AbortSignal.timeout(config.UPSTREAM_TIMEOUT_MS),
          ...(body === undefined
            ? {}
            : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
        });
      } catch {
        throw new CliError(
          `no simulator answers at ${origin}: start the venue with \`npm start\` (it runs one unless UPSTREAM_URL is set), or point SIMULATOR_PORT (--simulator-port) or UPSTREAM_URL at one`,
        );
      }
      const answer = (await response.json().catch(() => null)) as {
        error?: { message?: string };
      } | null;
      // Every /_sim route exists on a simulator with controls: a 404 means none.
      if (response.status === 404) {
        throw new CliError(
          `the upstream at ${origin} has no simulator controls: it is not Oddsgate's simulator, or its venue runs in production`,
        );
      }
      if (!response.ok) {
        throw new CliError(
          `the simulator refused (${response.status}): ${answer?.error?.message ?? "no message"}`,
        );
      }
      return answer;
    },
  };
}
