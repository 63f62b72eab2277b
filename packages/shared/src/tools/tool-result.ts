/**
 * The result shape of docs/tools.md#results: the entity's ref under its `*_id` name, a message that shows it as
 * `[ID: folder_1]`, and a next_step hint. Failures carry `error` and `hint`.
 */
export type ToolResult =
  | ({ success: true; message: string; next_step?: string } & Record<string, unknown>)
  | ({ success: false; error: string; hint: string } & Record<string, unknown>);

export function ok(message: string, fields: Record<string, unknown> = {}, nextStep?: string): ToolResult {
  return { success: true, ...fields, message, ...(nextStep ? { next_step: nextStep } : {}) };
}

export function fail(error: string, hint: string, fields: Record<string, unknown> = {}): ToolResult {
  return { success: false, error, hint, ...fields };
}

export interface Candidate {
  ref: string;
  name: string;
}

/**
 * A problem with the model's arguments (unknown ref, ambiguous name, a UUID, an invalid field):
 * answered as a `success: false` result the model can correct, never retried.
 */
export class ToolInputError extends Error {
  constructor(
    message: string,
    readonly hint: string,
    readonly candidates: Candidate[] = [],
  ) {
    super(message);
    this.name = 'ToolInputError';
  }

  toResult(): ToolResult {
    return fail(this.message, this.hint, this.candidates.length > 0 ? { candidates: this.candidates } : {});
  }
}
