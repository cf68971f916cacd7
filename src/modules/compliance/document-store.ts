import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DocumentContentType } from './document-schemas.js';

const EXTENSIONS: Record<DocumentContentType, string> = { 'application/pdf': 'pdf', 'image/jpeg': 'jpg', 'image/png': 'png' };
const INCOMING = '.incoming';
const STALE_INCOMING_MS = 3600_000;

function uuidOf(id: string): string {
  return id.slice(id.indexOf(':') + 1);
}

/**
 * Document files on disk. Layout under the documents directory:
 *
 *   .incoming/<uuid>                                    uploads being received (removed when the request ends)
 *   <platform uuid>/<document uuid>/<revision uuid>.<ext>  a stored file; replacing a document writes a new revision
 *
 * A file is moved into place before the database row that names it commits, and removed after
 * the row that named it is gone, so a crash leaves at worst an unreferenced file, never a row
 * without its file. `files` lets a test place another request's step just before a rename.
 */
export function createDocumentStore(root: string, files: { rename: typeof rename } = { rename }) {
  const incoming = join(root, INCOMING);

  /** A fresh path to receive an upload into (same file system as the store, so moving it is a rename). */
  async function stagePath(): Promise<string> {
    await mkdir(incoming, { recursive: true });
    return join(incoming, randomUUID());
  }

  /**
   * Moves a received file into the store; returns its key (path relative to the root). The removal
   * of the document's last file (a deletion racing a replacement) may take its directory away
   * between the mkdir and the rename: the directory is made again, a bounded number of times.
   */
  async function keep(stagedPath: string, platformId: string, documentId: string, type: DocumentContentType): Promise<string> {
    const key = join(uuidOf(platformId), uuidOf(documentId), `${randomUUID()}.${EXTENSIONS[type]}`);
    const path = join(root, key);
    for (let attempt = 1; ; attempt++) {
      await mkdir(dirname(path), { recursive: true });
      try {
        await files.rename(stagedPath, path);
        return key;
      } catch (error) {
        if (attempt === 3 || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  }

  /** Removes a stored file, and its document's directory once empty. */
  async function remove(key: string): Promise<void> {
    const path = join(root, key);
    await rm(path, { force: true });
    await rmdir(dirname(path)).catch(() => {});
  }

  /** Removes uploads abandoned by crashed processes (older than an hour). */
  async function sweepIncoming(nowMs: number): Promise<void> {
    const names = await readdir(incoming).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(incoming, name);
      const info = await stat(path).catch(() => undefined);
      if (info && nowMs - info.mtimeMs > STALE_INCOMING_MS) await rm(path, { force: true });
    }
  }

  return { root, stagePath, keep, remove, sweepIncoming, pathOf: (key: string) => join(root, key) };
}

export type DocumentStore = ReturnType<typeof createDocumentStore>;
