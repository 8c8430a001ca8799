/**
 * A hostile or broken upstream must not make the relay do unbounded work: a milestones list far
 * longer than any event has is refused before any live data is asked for, live-data batches go a few
 * at a time, and a 200 whose type is not a JSON media type is not passed on (the relay serves the
 * upstream's type, so `text/html; x=json` would be HTML from our origin).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { type Upstream, type UpstreamAnswer, UpstreamClient } from "../../src/upstream/client.js";
import { UpstreamError } from "../../src/upstream/errors.js";
import { MarketRelay, rfc3339Seconds } from "../../src/upstream/relay.js";

const EVENT = "KXNBAGAME-26NOV22AAABBB";

/** An upstream that lists `count` milestones of EVENT and answers each live-data batch after `delayMs`. */
function listingUpstream(count: number, delayMs = 0) {
  const calls = { milestones: 0, batches: 0, inFlight: 0, mostInFlight: 0 };
  const json = (value: unknown): UpstreamAnswer => ({
    status: 200,
    contentType: "application/json",
    body: Buffer.from(JSON.stringify(value)),
  });
  const upstream: Upstream = {
    async get(path, query) {
      if (path === "milestones") {
        calls.milestones += 1;
        const milestones = Array.from({ length: count }, (_, i) => ({
          id: `m-${i}`,
          related_event_tickers: [EVENT],
        }));
        return json({ milestones, cursor: "" });
      }
      calls.batches += 1;
      calls.inFlight += 1;
      calls.mostInFlight = Math.max(calls.mostInFlight, calls.inFlight);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      calls.inFlight -= 1;
      const ids = query?.getAll("milestone_ids") ?? [];
      return json({
        live_datas: ids.map((id) => ({ type: "basketball_game", details: {}, milestone_id: id })),
      });
    },
    async close() {},
  };
  return { upstream, calls };
}

describe("live data by event from a hostile upstream", () => {
  it("refuses a list of 40,000 milestones at once, asking for no live data", async () => {
    const { upstream, calls } = listingUpstream(40_000);
    const refusal = await new MarketRelay(upstream)
      .liveDataByEvent(EVENT, {})
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(UpstreamError);
    expect((refusal as UpstreamError).kind).toBe("unavailable");
    expect((refusal as Error).message).toContain("over 1000 milestones");
    // Refused from the listing alone: not one batch of live data was asked for.
    expect(calls.batches).toBe(0);
  });

  it("asks for the live data of many milestones a few batches at a time, and joins them", async () => {
    const { upstream, calls } = listingUpstream(950, 5);
    const answer = await new MarketRelay(upstream).liveDataByEvent(EVENT, {});
    const body = JSON.parse(answer.body.toString()) as { live_datas: { milestone_id: string }[] };
    expect(body.live_datas).toHaveLength(950);
    expect(calls.batches).toBe(10);
    expect(calls.mostInFlight).toBeLessThanOrEqual(4);
  });
});

describe("the upstream's content type", () => {
  const servers: http.Server[] = [];
  afterAll(() => {
    for (const server of servers) server.close();
  });

  async function answering(contentType: string): Promise<UpstreamClient> {
    const server = http.createServer((_request, response) =>
      response.writeHead(200, { "content-type": contentType }).end('"<script>alert(1)</script>"'),
    );
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return new UpstreamClient({ baseUrl: `http://127.0.0.1:${port}/trade-api/v2`, timeoutMs: 30_000 });
  }

  it("passes only a JSON media type on", async () => {
    for (const type of ["text/html; x=json", "text/json-ish", "application/jsonp", "text/html"]) {
      const client = await answering(type);
      const failure = await client.get("anything").catch((error: unknown) => error);
      expect(failure, type).toBeInstanceOf(UpstreamError);
      await client.close();
    }
    for (const type of ["application/json", "application/json; charset=utf-8", "application/problem+json"]) {
      const client = await answering(type);
      expect((await client.get("anything")).contentType, type).toBe(type);
      await client.close();
    }
  });
});

describe("rfc3339Seconds", () => {
  it("takes only moments whose UTC year still has four digits", () => {
    expect(rfc3339Seconds("0001-01-01T00:00:00Z")).toBe(-62_135_596_800);
    expect(rfc3339Seconds("9999-12-31T23:59:59Z")).toBe(253_402_300_799);
    expect(rfc3339Seconds("0000-01-01T00:00:00+23:59")).toBeUndefined();
    expect(rfc3339Seconds("9999-12-31T23:59:59-23:59")).toBeUndefined();
  });
});
