/**
 * The settings of chatlog, read from the environment and checked once at start; flags of the command
 * line override the environment. Each setting is declared once, in config.settings.ts.
 */
import { type Config, CROSS_RULES, SETTINGS, type SettingName, shownDefault } from './config.settings.js';

export type { Config } from './config.settings.js';

const NAMES = Object.keys(SETTINGS) as SettingName[];

/** Each rule between settings, under the setting after which it is checked (the last of its settings). */
const RULES_AFTER = new Map(
  CROSS_RULES.map((rule) => [NAMES.filter((name) => rule.settings.includes(name)).at(-1), rule]),
);

const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

/**
 * Every setting, from the flag given (`overrides`, even empty), else the environment variable (unset
 * when empty), else its default; the first wrong one, in the table's order, is refused with a UserError.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<SettingName, string>> = {},
): Config {
  const config: Record<string, unknown> = {};
  for (const name of NAMES) {
    const setting = SETTINGS[name];
    config[name] = setting.parse(overrides[name] ?? nonEmpty(env[setting.env]), setting.env);
    RULES_AFTER.get(name)?.check(config as Config);
  }
  return config as Config;
}

/** A setting's default, as the program sees it when nothing sets it (for code that runs without a Config). */
export function settingDefault<N extends SettingName>(name: N): Config[N] {
  const setting = SETTINGS[name];
  return setting.parse(undefined, setting.env) as Config[N];
}

/** A setting's option for commander: its flags, and its help naming the variable and the default. */
export function settingOption(name: SettingName): [flags: string, description: string] {
  const setting = SETTINGS[name];
  if (!setting.flag) throw new Error(`the setting ${name} has no command-line option`);
  return [setting.flag.flags, `${setting.flag.help} (env ${setting.env}, default ${shownDefault(setting)})`];
}

/** The end of `chatlog serve --help`: every variable and its default. */
export function settingsHelp(): string {
  const settings = Object.values(SETTINGS);
  const width = Math.max(...settings.map((setting) => setting.env.length));
  const lines = settings.map((setting) => `  ${setting.env.padEnd(width)}  ${shownDefault(setting)}`);
  return `\nEnvironment variables and their defaults (a flag overrides its variable; README.md, "Configuration",\nsays what each does):\n${lines.join('\n')}`;
}

/** The settings the HTTP app reads (the others are the store's, the logger's and the listener's). */
export function appSettings(config: Config) {
  return {
    lineApiBaseUrl: config.lineApiBaseUrl,
    lineApiDataBaseUrl: config.lineApiDataBaseUrl,
    downloadConcurrency: config.downloadConcurrency,
    downloadMbps: config.downloadMbps,
    hubspotClientSecret: config.hubspotClientSecret,
    hubspotClientId: config.hubspotClientId,
    hubspotApiBaseUrl: config.hubspotApiBaseUrl,
    hubspotAppBaseUrl: config.hubspotAppBaseUrl,
    redisUrl: config.redisUrl,
    idleTimeoutMs: config.idleTimeoutMs,
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    answerCacheBytes: config.answerCacheBytes,
    changesKeepDays: config.changesKeepDays,
    auditKeepDays: config.auditKeepDays,
    mcpMaxChars: config.mcpMaxChars,
    webhookAllowPrivate: config.webhookAllowPrivate,
    webhookTimeoutMs: config.webhookTimeoutMs,
    sendTimeoutMs: config.sendTimeoutMs,
    publicUrl: config.publicUrl,
    metricsToken: config.metricsToken,
  };
}

/** /metrics is served when a token protects it, or when the server is reachable from this host only. */
export function metricsEnabled(config: Config): boolean {
  return config.metricsToken !== undefined || ['127.0.0.1', '::1', 'localhost'].includes(config.host);
}

export function publicBaseUrl(config: Config): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${config.port}`;
}
