import { templateContent, templateParameter } from './whatsapp.template';

describe('templateParameter', () => {
  it('leaves a one-line text as it is', () => {
    expect(templateParameter('Drink water 💧 at 15:00')).toBe('Drink water 💧 at 15:00');
  });

  it('turns newlines, tabs and runs of five spaces into one space; four spaces stay', () => {
    expect(templateParameter('Shopping:\n- milk\r\n\n- eggs\tand\u00a0bread     now    ok\n')).toBe(
      'Shopping: - milk - eggs and bread now    ok',
    );
  });

  it('clips past 1,024 characters without splitting an emoji', () => {
    const text = `${'a'.repeat(1_020)}😀😀😀`;
    const parameter = templateParameter(text);
    expect(parameter.length).toBeLessThanOrEqual(1_024);
    expect(parameter).toBe(`${'a'.repeat(1_020)}...`);
    expect(templateParameter(`${'a'.repeat(1_019)}😀${'b'.repeat(10)}`)).toBe(`${'a'.repeat(1_019)}😀...`);
  });
});

describe('templateContent', () => {
  it('sends the text as the body parameter of the named template in its language', () => {
    expect(templateContent({ name: 'reminder_notice', language: 'pt_BR' }, 'Beber\nágua')).toEqual({
      type: 'template',
      template: {
        name: 'reminder_notice',
        language: { code: 'pt_BR' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: 'Beber água' }] }],
      },
    });
  });
});
