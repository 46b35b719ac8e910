// The architectures bunlet runs on, and the error for any other. Apart from ./abi.ts (whose import
// throws on another architecture) so the entry point can say so in one line before loading anything.

/** The architectures bunlet is built and run for, as Node/Bun name them (process.arch). */
export type Arch = "x64" | "arm64";

/** The architectures there is an ABI table for (./abi.ts). */
export const SUPPORTED_ARCHES: readonly Arch[] = ["x64", "arm64"];

export const isSupportedArch = (arch: string): arch is Arch => (SUPPORTED_ARCHES as readonly string[]).includes(arch);

/** process.arch names an architecture bunlet has no ABI table for: its struct layouts would be guesses. */
export class UnsupportedArchError extends Error {
  readonly arch: string;
  constructor(arch: string) {
    super(
      `bunlet does not run on ${arch || "an unnamed architecture"}: its libc bindings know the struct layouts and constants of ${SUPPORTED_ARCHES.join(" and ")} only (process.arch=${arch})`,
    );
    this.name = "UnsupportedArchError";
    this.arch = arch;
  }
}
