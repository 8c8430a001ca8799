import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

describe("configuration", () => {
  it("starts with embedded defaults and no settings at all", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      HOST: "127.0.0.1",
      PORT: 8080,
      MODE: "development",
      DATA_DIR: "./data",
      SIMULATOR_PORT: 8090,
      RPC_PORT: 8899,
      TRUST_PROXY: 0,
      DEMO_CATALOGUE: true,
    });
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
  });

  it("lets a flag override the environment", () => {
    expect(loadConfig({ PORT: "9000" }, { PORT: "9100" }).PORT).toBe(9100);
    expect(loadConfig({ PORT: "9000" }).PORT).toBe(9000);
  });

  it("treats an empty variable as unset", () => {
    expect(loadConfig({ DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
  });

  it.each([
    ["PORT", "eighty", "--port"],
    ["PORT", "70000", "--port"],
    ["MODE", "staging", "--mode"],
    ["DATABASE_URL", "mysql://localhost/x", "--database-url"],
    ["REDIS_URL", "localhost:6379", "--redis-url"],
    ["TRUST_PROXY", "true", "--trust-proxy"],
    ["LOG_LEVEL", "loud", "--log-level"],
  ])("refuses %s=%s with a message naming the setting and its flag", (name, value, flag) => {
    let message = "";
    try {
      loadConfig({ [name]: value });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toContain(name);
    expect(message).toContain(flag);
    expect(message).toContain(JSON.stringify(value));
  });

  it("accepts PostgreSQL and Redis URLs", () => {
    const config = loadConfig({ DATABASE_URL: "postgres://u@db:5432/og", REDIS_URL: "redis://cache:6379" });
    expect(config.DATABASE_URL).toBe("postgres://u@db:5432/og");
    expect(config.REDIS_URL).toBe("redis://cache:6379");
  });
});
