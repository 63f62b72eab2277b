import { clipText } from '@assistant/shared';
import type { MessageTemplate } from '../channel-types';

/** Meta's limit for a template's text parameter, in characters. */
const PARAMETER_LIMIT = 1_024;

/**
 * `text` as a template's text parameter: Meta refuses one with a newline, a tab or more than four
 * consecutive spaces, so each run of whitespace holding one of those (or five spaces) becomes a
 * space; past the limit it is clipped, never through an emoji.
 */
export function templateParameter(text: string): string {
  return clipText(text.replace(/\s*[^\S ]\s*| {5,}/g, ' ').trim(), PARAMETER_LIMIT);
}

/** The `type` and `template` of a Cloud API send of `template`, `text` its one body parameter. */
export function templateContent(template: MessageTemplate, text: string) {
  return {
    type: 'template',
    template: {
      name: template.name,
      language: { code: template.language },
      components: [{ type: 'body', parameters: [{ type: 'text', text: templateParameter(text) }] }],
    },
  };
}
