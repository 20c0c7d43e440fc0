/**
 * Runs an async task now and then every `intervalMs` after each run ends (never two at once),
 * reporting failures instead of stopping. Timers are unref'd: a job never keeps the process alive.
 */
export class Periodic {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly task: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Set by `stop` until the next `start`: a long task checks it between its steps to end early. */
  get stopping(): boolean {
    return this.stopped;
  }

  start(firstDelayMs = 0): void {
    this.stopped = false;
    const tick = (): void => {
      this.running = this.task()
        .then(() => undefined, this.onError)
        .finally(() => {
          this.running = undefined;
          if (this.timer !== undefined) this.timer = setTimeout(tick, this.intervalMs).unref();
        });
    };
    this.timer = setTimeout(tick, firstDelayMs).unref();
  }

  /** Stops scheduling and waits for a run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
