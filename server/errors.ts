// The typed errors use cases throw; each transport maps `status` to its own reply once.
export class ServiceError extends Error {
  constructor(readonly status: number, message: string, readonly headers: Record<string, string> = {}) {
    super(message);
    this.name = new.target.name;
  }
}
export class Invalid extends ServiceError { constructor(m: string) { super(400, m); } }
export class Unauthorized extends ServiceError { constructor(m = 'missing or invalid API key: send it in the x-svc-api-key header') { super(401, m); } }
export class Forbidden extends ServiceError { constructor(m: string) { super(403, m); } }
export class NotFound extends ServiceError { constructor(m: string) { super(404, m); } }
export class Conflict extends ServiceError { constructor(m: string) { super(409, m); } }
export class LimitReached extends ServiceError {
  constructor(m: string) { super(429, m, { 'x-should-retry': 'false' }); }
}
export class NotImplemented extends ServiceError { constructor(m: string) { super(501, m); } }
export class Unavailable extends ServiceError { constructor(m: string) { super(503, m); } }
/** Not retried by the SDK: each retry would wait the whole ready-wait again (docs/decisions.md). */
export class GatewayTimeout extends ServiceError { constructor(m: string) { super(504, m, { 'x-should-retry': 'false' }); } }
