/**
 * Real PostgreSQL for tests: each caller gets its own fresh database. In CI (`REQUIRE_SERVICES=1`)
 * a missing server is a failure; elsewhere the dependent tests skip and say why. Databases and Redis
 * prefixes carry the run's id, so the run's teardown (global-setup.ts) removes whatever a test left.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import pg from "pg";
import { inject } from "vitest";
import {
  connectTestRedis,
  postgresAdminUrl,
  redisTestUrl,
  testDatabasePrefix,
  testRedisPrefix,
} from "./global-setup.js";

const POSTGRES_ADMIN_URL = postgresAdminUrl();
const RUN = inject("testRunId");
const requireServices = process.env.REQUIRE_SERVICES === "1";

/** Runs `statement` on a connection of its own to the admin database. */
export async function adminQuery(statement: string, values: unknown[] = [], connectTimeoutMs = 10_000) {
  const client = new pg.Client({
    connectionString: POSTGRES_ADMIN_URL,
    connectionTimeoutMillis: connectTimeoutMs,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    return await client.query(statement, values);
  } finally {
    await client.end().catch(() => {});
  }
}

async function probe(): Promise<string | undefined> {
  try {
    await adminQuery("select 1", [], 3_000);
    return undefined;
  } catch (error) {
    return `PostgreSQL at ${POSTGRES_ADMIN_URL} is not reachable (${(error as Error).message})`;
  }
}

const unavailable = await probe();
if (unavailable && requireServices) throw new Error(`REQUIRE_SERVICES=1 but ${unavailable}`);
if (unavailable) console.warn(`skipping PostgreSQL tests: ${unavailable}`);

/** True when PostgreSQL tests can run here. */
export const postgresAvailable = unavailable === undefined;

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Creates an empty database with a unique name; `drop` removes it. */
export async function createPostgresDatabase(): Promise<TestDatabase> {
  const name = `${testDatabasePrefix(RUN)}${randomBytes(6).toString("hex")}`;
  await adminQuery(`create database ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      await adminQuery(`drop database if exists ${name} with (force)`);
    },
  };
}

export const REDIS_TEST_URL = redisTestUrl();

async function probeRedis(): Promise<string | undefined> {
  let redis: Redis | undefined;
  try {
    redis = await connectTestRedis();
    await redis.ping();
    return undefined;
  } catch (error) {
    return `Redis at ${REDIS_TEST_URL} is not reachable (${(error as Error).message})`;
  } finally {
    redis?.disconnect();
  }
}

const redisUnavailable = await probeRedis();
if (redisUnavailable && requireServices) throw new Error(`REQUIRE_SERVICES=1 but ${redisUnavailable}`);
if (redisUnavailable) console.warn(`skipping Redis tests: ${redisUnavailable}`);

/** True when Redis tests can run here. */
export const redisAvailable = redisUnavailable === undefined;

/** A key prefix no other test uses; `cleanup` deletes everything under it. */
export function redisTestPrefix(): { prefix: string; cleanup(): Promise<void> } {
  const prefix = `${testRedisPrefix(RUN)}${randomBytes(6).toString("hex")}:`;
  return {
    prefix,
    async cleanup() {
      const redis = new Redis(REDIS_TEST_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    },
  };
}
