/**
 * The service's logger: one readable line per entry for a person at a terminal, one JSON object per
 * line for everything else (log collectors, files, pipes), as LOG_FORMAT or the terminal decides.
 */
import { createRequire } from "node:module";
import pino, { type DestinationStream, type Logger, type LoggerOptions } from "pino";
import type PinoPretty from "pino-pretty";
import type { Config } from "../config.js";

// pino-pretty and its formatting packages are loaded only for a terminal: JSON output, what servers
// and pipes write, need not pay for them at every start.
const requirePackage = createRequire(import.meta.url);

/** Headers that carry credentials: a request logged with its headers must not leak them. */
const REDACTION: LoggerOptions["redact"] = {
  paths: ['req.headers["x-api-key"]', "req.headers.authorization"],
  censor: "[redacted]",
};

/** Whether entries are written as readable lines (`pretty`) or JSON: LOG_FORMAT, else the terminal decides. */
function logFormat(config: Pick<Config, "LOG_FORMAT">, isTTY: boolean): "pretty" | "json" {
  return config.LOG_FORMAT ?? (isTTY ? "pretty" : "json");
}

/**
 * Builds the pino logger Fastify takes as `loggerInstance`, writing to stdout unless `destination` is
 * given (tests capture it). Pretty output is formatted in this thread, not by a transport worker, so
 * a line is written when it is logged and nothing is lost on exit.
 */
export function createLogger(
  config: Pick<Config, "LOG_LEVEL" | "LOG_FORMAT">,
  isTTY: boolean,
  destination?: DestinationStream,
): Logger {
  const options: LoggerOptions = { level: config.LOG_LEVEL, redact: REDACTION };
  if (logFormat(config, isTTY) === "json") return pino(options, destination);
  const pretty = requirePackage("pino-pretty") as typeof PinoPretty;
  const lines = pretty({
    destination: destination ?? 1,
    sync: true,
    // Extra fields stay on the entry's line, so a terminal shows one line per entry.
    singleLine: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname",
  });
  return pino(options, lines);
}
