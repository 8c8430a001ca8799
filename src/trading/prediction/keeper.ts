/**
 * The order keeper: moves every escrowed order to its end, exactly once. Each step is a
 * compare-and-set in storage, and a settling transaction is recorded (signature, wire, last valid
 * height, plan) before it is sent, so after a crash the keeper finds it, sends it again while it can
 * still land, and builds another only once it no longer can. The escrow itself can be spent only
 * once, so a fill and a refund can never both land.
 *
 *   pending ──open tx lands──▶ open ──fill or refund recorded──▶ pendingClose ──it lands──▶ closed
 *      │ │ open tx fails: failed         ▲ it can no longer land ───────┘
 *      │ └ never lands before its height: expired
 *      └──open tx landed and the fill or refund recorded with it (one write)──▶ pendingClose
 */
import { every, type Repeating } from "../../every.js";
import { SLOT_MS } from "../spot/trading-book.js";
import { checkClose } from "./keeper/closing.js";
import { OpeningWatch, type OpenStatuses } from "./keeper/opening.js";
import type { OrderKeeperOptions } from "./keeper/options.js";
import { Settler } from "./keeper/settler.js";
import { Sweeper } from "./keeper/sweeper.js";
import {
  ACTIVE_ORDERS_PER_PASS,
  activeEscrows,
  activeOrders,
  deleteExpiredInits,
  type OrderRecord,
} from "./order-store.js";

export type { OrderKeeperOptions } from "./keeper/options.js";

/** Moves escrowed orders on, one compare-and-set step at a time. */
export class OrderKeeper {
  private schedule: Repeating | undefined;
  /** The pass in progress, if any (`stop` waits for it). */
  private running: Promise<void> | undefined;
  private readonly busy = new Set<string>();
  /** Whether a pass has deleted the unpaid market initializations earlier versions left expired. */
  private expiredInitsDeleted = false;
  private readonly settler: Settler;
  private readonly sweeper: Sweeper;
  private readonly opening: OpeningWatch;

  constructor(private readonly options: OrderKeeperOptions) {
    this.settler = new Settler(options);
    this.sweeper = new Sweeper(options);
    this.opening = new OpeningWatch(options, this.settler);
  }

  /** Works through the active orders every slot (and at once, to resume what a restart left). */
  start(): void {
    this.schedule = every(SLOT_MS, () => (this.running = this.tick()), {
      onError: (error) => this.options.logger?.error({ err: error }, "order keeper tick failed"),
      immediately: true,
    });
  }

  /** Stops the passes; resolves once the one in progress (if any) has finished. */
  async stop(): Promise<void> {
    this.schedule?.stop();
    this.schedule = undefined;
    // every() reports no failure after stop(): a last pass that failed is said here.
    await this.running?.catch((error: unknown) =>
      this.options.logger?.error({ err: error }, "the order keeper's last pass failed"),
    );
  }

  /** Resolves once the next pass over the active orders has finished (immediately when stopped). */
  async nextPass(): Promise<void> {
    await this.schedule?.nextRun();
  }

  /** An order (as just stored) whose open transaction just landed: settle it now rather than at the next tick. */
  opened(order: OrderRecord): void {
    void this.advance(order).catch((error: unknown) =>
      this.options.logger?.error({ err: error, orderId: order.id }, "settling an order failed"),
    );
  }

  /**
   * One pass over every active order; none while the chain's state is not current (`Chain.unhealthy`:
   * nothing is settled or signed from a copy another instance has moved on from).
   */
  async tick(): Promise<void> {
    const { db, book } = this.options;
    if (this.options.chain.unhealthy?.()) return;
    if (!this.expiredInitsDeleted) {
      // Unpaid initializations earlier versions marked expired and kept; none is marked so now.
      await deleteExpiredInits(db);
      this.expiredInitsDeleted = true;
    }
    const orders = await activeOrders(db);
    // The pass's own read names every escrow still in play unless it was cut at its limit.
    const complete = orders.length < ACTIVE_ORDERS_PER_PASS;
    book.followOrderEscrows(complete ? orders.map((order) => order.escrow) : await activeEscrows(db));
    const opens = await this.opening.readOpens(orders);
    for (const order of orders) await this.advance(order, opens);
    await this.sweeper.sweepDue();
  }

  /** Takes one order one or more steps on; never works on the same order twice at once. */
  private async advance(order: OrderRecord, opens?: OpenStatuses): Promise<void> {
    if (this.busy.has(order.id)) return;
    this.busy.add(order.id);
    try {
      // Each step returns the order as it stored it, so the next one needs no read.
      let current: OrderRecord | undefined = order;
      for (let steps = 0; current && steps < 4; steps++)
        current = await this.step(current, steps === 0 ? opens : undefined);
    } finally {
      this.busy.delete(order.id);
    }
  }

  /** Returns the order as changed, or undefined when it did not change. */
  private async step(order: OrderRecord, opens?: OpenStatuses): Promise<OrderRecord | undefined> {
    switch (order.status) {
      case "pending":
        return this.opening.check(order, opens);
      case "open":
        return this.settler.settle(order);
      case "pendingClose":
        return checkClose(this.options, order);
      default:
        return undefined;
    }
  }
}
