// zod builders for the Go types KubeletConfiguration fields are declared with. Decoding follows
// what encoding/json does with the YAML-converted-to-JSON document the kubelet reads: a number
// where a string is expected (or the reverse) is an error, integers must fit their Go width,
// metav1.Duration must be a string time.ParseDuration accepts.
import { z } from "zod";
import { DurationError, parseDuration } from "./duration.ts";
import { parseQuantity, QuantityError } from "./quantity.ts";

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

export const goString = () => z.string({ error: "must be a string" });

export const goBool = () => z.boolean({ error: "must be a boolean (true or false)" });

export const goInt32 = () =>
  z
    .number({ error: "must be an integer (int32)" })
    .int({ error: "must be an integer (int32)" })
    .min(INT32_MIN, { error: `must be an int32 between ${INT32_MIN} and ${INT32_MAX}` })
    .max(INT32_MAX, { error: `must be an int32 between ${INT32_MIN} and ${INT32_MAX}` });

export const goUint32 = () =>
  z
    .number({ error: "must be a non-negative integer (uint32)" })
    .int({ error: "must be a non-negative integer (uint32)" })
    .min(0, { error: "must be a non-negative integer (uint32)" })
    .max(4294967295, { error: "must be a uint32 no larger than 4294967295" });

export const goInt64 = () => z.number({ error: "must be an integer (int64)" }).int({ error: "must be an integer (int64)" });

export const goFloat64 = () => z.number({ error: "must be a number" });

/** Returns the Go error text for a bad duration, or undefined when it parses. */
export function durationProblem(s: string): string | undefined {
  try {
    parseDuration(s);
    return undefined;
  } catch (e) {
    if (e instanceof DurationError) return e.message;
    throw e;
  }
}

/** metav1.Duration: a Go duration string ("10s", "1m30s", "2h45m"). */
export const goDuration = () =>
  z.string({ error: 'must be a duration string such as "10s", "1m30s" or "2h45m"' }).superRefine((s, ctx) => {
    const problem = durationProblem(s);
    if (problem) ctx.addIssue({ code: "custom", message: `${problem}; want a Go duration such as "10s", "1m30s" or "2h45m"` });
  });

/** Returns the error text for a bad quantity, or undefined when it parses. */
export function quantityProblem(s: string): string | undefined {
  try {
    parseQuantity(s);
    return undefined;
  } catch (e) {
    if (e instanceof QuantityError) return e.message;
    throw e;
  }
}

/** resource.Quantity as JSON: a string ("100Mi") or a number (1024). */
export const goQuantity = () =>
  z.union([z.string(), z.number()], { error: 'must be a quantity such as "100Mi" or "1.5Gi"' }).superRefine((v, ctx) => {
    const problem = quantityProblem(String(v));
    if (problem) ctx.addIssue({ code: "custom", message: `${problem}; want a quantity such as "100Mi", "1.5Gi" or "500m"` });
  });

export const goStringMap = () => z.record(z.string(), goString(), { error: "must be a map of string to string" });

export const goStringList = () => z.array(goString(), { error: "must be a list of strings" });
