import { timingSafeEqual, createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { ApiKeyOwners } from '../users/api-key-owners';
import { HttpError, unauthorized } from './errors';
import type { KeyUsageRecorder } from './key-usage';

declare module 'express-serve-static-core' {
  interface Request {
    userId?: string;
    /** The API key the request came with (an event stream ends when it is revoked). */
    keyId?: string;
  }
}

function bearer(req: Request): string | undefined {
  const header = req.get('authorization') ?? '';
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match?.[1];
}

/** `Authorization: Bearer <api key>`; sets req.userId and req.keyId. A disabled user's keys answer 403 `user_disabled`. */
export function requireUser(owners: ApiKeyOwners, keyUsage: KeyUsageRecorder): RequestHandler {
  return async (req, _res, next) => {
    const key = bearer(req);
    if (!key) throw unauthorized('missing API key: send Authorization: Bearer <api key>');
    const owner = await owners.ownerOf(key);
    if (!owner) throw unauthorized('invalid API key');
    if (owner.disabled) throw new HttpError(403, 'user_disabled', 'this user is disabled; ask the operator to enable it again');
    keyUsage.touch(owner.keyId);
    req.userId = owner.userId;
    req.keyId = owner.keyId;
    next();
  };
}

export function userOf(req: Request): string {
  if (!req.userId) throw unauthorized('not authenticated');
  return req.userId;
}

export function keyOf(req: Request): string {
  if (!req.keyId) throw unauthorized('not authenticated');
  return req.keyId;
}

/** Compares secrets in constant time (hashing first makes the lengths equal). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The admin token as a bearer token or as a basic-auth password (for a browser on /admin/queues). */
export function requireAdmin(adminToken: string | undefined, options: { basicAuth?: boolean } = {}): RequestHandler {
  return (req, _res, next) => {
    if (!adminToken) {
      throw new HttpError(503, 'admin_disabled', 'ADMIN_TOKEN is not set: set it to use admin endpoints');
    }
    const header = req.get('authorization') ?? '';
    let given = bearer(req);
    const basic = /^Basic\s+(\S+)$/i.exec(header);
    if (!given && basic?.[1]) {
      const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
      given = decoded.slice(decoded.indexOf(':') + 1);
    }
    if (given && secretsEqual(given, adminToken)) return next();
    throw unauthorized('admin token required', options.basicAuth ? 'Basic realm="assistant admin"' : 'Bearer');
  };
}
