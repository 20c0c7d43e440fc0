/**
 * What a test's set-up made, released in reverse order however the set-up ended. Each piece is
 * registered while it is being made (its promise): one still being made when a set-up timed out
 * is released once it exists, one whose making failed is skipped. Every release is tried even if
 * another failed; the failures are thrown together at the end.
 */
export class Teardown {
  private readonly steps: Array<() => Promise<void>> = [];

  /** Registers `making` and what releases what it makes; returns `making`. */
  track<T>(making: Promise<T>, release: (made: T) => unknown): Promise<T> {
    this.steps.push(async () => {
      const made = await making.then(
        (value) => ({ value }),
        () => null,
      );
      if (made !== null) await release(made.value);
    });
    return making;
  }

  /** Registers a release of something made already (a directory). */
  defer(release: () => unknown): void {
    this.steps.push(async () => {
      await release();
    });
  }

  async run(): Promise<void> {
    const failures: unknown[] = [];
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length > 0) throw new AggregateError(failures, 'tearing down failed');
  }
}
