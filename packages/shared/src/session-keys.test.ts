import { MAIN_SESSION_KEY, sessionKind } from './session-keys';

describe('sessionKind', () => {
  it.each([
    [MAIN_SESSION_KEY, 'main'],
    ['agent:main:telegram:direct:42', 'direct'],
    ['agent:main:api:group:team', 'group'],
    // Keys the pattern does not know (a peer id longer than it allows, a channel added later) are
    // never the main session: that would show them the user's MEMORY.
    [`agent:main:telegram:group:${'9'.repeat(200)}`, 'group'],
    [`agent:main:whatsapp:direct:${'5'.repeat(200)}`, 'direct'],
    ['agent:main:slack:group:C024BE91L', 'group'],
    ['agent:main:main:extra', 'direct'],
  ])('%s is a %s session', (key, kind) => {
    expect(sessionKind(key)).toBe(kind);
  });
});
