/** The storage backends every storage-facing test runs against. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPostgresDatabase, postgresAvailable } from "./services.js";

export interface BackendSettings {
  DATA_DIR: string;
  DATABASE_URL?: string;
}

export interface Backend {
  name: "sqlite" | "postgres";
  available: boolean;
  /** Fresh, empty storage settings and a cleanup for them. */
  create(): Promise<{ settings: BackendSettings; cleanup(): Promise<void> }>;
}

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = "oddsgate-test-"): { dir: string; cleanup(): Promise<void> } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

export const BACKENDS: Backend[] = [
  {
    name: "sqlite",
    available: true,
    async create() {
      const { dir, cleanup } = tempDir();
      return { settings: { DATA_DIR: dir }, cleanup };
    },
  },
  {
    name: "postgres",
    available: postgresAvailable,
    async create() {
      const { dir, cleanup: removeDir } = tempDir();
      const database = await createPostgresDatabase();
      return {
        settings: { DATA_DIR: dir, DATABASE_URL: database.url },
        cleanup: async () => {
          await database.drop();
          await removeDir();
        },
      };
    },
  },
];
