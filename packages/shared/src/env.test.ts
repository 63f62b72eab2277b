import { ConfigError, parseConfig } from './env';

/** The lines a refused configuration is reported with (none when it is accepted). */
function problemsOf(env: Record<string, string>): string[] {
  try {
    parseConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

describe('parseConfig', () => {
  it('fills every default of the configuration table (README.md#configuration)', () => {
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
      RATE_LIMIT_MESSAGES_PER_MINUTE: 60,
      NEW_CHAT_USERS_PER_MINUTE: 0,
      MAX_ACTIVE_TURNS_PER_USER: 4,
      MAX_TOOL_CALLS_PER_STEP: 20,
      DATABASE_POOL_SIZE: 8,
      TELEGRAM_API_BASE_URL: 'https://api.telegram.org',
      WHATSAPP_API_BASE_URL: 'https://graph.facebook.com/v21.0',
      DEFAULT_TIMEZONE: 'UTC',
      JOB_LOCK_MS: 10_000,
      SSE_HEARTBEAT_MS: 10_000,
    });
    expect(config.ADMIN_TOKEN).toBeUndefined();
  });

  it('takes the long waits and short timeouts an operator may want', () => {
    const year = String(365 * 86_400);
    expect(parseConfig({ SESSION_IDLE_SECONDS: year, APPROVAL_TTL_SECONDS: year, TOOL_TIMEOUT_MS: '50' })).toMatchObject({
      SESSION_IDLE_SECONDS: 365 * 86_400,
      APPROVAL_TTL_SECONDS: 365 * 86_400,
      TOOL_TIMEOUT_MS: 50,
    });
  });

  it.each([
    [{ OPENAI_API_KEY: 'sk-x' }, 'openai'],
    [{ OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' }, 'openai'],
    [{ OPENAI_API_KEY: 'sk-x', LLM_PROVIDER: 'offline' }, 'offline'],
    [{ OPENAI_API_KEY: '  ' }, 'offline'],
  ])('picks the model provider from %p', (env, provider) => {
    expect(parseConfig(env).LLM_PROVIDER).toBe(provider);
  });

  it('refuses the openai provider with neither a key nor an endpoint, saying what it needs', () => {
    expect(() => parseConfig({ LLM_PROVIDER: 'openai' })).toThrow(
      'LLM_PROVIDER: openai needs OPENAI_API_KEY (for api.openai.com) or OPENAI_BASE_URL (another OpenAI-compatible endpoint)',
    );
    expect(parseConfig({ LLM_PROVIDER: 'openai', OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' }).LLM_PROVIDER).toBe('openai');
  });

  it('says the openai provider lacks a key or an endpoint along with the other problems, not after they are fixed', () => {
    // Each of these stops zod's checks of the whole object unless told otherwise.
    expect(problemsOf({ LLM_PROVIDER: 'openai', DATABASE_URL: 'mysql://x', MCP_SERVERS: '[', VISION: 'maybe' })).toEqual([
      'DATABASE_URL: must start with postgres://',
      'MCP_SERVERS: must be a JSON array of MCP servers (see README, "MCP servers")',
      'VISION: must be true or false',
      'LLM_PROVIDER: openai needs OPENAI_API_KEY (for api.openai.com) or OPENAI_BASE_URL (another OpenAI-compatible endpoint)',
    ]);
    // An endpoint that is refused is said once, as itself.
    expect(problemsOf({ LLM_PROVIDER: 'openai', OPENAI_BASE_URL: 'localhost:8080/v1' })).toEqual([
      'OPENAI_BASE_URL: must be an http:// or https:// URL',
    ]);
  });

  it('reads VISION as a strict boolean and defaults TRANSCRIPTION_MODEL', () => {
    expect(parseConfig({})).toMatchObject({ VISION: false, TRANSCRIPTION_MODEL: 'whisper-1' });
    expect(parseConfig({ VISION: 'TRUE' }).VISION).toBe(true);
    expect(parseConfig({ VISION: '0' }).VISION).toBe(false);
    expect(() => parseConfig({ VISION: 'no' })).toThrow(/VISION: must be true or false/);
  });

  it('reads the WhatsApp notice template: unset by default, language en; refuses what Meta would', () => {
    expect(parseConfig({}).WHATSAPP_NOTICE_TEMPLATE).toBeUndefined();
    expect(parseConfig({}).WHATSAPP_NOTICE_TEMPLATE_LANGUAGE).toBe('en');
    expect(parseConfig({ WHATSAPP_NOTICE_TEMPLATE: ' reminder_notice ', WHATSAPP_NOTICE_TEMPLATE_LANGUAGE: 'pt_BR' })).toMatchObject({
      WHATSAPP_NOTICE_TEMPLATE: 'reminder_notice',
      WHATSAPP_NOTICE_TEMPLATE_LANGUAGE: 'pt_BR',
    });
    expect(problemsOf({ WHATSAPP_NOTICE_TEMPLATE: 'Reminder Notice', WHATSAPP_NOTICE_TEMPLATE_LANGUAGE: 'portuguese' })).toEqual([
      'WHATSAPP_NOTICE_TEMPLATE: must be a template name: lowercase letters, digits and underscores',
      'WHATSAPP_NOTICE_TEMPLATE_LANGUAGE: must be a template language code such as en or pt_BR',
    ]);
  });

  it('accepts connection strings a URL parser would not', () => {
    const config = parseConfig({
      DATABASE_URL: 'postgresql://app@/assistant?host=/var/run/postgresql',
      REDIS_URL: 'rediss://:secret@cache:6380/2',
      ADMIN_TOKEN: 'admin-token-of-16+',
      QUEUE_PREFIX: 'test:run-1',
    });
    expect(config).toMatchObject({ ADMIN_TOKEN: 'admin-token-of-16+', QUEUE_PREFIX: 'test:run-1' });
  });

  it('refuses connection strings the drivers cannot read, without echoing them', () => {
    for (const [name, value] of [
      ['DATABASE_URL', 'postgres://app:secret@127.0.0.1:abc/assistant'],
      ['DATABASE_URL', 'postgres://app:secret@127.0.0.1:99999/assistant'],
      ['REDIS_URL', 'redis://:secret@127.0.0.1:abc'],
      ['REDIS_URL', 'redis://%zz:secret@127.0.0.1:6379'],
      ['REDIS_URL', 'redis://:secret@127.0.0.1:6379/abc'],
      ['REDIS_URL', 'redis://:secret@127.0.0.1:6379?db=one'],
    ] as const) {
      expect(problemsOf({ [name]: value })).toEqual([
        `${name}: is not a connection string the driver can read (check the port, the database and %-escapes)`,
      ]);
    }
  });

  it('says a connection string of another scheme on one line, not also that the driver cannot read it', () => {
    for (const [name, value, scheme] of [
      ['REDIS_URL', 'localhost', 'redis://'],
      ['REDIS_URL', 'redis.internal:6379', 'redis://'],
      ['DATABASE_URL', 'localhost', 'postgres://'],
    ] as const) {
      expect(problemsOf({ [name]: value })).toEqual([`${name}: must start with ${scheme}`]);
    }
  });

  it('takes only http:// and https:// URLs for the model and the chat providers', () => {
    expect(parseConfig({ OPENAI_BASE_URL: 'http://localhost:8080/v1' }).OPENAI_BASE_URL).toBe('http://localhost:8080/v1');
    for (const [name, value] of [
      ['OPENAI_BASE_URL', 'localhost:8080/v1'],
      ['OPENAI_BASE_URL', 'file:///etc/passwd'],
      ['TELEGRAM_API_BASE_URL', 'api.telegram.org:443'],
      ['WHATSAPP_API_BASE_URL', 'mailto:x'],
    ]) {
      expect(() => parseConfig({ [name as string]: value })).toThrow(`${name}: must be an http:// or https:// URL`);
    }
  });

  it('accepts an admin token of any length (the gateway warns about a short one)', () => {
    expect(parseConfig({ ADMIN_TOKEN: 'admin' }).ADMIN_TOKEN).toBe('admin');
    expect(parseConfig({ ADMIN_TOKEN: '' }).ADMIN_TOKEN).toBeUndefined();
  });

  it('reads MODEL_ALLOWLIST as a list; unset or empty allows any model', () => {
    expect(parseConfig({ MODEL_ALLOWLIST: ' gpt-4o-mini, gpt-4o ,,' }).MODEL_ALLOWLIST).toEqual(['gpt-4o-mini', 'gpt-4o']);
    expect(parseConfig({ MODEL_ALLOWLIST: ' , ' }).MODEL_ALLOWLIST).toBeUndefined();
    expect(parseConfig({}).MODEL_ALLOWLIST).toBeUndefined();
  });

  it('refuses limits that would stop every turn', () => {
    expect(() => parseConfig({ MAX_ACTIVE_TURNS_PER_USER: '0' })).toThrow(/MAX_ACTIVE_TURNS_PER_USER/);
    expect(() => parseConfig({ MAX_TOOL_CALLS_PER_STEP: '0' })).toThrow(/MAX_TOOL_CALLS_PER_STEP/);
    // A tool attempt may need a second connection for refs while it holds its transaction's.
    expect(() => parseConfig({ DATABASE_POOL_SIZE: '1' })).toThrow(/DATABASE_POOL_SIZE/);
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

  it('reads numbers only as whole decimal numbers, saying the range on one line', () => {
    expect(parseConfig({ PORT: ' 8080 ', TOOL_TIMEOUT_MS: '250' })).toMatchObject({ PORT: 8080, TOOL_TIMEOUT_MS: 250 });
    // Number() reads these, so PORT=0x1F90 was port 8080 and DAILY_TOKEN_BUDGET=1e3 a budget of 1,000.
    for (const [name, value, range] of [
      ['PORT', '0x1F90', '0 to 65535'],
      ['PORT', '80.0', '0 to 65535'],
      ['PORT', '-1', '0 to 65535'],
      ['PORT', 'eighty', '0 to 65535'],
      ['PORT', '70000', '0 to 65535'],
      ['DAILY_TOKEN_BUDGET', '1e3', '0 to 9007199254740991'],
      ['TOOL_TIMEOUT_MS', '0', '1 to 600000'],
      ['SHUTDOWN_TIMEOUT_MS', '0b101', '100 to 600000'],
    ] as const) {
      expect(problemsOf({ [name]: value })).toEqual([`${name}: must be a whole number from ${range}`]);
    }
  });

  it('takes DEFAULT_TIMEZONE as an IANA zone and refuses an unknown one by name', () => {
    expect(parseConfig({ DEFAULT_TIMEZONE: 'America/Sao_Paulo' }).DEFAULT_TIMEZONE).toBe('America/Sao_Paulo');
    expect(parseConfig({ DEFAULT_TIMEZONE: 'europe/lisbon' }).DEFAULT_TIMEZONE).toBe('Europe/Lisbon');
    for (const zone of ['Mars/Olympus_Mons', '+03:00']) {
      expect(() => parseConfig({ DEFAULT_TIMEZONE: zone })).toThrow(`DEFAULT_TIMEZONE: unknown IANA time zone "${zone}"`);
    }
  });

  it('reads DAILY_TOKEN_BUDGET: none by default, a whole number of tokens otherwise', () => {
    expect(parseConfig({}).DAILY_TOKEN_BUDGET).toBe(0);
    expect(parseConfig({ DAILY_TOKEN_BUDGET: '250000' }).DAILY_TOKEN_BUDGET).toBe(250_000);
    expect(() => parseConfig({ DAILY_TOKEN_BUDGET: '-1' })).toThrow(ConfigError);
    expect(() => parseConfig({ DAILY_TOKEN_BUDGET: 'lots' })).toThrow(ConfigError);
  });
});
