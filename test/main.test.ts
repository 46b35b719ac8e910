import { expect, test } from "bun:test";

const ROOT = new URL("..", import.meta.url).pathname;

test("on an architecture without an ABI table, bunlet names it and exits 1 before loading anything", async () => {
  const p = Bun.spawn([process.execPath, "--preload", "./test/fixtures/arch-ppc64.ts", "src/main.ts", "version"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  expect(code).toBe(1);
  expect(out).toBe("");
  expect(err.trim()).toBe("bunlet does not run on ppc64: its libc bindings know the struct layouts and constants of x64 and arm64 only (process.arch=ppc64)");
});
