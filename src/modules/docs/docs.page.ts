/**
 * The API reference page (/docs), rendered on the server from the OpenAPI document, so the page,
 * the document and the checks the server runs cannot disagree. Plain HTML and the account screen's
 * stylesheet: nothing from a CDN, no script. In English or Japanese, as the browser asks: the
 * document's summaries and descriptions come in Japanese from docs.ja.ts; code, names and values
 * stay as the API spells them.
 */
import { escapeHtml } from '../../lib/html.js';
import type { Language } from '../account/account.i18n.js';
import { DOCS_JA } from './docs.ja.js';
import { isObject, type JsonObject } from './docs.openapi.js';

const WORDS = {
  en: {
    title: 'API reference',
    pages: 'Pages',
    keys: 'API keys',
    madeFrom: (openapi: string, client: string) =>
      `This page is made from the OpenAPI 3.1 document at ${openapi}, which is made from the schemas the server checks requests with. A typed TypeScript client is in the repository (${client}).`,
    parameters: 'Parameters',
    parameterColumns: ['name', 'in', 'required', 'type', 'meaning'],
    answers: 'Answers',
    answerColumns: ['status', 'meaning', 'error codes', 'headers'],
    fieldColumns: ['field', 'type', 'required', 'meaning'],
    fieldsOf: (name: string) => `Fields of ${name}`,
    shapes: 'Shapes',
    yes: 'yes',
    no: 'no',
    in: { query: 'query', path: 'path', header: 'header', cookie: 'cookie' } as Record<string, string>,
    body: (type: string) => `Body (JSON): ${type}.`,
    exampleAnswer: 'Example answer:',
    checkOrder: 'The checks run in this order; the first that fails answers:',
    sentence: (summary: string) => `${summary}.`,
    types: {} as Record<string, string>,
    or: ' or ',
    arrayOf: (items: string) => `array of ${items}`,
    oneOf: (values: string) => `one of ${values}`,
    notEmpty: 'not empty',
    atMostCharacters: (n: string) => `at most ${n} characters`,
    atMostItems: (n: string) => `at most ${n} items`,
    byDefault: (value: string) => `default ${value}`,
    detailsJoin: ', ',
    matching: (pattern: string) => `, matching ${pattern}`,
    text: (english: string) => english,
    mcpIntro: (header: string, stdio: string) =>
      `An assistant (Claude, ChatGPT, an IDE agent) reads one hub through MCP: Streamable HTTP here, with ${header} of a key of scope read, or stdio with ${stdio}. Every tool is read-only; each result is at most CHATLOG_MCP_MAX_CHARS characters, and a longer page gives a cursor.`,
    mcpArguments: (tool: string) => `Arguments of ${tool}`,
    mcpColumns: ['argument', 'required', 'type', 'meaning'],
    mcpAnswers: (fields: string) => `Answers (structuredContent, and the same JSON as text): ${fields}.`,
  },
  ja: {
    title: 'API リファレンス',
    pages: 'ページ',
    keys: 'API キー',
    madeFrom: (openapi: string, client: string) =>
      `このページは ${openapi} の OpenAPI 3.1 ドキュメントから作られます。そのドキュメントは、サーバーがリクエストを確かめるスキーマから作られます。型付きの TypeScript クライアントがリポジトリにあります(${client})。`,
    parameters: 'パラメーター',
    parameterColumns: ['名前', '場所', '必須', '型', '説明'],
    answers: '応答',
    answerColumns: ['ステータス', '説明', 'エラーコード', 'ヘッダー'],
    fieldColumns: ['フィールド', '型', '必須', '説明'],
    fieldsOf: (name: string) => `${name} のフィールド`,
    shapes: 'データの形',
    yes: 'はい',
    no: 'いいえ',
    in: { query: 'クエリ', path: 'パス', header: 'ヘッダー', cookie: 'Cookie' } as Record<string, string>,
    body: (type: string) => `本文 (JSON): ${type}。`,
    exampleAnswer: '応答の例:',
    checkOrder: 'チェックはこの順に行われ、最初に通らなかったものが応答になります:',
    sentence: (summary: string) => (/[。.)」]$/.test(summary) ? summary : `${summary}。`),
    types: {
      string: '文字列',
      integer: '整数',
      number: '数値',
      boolean: '真偽値',
      object: 'オブジェクト',
      array: '配列',
      any: '任意',
    } as Record<string, string>,
    or: ' または ',
    arrayOf: (items: string) => `${items} の配列`,
    oneOf: (values: string) => `${values} のいずれか`,
    notEmpty: '空でない',
    atMostCharacters: (n: string) => `${n} 文字まで`,
    atMostItems: (n: string) => `${n} 個まで`,
    byDefault: (value: string) => `既定値 ${value}`,
    detailsJoin: '、',
    matching: (pattern: string) => `、パターン ${pattern}`,
    /** The document's own words in Japanese; a text not translated yet stays in English. */
    text: (english: string) => DOCS_JA[english] ?? english,
    mcpIntro: (header: string, stdio: string) =>
      `アシスタント(Claude、ChatGPT、IDE のエージェント)は MCP でひとつのハブを読みます: ここでは Streamable HTTP で、スコープ read のキーを ${header} に入れて。または ${stdio} で stdio を使います。ツールはすべて読み取り専用です。結果は CHATLOG_MCP_MAX_CHARS 文字までで、それより長いページには cursor が付きます。`,
    mcpArguments: (tool: string) => `${tool} の引数`,
    mcpColumns: ['引数', '必須', '型', '説明'],
    mcpAnswers: (fields: string) => `応答(structuredContent と、同じ JSON のテキスト): ${fields}。`,
  },
};
type Words = (typeof WORDS)[Language];

