import { describe, expect, test } from "bun:test";
import { countFunctions, formatSizeReport, isMeasured, sizeReport, sizesOk } from "../../scripts/check/size.ts";

const own = (text: string) => countFunctions("a.ts", text).map((f) => [f.name, f.ownLines]);

describe("countFunctions: lines of a function's own code", () => {
  test.each([
    ["a one-line function", "function f() { return 1; }\n", [["f", 1]]],
    ["body lines from the opening to the closing brace", "function f() {\n  const a = 1;\n  return a;\n}\n", [["f", 4]]],
    ["blank and comment-only lines do not count", "function f() {\n\n  // why\n  /* a\n     b */\n  return 1; // trailing\n}\n", [["f", 3]]],
    [
      "a nested function's inside is its own; its first and last line are the outer's",
      "function f() {\n  const g = () => {\n    one();\n    two();\n  };\n  return g;\n}\n",
      [
        ["f", 5],
        ["g", 4],
      ],
    ],
    [
      "a callback inside a call is named by the call",
      "function f(xs: number[]) {\n  xs.forEach((x) => {\n    use(x);\n  });\n}\n",
      [
        ["f", 4],
        ["xs.forEach(…) callback", 3],
      ],
    ],
    [
      "methods, accessors and constructors count; the class does not",
      "class C {\n  constructor() {\n    this.a = 1;\n  }\n  get b() {\n    return 2;\n  }\n  m() {\n    return 3;\n  }\n}\n",
      [
        ["constructor", 3],
        ["b", 3],
        ["m", 3],
      ],
    ],
    [
      "object-literal methods inside a closure are their own functions",
      "function make() {\n  let n = 0;\n  return {\n    inc() {\n      n++;\n      return n;\n    },\n  };\n}\n",
      [
        ["make", 7],
        ["inc", 4],
      ],
    ],
    ["a multi-line template literal is code on every line", "const f = () => {\n  return `a\nb\nc`;\n};\n", [["f", 5]]],
    ["an expression-bodied arrow counts the lines of its expression", "const f = (a: number) =>\n  a +\n  1;\n", [["f", 2]]],
    ["a declaration without a body is not a function to measure", "declare function f(): void;\ninterface I { m(): void }\n", []],
  ] as const)("%s", (_name, text, want) => {
    expect(own(text)).toEqual(want.map((w) => [...w]));
  });

  test("the line reported is the function's first", () => {
    expect(countFunctions("a.ts", "\n\nexport async function f() {\n  await x;\n}\n")).toEqual([{ name: "f", line: 3, ownLines: 3 }]);
  });
});

describe("sizeReport", () => {
  const body = (n: number) => `function big() {\n${"  x();\n".repeat(n - 2)}}\n`;

  test("functions over 80 lines of own code and files over 500 lines, largest first", () => {
    const r = sizeReport([
      { path: "src/a.ts", text: body(81) },
      { path: "src/b.ts", text: body(80) },
      { path: "src/c.ts", text: `${body(90)}${"// filler\n".repeat(420)}` },
    ]);
    expect(r.longFunctions.map((f) => [f.path, f.ownLines])).toEqual([
      ["src/c.ts", 90],
      ["src/a.ts", 81],
    ]);
    expect(r.longFiles).toEqual([{ path: "src/c.ts", lines: 510 }]);
    expect(formatSizeReport(r)).toEqual(["functions over 80 lines of own code: 2", "files over 500 lines: 1"]);
    expect(formatSizeReport(r, true)).toContain("  src/c.ts:1 big 90");
    expect(formatSizeReport(r, true)).toContain("  src/c.ts 510");
    expect(sizesOk(r)).toBe(false);
  });

  test.each([
    ["within both sizes", [{ path: "src/b.ts", text: body(80) }], true],
    ["a function over", [{ path: "src/a.ts", text: body(81) }], false],
    ["a file over, its functions within", [{ path: "src/d.ts", text: "// filler\n".repeat(501) }], false],
  ])("sizesOk: %s", (_name, files, want) => {
    const r = sizeReport(files);
    expect(sizesOk(r)).toBe(want);
    expect(formatSizeReport(r)).toEqual([`functions over 80 lines of own code: ${r.longFunctions.length}`, `files over 500 lines: ${r.longFiles.length}`]);
  });

  test.each([
    ["src/pod/lifecycle.ts", true],
    ["ffi/libc.ts", true],
    ["src/cri/api.proto", false],
    ["test/pod/lifecycle.test.ts", false],
    ["scripts/check/size.ts", false],
  ])("isMeasured(%s) = %p", (path, want) => {
    expect(isMeasured(path)).toBe(want);
  });
});
