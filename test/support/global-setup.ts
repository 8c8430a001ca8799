/**
 * Vitest's global setup: gives the run an id, which every test database and Redis key prefix carries
 * (test/support/services.ts), and a temporary directory of its own, which every worker, child process
 * and browser of the run takes as its TMPDIR. At the end of the run it drops every such database,
 * deletes every such key and removes the directory, so a test that failed, timed out or forgot its
 * cleanup leaves nothing behind (a worker's exit handlers do not run: vitest ends its workers with a
 * signal). Only this run's: other runs may be using the same servers.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    testRunId: string;
  }
}

export const postgresAdminUrl = () =>
  process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const redisTestUrl = () => process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** The start of the name of every database of run `run`. */
export const testDatabasePrefix = (run: string) => `oddsgate_test_${run}_`;
/** The start of every Redis key of run `run`. */
export const testRedisPrefix = (run: string) => `oddsgate-test:${run}:`;

export default function setup(project: TestProject) {
  // Time first, so leftovers of a killed run show when they were made.
  const run = `${Date.now().toString(36)}${randomBytes(2).toString("hex")}`;
  project.provide("testRunId", run);
  // Set before the workers start, which inherit it, as their children and Chromium do from them.
  const tempRoot = fs.mkdtempSync(path.join(os.tmpdir(), `oddsgate-test-${run}-`));
  process.env.TMPDIR = tempRoot;
  return async function teardown() {
    fs.rmSync(tempRoot, { recursive: true, force: true, maxRetries: 5 });
    const [databases, keys] = await Promise.all([dropDatabases(run), deleteRedisKeys(run)]);
    if (databases > 0 || keys > 0) {
      console.warn(`test teardown: dropped ${databases} database(s) and ${keys} Redis key(s) the tests left`);
    }
  };
}

async function dropDatabases(run: string): Promise<number> {
  const client = new pg.Client({ connectionString: postgresAdminUrl(), connectionTimeoutMillis: 3_000 });
  client.on("error", () => {});
  try {
    await client.connect();
  } catch {
    return 0; // No PostgreSQL here: the tests made no database either.
  }
  try {
    const { rows } = await client.query<{ datname: string }>(
      "select datname from pg_database where starts_with(datname, $1)",
      [testDatabasePrefix(run)],
    );
    for (const { datname } of rows) await client.query(`drop database if exists "${datname}" with (force)`);
    return rows.length;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A connection to the tests' Redis; rejects within seconds when none answers. */
export async function connectTestRedis(): Promise<Redis> {
  const redis = new Redis(redisTestUrl(), {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 3_000,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    return redis;
  } catch (error) {
    redis.disconnect();
    throw error;
  }
}

async function deleteRedisKeys(run: string): Promise<number> {
  const redis = await connectTestRedis().catch(() => undefined);
  if (!redis) return 0; // No Redis here: the tests wrote no key either.
  let deleted = 0;
  try {
    for await (const keys of redis.scanStream({ match: `${testRedisPrefix(run)}*`, count: 1_000 })) {
      if ((keys as string[]).length > 0) deleted += await redis.del(...(keys as string[]));
    }
    return deleted;
  } finally {
    redis.disconnect();
  }
}