const objectAt = (value: unknown, key: string): JsonObject => {
  const found = isObject(value) ? value[key] : undefined;
  return isObject(found) ? found : {};
};
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const code = (value: string) => `<code>${escapeHtml(value)}</code>`;

/** 100000 → "100,000" (toLocaleString would load ICU's data on first use). */
const thousands = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ',');

/** A schema as a short phrase: "string (pattern …)", "array of Contact", "Error". */
function describeType(schema: unknown, w: Words): string {
  if (!isObject(schema)) return '';
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop() ?? '';
    return `<a href="#schema-${escapeHtml(name)}">${escapeHtml(name)}</a>`;
  }
  const named = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter(
    (t): t is string => typeof t === 'string' && t !== 'null',
  );
  if (named.length === 1 && named[0] === 'array') return w.arrayOf(describeType(schema.items, w));
  if (Array.isArray(schema.enum)) return w.oneOf(schema.enum.map((v) => code(String(v))).join(' '));
  const types = named.map((t) => w.types[t] ?? t).join(w.or);
  const details = [
    typeof schema.format === 'string' ? schema.format : undefined,
    schema.minLength === 1 ? w.notEmpty : undefined,
    typeof schema.maxLength === 'number' ? w.atMostCharacters(thousands(schema.maxLength)) : undefined,
    typeof schema.maxItems === 'number' ? w.atMostItems(thousands(schema.maxItems)) : undefined,
    schema.default !== undefined ? w.byDefault(JSON.stringify(schema.default)) : undefined,
  ].filter((d): d is string => d !== undefined);
  const pattern = typeof schema.pattern === 'string' ? w.matching(code(schema.pattern)) : '';
  return `${escapeHtml(types || (w.types.any ?? 'any'))}${details.length ? ` (${escapeHtml(details.join(w.detailsJoin))})` : ''}${pattern}`;
}

