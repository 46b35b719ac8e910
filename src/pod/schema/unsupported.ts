// v1 fields bunlet accepts but cannot act on as the kubelet would. Every v1 field decodes (a real API
// server stores many of them on every pod, defaulted), but a value that asks for something bunlet does
// not do is refused with the value and why — from a file as a manifest error, from the API server as
// the pod's PodFeatureUnsupported rejection (admit-unsupported.ts) — so a pod never runs without what
// it asked for. The default or empty value of such a field asks for nothing and is accepted.
import { z } from "zod";

const MAX_SHOWN = 60;

/** The value as a manifest spells it, cut to a readable length. */
function show(value: unknown): string {
  const s = JSON.stringify(value) ?? String(value);
  return s.length > MAX_SHOWN ? `${s.slice(0, MAX_SHOWN - 1)}…` : s;
}

/** The detail of a refusal: "<value> is not supported by bunlet: <why>". */
export function unsupportedValue(value: unknown, why: string): string {
  return `${show(value)} is not supported by bunlet: ${why}`;
}

/** Absent, null, "" or an empty list, map or object (recursively): what asks for nothing. */
export function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === "") return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === "object") return Object.values(v).every(isEmpty);
  return false;
}

/**
 * `schema`, accepted only where `isDefault` holds (by default: absent or empty); any other value is
 * refused naming the value and `why`.
 */
export function defaultOnly<S extends z.ZodType>(schema: S, why: string, isDefault: (v: z.output<S>) => boolean = isEmpty) {
  return schema.superRefine((v, ctx) => {
    if (!isDefault(v)) ctx.addIssue({ code: "custom", message: unsupportedValue(v, why) });
  });
}

/** A v1 field bunlet refuses whenever it is set (a volume type it does not implement, say). */
export const refusedWhenSet = (why: string) => defaultOnly(z.unknown().optional(), why, (v) => v === undefined);
