import { ConfigError, parseConfig } from './env';

describe('parseConfig', () => {
  it('fills every default of CONTRACT §2', () => {
    const config = parseConfig({});
    expect(config).toMatchObject({
      PORT: 3000,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/assistant',
      REDIS_URL: 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: 'assistant',
      LLM_PROVIDER: 'offline',
      OPENAI_MODEL: 'gpt-4o-mini',
      TOOL_TIMEOUT_MS: 10_000,
      APPROVAL_TTL_SECONDS: 86_400,
      SESSION_IDLE_SECONDS: 3_600,
      TELEGRAM_API_BASE_URL: 'https://api.telegram.org',
      WHATSAPP_API_BASE_URL: 'https://graph.facebook.com/v21.0',
    });
    expect(config.ADMIN_TOKEN).toBeUndefined();
  });

  it.each([
    [{ OPENAI_API_KEY: 'sk-x' }, 'openai'],
    [{ OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' }, 'openai'],
    [{ OPENAI_API_KEY: 'sk-x', LLM_PROVIDER: 'offline' }, 'offline'],
    [{ OPENAI_API_KEY: '  ' }, 'offline'],
  ])('picks the model provider from %p', (env, provider) => {
    expect(parseConfig(env).LLM_PROVIDER).toBe(provider);
  });

  it('accepts connection strings a URL parser would not, and any short admin token', () => {
    const config = parseConfig({
      DATABASE_URL: 'postgresql://app@/assistant?host=/var/run/postgresql',
      REDIS_URL: 'rediss://:secret@cache:6380/2',
      ADMIN_TOKEN: 'admin',
      QUEUE_PREFIX: 'test:run-1',
    });
    expect(config).toMatchObject({ ADMIN_TOKEN: 'admin', QUEUE_PREFIX: 'test:run-1' });
  });

  it('reports every problem on a line of its own', () => {
    let error: unknown;
    try {
      parseConfig({ PORT: 'eighty', TOOL_TIMEOUT_MS: '-1', DATABASE_URL: 'mysql://x', LLM_PROVIDER: 'magic' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/^PORT: /m);
    expect(problems.join('\n')).toMatch(/^DATABASE_URL: must start with postgres:\/\//m);
  });
});
