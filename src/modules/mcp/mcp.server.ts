/**
 * chatlog as an MCP server (CONTRACT §15), over the official TypeScript SDK: one McpServer per
 * caller with the five tools of mcp.tools.ts, each read-only, with its input and output schemas.
 * Each call is one audit record (`mcp:<tool>`, the messages it returned). A tool's refusal of an
 * argument is a result with `isError: true` and the sentence; anything else that fails is the
 * SDK's internal error, with no stack trace, SQL or key, and a log line here.
 */
import { createRequire } from 'node:module';
import type { McpServer } from '@modelcontextprotocol/server';
import type { AuditRecord } from '../../store/store.js';
import {
  getChanges,
  getConversation,
  getHub,
  listContacts,
  type McpCaller,
  type McpToolDeps,
  searchMessages,
  type ToolAnswer,
  ToolError,
} from './mcp.tools.js';

export const MCP_SERVER_NAME = 'chatlog';

type Sdk = typeof import('@modelcontextprotocol/server');
let sdk: Sdk | undefined;

/**
 * The official SDK, loaded at the first MCP request rather than at start: it takes about 80 ms to
 * load, which every start would add to its first answer. Required (it ships CommonJS too), so that it
 * loads the same bundled and unbundled (scripts/bundle.ts).
 */
export function mcpSdk(): Sdk {
  sdk ??= createRequire(import.meta.url)('@modelcontextprotocol/server') as Sdk;
  return sdk;
}

export interface McpServerDeps extends McpToolDeps {
  version: string;
  clock: () => number;
  /** Writes the call's audit record (AuditRecorder.record). */
  audit(record: AuditRecord): void;
  /** Reports a tool's failure that is not the caller's (a log line). */
  onFailure(tool: string, error: unknown): void;
}

const DAY = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}$',
  description: "a day as YYYY-MM-DD, in the hub's time zone",
};
const CURSOR = {
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  description: 'the cursor of the previous result, to read on',
};
const limit = (max: number, fallback: number) => ({
  type: 'integer',
  minimum: 1,
  maximum: max,
  default: fallback,
  description: `how many at most (1-${max}, default ${fallback})`,
});
const PAGE = { cursor: { type: ['string', 'null'] }, hasMore: { type: 'boolean' } };
const MESSAGE = {
  type: 'object',
  properties: {
    sender: { type: 'string' },
    msg: { type: 'string' },
    contentType: { type: 'string' },
    createdAt: { type: 'string' },
    truncated: { type: 'boolean' },
  },
  required: ['sender', 'msg', 'contentType', 'createdAt'],
};

