// errno numbers → symbolic code and message (Linux asm-generic numbers, the same on x86_64 and
// aarch64; glibc wording). A table rather than libc strerror(): strerror's buffer is shared between
// threads (the notifier Worker also calls into libc) and its text is locale-dependent; logs and tests
// want stable strings.

const ERRNOS: ReadonlyArray<readonly [number, string, string]> = [
  [1, "EPERM", "Operation not permitted"],
  [2, "ENOENT", "No such file or directory"],
  [3, "ESRCH", "No such process"],
  [4, "EINTR", "Interrupted system call"],
  [5, "EIO", "Input/output error"],
  [6, "ENXIO", "No such device or address"],
  [7, "E2BIG", "Argument list too long"],
  [8, "ENOEXEC", "Exec format error"],
  [9, "EBADF", "Bad file descriptor"],
  [10, "ECHILD", "No child processes"],
  [11, "EAGAIN", "Resource temporarily unavailable"],
  [12, "ENOMEM", "Cannot allocate memory"],
  [13, "EACCES", "Permission denied"],
  [14, "EFAULT", "Bad address"],
  [16, "EBUSY", "Device or resource busy"],
  [17, "EEXIST", "File exists"],
  [18, "EXDEV", "Invalid cross-device link"],
  [19, "ENODEV", "No such device"],
  [20, "ENOTDIR", "Not a directory"],
  [21, "EISDIR", "Is a directory"],
  [22, "EINVAL", "Invalid argument"],
  [23, "ENFILE", "Too many open files in system"],
  [24, "EMFILE", "Too many open files"],
  [25, "ENOTTY", "Inappropriate ioctl for device"],
  [26, "ETXTBSY", "Text file busy"],
  [27, "EFBIG", "File too large"],
  [28, "ENOSPC", "No space left on device"],
  [29, "ESPIPE", "Illegal seek"],
  [30, "EROFS", "Read-only file system"],
  [31, "EMLINK", "Too many links"],
  [32, "EPIPE", "Broken pipe"],
  [34, "ERANGE", "Numerical result out of range"],
  [35, "EDEADLK", "Resource deadlock avoided"],
  [36, "ENAMETOOLONG", "File name too long"],
  [37, "ENOLCK", "No locks available"],
  [38, "ENOSYS", "Function not implemented"],
  [39, "ENOTEMPTY", "Directory not empty"],
  [40, "ELOOP", "Too many levels of symbolic links"],
  [61, "ENODATA", "No data available"],
  [75, "EOVERFLOW", "Value too large for defined data type"],
  [95, "EOPNOTSUPP", "Operation not supported"],
  [110, "ETIMEDOUT", "Connection timed out"],
  [111, "ECONNREFUSED", "Connection refused"],
  [122, "EDQUOT", "Disk quota exceeded"],
];

const BY_NUMBER = new Map(ERRNOS.map(([n, code, text]) => [n, { code, text }]));

/** Numeric value of a symbolic errno code, e.g. errnoNumber("ENOENT") === 2. */
export const ERRNO: Readonly<Record<string, number>> = Object.freeze(Object.fromEntries(ERRNOS.map(([n, code]) => [code, n])));

/** Symbolic code for an errno ("ENOENT"); unknown numbers become "E<n>". */
export function errnoCode(errno: number): string {
  return BY_NUMBER.get(errno)?.code ?? `E${errno}`;
}

/** Human text for an errno, as strerror(3) would print it in the C locale. */
export function errnoText(errno: number): string {
  return BY_NUMBER.get(errno)?.text ?? `Unknown error ${errno}`;
}

/**
 * A failed libc call. `call` is the function name, `errno`/`code` the kernel's reason, `path` the file
 * it concerned when there is one, so "open /sys/fs/cgroup/memory/x/memory.usage_in_bytes: ENOENT"
 * reads on its own in a log line.
 */
export class SyscallError extends Error {
  readonly call: string;
  readonly errno: number;
  readonly code: string;
  readonly path?: string;

  constructor(call: string, errno: number, path?: string) {
    const code = errnoCode(errno);
    super(`${call}${path !== undefined ? ` ${path}` : ""}: ${code} (${errnoText(errno)})`);
    this.name = "SyscallError";
    this.call = call;
    this.errno = errno;
    this.code = code;
    if (path !== undefined) this.path = path;
  }
}
