/**
 * The positions of a pair stream (`pair-positions.ts`): a new position only when a value is new or
 * changed, an unchanged value keeps the position it holds from, and positions keep increasing after
 * every one known, whatever this instance's clock says.
 */
import { describe, expect, it } from "vitest";
import { PairPositions } from "../../src/trading/streams/pair-positions.js";

/** A clock the test moves. */
function clock(start: number) {
  const state = { now: start };
  return { state, now: () => state.now };
}

describe("PairPositions", () => {
  it("issues a new position only when a value is new or changed; an unchanged value keeps its own", () => {
    const time = clock(1_000);
    const positions = new PairPositions(60_000, time.now);
    const first = positions.issue(new Map([["a|b", "1"]]));
    expect(first.seq).toBe(1_000);
    time.state.now = 1_100;
    const same = positions.issue(new Map([["a|b", "1"]]));
    expect(same.seq).toBe(1_000);
    time.state.now = 1_200;
    const added = positions.issue(
      new Map([
        ["a|b", "1"],
        ["c|d", "2"],
      ]),
    );
    expect(added.seq).toBe(1_200);
    expect(added.values.get("a|b")?.changedAt).toBe(1_000);
    expect(added.values.get("c|d")?.changedAt).toBe(1_200);
    time.state.now = 1_300;
    const changed = positions.issue(
      new Map([
        ["a|b", "1"],
        ["c|d", "3"],
      ]),
    );
    expect(changed.seq).toBe(1_300);
    expect(changed.values.get("a|b")?.changedAt).toBe(1_000);
    expect(changed.values.get("c|d")?.changedAt).toBe(1_300);
  });

  it("counts a pair that was not priced in the previous publication as changed, whatever its value", () => {
    const time = clock(1_000);
    const positions = new PairPositions(60_000, time.now);
    positions.issue(
      new Map([
        ["a|b", "1"],
        ["c|d", "2"],
      ]),
    );
    time.state.now = 1_100;
    // A client that subscribed now got no value for c|d: it must hear it again from a later position.
    expect(positions.issue(new Map([["a|b", "1"]])).seq).toBe(1_000);
    time.state.now = 1_200;
    const back = positions.issue(
      new Map([
        ["a|b", "1"],
        ["c|d", "2"],
      ]),
    );
    expect(back.values.get("c|d")?.changedAt).toBe(1_200);
    expect(back.seq).toBe(1_200);
  });

  it("continues after the latest position it knows when its clock is behind", () => {
    const time = clock(5_000);
    const heard = new PairPositions(60_000, time.now);
    heard.adopt({ seq: 9_000, values: new Map([["a|b", { json: "1", changedAt: 8_000 }]]) });
    const next = heard.issue(new Map([["a|b", "2"]]));
    expect(next.seq).toBe(9_001);
    expect(next.values.get("a|b")?.changedAt).toBe(9_001);

    // An instance that has only read the positions (no publication yet) continues after them too.
    const learned = new PairPositions(60_000, time.now);
    learned.remember([4_000, 7_500]);
    expect(learned.issue(new Map([["a|b", "1"]])).seq).toBe(7_501);
  });

  it("knows the positions of the retention window and the latest, however old", () => {
    const time = clock(1_000);
    const positions = new PairPositions(10_000, time.now);
    const first = positions.issue(new Map([["a|b", "1"]]));
    time.state.now = 2_000;
    const second = positions.issue(new Map([["a|b", "2"]]));
    expect(positions.knows(first.seq)).toBe(true);
    expect(positions.knows(1_500)).toBe(false);
    time.state.now = 11_500;
    expect(positions.knows(first.seq)).toBe(false);
    expect(positions.knows(second.seq)).toBe(true);
    time.state.now = 100_000;
    expect(positions.knows(second.seq)).toBe(true);
    expect(positions.knows(100_000)).toBe(false);
  });
});
