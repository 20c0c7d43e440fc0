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

  /** A run scheduled or under way: true from `start` until `stop` has returned. */
  get scheduled(): boolean {
    return this.timer !== undefined || this.running !== undefined;
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

/**
 * A background job on its own `Periodic`: the subclass says what one pass does (`runOnce`); this
 * holds its timer, its start (after `firstDelayMs`, a few seconds for the jobs that should let the
 * instance begin serving first), its stop, and logs a failed pass as `failure`.
 */
export abstract class PeriodicJob {
  private readonly periodic: Periodic;

  constructor(
    intervalMs: number,
    log: { error: (details: { err: unknown }, message: string) => void },
    failure: string,
    private readonly firstDelayMs = 0,
  ) {
    this.periodic = new Periodic(
      () => this.runOnce(),
      intervalMs,
      (error) => log.error({ err: error }, failure),
    );
  }

  /** One pass. */
  abstract runOnce(): Promise<unknown>;

  start(): void {
    this.periodic.start(this.firstDelayMs);
  }

  /** Whether it runs: a pass scheduled or under way, from `start` until `stop` has returned. */
  get scheduled(): boolean {
    return this.periodic.scheduled;
  }

  /** Set by `stop` until the next `start`: a long pass checks it between its steps to end early. */
  protected get stopping(): boolean {
    return this.periodic.stopping;
  }

  /** Stops scheduling and waits for a pass in progress. */
  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
