/**
 * The command-line options of every benchmark: `--name value` or `--name=value`, flags, `--help`;
 * an unknown option or a value out of range is refused with the usage, not silently ignored.
 */
import { parseArgs } from 'node:util';

export interface BenchArgs {
  flag(name: string): boolean;
  string(name: string): string | undefined;
  /** A number, `_` and `,` allowed as separators (`--messages 1_000_000`). */
  number(name: string, fallback: number, range?: { min?: number; max?: number; whole?: boolean }): number;
  /** One of `choices`, or `fallback` when the option is absent. */
  choice<T extends string>(name: string, choices: readonly T[], fallback: T): T;
}

/** Reads process.argv (or `argv`); prints `usage` and exits on --help. */
export function readArgs(
  usage: string,
  names: { values?: readonly string[]; flags?: readonly string[] },
  argv: readonly string[] = process.argv.slice(2),
): BenchArgs {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const name of names.values ?? []) options[name] = { type: 'string' };
  for (const name of names.flags ?? []) options[name] = { type: 'boolean' };
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new Error(`${(error as Error).message} (usage: ${usage})`);
  }
  if (values.help === true) {
    process.stdout.write(`usage: ${usage}\n`);
    process.exit(0);
  }
  const string = (name: string) => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  return {
    flag: (name) => values[name] === true,
    string,
    number(name, fallback, range = {}) {
      const text = string(name);
      if (text === undefined) return fallback;
      const value = Number(text.replace(/[_,]/g, ''));
      const min = range.min ?? Number.NEGATIVE_INFINITY;
      const max = range.max ?? Number.POSITIVE_INFINITY;
      if (
        text.trim() === '' ||
        !Number.isFinite(value) ||
        value < min ||
        value > max ||
        (range.whole && !Number.isInteger(value))
      ) {
        const bounds = [
          range.min === undefined ? '' : ` from ${range.min.toLocaleString('en-US')}`,
          range.max === undefined ? '' : ` to ${range.max.toLocaleString('en-US')}`,
        ].join('');
        throw new Error(`--${name} must be a ${range.whole ? 'whole ' : ''}number${bounds}, got "${text}"`);
      }
      return value;
    },
    choice(name, choices, fallback) {
      const text = string(name);
      if (text === undefined) return fallback;
      const found = choices.find((choice) => choice === text);
      if (found === undefined) throw new Error(`--${name} must be ${choices.join(' or ')}, got "${text}"`);
      return found;
    },
  };
}
