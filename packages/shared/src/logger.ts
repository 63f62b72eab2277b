import pino from 'pino';

export type Logger = pino.Logger;

/**
 * JSON logs with secrets redacted wherever they appear in a logged object: API keys, tokens,
 * passwords in connection strings and authorization headers never reach a log line.
 */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name: service,
    level,
    base: { service },
    redact: {
      paths: [
        'api_key',
        '*.api_key',
        'token',
        '*.token',
        'password',
        '*.password',
        'authorization',
        '*.authorization',
        'headers.authorization',
        'req.headers.authorization',
        'req.headers["x-telegram-bot-api-secret-token"]',
        'req.headers["x-hub-signature-256"]',
        'config.ADMIN_TOKEN',
        'config.OPENAI_API_KEY',
        'config.TELEGRAM_BOT_TOKEN',
        'config.TELEGRAM_WEBHOOK_SECRET',
        'config.WHATSAPP_ACCESS_TOKEN',
        'config.WHATSAPP_APP_SECRET',
        'config.WHATSAPP_VERIFY_TOKEN',
      ],
      censor: '[redacted]',
    },
    serializers: { err: serializeError },
  });
}

/** Errors are logged with their message and class; stack traces stay out of production logs. */
function serializeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const out: Record<string, unknown> = { type: err.name, message: redactSecrets(err.message) };
  if ('code' in err) out.code = (err as { code: unknown }).code;
  if (process.env.LOG_STACKS === 'true') out.stack = err.stack;
  return out;
}

/**
 * Hides what looks like a credential in an error's text: a model provider's refusal often quotes
 * the key it was given ("Incorrect API key provided: sk-…"), a connection error the URL's password.
 */
export function redactSecrets(text: string): string {
  return redactUrl(text)
    .replace(/\b(sk|pk|rk|key|ghp|xox[a-z])[-_][A-Za-z0-9_\-*.]{6,}/g, '$1-[redacted]')
    .replace(/\b(Bearer|Basic)\s+[A-Za-z0-9_\-.=:+/]{6,}/gi, '$1 [redacted]');
}

/**
 * Hides the password part of any URL in a string (connection errors often echo the URL), up to
 * the URL's last `@`: pg reads `postgres://u:p@ss@host/db` as the password `p@ss`.
 */
export function redactUrl(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)\S*@/gi, '$1[redacted]@');
}
