/** `oddsgate keys`: issuing and managing API keys, which storage holds only as hashes. */
import { type Command, Option } from "commander";
import type { ApiKey } from "../api-keys/store.js";
import { KEY_TIERS } from "../api-keys/tiers.js";
import { type Cli, configFrom, printJson, STORAGE_SETTINGS, withSettings, withStorage } from "./support.js";

/** Adds `keys create`, `keys list`, `keys revoke` and `keys rotate`. */
export function registerKeysCommands(program: Command, cli: Cli): void {
  const keys = program.command("keys").description("issue and manage API keys (stored only as hashes)");

  withSettings(
    keys
      .command("create")
      .description("create a key and print its secret once")
      .requiredOption("--name <name>", "who or what the key is for")
      .addOption(new Option("--tier <tier>", "rate tier").choices(KEY_TIERS).default("standard"))
      .option("--streams", "allow WebSocket streams", false)
      .option("--json", "print the key and its secret as JSON"),
    STORAGE_SETTINGS,
  ).action(async (options) => {
    const config = configFrom(cli, options);
    const { createKey } = await import("../api-keys/store.js");
    await withStorage(config, async (storage) => {
      const issued = await createKey(storage.db, {
        name: options.name,
        tier: options.tier,
        streams: options.streams,
      });
      if (options.json) return printJson(cli, { ...issued.key, secret: issued.secret });
      cli.console.log(`created ${describeKey(issued.key)}`);
      printSecret(cli, issued.secret);
    });
  });

  withSettings(
    keys
      .command("list")
      .description("list keys (never their secrets)")
      .option("--json", "machine-readable output"),
    STORAGE_SETTINGS,
  ).action(async (options) => {
    const config = configFrom(cli, options);
    const { listKeys } = await import("../api-keys/store.js");
    await withStorage(config, async (storage) => {
      const all = await listKeys(storage.db);
      if (options.json) cli.console.log(JSON.stringify(all, null, 2));
      else if (all.length === 0) cli.console.log("no keys yet: oddsgate keys create --name NAME");
      else
        for (const key of all) cli.console.log(`${describeKey(key)}  last used ${key.lastUsedAt ?? "never"}`);
    });
  });

  withSettings(
    keys
      .command("revoke")
      .argument("<id>", "key id, from keys list")
      .description("revoke a key on every instance"),
    STORAGE_SETTINGS,
  ).action(async (id: string, options) => {
    const config = configFrom(cli, options);
    const { revokeKey } = await import("../api-keys/store.js");
    await withStorage(config, async (storage) => {
      cli.console.log(`revoked ${describeKey(await revokeKey(storage.db, id))}`);
    });
  });

  withSettings(
    keys
      .command("rotate")
      .argument("<id>", "key id, from keys list")
      .option("--grace <seconds>", "how long the old secret keeps working", "0")
      .option("--json", "print the key and its new secret as JSON")
      .description("give a key a new secret"),
    STORAGE_SETTINGS,
  ).action(async (id: string, options) => {
    const grace = Number(options.grace);
    const config = configFrom(cli, options);
    const { rotateKey } = await import("../api-keys/store.js");
    await withStorage(config, async (storage) => {
      const issued = await rotateKey(storage.db, id, grace);
      if (options.json) return printJson(cli, { ...issued.key, secret: issued.secret, graceSeconds: grace });
      cli.console.log(
        `rotated ${describeKey(issued.key)}; the old secret ${grace > 0 ? `works for ${grace} s more` : "no longer works"}`,
      );
      printSecret(cli, issued.secret);
    });
  });
}

function describeKey(key: ApiKey): string {
  const status = key.revokedAt ? `revoked ${key.revokedAt}` : "active";
  return `${key.id}  ${JSON.stringify(key.name)}  tier ${key.tier}  streams ${key.streams ? "yes" : "no"}  ${key.secretPrefix}…  ${status}`;
}

function printSecret(cli: Cli, secret: string): void {
  cli.console.log(`secret (shown once, store it now; send it as the x-api-key header):\n${secret}`);
}
