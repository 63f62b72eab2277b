import { usageQuery } from './usage.routes';

describe('GET /v1/usage ?days', () => {
  it('takes a whole number of days from 1 to 90, written in digits', () => {
    expect(usageQuery.parse({})).toEqual({});
    expect(usageQuery.parse({ days: '1' })).toEqual({ days: 1 });
    expect(usageQuery.parse({ days: '90' })).toEqual({ days: 90 });
    for (const days of ['0', '91', '-1', '7.5', '0x10', '1e1', ' 7', '', 'seven']) {
      expect(usageQuery.safeParse({ days }).success).toBe(false);
    }
  });
});
