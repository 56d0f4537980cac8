/**
 * Where a JSON text first goes wrong, as a line and column a person can find in an editor.
 * JSON.parse says only "Unexpected token" on some Node versions, and a character offset on others;
 * this scanner is run only once JSON.parse has refused a text, so a good file costs nothing.
 */

export interface JsonProblem {
  /** 1-based line (lines end at \n). */
  line: number;
  /** 1-based column, in characters (code points), as editors count them. */
  column: number;
  /** The offset (UTF-16 code units) of the first character that no JSON text could have there. */
  offset: number;
  /** What is wrong there, in words. */
  what: string;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
const HEX = /^[0-9A-Fa-f]$/;
const DIGIT = /^[0-9]$/;

/** The character at an offset, as a message names it. */
function describe(text: string, offset: number): string {
  const code = text.codePointAt(offset);
  if (code === undefined) return 'the end of the file';
  const char = String.fromCodePoint(code);
  if (code < 0x20 || code === 0x7f)
    return `the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  return `'${char}'`;
}

/** The line and column of an offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  // Columns count characters, so an emoji (two UTF-16 units) before the problem counts once.
  return { line, column: [...text.slice(lineStart, offset)].length + 1 };
}

class Refusal {
  constructor(
    readonly offset: number,
    readonly what: string,
  ) {}
}

/**
 * The first problem of a text that is not JSON (RFC 8259, as JSON.parse reads it), or undefined
 * when it is JSON. Iterative, so a deeply nested text cannot overflow the stack.
 */
export function findJsonProblem(text: string): JsonProblem | undefined {
  try {
    scan(text);
    return undefined;
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return { ...lineAndColumn(text, error.offset), offset: error.offset, what: error.what };
  }
}

function scan(text: string): void {
  let i = 0;
  const containers: Array<'array' | 'object'> = [];
  const skipWhitespace = () => {
    while (i < text.length && WHITESPACE.has(text[i] as string)) i += 1;
  };
  const refuse = (what: string): never => {
    throw new Refusal(i, what);
  };
  const unexpected = (expected: string): never => refuse(`expected ${expected}, found ${describe(text, i)}`);

  const string = () => {
    i += 1; // the opening quote
    for (;;) {
      const char = text[i];
      if (char === undefined) refuse('a string is not closed (a " is missing)');
      if (char === '"') {
        i += 1;
        return;
      }
      if ((char as string) < ' ') {
        refuse(
          char === '\n' || char === '\r'
            ? 'a line break inside a string (write it as \\n)'
            : `${describe(text, i)} inside a string (write it as a \\u escape)`,
        );
      }
      if (char === '\\') {
        i += 1;
        const escaped = text[i];
        if (escaped === 'u') {
          for (let k = 1; k <= 4; k++) {
            i += 1;
            if (!HEX.test(text[i] ?? '')) unexpected('4 hex digits after \\u');
          }
        } else if (escaped === undefined || !ESCAPES.has(escaped)) {
          unexpected('one of " \\ / b f n r t u after a backslash');
        }
      }
      i += 1;
    }
  };

  const digits = (what: string) => {
    if (!DIGIT.test(text[i] ?? '')) unexpected(what);
    while (DIGIT.test(text[i] ?? '')) i += 1;
  };

  const number = () => {
    if (text[i] === '-') i += 1;
    if (text[i] === '0') i += 1;
    else digits('a digit');
    if (text[i] === '.') {
      i += 1;
      digits('a digit after the decimal point');
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i += 1;
      if (text[i] === '+' || text[i] === '-') i += 1;
      digits('a digit in the exponent');
    }
  };

  const literal = (word: string) => {
    for (const char of word) {
      if (text[i] !== char) unexpected(`${word}`);
      i += 1;
    }
  };

  /** A value starts here: scalars are read whole, containers are opened. True: a value ended. */
  const value = (): boolean => {
    skipWhitespace();
    const char = text[i];
    if (char === '{') {
      i += 1;
      skipWhitespace();
      if (text[i] === '}') {
        i += 1;
        return true;
      }
      containers.push('object');
      member();
      return false;
    }
    if (char === '[') {
      i += 1;
      skipWhitespace();
      if (text[i] === ']') {
        i += 1;
        return true;
      }
      containers.push('array');
      return false;
    }
    if (char === '"') string();
    else if (char === '-' || DIGIT.test(char ?? '')) number();
    else if (char === 't') literal('true');
    else if (char === 'f') literal('false');
    else if (char === 'n') literal('null');
    else unexpected('a value');
    return true;
  };

  /** A property name and its colon; the value follows. */
  const member = () => {
    skipWhitespace();
    if (text[i] !== '"') unexpected('a property name in double quotes');
    string();
    skipWhitespace();
    if (text[i] !== ':') unexpected("':' after a property name");
    i += 1;
  };

  let ended = value();
  for (;;) {
    if (!ended) {
      ended = value();
      continue;
    }
    skipWhitespace();
    const container = containers.at(-1);
    if (container === undefined) {
      if (i < text.length) unexpected('nothing more after the JSON value');
      return;
    }
    const close = container === 'array' ? ']' : '}';
    if (text[i] === ',') {
      i += 1;
      if (container === 'object') member();
      ended = false;
    } else if (text[i] === close) {
      i += 1;
      containers.pop();
    } else {
      unexpected(`',' or '${close}' after ${container === 'array' ? 'an element' : 'a property value'}`);
    }
  }
}
