/**
 * What a request tells the audit (CONTRACT §13), filled as it goes: the key and hub once the key
 * check passed (`authorize`), and the messages answered where the endpoint counts them. A request
 * whose slot never got a key is not recorded.
 */
export interface AuditSlot {
  keyId?: string;
  hubId?: string;
  messages?: number;
  /** The socket's bytes written when the request came (the bytes sent are the difference). */
  bytesAtStart: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The audit's slot of an API request (app.ts makes it); null elsewhere. */
    audit: AuditSlot | null;
  }
}
