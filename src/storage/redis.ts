/**
 * Connections to REDIS_URL for the parts instances share (rate limits, firm-quote reservations, the
 * stream feeds). ioredis is imported only when a connection is made: a deployment without Redis never
 * pays the ~100 ms of start-up its import costs.
 */
import type { Redis, RedisOptions } from "ioredis";

/** A client for `url` that has not connected yet (with `lazyConnect`, it connects when told to). */
export async function redisClient(url: string, options: RedisOptions): Promise<Redis> {
  const { Redis } = await import("ioredis");
  return new Redis(url, options);
}

/**
 * A connected client for `url`; one that cannot connect fails with an error naming REDIS_URL. Errors
 * after that are reported by the failing command (ioredis keeps reconnecting in the background).
 */
export async function connectRedis(url: string, options: RedisOptions = {}): Promise<Redis> {
  const client = await redisClient(url, { lazyConnect: true, maxRetriesPerRequest: 1, ...options });
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw new Error(`cannot connect to Redis at REDIS_URL: ${(error as Error).message}`);
  }
  return client;
}

/** Two connected clients: one for commands, one for a subscription (which takes a connection over). */
export async function connectRedisPair(url: string): Promise<[commands: Redis, subscriber: Redis]> {
  const [commands, subscriber] = await Promise.allSettled([connectRedis(url), connectRedis(url)]);
  if (commands.status === "fulfilled" && subscriber.status === "fulfilled")
    return [commands.value, subscriber.value];
  for (const result of [commands, subscriber]) if (result.status === "fulfilled") result.value.disconnect();
  throw commands.status === "rejected" ? commands.reason : (subscriber as PromiseRejectedResult).reason;
}
