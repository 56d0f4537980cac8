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
