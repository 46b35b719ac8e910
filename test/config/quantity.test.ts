import { describe, expect, test } from "bun:test";
import {
  canonicalQuantity,
  ERR_FORMAT_WRONG,
  ERR_SUFFIX,
  formatQuantity,
  isQuantity,
  parseQuantity,
  quantityFromNumber,
  quantityMilliValue,
  quantityValue,
} from "../../src/config/quantity.ts";

describe("canonical quantity text (resource.Quantity String())", () => {
  test.each([
    ["1.5Gi", "1536Mi"],
    ["1500000", "1500k"],
    ["0.5", "500m"],
    ["1e3", "1e3"],
    ["1E6", "1e6"],
    ["1e+3", "1e3"],
    ["1e-3", "1e-3"],
    ["1.5e3", "1500"],
    ["100Mi", "100Mi"],
    ["1024Mi", "1Gi"],
    ["0.5Gi", "512Mi"],
    ["1.5Ki", "1536"],
    ["0.000001Ki", "1024u"],
    ["1Ki", "1Ki"],
    ["1Ti", "1Ti"],
    ["1Ei", "1Ei"],
    ["512", "512"],
    ["1024", "1024"],
    ["1000", "1k"],
    ["1k", "1k"],
    ["1.1G", "1100M"],
    ["1T", "1T"],
    ["1P", "1P"],
    ["1E", "1E"],
    ["0", "0"],
    ["0Mi", "0"],
    ["0.0", "0"],
    ["-0", "0"],
    ["-1", "-1"],
    ["-150Mi", "-150Mi"],
    ["-0.5", "-500m"],
    ["+1Gi", "1Gi"],
    ["100m", "100m"],
    ["0.1", "100m"],
    [".5", "500m"],
    ["5.", "5"],
    ["1500m", "1500m"],
    ["2000m", "2"],
    ["1n", "1n"],
    ["1u", "1u"],
    ["1.0001", "1000100u"],
    // Precision below 1n rounds up, as upstream.
    ["0.0000000001", "1n"],
    // JSON decoding trims whitespace before parsing.
    [" 1Mi", "1Mi"],
  ])("%p → %p", (input, want) => {
    expect(canonicalQuantity(input)).toBe(want);
  });
});

describe("quantity errors", () => {
  test.each([
    ["", ERR_FORMAT_WRONG],
    ["abc", ERR_FORMAT_WRONG],
    ["1.2.3", ERR_FORMAT_WRONG],
    ["Mi", ERR_FORMAT_WRONG],
    ["1Zi", ERR_FORMAT_WRONG],
    ["1 Mi", ERR_FORMAT_WRONG],
    ["--1", ERR_FORMAT_WRONG],
    ["1K", ERR_SUFFIX],
    ["1e", ERR_SUFFIX],
    ["1m5", ERR_SUFFIX],
    ["1KiB", ERR_FORMAT_WRONG],
  ])("%p fails with %p", (input, message) => {
    expect(() => parseQuantity(input)).toThrow(message);
    expect(isQuantity(input)).toBe(false);
  });
});

describe("quantity values", () => {
  test.each([
    ["1.5Gi", 1610612736, 1610612736000],
    ["100Mi", 104857600, 104857600000],
    ["1Ki", 1024, 1024000],
    ["0.5", 1, 500], // Value() rounds up
    ["1500m", 2, 1500],
    ["100m", 1, 100],
    ["1n", 1, 1],
    ["1e3", 1000, 1000000],
    ["0", 0, 0],
    ["-1", -1, -1000],
  ])("%p → value %p, milli %p", (input, value, milli) => {
    const q = parseQuantity(input);
    expect(quantityValue(q)).toBe(value);
    expect(quantityMilliValue(q)).toBe(milli);
  });

  test.each([
    [1073741824, "BinarySI", "1Gi"],
    [1000, "BinarySI", "1k"], // below 1024 binary quantities print as decimal SI
    [1536, "BinarySI", "1536"],
    [2048, "BinarySI", "2Ki"],
    [1000000, "DecimalSI", "1M"],
    [0.25, "DecimalSI", "250m"],
  ] as const)("quantityFromNumber(%p, %p) → %p", (n, format, want) => {
    expect(formatQuantity(quantityFromNumber(n, format))).toBe(want);
  });
});
