// The image import directory (imageImportPath; k3s's agent/images): image tarballs (.tar, .tar.gz,
// .tgz: OCI layouts or docker-archives) are imported into the runtime, and .txt lists of image
// references (one a line, # comments) are pulled, at start and whenever the directory changes
// (fs.watch, inotify, debounced as the static pod directory is), and again every retryMs: a failed
// import or pull is retried, an image removed behind bunlet's back is imported again. Imports run one
// at a time and a tarball is imported again only when its size or mtime changed; list pulls run apart
// so a slow registry never holds up a tarball. Every image of the directory is pinned: image GC keeps
// it (pinnedImages). Nothing here is fatal: each failure is one log line, once per distinct error.
import { type FSWatcher, watch } from "node:fs";
import { mkdir, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Clock, TimerHandle } from "../../clock.ts";
import type { CriClient } from "../../cri/client.ts";
import type { ContainerdClient } from "../../cri/containerd.ts";
import { kv, log } from "../../log.ts";
import { isImageRef, normalizeImageRef } from "./image-archive.ts";
import { importImageTarball, type ImportResult } from "./image-import.ts";

export const IMPORT_DEBOUNCE_MS = 100;
export const IMPORT_RETRY_MS = 60_000;
const MAX_LIST_BYTES = 1024 * 1024;

export interface ImageImportDirDeps {
  path: string;
  containerd: ContainerdClient;
  cri: Pick<CriClient, "imageStatus">;
  /** A CRI pull of one reference (through the kubelet's image puller, so serializeImagePulls holds). */
  pull(ref: string): Promise<string>;
  clock: Clock;
  /** Called with the names of images that became present (imported or pulled): pods waiting for them can start. */
  onImages?(names: string[]): void;
  debounceMs?: number;
  retryMs?: number;
}

export interface ImageImportDir {
  start(): Promise<void>;
  stop(): void;
  /** Names (normalized references) of every image the directory holds: image GC never removes them. */
  pinnedImages(): string[];
  /** One scan now (the watch and the retry timer call it too); resolves when its imports are done. */
  scan(): Promise<void>;
}

/** Pure: what a file of the directory is; dotfiles (editors' and copies' temporaries) are ignored. */
export function importFileKind(name: string): "tarball" | "list" | undefined {
  if (name.startsWith(".")) return undefined;
  if (/\.(tar|tar\.gz|tgz)$/.test(name)) return "tarball";
  if (name.endsWith(".txt")) return "list";
  return undefined;
}

/** Pure: the references of a .txt list, normalized; bad lines are returned apart with their line number. */
export function parseImageList(text: string): { refs: string[]; bad: { line: number; text: string }[] } {
  const refs: string[] = [];
  const bad: { line: number; text: string }[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) return;
    if (isImageRef(line)) refs.push(normalizeImageRef(line));
    else bad.push({ line: i + 1, text: line });
  });
  return { refs: [...new Set(refs)], bad };
}

interface TarballState {
  /** size:mtime of the file as last tried. */
  key: string;
  ok: boolean;
  images: string[];
  triedMs: number;
}