/** The tools: name, what an assistant is told, the input and output schemas, and what runs. */
const TOOLS: Array<{
  name: string;
  title: string;
  description: string;
  input: Record<string, unknown>;
  output: Record<string, unknown>;
  run: (deps: McpToolDeps, caller: McpCaller, args: never) => Promise<ToolAnswer>;
}> = [
  {
    name: 'get_hub',
    title: 'The hub',
    description:
      'The hub (HubSpot portal) this key reads: its id, time zone (days are read in it), how many contacts and messages it holds, and when its first and last message was.',
    input: { type: 'object', properties: {}, additionalProperties: false },
    output: {
      type: 'object',
      properties: {
        hubId: { type: 'string' },
        timeZone: { type: 'string' },
        contacts: { type: 'integer' },
        messages: { type: 'integer' },
        firstMessageAt: { type: ['string', 'null'] },
        lastMessageAt: { type: ['string', 'null'] },
      },
      required: ['hubId', 'timeZone', 'contacts', 'messages', 'firstMessageAt', 'lastMessageAt'],
    },
    run: (deps, caller) => getHub(deps, caller),
  },
  {
    name: 'list_contacts',
    title: 'LINE friends',
    description:
      "The hub's LINE friends (contacts), the most recent conversation first: lineId (for get_conversation), HubSpot contact id (vid), name, how many messages, the last one's time. `query` keeps those whose name, lineId or vid contains it.",
    input: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 200, description: 'part of a name, lineId or vid' },
        cursor: CURSOR,
        limit: limit(100, 50),
      },
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: {
        contacts: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              lineId: { type: 'string' },
              vid: { type: 'string' },
              name: { type: 'string' },
              messages: { type: 'integer' },
              lastMessageAt: { type: ['string', 'null'] },
            },
            required: ['lineId', 'vid', 'name', 'messages', 'lastMessageAt'],
          },
        },
        ...PAGE,
      },
      required: ['contacts', 'cursor', 'hasMore'],
    },
    run: (deps, caller, args) => listContacts(deps, caller, args),
  },
  {
    name: 'get_conversation',
    title: 'A conversation',
    description:
      "One LINE friend's messages, oldest first, as chatlog's API gives them: sender (\"You\" for the business), text, content type, time (UTC). `from` and `to` are days in the hub's time zone, both included.",
    input: {
      type: 'object',
      properties: {
        lineId: {
          type: 'string',
          minLength: 1,
          maxLength: 100,
          description: "the friend's lineId (list_contacts)",
        },
        from: DAY,
        to: DAY,
        cursor: CURSOR,
        limit: limit(500, 100),
      },
      required: ['lineId'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: {
        lineId: { type: 'string' },
        vid: { type: 'string' },
        name: { type: 'string' },
        messages: {
          type: 'array',
          items: {
            ...MESSAGE,
            properties: { id: { type: 'string' }, ...MESSAGE.properties },
            required: ['id', ...MESSAGE.required],
          },
        },
        ...PAGE,
      },
      required: ['lineId', 'vid', 'name', 'messages', 'cursor', 'hasMore'],
    },
    run: (deps, caller, args) => getConversation(deps, caller, args),
  },
  {
    name: 'search_messages',
    title: 'Search messages',
    description:
      "The messages that contain every word of `query` (Japanese needs no spaces; half-width kana and full-width letters match their usual forms), newest first; `lineId` keeps one friend's, `from` and `to` are days in the hub's time zone.",
    input: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 1000, description: 'the words to find' },
        lineId: { type: 'string', minLength: 1, maxLength: 100 },
        from: DAY,
        to: DAY,
        cursor: CURSOR,
        limit: limit(100, 20),
      },
      required: ['query'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: {
        results: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              id: { type: 'string' },
              lineId: { type: 'string' },
              vid: { type: 'string' },
              name: { type: 'string' },
              message: MESSAGE,
            },
            required: ['id', 'lineId', 'vid', 'name', 'message'],
          },
        },
        ...PAGE,
      },
      required: ['results', 'cursor', 'hasMore'],
    },
    run: (deps, caller, args) => searchMessages(deps, caller, args),
  },
  {
    name: 'get_changes',
    title: 'What changed',
    description:
      "Every change of the hub after `cursor`, oldest first (new messages, unsent or erased ones, contacts' new names), as chatlog's change feed gives them; without a cursor, from the oldest kept.",
    input: {
      type: 'object',
      properties: { cursor: CURSOR, limit: limit(500, 100) },
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: { changes: { type: 'array', items: { type: 'object' } }, ...PAGE },
      required: ['changes', 'cursor', 'hasMore'],
    },
    run: (deps, caller, args) => getChanges(deps, caller, args),
  },
];

/** The tools' words in Japanese, for /docs (by their English text; a test holds them complete). */
export const MCP_JA: Readonly<Record<string, string>> = {
  "a day as YYYY-MM-DD, in the hub's time zone": 'YYYY-MM-DD の形の日(ハブのタイムゾーン)',
  'the cursor of the previous result, to read on': '続きを読むための、前の結果の cursor',
  'part of a name, lineId or vid': '名前、lineId または vid の一部',
  "the friend's lineId (list_contacts)": '友だちの lineId(list_contacts で分かります)',
  'the words to find': '探す語',
  'how many at most (1-100, default 50)': '最大の件数(1〜100、既定値 50)',
  'how many at most (1-500, default 100)': '最大の件数(1〜500、既定値 100)',
  'how many at most (1-100, default 20)': '最大の件数(1〜100、既定値 20)',
  'The hub (HubSpot portal) this key reads: its id, time zone (days are read in it), how many contacts and messages it holds, and when its first and last message was.':
    'このキーが読むハブ(HubSpot ポータル): ID、タイムゾーン(日付はこのゾーンで読みます)、連絡先とメッセージの数、最初と最後のメッセージの日時。',
  "The hub's LINE friends (contacts), the most recent conversation first: lineId (for get_conversation), HubSpot contact id (vid), name, how many messages, the last one's time. `query` keeps those whose name, lineId or vid contains it.":
    'ハブの LINE の友だち(連絡先)。最近会話した順: lineId(get_conversation に渡します)、HubSpot のコンタクト ID(vid)、名前、メッセージの数、最後のメッセージの日時。`query` を渡すと、名前・lineId・vid にそれを含むものだけを返します。',
  "One LINE friend's messages, oldest first, as chatlog's API gives them: sender (\"You\" for the business), text, content type, time (UTC). `from` and `to` are days in the hub's time zone, both included.":
    'ひとりの LINE の友だちとのメッセージ。古い順で、chatlog の API と同じ内容: 送信者(ビジネス側は "You")、本文、種類、日時(UTC)。`from` と `to` はハブのタイムゾーンの日付で、両日を含みます。',
  "The messages that contain every word of `query` (Japanese needs no spaces; half-width kana and full-width letters match their usual forms), newest first; `lineId` keeps one friend's, `from` and `to` are days in the hub's time zone.":
    '`query` のすべての語を含むメッセージ。新しい順(日本語に空白は要りません。半角カナや全角英字も通常の形と一致します)。`lineId` でひとりの友だちに絞り、`from` と `to` はハブのタイムゾーンの日付です。',
  "Every change of the hub after `cursor`, oldest first (new messages, unsent or erased ones, contacts' new names), as chatlog's change feed gives them; without a cursor, from the oldest kept.":
    '`cursor` 以降のハブのすべての変更。古い順(新しいメッセージ、送信取消や消去、連絡先の新しい名前)で、chatlog の変更フィードと同じ内容。cursor がなければ、保存されている最も古いものから。',
};

