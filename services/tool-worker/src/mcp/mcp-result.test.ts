import { capText, resultText, toToolResult } from './mcp-result';

describe('MCP results', () => {
  it('turns content parts into text, naming what it cannot show', () => {
    const text = resultText({
      content: [
        { type: 'text', text: 'hello' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource_link', uri: 'file:///a.txt', name: 'a.txt' },
        { type: 'resource', resource: { uri: 'file:///b.txt', text: 'inside b' } },
      ],
    });
    expect(text).toBe('hello\n[image image/png, 3 bytes, not shown]\n[resource a.txt: file:///a.txt]\ninside b');
    expect(resultText({ content: [], structuredContent: { total: 3 } })).toBe('{"total":3}');
  });

  it('caps long text with a visible note, within the limit', () => {
    const capped = capText('x'.repeat(500), 100);
    expect(capped).toHaveLength(100);
    expect(capped).toMatch(/\[… 4\d\d more characters cut\]$/);
    expect(capText('short', 100)).toBe('short');
  });

  it('wraps the text in our result shape; the tool’s own error is a failure the model reads', () => {
    expect(toToolResult('notes', 'get', 'found it', false)).toEqual({ success: true, source: 'notes', message: 'found it' });
    expect(toToolResult('notes', 'get', 'no such note', true)).toMatchObject({ success: false, error: 'no such note' });
    expect(toToolResult('notes', 'get', '', false)).toMatchObject({ message: 'get finished without output.' });
  });
});
