/**
 * One log line per request, when it ends: reqId, method, URL (apikey redacted), remote address,
 * status and time taken. Fastify's own pair (incoming, then completed) doubles the log volume. An
 * answer cut short (the client left, the idle timeout, a shutdown) gets its line too.
 */
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/** Requests whose line is written (so an aborted answer is not logged twice). */
const LOGGED = new WeakSet<FastifyReply>();

export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    LOGGED.add(reply);
    const fields = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...fields, err: error }, 'request errored');
    else reply.log.info(fields, 'request completed');
  }
}

/** Called as a request arrives: logs it if its answer never finishes. */
export function logIfAborted(request: FastifyRequest, reply: FastifyReply): void {
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished && !LOGGED.has(reply)) {
      request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request aborted');
    }
  });
}
