import { redactSecrets, redactUrl } from './logger';

describe('redactUrl', () => {
  it.each([
    [
      'PostgreSQL at postgres://app:s3cret@db:5432/assistant does not answer',
      'PostgreSQL at postgres://app:[redacted]@db:5432/assistant does not answer',
    ],
    // pg takes everything up to the last @ as the password.
    ['postgres://app:p@ss@db:5432/assistant', 'postgres://app:[redacted]@db:5432/assistant'],
    ['redis://:p@ss@cache:6379 and postgres://app:x@db/a', 'redis://:[redacted]@cache:6379 and postgres://app:[redacted]@db/a'],
    ['postgres://app@db/assistant', 'postgres://app@db/assistant'],
  ])('%s', (text, redacted) => {
    expect(redactUrl(text)).toBe(redacted);
    expect(redactSecrets(text)).toBe(redacted);
  });
});
