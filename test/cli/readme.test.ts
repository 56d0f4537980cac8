/**
 * The README cannot drift from the command line: every `./bin/chatlog ...` it shows (code blocks and
 * inline code) is a command of the CLI with options it has and as many arguments as it takes, the
 * table of "The command line" lists every command with every option, and no example is written in a
 * form that does not run from the repository root (`chatlog ...` alone, `npx chatlog`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Command, Option } from 'commander';
import { buildProgram } from '../../src/cli/program.js';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const README = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const program = buildProgram();

interface Code {
  text: string;
  line: number;
  /** `sh`, `ini`... for a fenced block, `inline` for a code span. */
  kind: string;
}

/** Fenced code blocks (backslash continuations joined) and inline code spans, with their line. */
function codeOf(markdown: string): Code[] {
  const found: Code[] = [];
  const lines = markdown.split('\n');
  let fence: string | undefined;
  let kind = '';
  let pending = '';
  lines.forEach((line, index) => {
    const marker = /^\s*(```+)(\w*)/.exec(line);
    if (marker && (fence === undefined || marker[1] === fence)) {
      fence = fence === undefined ? marker[1] : undefined;
      kind = marker[2] || 'text';
      return;
    }
    if (fence !== undefined) {
      if (line.endsWith('\\')) {
        pending += `${line.slice(0, -1)} `;
        return;
      }
      found.push({ text: pending + line, line: index + 1, kind });
      pending = '';
      return;
    }
    for (const span of line.matchAll(/`([^`]+)`/g)) {
      found.push({ text: span[1] ?? '', line: index + 1, kind: 'inline' });
    }
  });
  return found;
}

/** Shell words from `from` to the end of the command (a pipe, redirection, `)`, `;`, `&&` or comment). */
function shellWords(text: string, from: number): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const char = text[i] as string;
    if (char === "'" || char === '"') {
      const end = text.indexOf(char, i + 1);
      word += text.slice(i + 1, end === -1 ? undefined : end);
      inWord = true;
      i = end === -1 ? text.length : end;
      continue;
    }
    if (char === '$' && text[i + 1] === '(') {
      depth += 1;
      word += '$(';
      inWord = true;
      i += 1;
      continue;
    }
    if (depth > 0) {
      if (char === ')') depth -= 1;
      word += char;
      continue;
    }
    // <hubId> is a placeholder, not a redirection.
    const placeholder = char === '<' ? /^<[\w.-]+>/.exec(text.slice(i))?.[0] : undefined;
    if (placeholder) {
      word += placeholder;
      inWord = true;
      i += placeholder.length - 1;
      continue;
    }
    if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    if ('|<>);&#'.includes(char)) break;
    word += char;
    inWord = true;
  }
  if (inWord) words.push(word);
  return words;
}

const takesValue = (option: Option) => option.required || option.optional;

function findOption(command: Command, word: string): Option | undefined {
  const name = word.split('=')[0];
  return command.options.find((option) => option.long === name || option.short === name);
}

/**
 * Why these words are not a command of the CLI, or undefined when they are. A mention in prose
 * (`./bin/chatlog key list`) may name a command without its arguments; `<command>` stands for any.
 */
function problemWith(words: string[], mention = false): string | undefined {
  let command = program;
  let i = 0;
  for (;;) {
    const word = words[i];
    if (word === undefined) return command === program ? 'no command' : undefined;
    if (['--help', '-h'].includes(word)) return undefined;
    if (command === program && ['--version', '-V'].includes(word)) return undefined;
    if (!word.startsWith('-')) break;
    const option = findOption(command, word);
    if (!option) return `unknown option ${word}`;
    i += takesValue(option) && !word.includes('=') ? 2 : 1;
  }
  while (command.commands.length > 0) {
    const name = words[i];
    if (name === '<command>') return undefined;
    const sub = command.commands.find((candidate) => candidate.name() === name);
    if (!sub) return `${command.name()} has no command ${name}`;
    command = sub;
    i += 1;
  }
  let positionals = 0;
  for (; i < words.length; i++) {
    const word = words[i] as string;
    if (word === '--help' || word === '-h') return undefined;
    if (word.startsWith('-') && word !== '-') {
      const option = findOption(command, word);
      if (!option) return `${command.name()} has no option ${word}`;
      if (takesValue(option) && !word.includes('=')) i += 1;
      if (option.variadic) while (words[i + 1] !== undefined && !words[i + 1]?.startsWith('-')) i += 1;
      continue;
    }
    positionals += 1;
  }
  if (mention && i === words.length && positionals === 0) return undefined;
  const declared = command.registeredArguments;
  const required = declared.filter((argument) => argument.required).length;
  const variadic = declared.some((argument) => argument.variadic);
  if (positionals < required || (!variadic && positionals > declared.length)) {
    return `${command.name()} takes ${required} to ${declared.length} arguments, got ${positionals}`;
  }
  return undefined;
}

/** Every leaf command, as its path of names (`key issue`). */
function leaves(command: Command, prefix: string[] = []): Array<{ path: string[]; command: Command }> {
  if (command.commands.length === 0) return [{ path: prefix, command }];
  return command.commands.flatMap((sub) => leaves(sub, [...prefix, sub.name()]));
}