/** The tools as /docs lists them: name, description and schemas. */
export function mcpToolList(): Array<{ name: string; description: string; input: unknown; output: unknown }> {
  return TOOLS.map(({ name, description, input, output }) => ({ name, description, input, output }));
}

type Schema = ReturnType<typeof fromRecordSchema>;
/** fromJsonSchema for a tool's object of arguments (or results). */
const fromRecordSchema = (schema: Record<string, unknown>) =>
  mcpSdk().fromJsonSchema<Record<string, unknown>>(schema as never);
/** Each tool's schemas, made (and their validators compiled) once, not for every request's server. */
let schemas: Map<string, { input: Schema; output: Schema }> | undefined;

/** Where arguments the input schema refused carry the SDK's sentence to the tool's handler. */
const REFUSED = Symbol('refused');
type Arguments = Record<string, unknown> & { [REFUSED]?: { message: string; given: unknown } };

/**
 * The input schema as listed, whose refusal reaches the handler (as arguments holding the
 * sentence) rather than ending the call inside the SDK: so a refused call is an audit record too,
 * and its result says what the SDK would have said.
 */
function auditedInput(schema: Schema): Schema {
  const standard = schema['~standard'];
  return {
    '~standard': {
      ...standard,
      validate: (data: unknown) => {
        type Result = Awaited<ReturnType<typeof standard.validate>>;
        const handOn = (checked: Result): Result => {
          if (!checked.issues) return checked;
          const message = checked.issues.map((issue) => issue.message).join('; ');
          return { value: { [REFUSED]: { message, given: data } } as Arguments };
        };
        // A Standard Schema may answer later (a promise); the SDK's own answers at once.
        const checked = standard.validate(data);
        return checked instanceof Promise ? checked.then(handOn) : handOn(checked);
      },
    },
  } as Schema;
}

function schemasOf(name: string): { input: Schema; output: Schema } {
  if (!schemas) {
    schemas = new Map(
      TOOLS.map((tool) => [
        tool.name,
        { input: auditedInput(fromRecordSchema(tool.input)), output: fromRecordSchema(tool.output) },
      ]),
    );
  }
  return schemas.get(name) as { input: Schema; output: Schema };
}

/** The server one caller talks to: the five tools over its hub (a server a request, over HTTP). */
export function createMcpServer(deps: McpServerDeps, caller: McpCaller, client: string): McpServer {
  const { McpServer } = mcpSdk();
  const server = new McpServer({ name: MCP_SERVER_NAME, version: deps.version });
  for (const tool of TOOLS) {
    const { input, output } = schemasOf(tool.name);
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: input,
        outputSchema: output,
        annotations: { readOnlyHint: true, openWorldHint: false, title: tool.title },
      },
      async (args: Arguments) => {
        const started = deps.clock();
        const record = (status: number, messages: number | null, bytes: number, given: unknown = args) =>
          deps.audit({
            at: started,
            hubId: caller.hub.id,
            keyId: caller.keyId,
            endpoint: `mcp:${tool.name}`,
            query: JSON.stringify(given ?? {}).slice(0, 2000),
            status,
            messages,
            bytes,
            client,
          });
        const refused = args[REFUSED];
        if (refused !== undefined) {
          const text = `Input validation error: Invalid arguments for tool ${tool.name}: ${refused.message}`;
          record(400, null, Buffer.byteLength(text), refused.given);
          return { content: [{ type: 'text' as const, text }], isError: true };
        }
        try {
          if (caller.stillValid && !(await caller.stillValid())) {
            throw new ToolError(
              'the key of this server (CHATLOG_API_KEY) no longer holds: revoked, or its hub or scope changed',
            );
          }
          const answer = await tool.run(deps, caller, args as never);
          const text = JSON.stringify(answer.result);
          record(200, answer.messages, Buffer.byteLength(text));
          return { content: [{ type: 'text' as const, text }], structuredContent: answer.result };
        } catch (error) {
          if (error instanceof ToolError) {
            record(400, null, Buffer.byteLength(error.message));
            return { content: [{ type: 'text' as const, text: error.message }], isError: true };
          }
          record(500, null, 0);
          deps.onFailure(tool.name, error);
          throw new Error(`${tool.name} could not be answered now; try again`);
        }
      },
    );
  }
  return server;
}