export function createImageImportDir(deps: ImageImportDirDeps): ImageImportDir {
  const { path, clock } = deps;
  const retryMs = deps.retryMs ?? IMPORT_RETRY_MS;
  const tarballs = new Map<string, TarballState>();
  /** Wanted references of the lists, and which of them are present. */
  let listed = new Set<string>();
  const present = new Set<string>();
  /** Warnings logged, by file and cause: each once, again only for a changed file or a new cause. */
  const warned = new Set<string>();
  let watcher: FSWatcher | undefined;
  let debounce: TimerHandle | undefined;
  let retryTimer: TimerHandle | undefined;
  let tail: Promise<void> = Promise.resolve();
  let queued: Promise<void> | undefined;
  let pulling = false;
  let stopped = false;

  const warnOnce = (key: string, line: string) => {
    if (warned.has(key)) return;
    warned.add(key);
    log.warn(line);
  };

  const ensureWatch = () => {
    if (watcher || stopped) return;
    try {
      watcher = watch(path, { persistent: false }, () => schedule());
      watcher.on("error", () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      // Directory missing or unreadable: the retry timer tries again.
    }
  };

  const schedule = () => {
    if (stopped) return;
    if (debounce) clock.clearTimeout(debounce);
    debounce = clock.setTimeout(() => {
      debounce = undefined;
      void scan();
    }, deps.debounceMs ?? IMPORT_DEBOUNCE_MS);
  };

  /** One tarball, imported when new, changed, failed a retry period ago, or its images went missing. */
  async function syncTarball(file: string): Promise<void> {
    let st;
    try {
      st = await stat(file);
    } catch {
      return; // removed meanwhile
    }
    const key = `${st.size}:${st.mtimeMs}`;
    const prev = tarballs.get(file);
    const now = clock.now();
    if (prev?.key === key) {
      if (!prev.ok && now - prev.triedMs < retryMs) return;
      if (prev.ok && (await allPresent(prev.images))) return;
    }
    const startMs = now;
    let result: ImportResult;
    try {
      result = await importImageTarball(file, { containerd: deps.containerd, workDir: join(path, ".bunlet-import"), now: clock.now });
    } catch (e) {
      tarballs.set(file, { key, ok: false, images: prev?.images ?? [], triedMs: now });
      const error = (e as Error).message;
      warnOnce(`${file}\0${key}\0${error}`, `image tarball not imported; retried when it changes and every ${retryMs / 1000}s ${kv({ file, error })}`);
      return;
    }
    tarballs.set(file, { key, ok: true, images: result.images, triedMs: now });
    for (const w of result.warnings) warnOnce(`${file}\0${key}\0${w}`, `image tarball: ${w}, skipped ${kv({ file })}`);
    log.info(
      `imported image tarball ${kv({ file, format: result.format, images: result.images.join(","), blobs: result.blobs, written: result.written, writtenBytes: result.writtenBytes, ms: clock.now() - startMs })}`,
    );
    if (result.images.length > 0) deps.onImages?.(result.images);
  }

  async function allPresent(names: readonly string[]): Promise<boolean> {
    try {
      for (const n of names) if (!(await deps.cri.imageStatus(n))) return false;
      return true;
    } catch {
      return true; // runtime unreachable: nothing to decide now
    }
  }

  async function readList(file: string): Promise<string[]> {
    try {
      const st = await stat(file);
      if (st.size > MAX_LIST_BYTES) throw new Error(`${st.size} bytes, more than ${MAX_LIST_BYTES}`);
      const { refs, bad } = parseImageList(await readFile(file, "utf8"));
      for (const b of bad) warnOnce(`${file}\0${b.line}\0${b.text}`, `image list: not an image reference, skipped ${kv({ file, line: b.line, text: b.text })}`);
      return refs;
    } catch (e) {
      warnOnce(`${file}\0${(e as Error).message}`, `image list not read ${kv({ file, error: (e as Error).message })}`);
      return [];
    }
  }

  /** Pulls the listed references not present yet, one after another; a failure waits for the next retry. */
  async function pullListed(): Promise<void> {
    if (pulling) return;
    pulling = true;
    try {
      for (const ref of listed) {
        if (stopped || present.has(ref)) continue;
        try {
          if (!(await deps.cri.imageStatus(ref))) {
            await deps.pull(ref);
            log.info(`pulled listed image ${kv({ image: ref })}`);
            deps.onImages?.([ref]);
          }
          present.add(ref);
        } catch (e) {
          log.warn(`listed image not pulled; retried every ${retryMs / 1000}s ${kv({ image: ref, error: (e as Error).message })}`);
        }
      }
    } finally {
      pulling = false;
    }
  }

  async function scanOnce(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(path);
    } catch (e) {
      warnOnce(`${path}\0${(e as Error).message}`, `image import directory not readable ${kv({ path, error: (e as Error).message })}`);
      return;
    }
    const files = names.map((n) => ({ n, kind: importFileKind(n), file: join(path, n) }));
    const here = new Set(files.map((f) => f.file));
    for (const f of [...tarballs.keys()]) if (!here.has(f)) tarballs.delete(f);
    for (const k of [...warned]) if (!here.has(k.split("\0")[0]!)) warned.delete(k);
    for (const f of files) if (f.kind === "tarball" && !stopped) await syncTarball(f.file);
    const wanted = new Set<string>();
    for (const f of files) if (f.kind === "list") for (const r of await readList(f.file)) wanted.add(r);
    listed = wanted;
    for (const r of [...present]) if (!wanted.has(r)) present.delete(r);
    void pullListed();
    ensureWatch();
  }

  /** A scan after the one running, shared by every caller until it starts: at most one runs, one waits. */
  function scan(): Promise<void> {
    if (queued) return queued;
    const next = tail.then(async () => {
      queued = undefined;
      if (stopped) return;
      await scanOnce().catch((e) => log.error(`image import directory scan failed ${kv({ path, error: (e as Error).message })}`));
    });
    queued = next;
    tail = next;
    return next;
  }

  const retryLoop = () => {
    if (stopped) return;
    present.clear(); // listed images removed meanwhile are pulled again
    void scan();
    retryTimer = clock.setTimeout(retryLoop, retryMs);
  };

  return {
    async start() {
      if (stopped) return;
      try {
        await mkdir(path, { recursive: true, mode: 0o755 });
      } catch (e) {
        log.warn(`image import directory not created ${kv({ path, error: (e as Error).message })}`);
      }
      log.info(`image import directory ${kv({ path, retrySeconds: retryMs / 1000 })}`);
      ensureWatch();
      await scan();
      retryTimer = clock.setTimeout(retryLoop, retryMs);
    },
    stop() {
      stopped = true;
      watcher?.close();
      watcher = undefined;
      if (debounce) clock.clearTimeout(debounce);
      if (retryTimer) clock.clearTimeout(retryTimer);
    },
    pinnedImages: () => [...new Set([...[...tarballs.values()].flatMap((t) => t.images), ...listed])],
    scan,
  };
}
