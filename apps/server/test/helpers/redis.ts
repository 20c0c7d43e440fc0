import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { freePort } from './free-port.js';

/** The Redis every machine here runs (CI included). */
export const SHARED_REDIS_URL = 'redis://127.0.0.1:6379';

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
  });
}

/**
 * A Redis server of the test's own (Debian's `redis-server`, keeping nothing on disk), so a test
 * can stop and restart it without touching the machine's shared one.
 */
export class OwnRedis {
  private child: ChildProcess | undefined;

  private constructor(readonly port: number) {}

  /** Starts one; if it does not answer in time, it is killed before the error is passed on. */
  static async start(): Promise<OwnRedis> {
    const redis = new OwnRedis(await freePort());
    try {
      await redis.restart();
    } catch (error) {
      await redis.stop();
      throw error;
    }
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (again, on the same port) and waits until it answers. */
  async restart(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    child.once('error', (error) => {
      throw new Error(`redis-server could not start (Debian package redis-server): ${error.message}`);
    });
    this.child = child;
    // It answers within milliseconds on an idle machine; a loaded one may take seconds.
    const deadline = Date.now() + 30_000;
    while (!(await answersPing(this.port))) {
      if (Date.now() > deadline)
        throw new Error(`redis-server (pid ${child.pid}) did not answer on port ${this.port} in 30 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Kills it outright, as a crash or a lost host would. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGKILL');
    });
  }
}
