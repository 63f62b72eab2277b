import { parseSseBlock, SseParser } from './sse-parser';

describe('the SSE parser', () => {
  it('reads id, event and multi-line data, and skips comment-only blocks', () => {
    expect(parseSseBlock('id: 1-0\nevent: token\ndata: {"a":\ndata: 1}')).toEqual({ id: '1-0', event: 'token', data: '{"a":\n1}' });
    expect(parseSseBlock('data:x')).toEqual({ id: '', event: 'message', data: 'x' });
    expect(parseSseBlock(': keepalive')).toBeUndefined();
  });

  it('cuts text arriving in pieces into whole events, CRLF line ends included', () => {
    const parser = new SseParser();
    expect(parser.push(': connected\n\nid: 1\nevent: token\nda')).toEqual([]);
    expect(parser.push('ta: {}\r\n\r\nid: 2\ndata: 2\n\n')).toEqual([
      { id: '1', event: 'token', data: '{}' },
      { id: '2', event: 'message', data: '2' },
    ]);
  });
});
