import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { createDocumentStore } from './document-store.js';

const root = mkdtempSync(join(tmpdir(), 'corridor-store-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A store whose next rename first runs `before`: what another request does between its steps. */
function storeWithHook() {
  const hook: { before?: () => Promise<void> } = {};
  const store = createDocumentStore(root, {
    rename: async (from, to) => {
      const before = hook.before;
      hook.before = undefined;
      await before?.();
      return rename(from, to);
    },
  });
  return { store, hook };
}

async function staged(store: ReturnType<typeof createDocumentStore>, content: string): Promise<string> {
  const path = await store.stagePath();
  writeFileSync(path, content);
  return path;
}

it('keeps a file whose document directory a removal took away between making it and moving the file in', async () => {
  const { store, hook } = storeWithHook();
  const first = await store.keep(await staged(store, 'first'), 'Platform:p', 'Document:d', 'application/pdf');
  // The document's last file goes (a deletion racing this replacement), and its directory with it.
  hook.before = () => store.remove(first);
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