const COMMAND_NAMES = program.commands.map((command) => command.name()).join('|');

test('every ./bin/chatlog command the README shows is a command of the CLI, as written', () => {
  const demoScript = /bin\/chatlog (.*)$/.exec(
    JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.demo,
  )?.[1];
  let checked = 0;
  const problems: string[] = [];
  for (const { text, line, kind } of codeOf(README)) {
    // Shell lines, a systemd unit's ExecStart, and inline code; not a file listing.
    const commands = ['sh', 'ini', 'inline'].includes(kind);
    for (const match of text.matchAll(/(?:^|[\s(=$"'])(?:\.\/|node )?bin\/chatlog\b/g)) {
      const words = shellWords(text, (match.index ?? 0) + match[0].length);
      // The program named alone (in prose) is not a command line.
      if (!commands || words.length === 0) continue;
      const problem = problemWith(words, kind === 'inline');
      if (problem) problems.push(`README line ${line}: ${text} (${problem})`);
      checked += 1;
    }
    // npm run demo -- ARGS reaches `chatlog <the demo script's words> ARGS`.
    for (const match of text.matchAll(/npm run demo -- /g)) {
      assert.ok(demoScript, 'the demo script runs bin/chatlog');
      const words = [...shellWords(demoScript, 0), ...shellWords(text, (match.index ?? 0) + match[0].length)];
      const problem = problemWith(words);
      if (problem) problems.push(`README line ${line}: ${text} (${problem})`);
      checked += 1;
    }
    // Only the forms that run from the repository root as printed.
    const bare = new RegExp(`(^|[^\\w/.-])(npx )?chatlog (${COMMAND_NAMES})\\b`).exec(text);
    if (bare) problems.push(`README line ${line} shows "${bare[0].trim()}": write ./bin/chatlog`);
  }
  assert.deepEqual(problems, []);
  assert.ok(checked >= 20, `only ${checked} commands found in the README`);
});

test('the table of "The command line" lists every command with every option it has', () => {
  const section = README.slice(
    README.indexOf('## The command line'),
    README.indexOf('## Importing messages'),
  );
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| `') && !line.startsWith('| `./bin/chatlog`'))
    .map((line) => line.split(' | ')[0] ?? '');
  const listed = new Map<string, string>();
  for (const cell of rows) {
    const synopsis = /`([^`]+)`/.exec(cell)?.[1] ?? '';
    const name = synopsis
      .split(' ')
      .filter((word) => /^[a-z]+$/.test(word))
      .slice(0, 3);
    const leaf = leaves(program).find(({ path }) => name.slice(0, path.length).join(' ') === path.join(' '));
    assert.ok(leaf, `the table lists "${synopsis}", which is not a command`);
    const key = leaf.path.join(' ');
    listed.set(key, cell);
    const mentioned = new Set(cell.match(/--[a-z][\w-]*/g) ?? []);
    const options = leaf.command.options.map((option) => option.long ?? '');
    for (const option of mentioned) assert.ok(options.includes(option), `${key} has no option ${option}`);
    for (const option of options)
      assert.ok(mentioned.has(option), `the table's ${key} does not show ${option}`);
    // <...> after an option is its value, not an argument.
    const argumentsShown = (synopsis.replace(/--[\w-]+ <[^>]+>/g, '').match(/<[^>]+>/g) ?? []).length;
    assert.equal(argumentsShown, leaf.command.registeredArguments.length, `arguments of ${key}`);
  }
  for (const { path } of leaves(program))
    assert.ok(listed.has(path.join(' ')), `the table lacks ${path.join(' ')}`);
});

test('the built CLI answers --help for every command the README shows, and --version', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [path.join(ROOT, 'bin', 'chatlog'), ...args], { encoding: 'utf8' });
  for (const { path: names } of leaves(program)) {
    const help = run([...names, '--help']);
    assert.equal(help.status, 0, `${names.join(' ')} --help: ${help.stderr}`);
    assert.match(help.stdout, new RegExp(`^Usage: chatlog ${names.join(' ')}`));
  }
  assert.match(run(['--version']).stdout, /^\d+\.\d+\.\d+/);
});

test('the checker itself refuses what is not a command', () => {
  const words = (line: string) => shellWords(line, 0);
  assert.equal(problemWith(words('key revoke key_AbC123def456')), undefined);
  assert.equal(problemWith(words('hub add 1 --line-channel-secret - < secret.txt')), undefined);
  assert.equal(problemWith(words('backup /backups/chatlog-$(date +%F).db')), undefined);
  assert.equal(problemWith(words('account add a@example.com --hub 1 --hub 2 --password-stdin')), undefined);
  assert.match(problemWith(words('key revoke')) ?? '', /takes 1 to 1 arguments, got 0/);
  assert.match(problemWith(words('export 1 --form 2019-11-01')) ?? '', /has no option --form/);
  assert.match(problemWith(words('keys list 1')) ?? '', /has no command keys/);
  assert.match(problemWith(words('import 1 a.json b.json')) ?? '', /got 3/);
  assert.equal(problemWith(words('key list'), true), undefined, 'a mention in prose');
  assert.deepEqual(words(`KEY=x; echo "$(./x)" | y`), ['KEY=x']);
});
