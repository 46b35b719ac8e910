// Upstream's object-meta validation (k8s.io/apimachinery/pkg/util/validation and
// pkg/api/validation/objectmeta.go), with upstream's messages: DNS-1123 names and their lengths,
// qualified-name label/annotation keys, label values, and the 256 KiB total annotation size.
export interface FieldError {
  field: string;
  detail: string;
}

const DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const re = (fmt: string) => new RegExp(`^${fmt}$`);

export const DNS1123LabelMaxLength = 63;
export const DNS1123SubdomainMaxLength = 253;
export const QualifiedNameMaxLength = 63;
export const LabelValueMaxLength = 63;
export const TotalAnnotationSizeLimitB = 256 * 1024;

const maxLen = (n: number) => `must be no more than ${n} characters`;
const regexError = (msg: string, fmt: string, ...examples: string[]) =>
  `${msg} (e.g. ${examples.map((e) => `'${e}'`).join(",  or ")}, regex used for validation is '${fmt}')`;

export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123LabelMaxLength) errs.push(maxLen(DNS1123LabelMaxLength));
  if (!re(DNS1123_LABEL_FMT).test(v))
    errs.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL_FMT,
        "my-name",
        "123-abc",
      ),
    );
  return errs;
}

export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123SubdomainMaxLength) errs.push(maxLen(DNS1123SubdomainMaxLength));
  if (!re(DNS1123_SUBDOMAIN_FMT).test(v))
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        "example.com",
      ),
    );
  return errs;
}

export function isQualifiedName(v: string): string[] {
  const parts = v.split("/");
  let name: string;
  const errs: string[] = [];
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const [prefix, n] = parts as [string, string];
    name = n;
    if (prefix.length === 0) errs.push("prefix part must be non-empty");
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      regexError(
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        QUALIFIED_NAME_FMT,
        "MyName",
        "my.name",
        "123-abc",
      ) + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push("name part must be non-empty");
  else if (name.length > QualifiedNameMaxLength) errs.push(`name part ${maxLen(QualifiedNameMaxLength)}`);
  if (name.length > 0 && !re(QUALIFIED_NAME_FMT).test(name))
    errs.push(
      `name part ${regexError("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character", QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")}`,
    );
  return errs;
}

export function isValidLabelValue(v: string): string[] {
  const errs: string[] = [];
  if (v.length > LabelValueMaxLength) errs.push(maxLen(LabelValueMaxLength));
  if (!re(LABEL_VALUE_FMT).test(v))
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        "MyValue",
        "my_value",
        "12345",
      ),
    );
  return errs;
}

/** field.Invalid's rendering: `Invalid value: "<v>": <msg>` (long values shortened for the log). */
export function invalid(field: string, value: string, msg: string): FieldError {
  const shown = value.length > 80 ? `${value.slice(0, 64)}...(${value.length} characters)` : value;
  return { field, detail: `Invalid value: ${JSON.stringify(shown)}: ${msg}` };
}

export function validateLabels(labels: Record<string, string> | undefined, field: string): FieldError[] {
  const out: FieldError[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    for (const m of isQualifiedName(k)) out.push(invalid(field, k, m));
    for (const m of isValidLabelValue(v)) out.push(invalid(`${field}[${k}]`, v, m));
  }
  return out;
}

export function validateAnnotations(annotations: Record<string, string> | undefined, field: string): FieldError[] {
  const out: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations ?? {})) {
    for (const m of isQualifiedName(k.toLowerCase())) out.push(invalid(field, k, m));
    total += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (total > TotalAnnotationSizeLimitB) out.push({ field, detail: `Too long: must have at most ${TotalAnnotationSizeLimitB} bytes` });
  return out;
}
