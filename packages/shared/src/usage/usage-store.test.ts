import { budgetExhausted, budgetExhaustedMessage, nextUtcMidnight } from './usage-store';

describe('daily budgets', () => {
  it('reset at the next UTC midnight', () => {
    expect(nextUtcMidnight(new Date('2026-11-23T23:59:00Z')).toISOString()).toBe('2026-11-24T00:00:00.000Z');
    expect(nextUtcMidnight(new Date('2026-12-31T00:00:00Z')).toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });

  it('are exhausted only when set and reached', () => {
    expect(budgetExhausted({ daily_tokens: 0, used_today: 10_000 })).toBe(false);
    expect(budgetExhausted({ daily_tokens: 100, used_today: 99 })).toBe(false);
    expect(budgetExhausted({ daily_tokens: 100, used_today: 100 })).toBe(true);
  });

  it('tell the user when the budget resets', () => {
    const message = budgetExhaustedMessage({ daily_tokens: 500, used_today: 510 }, new Date('2026-11-23T21:30:00Z'));
    expect(message).toContain('500 model tokens');
    expect(message).toContain('2026-11-24 00:00 UTC (in 2 h 30 min)');
  });
});
