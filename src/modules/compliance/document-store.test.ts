import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { createDocumentStore } from './document-store.js';

/** Renames that first run `before(target)`: what another request does between the store's steps. */
const renames = vi.hoisted(() => ({ before: undefined as ((target: string) => Promise<void>) | undefined }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...real,
    rename: async (from: string, to: string) => {
      const before = renames.before;
      renames.before = undefined;
      await before?.(to);
      return real.rename(from, to);
    },
  };
});

const root = mkdtempSync(join(tmpdir(), 'corridor-store-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function staged(store: ReturnType<typeof createDocumentStore>, content: string): Promise<string> {
  const path = await store.stagePath();
  writeFileSync(path, content);
  return path;
}

it('keeps a file whose document directory a removal took away between making it and moving the file in', async () => {
  const store = createDocumentStore(root);
  const first = await store.keep(await staged(store, 'first'), 'Platform:p', 'Document:d', 'application/pdf');
  // The document's last file goes (a deletion racing this replacement), and its directory with it.
  renames.before = () => store.remove(first);
  const second = await store.keep(await staged(store, 'second'), 'Platform:p', 'Document:d', 'application/pdf');
  expect(existsSync(store.pathOf(first))).toBe(false);
  expect(readFileSync(store.pathOf(second), 'utf8')).toBe('second');
  expect(dirname(second)).toBe(dirname(first));
});

it('gives up on a staged file that is gone', async () => {
  const store = createDocumentStore(root);
  const path = await staged(store, 'gone');
  rmSync(path);
  await expect(store.keep(path, 'Platform:p', 'Document:e', 'image/png')).rejects.toMatchObject({ code: 'ENOENT' });
});
