import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';

/**
 * The service's logger. JSON lines on standard output by default, for log collectors and scripts;
 * when standard output is a terminal (`npm start` in a shell), the same records as readable lines
 * (pino-pretty). Those are written synchronously, so they keep their order with what the command
 * prints itself, such as the start-up banner with the admin token and the demo key.
 */
export function createLogger(level: string, output: NodeJS.WriteStream = process.stdout): Logger {
  if (!output.isTTY) return pino({ level });
  const readable = pretty({
    destination: output,
    sync: true,
    colorize: output.hasColors?.() ?? false,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
  });
  return pino({ level }, readable);
}
