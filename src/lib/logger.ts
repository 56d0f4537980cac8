/** pino JSON logs; request URLs are logged with apikey=[REDACTED], headers not at all. */
import { type DestinationStream, type Logger, pino } from 'pino';
import { redactUrl } from './http.js';

interface LoggedRequest {
  method?: string;
  url?: string;
  id?: string;
  socket?: { remoteAddress?: string };
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'chatlog' },
      serializers: {
        req: (req: LoggedRequest) => ({
          id: req.id,
          method: req.method,
          url: req.url === undefined ? undefined : redactUrl(req.url),
          remoteAddress: req.socket?.remoteAddress,
        }),
        res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie'],
        censor: '[REDACTED]',
      },
    },
    destination,
  );
}

/** How long a log line waits in the buffer at most. */
const LOG_FLUSH_MS = 100;
/** Bytes of log lines written at once: about 15 request lines. */
const LOG_WRITE_BYTES = 4096;

/**
 * The server's stdout, written a few KB at a time, at least every LOG_FLUSH_MS and at exit,
 * rather than a write a line: with a line a request (LOG_LEVEL info), that write was about a tenth
 * of a webhook's CPU (`npm run bench -- webhook-ingest`). A crash that kills the process (kill -9)
 * loses at most the last LOG_FLUSH_MS of lines; anything else flushes them.
 */
export function bufferedStdout(): { stream: DestinationStream; close(): void } {
  const stream = pino.destination({
    dest: 1,
    sync: true,
    minLength: LOG_WRITE_BYTES,
    periodicFlush: LOG_FLUSH_MS,
  });
  const flush = () => {
    try {
      stream.flushSync();
    } catch {
      // stdout gone (a closed pipe): nothing to write to.
    }
  };
  process.once('exit', flush);
  return {
    stream,
    /** Writes what is buffered (lines logged after still go, at the next periodic flush). */
    close() {
      process.off('exit', flush);
      flush();
    },
  };
}
