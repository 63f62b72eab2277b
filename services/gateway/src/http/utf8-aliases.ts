import type { RequestHandler } from 'express';

/** A charset parameter naming UTF-8 as `utf8`, or ASCII, a subset of it: bytes UTF-8 reads the same. */
const UTF8_ALIAS = /;\s*charset\s*=\s*"?(?:utf8|us-ascii|ascii)"?\s*(?=;|$)/i;

/**
 * Before the JSON parser, which takes only charsets spelt `utf-…`: a body whose header says
 * `charset=utf8` (a common spelling) or `us-ascii` is read as the UTF-8 it is, instead of being
 * refused as "must be UTF-8". Other charsets (ISO-8859-1) are still refused.
 */
export const acceptUtf8Aliases: RequestHandler = (req, _res, next) => {
  const type = req.headers['content-type'];
  if (type !== undefined) req.headers['content-type'] = type.replace(UTF8_ALIAS, '');
  next();
};
