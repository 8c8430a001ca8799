/**
 * The chaos suite's upstream: the Kalshi simulator over the demo catalogue in a process of its own
 * (run with tsx by `cluster.ts`), laid out around the day the run's database fixes, so that it serves
 * the same events the venue instances load. Its faults (`/_sim/faults`) make the upstream outage.
 *
 *   DATABASE_URL=postgres://... CHAOS_SIMULATOR_PORT=8090 node --import tsx bench/chaos/simulator.ts
 */
import { generateDemoCatalogue } from "../../src/demo/generate.js";
import { resolveDemoAnchor } from "../../src/markets/store.js";
import { startSimulator } from "../../src/simulator/index.js";
import { openStorage } from "../../src/storage/database.js";

const storage = await openStorage({ DATA_DIR: ".", DATABASE_URL: process.env.DATABASE_URL });
const anchor = await resolveDemoAnchor(storage.db);
await storage.close();
const simulator = await startSimulator({
  catalogue: generateDemoCatalogue({ anchor }),
  port: Number(process.env.CHAOS_SIMULATOR_PORT),
});
console.log(`simulator ready at ${simulator.url}`);
process.once("SIGTERM", () => {
  simulator.close().then(() => process.exit(0));
});
