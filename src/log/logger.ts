/**
 * A small leveled logger writing one line per event to a stream (stderr by default). It never
 * formats request headers or bodies itself: callers pass only what is safe to print, because
 * passwords, tokens and cookies must never reach a log line.
 */
type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'none';

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, notice: 2, warning: 3, error: 4, none: 5 };

interface LogSink {
  write(line: string): unknown;
}

export class Logger {
  #rank: number;
  readonly #sink: LogSink;

  constructor(level: LogLevel = 'info', sink: LogSink = process.stderr) {
    this.#rank = RANK[level];
    this.#sink = sink;
  }

  setLevel(level: string): void {
    this.#rank = isLogLevel(level) ? RANK[level] : RANK.info;
  }

  enabled(level: Exclude<LogLevel, 'none'>): boolean {
    return RANK[level] >= this.#rank;
  }

  debug(message: string): void {
    this.#log('debug', message);
  }
  info(message: string): void {
    this.#log('info', message);
  }
  notice(message: string): void {
    this.#log('notice', message);
  }
  warning(message: string): void {
    this.#log('warning', message);
  }
  error(message: string): void {
    this.#log('error', message);
  }

  #log(level: Exclude<LogLevel, 'none'>, message: string): void {
    if (RANK[level] < this.#rank) return;
    this.#sink.write(`[${level}] ${new Date().toISOString()} ${message.replace(/[\r\n]+/g, ' ')}\n`);
  }
}

function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(RANK, value);
}
