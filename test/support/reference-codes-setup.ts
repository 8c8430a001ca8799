/**
 * Every error a test meets from a reference operation over `fetch` carries one of the codes the
 * reference declares for its status (issue 44): the fetch of each test file is watched, and the file
 * fails at its end naming each answer that broke the enum, whichever test asked.
 */
import { afterAll, expect } from "vitest";
import { referenceCodeViolation, referenceDeclaresCodes } from "./reference-schema.js";

const STATE = Symbol.for("oddsgate.referenceCodes");
interface Watch {
  violations: string[];
  pending: Set<Promise<void>>;
}
const global = globalThis as typeof globalThis & { [STATE]?: Watch };

// Installed once per worker (setup files run again for each file; the module graph is shared).
if (!global[STATE]) {
  const watch: Watch = { violations: [], pending: new Set() };
  global[STATE] = watch;
  const fetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    if (response.status >= 400 && referenceDeclaresCodes(method, url.pathname, response.status)) {
      const check = response
        .clone()
        .json()
        .then(
          (body: unknown) => referenceCodeViolation(method, url.pathname, response.status, body),
          () => `${method} ${url.pathname} answered ${response.status} without a JSON body`,
        )
        .then((violation) => {
          if (violation) watch.violations.push(violation);
          watch.pending.delete(check);
        });
      watch.pending.add(check);
    }
    return response;
  };
}

afterAll(async () => {
  const watch = global[STATE] as Watch;
  await Promise.all(watch.pending);
  const violations = watch.violations.splice(0);
  expect(violations, "error codes outside the reference's enums").toEqual([]);
});
