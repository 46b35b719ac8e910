import { expect, test } from "bun:test";
import { expand, mappingFor } from "../../src/pod/expansion.ts";

const ctx = mappingFor(
  new Map([
    ["VAR_A", "A"],
    ["VAR_B", "B"],
    ["VAR_EMPTY", ""],
  ]),
  new Map([
    ["VAR_A", "shadowed"],
    ["SVC", "10.0.0.1"],
  ]),
);

// Cases from upstream third_party/forked/golang/expansion expand_test.go.
test.each([
  ["$(VAR_A)", "A"],
  ["___$(VAR_B)___", "___B___"],
  ["$(VAR_A)-$(VAR_B)", "A-B"],
  ["$(VAR_EMPTY)", ""],
  ["$(SVC)", "10.0.0.1"],
  ["$(UNKNOWN)", "$(UNKNOWN)"],
  ["$$(VAR_A)", "$(VAR_A)"],
  ["$$$(VAR_A)", "$A"],
  ["$$$$(VAR_A)", "$$(VAR_A)"],
  ["$(VAR_A", "$(VAR_A"],
  ["$VAR_A", "$VAR_A"],
  ["foo$", "foo$"],
  ["$()", "$()"],
  ["$(VAR_A)$(", "A$("],
  ["no refs", "no refs"],
])("expand %p → %p", (input, want) => expect(expand(input, ctx)).toBe(want));
