import { APIError } from 'openai';
import { throttlePauseMs } from './model-errors';

const refusal = (status: number, headers: Record<string, string> = {}) =>
  APIError.generate(status, { message: 'slow down' }, undefined, new Headers(headers));

describe('throttlePauseMs', () => {
  const now = Date.parse('2026-11-28T12:00:00Z');

  it('waits as long as the endpoint asks, in milliseconds, seconds or until a date, at most a minute', () => {
    expect(throttlePauseMs(refusal(429, { 'retry-after-ms': '1500', 'retry-after': '9' }), 0, now)).toBe(1_500);
    expect(throttlePauseMs(refusal(429, { 'retry-after': '3' }), 0, now)).toBe(3_000);
    expect(throttlePauseMs(refusal(503, { 'retry-after': 'Sat, 28 Nov 2026 12:00:20 GMT' }), 0, now)).toBe(20_000);
    expect(throttlePauseMs(refusal(429, { 'retry-after': '3600' }), 0, now)).toBe(60_000);
  });

  it('backs off 1, 2, 4… up to 32 s when the endpoint names no pause', () => {
    expect([0, 1, 2, 5, 9].map((pauses) => throttlePauseMs(refusal(529), pauses, now))).toEqual([1_000, 2_000, 4_000, 32_000, 32_000]);
    expect(throttlePauseMs(refusal(429, { 'retry-after': 'soon' }), 1, now)).toBe(2_000);
  });

  it('backs off when the endpoint asks for no pause (zero, or a date gone by), rather than asking again at once over and over', () => {
    expect(throttlePauseMs(refusal(429, { 'retry-after': '0' }), 2, now)).toBe(4_000);
    expect(throttlePauseMs(refusal(429, { 'retry-after-ms': '0' }), 0, now)).toBe(1_000);
    expect(throttlePauseMs(refusal(503, { 'retry-after': 'Sat, 28 Nov 2026 11:59:00 GMT' }), 1, now)).toBe(2_000);
  });

  it('is not for other errors', () => {
    expect(throttlePauseMs(refusal(500), 0, now)).toBeUndefined();
    expect(throttlePauseMs(refusal(400), 0, now)).toBeUndefined();
    expect(throttlePauseMs(new Error('429'), 0, now)).toBeUndefined();
  });
});
