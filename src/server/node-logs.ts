// /logs/: the node's log directory (/var/log) as upstream serves it with Go's http.FileServer —
// a directory gives an HTML listing, a file its bytes. The requested path is normalised and
// resolved (symlinks followed) once; then what is served is what was opened, judged by the open
// file itself, never by its path again: the resolved path is opened with O_NOFOLLOW (a link swapped
// in since the resolution is refused), its real location is read back from /proc/self/fd and must
// be inside the directory (a parent swapped for a link is refused), and fstat says whether it is a
// directory or a regular file. O_NONBLOCK: a FIFO never blocks the handler (it is refused).
import { constants } from "node:fs";
import { open, readdir, readlink, realpath, type FileHandle } from "node:fs/promises";
import { join, posix, sep } from "node:path";
import { text } from "./router.ts";

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const notFound = () => text("404 page not found\n", 404);
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** The opened file's own path (Linux: /proc/self/fd), whatever became of the name it was opened by. */
const openedPath = (fh: FileHandle) => readlink(`/proc/self/fd/${fh.fd}`);

function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root + sep);
}

/**
 * The file's first `size` bytes (its size when it was judged; a log grows) from the open handle, 64
 * KiB at a time; the handle is closed at the end or on cancel.
 */
function fileStream(fh: FileHandle, size: number): ReadableStream<Uint8Array> {
  let pos = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const buf = new Uint8Array(Math.min(64 * 1024, size - pos));
      const { bytesRead } = buf.length > 0 ? await fh.read(buf, 0, buf.length, pos) : { bytesRead: 0 };
      if (bytesRead === 0) {
        await fh.close();
        return controller.close();
      }
      pos += bytesRead;
      controller.enqueue(buf.subarray(0, bytesRead));
    },
    cancel: () => fh.close(),
  });
}

async function listing(fh: FileHandle): Promise<Response> {
  const entries = (await readdir(`/proc/self/fd/${fh.fd}`, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const links = entries.map((e) => {
    const name = e.isDirectory() ? `${e.name}/` : e.name;
    return `<a href="${escapeHtml(encodeURIComponent(e.name))}${e.isDirectory() ? "/" : ""}">${escapeHtml(name)}</a>`;
  });
  return new Response(`<pre>\n${links.join("\n")}${links.length ? "\n" : ""}</pre>\n`, { headers: { "content-type": "text/html; charset=utf-8" } });
}

/** Opens what `rel` names under `logDir`, refusing anything that is (or became) outside it. */
async function openInside(logDir: string, rel: string): Promise<FileHandle | undefined> {
  let fh: FileHandle | undefined;
  try {
    const root = await realpath(logDir);
    const target = await realpath(join(root, rel));
    if (!isInside(root, target)) return undefined;
    fh = await open(target, OPEN_FLAGS);
    if (isInside(root, await openedPath(fh))) return fh;
  } catch {
    // Missing, a link swapped in (ELOOP), unreadable: not found.
  }
  await fh?.close();
  return undefined;
}

export function nodeLogsHandler(logDir: string): (req: Request, url: URL) => Promise<Response> {
  return async (_req, url) => {
    let rel: string;
    try {
      rel = posix.normalize(`/${decodeURIComponent(url.pathname.slice("/logs".length))}`);
    } catch {
      return text("400: Bad Request\n", 400);
    }
    if (rel.includes("\0")) return text("400: Bad Request\n", 400);
    const fh = await openInside(logDir, rel);
    if (!fh) return notFound();
    const st = await fh.stat();
    if (st.isFile())
      return new Response(fileStream(fh, st.size), { headers: { "content-type": "text/plain; charset=utf-8", "content-length": String(st.size) } });
    try {
      if (!st.isDirectory()) return notFound();
      // Go's FileServer redirects a directory without its trailing slash.
      if (!url.pathname.endsWith("/")) return new Response(null, { status: 301, headers: { location: `${url.pathname}/` } });
      return await listing(fh);
    } finally {
      await fh.close();
    }
  };
}
