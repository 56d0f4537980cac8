/**
 * Every error becomes the contract's JSON error body: chatlog's own AppErrors, Fastify's 4xx
 * (translated to the contract's codes), requests Node's HTTP parser refuses before Fastify sees them
 * (written to the socket by hand), a store that cannot answer (503) and any other fault (500, logged,
 * nothing of it in the body).
 */
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';
import { httpErrors } from './http.errors.js';
import { JSON_TYPE, NO_STORE } from './http.js';

export function sendError(reply: FastifyReply, error: AppError): FastifyReply {
  // Also for errors raised before the request's hooks ran (a malformed URL).
  return reply
    .code(error.status)
    .header('Cache-Control', NO_STORE)
    .headers(error.headers)
    .type(JSON_TYPE)
    .send(error.toBody());
}

const BY_FRAMEWORK_CODE: Record<string, () => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: httpErrors.bodyTooLarge,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: httpErrors.bodyLengthMismatch,
  FST_ERR_CTP_EMPTY_JSON_BODY: httpErrors.bodyEmpty,
  FST_ERR_CTP_INVALID_JSON_BODY: httpErrors.bodyNotJson,
};

/** Fastify's own 4xx errors, translated to the contract's codes. */
export function translateFrameworkError(error: FastifyError): AppError | undefined {
  const status = error.statusCode ?? 500;
  if (status >= 500) return undefined;
  // Fastify's statuses for these codes are the table's (413, 400, 400, 400).
  const known = error.code ? BY_FRAMEWORK_CODE[error.code] : undefined;
  if (known) return known();
  // Every endpoint of the API that takes a body takes JSON.
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) return httpErrors.notJsonBody();
  if (status === 413) return httpErrors.bodyTooLarge();
  if (status === 404) return httpErrors.notFound();
  if (status === 405) return httpErrors.methodNotAllowedHere();
  return httpErrors.notUnderstood(status);
}

export type ErrorAnswerer = (error: unknown, reply: FastifyReply) => FastifyReply;

/** The app's one error handler. `isUnavailable`: the store's word for "cannot answer now". */
export function createErrorAnswerer(isUnavailable: (error: unknown) => boolean): ErrorAnswerer {
  return (error, reply) => {
    if (error instanceof AppError) return sendError(reply, error);
    const translated = translateFrameworkError(error as FastifyError);
    if (translated) return sendError(reply, translated);
    if (isUnavailable(error)) {
      reply.log.warn({ err: error }, 'store unavailable');
      return sendError(reply, httpErrors.storeUnavailable());
    }
    reply.log.error({ err: error }, 'unexpected fault');
    return sendError(reply, httpErrors.internal());
  };
}

/**
 * Fastify's frameworkErrors: a request refused before routing. `answerMalformedUrl` may answer a
 * malformed path (bad percent-encoding) itself, as its route would; anything else gets its code.
 */
export function createFrameworkErrorAnswerer(
  answerMalformedUrl: (
    request: FastifyRequest,
    reply: FastifyReply,
  ) => FastifyReply | Promise<FastifyReply> | undefined,
  answerError: ErrorAnswerer,
) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const answered = error.code === 'FST_ERR_BAD_URL' ? answerMalformedUrl(request, reply) : undefined;
    if (answered instanceof Promise) return answered.catch((e: unknown) => answerError(e, reply));
    if (answered) return answered;
    return sendError(reply, translateFrameworkError(error) ?? httpErrors.notUnderstood());
  };
}

/**
 * Node's clientErrorHandler: requests its HTTP parser refuses (malformed, or headers over the size
 * limit), answered on the socket itself (Fastify never sees them), then the connection is closed.
 */
export function createClientErrorWriter(logger: FastifyBaseLogger) {
  return (error: Error, socket: Socket): void => {
    // Nothing can be said on a socket that is gone or already carries an answer.
    const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (!socket.writable || answering?.headersSent) return void socket.destroy();
    const code = (error as NodeJS.ErrnoException).code;
    const [status, refusal] =
      code === 'HPE_HEADER_OVERFLOW'
        ? ['431 Request Header Fields Too Large', httpErrors.headersTooLarge()]
        : code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? ['408 Request Timeout', httpErrors.requestTimeout()]
          : ['400 Bad Request', httpErrors.notHttp()];
    logger.info(
      { code, status: refusal.status, remoteAddress: socket.remoteAddress },
      'request refused before it was read',
    );
    const body = JSON.stringify(refusal.toBody());
    // The answer to a HEAD request has no body, even this one (a client would read it as garbage).
    const rawPacket = (error as unknown as { rawPacket?: Buffer }).rawPacket;
    const head = rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    // Closed, not half-closed: a client that keeps its side open must not keep the connection.
    socket.end(
      `HTTP/1.1 ${status}\r\n` +
        `Content-Type: ${JSON_TYPE}\r\nCache-Control: ${NO_STORE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Connection: close\r\n\r\n${head ? '' : body}`,
      () => socket.destroy(),
    );
  };
}
