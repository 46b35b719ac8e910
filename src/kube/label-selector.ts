// meta/v1 LabelSelector as apimachinery's LabelSelectorAsSelector reads it: no selector matches
// nothing, an empty one matches everything; matchLabels are equalities; matchExpressions In, NotIn
// (values required), Exists, DoesNotExist (values forbidden), all ANDed.

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export type LabelMatcher = (labels: Readonly<Record<string, string>> | undefined) => boolean;

/** The selector as a matcher; throws upstream's message for an operator or values it rejects. */
export function labelSelectorMatcher(sel: LabelSelector | undefined | null): LabelMatcher {
  if (sel === undefined || sel === null) return () => false;
  const terms: LabelMatcher[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) terms.push((l) => l?.[k] === v);
  for (const r of sel.matchExpressions ?? []) {
    const values = r.values ?? [];
    switch (r.operator) {
      case "In":
      case "NotIn": {
        if (values.length === 0) throw new Error("for 'in', 'notin' operators, values set can't be empty");
        const set = new Set(values);
        const has = (l: Readonly<Record<string, string>> | undefined) => l?.[r.key] !== undefined && set.has(l[r.key]!);
        terms.push(r.operator === "In" ? has : (l) => !has(l));
        break;
      }
      case "Exists":
      case "DoesNotExist":
        if (values.length > 0) throw new Error("values set must be empty for exists and does not exist");
        terms.push(r.operator === "Exists" ? (l) => l?.[r.key] !== undefined : (l) => l?.[r.key] === undefined);
        break;
      default:
        throw new Error(`"${r.operator}" is not a valid label selector operator`);
    }
  }
  return (l) => terms.every((t) => t(l));
}
