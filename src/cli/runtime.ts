/** What every command needs: the configuration, the store (schema brought up to date) and the services. */
import { InvalidArgumentError } from 'commander';
import { type Config, loadConfig } from '../config.js';
import { createSecretBox, loadServerSecret, type SecretBox } from '../lib/secrets.js';
import { AccountService } from '../modules/account/account.usecases.js';
import { HubService } from '../modules/hubs/hubs.usecases.js';
import { KeyService } from '../modules/keys/keys.usecases.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';

export interface GlobalOptions {
  dataDir?: string;
  debug?: boolean;
}

export interface Runtime {
  config: Config;
  store: Store;
  secrets: SecretBox;
  hubs: HubService;
  keys: KeyService;
  accounts: AccountService;
}

export async function withRuntime<T>(
  options: GlobalOptions,
  work: (runtime: Runtime) => Promise<T>,
  overrides: { port?: string; host?: string } = {},
): Promise<T> {
  const config = loadConfig(process.env, { ...overrides, dataDir: options.dataDir });
  const store = await openStore(config);
  try {
    const secrets = createSecretBox(loadServerSecret(config.secret, config.dataDir));
    const hubs = new HubService(store, secrets);
    const keys = new KeyService(store, secrets);
    const accounts = new AccountService({ store, hubs, keys, secrets });
    const runtime: Runtime = { config, store, secrets, hubs, keys, accounts };
    return await work(runtime);
  } finally {
    await store.close();
  }
}

/** A command's option of a whole number from 1 to 1,000,000,000 (commander's argParser). */
export function positiveInteger(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 1_000_000_000) {
    throw new InvalidArgumentError('must be a whole number of 1 or more');
  }
  return Number(value);
}
