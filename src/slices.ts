/**
 * Long in-memory work done in slices. Building a catalogue of 250,000 markets or creating their
 * chain accounts takes seconds of CPU, and SQLite answers synchronously, so without a turn of the
 * event loop now and then every request, liveness probes included, would wait for all of it.
 */
import { setImmediate } from "node:timers/promises";

/** How long one slice may hold the event loop. */
export const SLICE_MS = 10;
/** Items done between two looks at the clock. */
const ITEMS_PER_CLOCK_READ = 64;

/** Calls `each` on every item in order, handing the event loop a turn about every SLICE_MS. */
export async function forEachInSlices<T>(
  items: readonly T[],
  each: (item: T, index: number) => void,
): Promise<void> {
  let sliceEnd = performance.now() + SLICE_MS;
  for (let index = 0; index < items.length; index += 1) {
    each(items[index] as T, index);
    if ((index + 1) % ITEMS_PER_CLOCK_READ === 0 && performance.now() >= sliceEnd) {
      await setImmediate();
      sliceEnd = performance.now() + SLICE_MS;
    }
  }
}
