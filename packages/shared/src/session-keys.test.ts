import { directSessionKey, groupSessionKey, MAIN_SESSION_KEY, sessionKeySchema, sessionKind } from './session-keys';

describe('sessionKind', () => {
  it.each([
    [MAIN_SESSION_KEY, 'main'],
    ['agent:main:telegram:direct:42', 'direct'],
    ['agent:main:api:group:team', 'group'],
    // Keys the pattern does not know (a peer id longer than it allows, a channel added later) are
    // never the main session: that would show them the user's MEMORY.
    [`agent:main:telegram:group:${'9'.repeat(300)}`, 'group'],
    [`agent:main:whatsapp:direct:${'5'.repeat(300)}`, 'direct'],
    ['agent:main:slack:group:C024BE91L', 'group'],
    ['agent:main:main:extra', 'direct'],
  ])('%s is a %s session', (key, kind) => {
    expect(sessionKind(key)).toBe(kind);
  });
});

describe('sessionKeySchema', () => {
  // A key the channels make must be one the API takes, or its session can be listed but never read or reset.
  it.each([
    // The longest BSUID WhatsApp documents: a country, `ENT.`, then 128 letters and digits.
    directSessionKey('whatsapp', `US.ENT.${'a1'.repeat(64)}`),
    directSessionKey('whatsapp', '5511987654321'),
    directSessionKey('telegram', '6123456789'),
    groupSessionKey('telegram', '-1001234567890'),
  ])('takes %s, a key a channel makes', (key) => {
    expect(sessionKeySchema.safeParse(key).success).toBe(true);
  });
});