/** A table; on a phone each row is a card, each cell under its column's name (`data-label`). */
function table(caption: string, head: string[], rows: string[][]): string {
  const th = head.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  const body = rows
    .map(
      ([first, ...rest]) =>
        `<tr><th scope="row">${first}</th>${rest.map((c, i) => `<td data-label="${escapeHtml(head[i + 1] ?? '')}">${c}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<div class="table-wrap"><table class="fields">\n<caption>${escapeHtml(caption)}</caption>\n<thead><tr>${th}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table></div>`;
}

function codesOf(answer: unknown): string[] {
  const schema = objectAt(objectAt(objectAt(answer, 'content'), 'application/json'), 'schema');
  const codes = objectAt(
    objectAt(objectAt(objectAt(schema, 'properties'), 'error'), 'properties'),
    'code',
  ).enum;
  return Array.isArray(codes) ? codes.map(String) : [];
}

/** A curl line for the operation, with the parameters' examples (a key is never an example). */
function curlExample(method: string, path: string, parameters: JsonObject[], baseUrl: string): string {
  const exampleOf = (p: JsonObject) => {
    const examples = objectAt(p, 'schema').examples;
    return Array.isArray(examples) ? String(examples[0]) : '…';
  };
  let url = path;
  const query: string[] = [];
  for (const p of parameters) {
    if (p.in === 'path') url = url.replace(`{${text(p.name)}}`, exampleOf(p));
    if (p.in === 'query' && (p.required === true || Array.isArray(objectAt(p, 'schema').examples)))
      query.push(`${text(p.name)}=${exampleOf(p)}`);
  }
  const line = `${baseUrl}${url}${query.length ? `?${query.join('&')}` : ''}`;
  return `curl${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} '${line}'`;
}

function operationSection(method: string, path: string, op: JsonObject, baseUrl: string, w: Words): string {
  const parameters = (Array.isArray(op.parameters) ? op.parameters : []).filter(isObject);
  const parts = [
    `<h2 id="${escapeHtml(text(op.operationId))}">${code(`${method.toUpperCase()} ${path}`)}</h2>`,
    `<p>${escapeHtml(w.sentence(w.text(text(op.summary))))}</p>`,
  ];
  if (op.description) parts.push(`<p>${escapeHtml(w.text(text(op.description)))}</p>`);
  // HEAD is its GET without the body: the GET's section above says the rest.
  if (method === 'head') return parts.join('\n');
  if (parameters.length) {
    parts.push(
      table(
        w.parameters,
        w.parameterColumns,
        parameters.map((p) => [
          code(text(p.name)),
          escapeHtml(w.in[text(p.in)] ?? text(p.in)),
          p.required ? w.yes : w.no,
          describeType(p.schema, w),
          escapeHtml(w.text(text(p.description))),
        ]),
      ),
    );
  }
  const body = objectAt(objectAt(objectAt(op.requestBody, 'content'), 'application/json'), 'schema');
  if (Object.keys(body).length) parts.push(`<p>${w.body(describeType(body, w))}</p>`);
  if (method === 'get')
    parts.push(`<pre><code>${escapeHtml(curlExample(method, path, parameters, baseUrl))}</code></pre>`);
  const responses = objectAt(op, 'responses');
  const example = objectAt(objectAt(objectAt(responses, '200'), 'content'), 'application/json').example;
  if (example !== undefined)
    parts.push(
      `<p>${w.exampleAnswer}</p>\n<pre><code>${escapeHtml(JSON.stringify(example, null, 1))}</code></pre>`,
    );
  parts.push(
    table(
      w.answers,
      w.answerColumns,
      Object.entries(responses).map(([status, answer]) => [
        escapeHtml(status),
        escapeHtml(w.text(text(isObject(answer) ? answer.description : ''))),
        codesOf(answer).map(code).join(' '),
        Object.keys(objectAt(answer, 'headers')).map(code).join(' '),
      ]),
    ),
  );
  if (Array.isArray(op['x-check-order'])) {
    parts.push(
      `<p>${w.checkOrder}</p>\n<ol class="checks">${op['x-check-order']
        .map((c) => `<li>${code(String(c))}</li>`)
        .join('')}</ol>`,
    );
  }
  return parts.join('\n');
}

/** The fields of an object schema, nested objects flattened: error, error.code, error.message. */
function fieldRows(schema: JsonObject, w: Words, prefix = ''): string[][] {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(objectAt(schema, 'properties')).flatMap(([field, property]) => {
    const row = [
      code(prefix + field),
      describeType(property, w),
      required.has(field) ? w.yes : w.no,
      escapeHtml(w.text(text(isObject(property) ? property.description : ''))),
    ];
    const nested =
      isObject(property) && isObject(property.properties) ? fieldRows(property, w, `${prefix}${field}.`) : [];
    return [row, ...nested];
  });
}

function schemaSection(name: string, schema: JsonObject, w: Words): string {
  return `<h3 id="schema-${escapeHtml(name)}">${escapeHtml(name)}</h3>\n${table(
    w.fieldsOf(name),
    w.fieldColumns,
    fieldRows(schema, w),
  )}`;
}

/** An MCP tool as /docs lists it (mcp.server.ts mcpToolList), and its words in Japanese. */
export interface DocumentedTools {
  tools: Array<{ name: string; description: string; input: unknown; output: unknown }>;
  ja: Readonly<Record<string, string>>;
}

/** The MCP tools (CONTRACT §15): each one's arguments and what it answers. */
function toolsSection(tools: DocumentedTools, baseUrl: string, w: Words, language: Language): string {
  const say = (english: string) => (language === 'ja' ? (tools.ja[english] ?? english) : english);
  const parts = [
    `<h2 id="mcp">${code(`${baseUrl}/mcp`)}</h2>`,
    `<p>${w.mcpIntro(code('Authorization: Bearer <key>'), code('chatlog mcp'))}</p>`,
  ];
  for (const tool of tools.tools) {
    const input = isObject(tool.input) ? tool.input : {};
    const required = new Set(Array.isArray(input.required) ? input.required : []);
    const rows = Object.entries(objectAt(input, 'properties')).map(([name, schema]) => [
      code(name),
      required.has(name) ? w.yes : w.no,
      describeType(schema, w),
      escapeHtml(say(text(isObject(schema) ? schema.description : ''))),
    ]);
    parts.push(
      `<h3 id="mcp-${escapeHtml(tool.name)}">${code(tool.name)}</h3>`,
      `<p>${escapeHtml(say(tool.description))}</p>`,
    );
    if (rows.length) parts.push(table(w.mcpArguments(tool.name), w.mcpColumns, rows));
    const output = isObject(tool.output) ? tool.output : {};
    parts.push(`<p>${w.mcpAnswers(Object.keys(objectAt(output, 'properties')).map(code).join(', '))}</p>`);
  }
  return parts.join('\n');
}

/**
 * The whole page, in `language`. baseUrl is where clients reach the API (CHATLOG_PUBLIC_URL), for
 * the examples; `tools`, the MCP server's.
 */
export function docsPage(
  document: JsonObject,
  baseUrl: string,
  language: Language = 'en',
  tools?: DocumentedTools,
): string {
  const w: Words = WORDS[language];
  const sections: string[] = [];
  for (const [path, operations] of Object.entries(objectAt(document, 'paths'))) {
    for (const [method, op] of Object.entries(isObject(operations) ? operations : {})) {
      if (isObject(op)) sections.push(operationSection(method, path, op, baseUrl, w));
    }
  }
  const schemas = Object.entries(objectAt(objectAt(document, 'components'), 'schemas'))
    .filter((entry): entry is [string, JsonObject] => isObject(entry[1]))
    .map(([name, schema]) => schemaSection(name, schema, w));
  return `<!doctype html>
<html lang="${language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>chatlog — ${w.title}</title>
<link rel="stylesheet" href="/account/assets/account.css">
</head>
<body>
<header class="top"><span class="brand">chatlog</span><nav aria-label="${w.pages}"><a href="/account">${w.keys}</a></nav></header>
<main id="main">
<h1>${w.title}</h1>
<p>${escapeHtml(w.text(text(objectAt(document, 'info').description)))}</p>
<p>${w.madeFrom('<a href="/openapi.json">/openapi.json</a>', code('clients/typescript'))}</p>
${sections.join('\n')}
${tools ? toolsSection(tools, baseUrl, w, language) : ''}
<h2 id="schemas">${w.shapes}</h2>
${schemas.join('\n')}
</main>
</body>
</html>
`;
}
