/**
 * The README's table of settings, made from src/config.settings.ts, so that a setting cannot be added
 * without its line in the README (test/lib/settings.test.ts compares the two).
 *
 *   node --import tsx scripts/settings-table.ts          print the table
 *   node --import tsx scripts/settings-table.ts --write  put it into README.md, between its markers
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SETTINGS, shownDefault } from '../src/config.settings.js';

export const README = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
export const BEGIN =
  '<!-- The settings table is made from src/config.settings.ts: node --import tsx scripts/settings-table.ts --write -->';
export const END = '<!-- end of the settings table -->';

/** The table in Markdown: variable, default, meaning (and the flag that overrides it). */
export function settingsTable(): string {
  const rows = Object.values(SETTINGS).map((setting) => {
    const value = setting.default === undefined ? shownDefault(setting) : `\`${setting.default}\``;
    const flag = setting.flag ? `; \`${setting.flag.flags.split(' ')[0]}\` overrides` : '';
    return `| \`${setting.env}\` | ${value} | ${setting.doc.replaceAll('|', '\\|')}${flag} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The README with the table between its markers replaced by `table`. */
export function withSettingsTable(readme: string, table = settingsTable()): string {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin === -1 || end < begin) throw new Error(`README.md lacks the markers ${BEGIN} ... ${END}`);
  return `${readme.slice(0, begin + BEGIN.length)}\n\n${table}\n\n${readme.slice(end)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) {
    fs.writeFileSync(README, withSettingsTable(fs.readFileSync(README, 'utf8')));
  } else {
    process.stdout.write(`${settingsTable()}\n`);
  }
}
