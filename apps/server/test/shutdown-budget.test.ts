import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { closeOnSignals, type SignalledProcess } from '../src/server.js';

/**
 * The shutdown budget is the server's own: a timer started when the signal arrives, not when the
 * server started, so a test (or an orchestrator) reads the outcome from the exit code and the log,
 * never from its own clock. The clock here is Vitest's, moved by hand.
 */
describe('closing on a signal', () => {
  const DRAIN_DELAY_MS = 2_000;
  /** The drain delay and the 10 s after it. */
  const BUDGET_MS = DRAIN_DELAY_MS + 10_000;
  let lines: Array<{ level: number; msg: string; ms?: number; budgetMs?: number }>;
  let host: EventEmitter & { exit: ReturnType<typeof vi.fn> };
  let finishClosing: () => void;
  let failClosing: (error: Error) => void;

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    lines = [];
    const logger = pino(
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]);
          done();
        },
      }),
    );
    host = Object.assign(new EventEmitter(), { exit: vi.fn() });
    const closed = new Promise<void>((resolve, reject) => {
      finishClosing = resolve;
      failClosing = reject;
    });
    closeOnSignals(
      { logger, drainDelayMs: DRAIN_DELAY_MS, close: () => closed },
      host as unknown as SignalledProcess,
    );
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const messages = () => lines.map((line) => line.msg);

  it('starts its budget at the signal, however long the server ran before', async () => {
    await vi.advanceTimersByTimeAsync(60_000);
    host.emit('SIGTERM');
    await vi.advanceTimersByTimeAsync(BUDGET_MS - 1);
    expect(host.exit).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(host.exit).toHaveBeenCalledExactlyOnceWith(1);
    expect(messages()).toEqual([
      'shutting down',
      'shutdown took longer than 10 s after the drain delay; exiting',
    ]);
    expect(lines[0]?.budgetMs).toBe(BUDGET_MS);
  });

  it('exits 0 and reports how long closing took, within the budget', async () => {
    host.emit('SIGINT');
    await vi.advanceTimersByTimeAsync(BUDGET_MS - 500);
    finishClosing();
    await vi.advanceTimersByTimeAsync(0);
    expect(host.exit).toHaveBeenCalledExactlyOnceWith(0);
    expect(lines.at(-1)).toMatchObject({ msg: 'shut down', ms: BUDGET_MS - 500, budgetMs: BUDGET_MS });
    // The budget's timer is gone: nothing exits the process again.
    await vi.advanceTimersByTimeAsync(BUDGET_MS);
    expect(host.exit).toHaveBeenCalledTimes(1);
  });

  it('ignores a second signal while closing: its budget still runs from the first', async () => {
    host.emit('SIGTERM');
    await vi.advanceTimersByTimeAsync(5_000);
    host.emit('SIGINT');
    await vi.advanceTimersByTimeAsync(BUDGET_MS - 5_000);
    expect(host.exit).toHaveBeenCalledExactlyOnceWith(1);
    expect(messages().filter((msg) => msg === 'shutting down')).toHaveLength(1);
  });

  it('exits 1 when closing fails, and not again when the budget ends', async () => {
    host.emit('SIGTERM');
    failClosing(new Error('the store would not close'));
    await vi.advanceTimersByTimeAsync(BUDGET_MS);
    expect(host.exit).toHaveBeenCalledExactlyOnceWith(1);
    expect(messages()).toEqual(['shutting down', 'shutdown failed']);
  });
});
