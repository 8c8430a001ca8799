import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Drops every test database and Redis key of the run at its end, whatever the tests left.
    globalSetup: ["test/support/global-setup.ts"],
    // Every error of a reference operation a test meets carries a code of the reference's enum.
    setupFiles: ["test/support/reference-codes-setup.ts"],
    // One module graph per worker, reused file after file: loading the venue's modules again for every
    // file was a fifth of the suite's CPU. No test keeps state in a module; each builds its own venue.
    isolate: false,
    // Files side by side even on two cores: most of a venue test's time is spent waiting (sockets,
    // the chain's 400 ms slots, child processes), not computing.
    maxWorkers: 3,
    testTimeout: 30_000,
    // A poll ends as soon as its state is reached; a second (the default) is too short for a page
    // or a venue on a shared 2-core machine, so a loaded run failed where nothing was wrong.
    expect: { poll: { timeout: 15_000 } },
    hookTimeout: 60_000,
    reporters: ["default"],
  },
});
