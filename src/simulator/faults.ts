/**
 * Fault controls of the simulator: what the next matching requests suffer (latency, an error status,
 * a malformed body, a hang, a connection reset), and a count of every request received per path, so
 * tests can see what reached the exchange.
 */
import { z } from "zod";

export const Fault = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("latency"), ms: z.number().int().min(0).max(120_000) }),
  z.object({ kind: z.literal("status"), status: z.number().int().min(400).max(599) }),
  z.object({ kind: z.literal("malformed") }),
  z.object({ kind: z.literal("hang") }),
  z.object({ kind: z.literal("reset") }),
]);

/** Which requests a fault hits: paths containing `match` (all when absent), the next `times` of them (all when absent). */
export const FaultRule = z.intersection(
  Fault,
  z.object({ match: z.string().min(1).optional(), times: z.number().int().min(1).optional() }),
);
export type FaultRule = z.infer<typeof FaultRule>;

/** The simulator's current faults and its request counts. */
export class FaultControls {
  private rules: FaultRule[] = [];
  private counts = new Map<string, number>();

  /** Replaces every current fault with these. */
  set(...rules: FaultRule[]): void {
    this.rules = rules.map((rule) => FaultRule.parse(rule));
  }

  clear(): void {
    this.rules = [];
  }

  /** Current faults, with what remains of their `times`. */
  list(): readonly FaultRule[] {
    return this.rules;
  }

  /** Counts a request to `path` and returns the fault it suffers, if any, using up one of its `times`. */
  take(path: string): FaultRule | undefined {
    this.counts.set(path, (this.counts.get(path) ?? 0) + 1);
    const index = this.rules.findIndex((rule) => rule.match === undefined || path.includes(rule.match));
    const rule = this.rules[index];
    if (!rule) return undefined;
    if (rule.times !== undefined) {
      if (rule.times <= 1) this.rules.splice(index, 1);
      else this.rules[index] = { ...rule, times: rule.times - 1 };
    }
    return rule;
  }

  /** Requests received per path (without the query), since start or the last `resetStats`. */
  stats(): { byPath: Record<string, number> } {
    return { byPath: Object.fromEntries(this.counts) };
  }

  resetStats(): void {
    this.counts.clear();
  }
}
