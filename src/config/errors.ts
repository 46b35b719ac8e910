// ConfigError: every configuration problem the agent refuses to start with. The message names
// where the value came from (file or flag), the field path, the value, and what would be valid,
// so an operator can fix it without reading our source.

export interface ConfigErrorDetails {
  /** Where the bad value came from: a file path, "--flag", or "defaults". */
  source?: string;
  /** Field path in v1beta1 names ("evictionHard", "authentication.webhook.cacheTTL"). */
  field?: string;
  /** The offending value as written. */
  value?: unknown;
}

export class ConfigError extends Error {
  override name = "ConfigError";
  readonly source?: string;
  readonly field?: string;
  readonly value?: unknown;

  constructor(message: string, details: ConfigErrorDetails = {}) {
    super(message);
    this.source = details.source;
    this.field = details.field;
    this.value = details.value;
  }
}

/** Renders a value for an error message the way a person would type it. */
export function showValue(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === undefined) return "<unset>";
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
