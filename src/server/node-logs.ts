// /logs/: the node's log directory (/var/log) as upstream serves it with Go's http.FileServer —
// a directory gives an HTML listing, a file its bytes. The requested path is normalised and the
// real path (symlinks resolved) must stay inside the directory: no traversal, no escape by link.
import { readdir, realpath, stat } from "node:fs/promises";
import { join, posix, sep } from "node:path";
import { text } from "./router.ts";

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export function nodeLogsHandler(logDir: string): (req: Request, url: URL) => Promise<Response> {
  return async (_req, url) => {
    let rel: string;
    try {
      rel = posix.normalize(`/${decodeURIComponent(url.pathname.slice("/logs".length))}`);
    } catch {
      return text("400: Bad Request\n", 400);
    }
    if (rel.includes("\0")) return text("400: Bad Request\n", 400);
    let root: string;
    let target: string;
    try {
      root = await realpath(logDir);
      target = await realpath(join(root, rel));
    } catch {
      return text("404 page not found\n", 404);
    }
    if (target !== root && !target.startsWith(root + sep)) return text("404 page not found\n", 404);
    const st = await stat(target);
    if (st.isDirectory()) {
      // Go's FileServer redirects a directory without its trailing slash.
      if (!url.pathname.endsWith("/")) return new Response(null, { status: 301, headers: { location: `${url.pathname}/` } });
      const entries = (await readdir(target, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
      const links = entries.map((e) => {
        const name = e.isDirectory() ? `${e.name}/` : e.name;
        return `<a href="${escapeHtml(encodeURIComponent(e.name))}${e.isDirectory() ? "/" : ""}">${escapeHtml(name)}</a>`;
      });
      return new Response(`<pre>\n${links.join("\n")}${links.length ? "\n" : ""}</pre>\n`, { headers: { "content-type": "text/html; charset=utf-8" } });
    }
    if (!st.isFile()) return text("404 page not found\n", 404);
    return new Response(Bun.file(target), { headers: { "content-type": "text/plain; charset=utf-8" } });
  };
}
