/**
 * For the tool checks (Redocly, Spectral, openapi-typescript, Prism): the OpenAPI document exactly as
 * the app serves it, written to a temporary file, and the tools run from node_modules/.bin. A tool
 * that cannot run (missing, crashing, printing what it never prints) fails the test that ran it.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildApp } from '../../src/app.js';
import { createLogger } from '../../src/lib/logger.js';
import { createSecretBox } from '../../src/lib/secrets.js';
import { FileContentStore } from '../../src/store/content/content-store.files.js';
import { createTestStore, TEST_SECRET, tempDir } from '../helpers.js';

export const REPO_ROOT = path.resolve(import.meta.dirname, '../..');

/** Environment for the tools: no telemetry, no update check, nothing that reaches the network. */
export const TOOL_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
  NO_UPDATE_NOTIFIER: '1',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
};

export interface ServedDocument {
  /** The document as /openapi.json serves it. */
  document: Record<string, unknown>;
  /** A temporary directory holding openapi.json; removed by cleanUp. */
  dir: string;
  file: string;
  cleanUp(): void;
}

/** GET /openapi.json of an app over a fresh store, written to <temp dir>/openapi.json. */
export async function servedDocument(options: { publicUrl?: string } = {}): Promise<ServedDocument> {
  const store = await createTestStore();
  const { app } = buildApp({
    store: store.store,
    // Only the document is asked for: no media are kept.
    blobs: new FileContentStore(path.join(store.dir, 'content')),
    runWorkers: false,
    secrets: createSecretBox(TEST_SECRET),
    logger: createLogger('silent'),
    publicUrl: options.publicUrl,
  });
  try {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`/openapi.json answered ${res.statusCode}: ${res.body}`);
    const dir = tempDir('chatlog-openapi-');
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, res.body);
    return {
      document: JSON.parse(res.body) as Record<string, unknown>,
      dir,
      file,
      cleanUp: () => fs.rmSync(dir, { recursive: true, force: true }),
    };
  } finally {
    await app.close();
    await store.close();
  }
}

export interface ToolRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs node_modules/.bin/<tool> to its end (the exit code is the caller's to judge). */
export function runTool(tool: string, args: readonly string[], cwd = REPO_ROOT): Promise<ToolRun> {
  const bin = path.join(REPO_ROOT, 'node_modules', '.bin', tool);
  if (!fs.existsSync(bin)) throw new Error(`${bin} is missing: npm install installs it (devDependencies)`);
  return new Promise((resolve, reject) => {
    execFile(
      bin,
      [...args],
      { cwd, env: TOOL_ENV, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });
}

/**
 * The rules a lint config file sets to `warn` ("  rule-name: warn  # ..."): the warnings we keep,
 * each with its reason in a comment above it.
 */
export function keptWarnings(configFile: string): Set<string> {
  const text = fs.readFileSync(path.join(REPO_ROOT, configFile), 'utf8');
  return new Set([...text.matchAll(/^ {2}([\w.-]+):\s*warn\s*(?:#.*)?$/gm)].map((m) => m[1] ?? ''));
}
