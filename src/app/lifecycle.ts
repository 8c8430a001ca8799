/**
 * A stack of closers: each part of a running server registers how to stop it as it starts, and
 * closing runs them newest first, so nothing is closed while a part started after it still uses it.
 */
export class Lifecycle {
  private readonly closers: { name: string; close: () => unknown }[] = [];
  private closing: Promise<void> | undefined;

  /** Registers `close` to run when the whole server closes, before everything registered earlier. */
  defer(name: string, close: () => unknown): void {
    this.closers.push({ name, close });
  }

  /**
   * Runs every closer newest first; one that fails does not stop the others, and the first failure is
   * thrown once all have run. Closing twice waits for the first close.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const failures: Error[] = [];
      for (let closer = this.closers.pop(); closer; closer = this.closers.pop()) {
        try {
          await closer.close();
        } catch (error) {
          failures.push(new Error(`closing ${closer.name} failed`, { cause: error }));
        }
      }
      if (failures.length > 0) throw failures[0];
    })();
    return this.closing;
  }
}
