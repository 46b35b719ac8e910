import { describe, expect, test } from "bun:test";
import {
  formatMap,
  parseBoolMap,
  parseColonMultimap,
  parseConfigurationMap,
  parseGoBool,
  parseGoInt,
  parseKeyValueMap,
  parseStringSlice,
  parseTaints,
} from "../../src/config/syntax.ts";

describe("map flags (cliflag)", () => {
  test.each([
    ["memory.available<100Mi", "<", { "memory.available": "100Mi" }],
    ["memory.available<100Mi,nodefs.available<10%", "<", { "memory.available": "100Mi", "nodefs.available": "10%" }],
    [" memory.available < 1Gi , nodefs.inodesFree<5%", "<", { "memory.available": "1Gi", "nodefs.inodesFree": "5%" }],
    ["memory.available<1Gi,,", "<", { "memory.available": "1Gi" }],
    ["memory.available<1Gi,memory.available<2Gi", "<", { "memory.available": "2Gi" }],
    ["a<b<c", "<", { a: "b<c" }],
    ["", "<", {}],
    ["memory.available=1m30s,nodefs.available=2m", "=", { "memory.available": "1m30s", "nodefs.available": "2m" }],
    ["cpu=200m,memory=500Mi,ephemeral-storage=1Gi", "=", { cpu: "200m", memory: "500Mi", "ephemeral-storage": "1Gi" }],
    ["k=", "=", { k: "" }],
  ] as const)("%p (sep %p)", (input, sep, want) => {
    expect(parseKeyValueMap(input, sep)).toEqual(want);
  });

  test.each([
    ["memory.available=100Mi", "<", "malformed pair, expect string<string"],
    ["memory.available", "<", "malformed pair, expect string<string"],
    ["memory.available<100Mi,nodefs", "<", "malformed pair, expect string<string"],
    ["memory.available<1m", "=", "malformed pair, expect string=string"],
  ] as const)("%p (sep %p) fails", (input, sep, message) => {
    expect(() => parseKeyValueMap(input, sep)).toThrow(message);
  });

  test.each([
    ["A=true,B=false", { A: true, B: false }],
    ["A=1,B=f,C=TRUE", { A: true, B: false, C: true }],
    [" A = True ", { A: true }],
  ])("feature gates %p", (input, want) => {
    expect(parseBoolMap(input)).toEqual(want);
  });

  test.each([
    ["A", "malformed pair, expect string=bool"],
    ["A=yes", 'invalid value of A=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'],
  ])("feature gates %p fail", (input, message) => {
    expect(() => parseBoolMap(input)).toThrow(message);
  });

  test("colon multimap accumulates values per header", () => {
    const m = parseColonMultimap("a:hello,b:again,c:world");
    expect(parseColonMultimap("b:beautiful", m)).toEqual({ a: ["hello"], b: ["again", "beautiful"], c: ["world"] });
    expect(parseColonMultimap("Authorization:Bearer x:y")).toEqual({ Authorization: ["Bearer x:y"] });
    expect(() => parseColonMultimap("nocolon")).toThrow("malformed pair, expect string:string");
  });

  test("node labels: missing value is empty, uses accumulate", () => {
    const m = parseConfigurationMap("a=1,b");
    expect(parseConfigurationMap("c=3", m)).toEqual({ a: "1", b: "", c: "3" });
  });

  test("formatMap prints sorted pairs as pflag shows defaults", () => {
    expect(formatMap({ "nodefs.available": "10%", "memory.available": "100Mi" }, "<")).toBe("memory.available<100Mi,nodefs.available<10%");
  });
});

describe("lists", () => {
  test.each([
    ["pods", ["pods"]],
    ["pods,kube-reserved", ["pods", "kube-reserved"]],
    ["none", ["none"]],
    ["", []],
    ['"a,b",c', ["a,b", "c"]],
    ["a,,b", ["a", "", "b"]],
  ])("%p → %p", (input, want) => {
    expect(parseStringSlice(input)).toEqual(want);
  });

  test("taints", () => {
    expect(parseTaints("dedicated=infra:NoSchedule,gpu:NoExecute")).toEqual([
      { key: "dedicated", value: "infra", effect: "NoSchedule" },
      { key: "gpu", effect: "NoExecute" },
    ]);
    expect(() => parseTaints("a=b:Sometimes")).toThrow("invalid taint effect: Sometimes");
    expect(() => parseTaints("a=b")).toThrow("invalid taint spec: a=b");
  });
});

describe("pflag scalars", () => {
  test.each([
    ["10250", 10250],
    ["-1", -1],
    ["+7", 7],
    ["0", 0],
    ["0x10", 16],
    ["010", 8],
    ["0o17", 15],
    ["0b101", 5],
    ["0x_ff", 255],
    ["1_000", 1000],
    ["2147483647", 2147483647],
  ])("ParseInt(%p, 0, 32) = %p", (input, want) => {
    expect(parseGoInt(input, 32)).toBe(want);
  });

  test.each([
    ["abc", 'strconv.ParseInt: parsing "abc": invalid syntax'],
    ["1.5", 'strconv.ParseInt: parsing "1.5": invalid syntax'],
    ["", 'strconv.ParseInt: parsing "": invalid syntax'],
    ["1__000", 'strconv.ParseInt: parsing "1__000": invalid syntax'],
    ["1_", 'strconv.ParseInt: parsing "1_": invalid syntax'],
    ["08", 'strconv.ParseInt: parsing "08": invalid syntax'],
    ["2147483648", 'strconv.ParseInt: parsing "2147483648": value out of range'],
    ["-2147483649", 'strconv.ParseInt: parsing "-2147483649": value out of range'],
  ])("ParseInt(%p, 0, 32) fails", (input, message) => {
    expect(() => parseGoInt(input, 32)).toThrow(message);
  });

  test("int64 accepts what int32 rejects", () => {
    expect(parseGoInt("4294967296", 64)).toBe(4294967296);
  });

  test.each([
    ["true", true],
    ["1", true],
    ["t", true],
    ["T", true],
    ["TRUE", true],
    ["True", true],
    ["false", false],
    ["0", false],
    ["f", false],
    ["F", false],
    ["FALSE", false],
    ["False", false],
  ])("ParseBool(%p) = %p", (input, want) => {
    expect(parseGoBool(input)).toBe(want);
  });

  test.each(["yes", "no", "on", "", "tRUE"])("ParseBool(%p) fails", (input) => {
    expect(() => parseGoBool(input)).toThrow(`strconv.ParseBool: parsing ${JSON.stringify(input)}: invalid syntax`);
  });
});
