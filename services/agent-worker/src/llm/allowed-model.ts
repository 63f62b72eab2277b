export interface ModelChoice {
  /** OPENAI_MODEL. */
  defaultModel: string;
  /** MODEL_ALLOWLIST: a user's model chosen before the list was set (or narrowed) falls back to the default. */
  modelAllowlist: readonly string[] | undefined;
}

/** The model a user's request goes to, turn or digest: their `default_model` while the allowlist holds it. */
export function allowedModel({ defaultModel, modelAllowlist }: ModelChoice, chosen: string | null): string {
  if (chosen === null) return defaultModel;
  return modelAllowlist && !modelAllowlist.includes(chosen) ? defaultModel : chosen;
}
