/**
 * The API reference page (/docs), rendered on the server from the OpenAPI document, so the page,
 * the document and the checks the server runs cannot disagree. Plain HTML and the account screen's
 * stylesheet: nothing from a CDN, no script.
 */
import { escapeHtml } from '../../lib/html.js';
import { isObject, type JsonObject } from './docs.openapi.js';

const objectAt = (value: unknown, key: string): JsonObject => {
  const found = isObject(value) ? value[key] : undefined;
  return isObject(found) ? found : {};
};
const text = (value: unknown): string => (typeof value === 'string' ? value : '');
const code = (value: string) => `<code>${escapeHtml(value)}</code>`;

/** 100000 → "100,000" (toLocaleString would load ICU's data on first use). */
const thousands = (n: number) => String(n).replace(/\B(?=(\d{3})+$)/g, ',');

/** A schema as a short phrase: "string (pattern …)", "array of Contact", "Error". */
function describeType(schema: unknown): string {
  if (!isObject(schema)) return '';
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.split('/').pop() ?? '';
    return `<a href="#schema-${escapeHtml(name)}">${escapeHtml(name)}</a>`;
  }
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type])
    .filter((t): t is string => typeof t === 'string' && t !== 'null')
    .join(' or ');
  if (types === 'array') return `array of ${describeType(schema.items)}`;
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((v) => code(String(v))).join(' ')}`;
  const details = [
    typeof schema.format === 'string' ? schema.format : undefined,
    schema.minLength === 1 ? 'not empty' : undefined,
    typeof schema.maxLength === 'number' ? `at most ${thousands(schema.maxLength)} characters` : undefined,
    typeof schema.maxItems === 'number' ? `at most ${thousands(schema.maxItems)} items` : undefined,
    schema.default !== undefined ? `default ${JSON.stringify(schema.default)}` : undefined,
  ].filter((d): d is string => d !== undefined);
  const pattern = typeof schema.pattern === 'string' ? `, matching ${code(schema.pattern)}` : '';
  return `${escapeHtml(types || 'any')}${details.length ? ` (${escapeHtml(details.join(', '))})` : ''}${pattern}`;
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

function operationSection(method: string, path: string, op: JsonObject, baseUrl: string): string {
  const parameters = (Array.isArray(op.parameters) ? op.parameters : []).filter(isObject);
  const parts = [
    `<h2 id="${escapeHtml(text(op.operationId))}">${code(`${method.toUpperCase()} ${path}`)}</h2>`,
    `<p>${escapeHtml(text(op.summary))}.</p>`,
  ];
  if (op.description) parts.push(`<p>${escapeHtml(text(op.description))}</p>`);
  // HEAD is its GET without the body: the GET's section above says the rest.
  if (method === 'head') return parts.join('\n');
  if (parameters.length) {
    parts.push(
      table(
        'Parameters',
        ['name', 'in', 'required', 'type', 'meaning'],
        parameters.map((p) => [
          code(text(p.name)),
          escapeHtml(text(p.in)),
          p.required ? 'yes' : 'no',
          describeType(p.schema),
          escapeHtml(text(p.description)),
        ]),
      ),
    );
  }
  const body = objectAt(objectAt(objectAt(op.requestBody, 'content'), 'application/json'), 'schema');
  if (Object.keys(body).length) parts.push(`<p>Body (JSON): ${describeType(body)}.</p>`);
  if (method === 'get')
    parts.push(`<pre><code>${escapeHtml(curlExample(method, path, parameters, baseUrl))}</code></pre>`);
  const responses = objectAt(op, 'responses');
  const example = objectAt(objectAt(objectAt(responses, '200'), 'content'), 'application/json').example;
  if (example !== undefined)
    parts.push(
      `<p>Example answer:</p>\n<pre><code>${escapeHtml(JSON.stringify(example, null, 1))}</code></pre>`,
    );
  parts.push(
    table(
      'Answers',
      ['status', 'meaning', 'error codes', 'headers'],
      Object.entries(responses).map(([status, answer]) => [
        escapeHtml(status),
        escapeHtml(text(isObject(answer) ? answer.description : '')),
        codesOf(answer).map(code).join(' '),
        Object.keys(objectAt(answer, 'headers')).map(code).join(' '),
      ]),
    ),
  );
  if (Array.isArray(op['x-check-order'])) {
    parts.push(
      `<p>The checks run in this order; the first that fails answers:</p>\n<ol class="checks">${op[
        'x-check-order'
      ]
        .map((c) => `<li>${code(String(c))}</li>`)
        .join('')}</ol>`,
    );
  }
  return parts.join('\n');
}

/** The fields of an object schema, nested objects flattened: error, error.code, error.message. */
function fieldRows(schema: JsonObject, prefix = ''): string[][] {
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(objectAt(schema, 'properties')).flatMap(([field, property]) => {
    const row = [
      code(prefix + field),
      describeType(property),
      required.has(field) ? 'yes' : 'no',
      escapeHtml(text(isObject(property) ? property.description : '')),
    ];
    const nested =
      isObject(property) && isObject(property.properties) ? fieldRows(property, `${prefix}${field}.`) : [];
    return [row, ...nested];
  });
}

function schemaSection(name: string, schema: JsonObject): string {
  return `<h3 id="schema-${escapeHtml(name)}">${escapeHtml(name)}</h3>\n${table(
    `Fields of ${name}`,
    ['field', 'type', 'required', 'meaning'],
    fieldRows(schema),
  )}`;
}

/** The whole page. baseUrl is where clients reach the API (CHATLOG_PUBLIC_URL), for the examples. */
export function docsPage(document: JsonObject, baseUrl: string): string {
  const sections: string[] = [];
  for (const [path, operations] of Object.entries(objectAt(document, 'paths'))) {
    for (const [method, op] of Object.entries(isObject(operations) ? operations : {})) {
      if (isObject(op)) sections.push(operationSection(method, path, op, baseUrl));
    }
  }
  const schemas = Object.entries(objectAt(objectAt(document, 'components'), 'schemas'))
    .filter((entry): entry is [string, JsonObject] => isObject(entry[1]))
    .map(([name, schema]) => schemaSection(name, schema));
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>chatlog — API reference</title>
<link rel="stylesheet" href="/account/assets/account.css">
</head>
<body>
<header class="top"><span class="brand">chatlog</span><nav aria-label="Pages"><a href="/account">API keys</a></nav></header>
<main id="main">
<h1>API reference</h1>
<p>${escapeHtml(text(objectAt(document, 'info').description))}</p>
<p>This page is made from the OpenAPI 3.1 document at <a href="/openapi.json">/openapi.json</a>, which is made from the schemas the server checks requests with. A typed TypeScript client is in the repository (${code('clients/typescript')}).</p>
${sections.join('\n')}
<h2 id="schemas">Shapes</h2>
${schemas.join('\n')}
</main>
</body>
</html>
`;
}
