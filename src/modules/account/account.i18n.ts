/** The account screen's words in English and Japanese (accessible names as CONTRACT §8 lists them). */

import type { DeliveryState, KeyScope } from '../../store/store.js';

export type Language = 'en' | 'ja';
export const LANGUAGES: readonly Language[] = ['en', 'ja'];

const en = {
  title: 'chatlog — API keys',
  signInTitle: 'Sign in to chatlog',
  signInIntro: 'Sign in to issue, copy and revoke the API keys of your HubSpot portals.',
  email: 'Email',
  password: 'Password',
  signIn: 'Sign in',
  signOut: 'Sign out',
  signedInAs: 'Signed in as',
  wrongCredentials: 'The email or the password is wrong.',
  throttled: (minutes: number) =>
    `Too many failed attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
  formExpired: 'This form has expired. Reload the page and try again.',
  heading: 'API keys',
  hub: (hubId: string) => `Hub ${hubId}`,
  noHubs: 'This account has no hubs yet. Ask your administrator to run `chatlog account add` with --hub.',
  apiUrl: 'API URL',
  mcp: 'MCP, for assistants',
  mcpUse:
    'Claude and other assistants read this hub here with a key of scope read. The speech-bubble icon beside a read key copies this line with the key in it:',
  copyMcp: 'Copy the Claude Code command with this key',
  timeZone: 'Time zone',
  timeZoneUse: 'the days of from and to, and every time on this page',
  curlExample: (hasMessages: boolean): string =>
    hasMessages
      ? 'Example: the week up to the newest message (put your key in place of the dots)'
      : 'Example: the last seven days; there is no message yet (put your key in place of the dots)',
  apiDocs: 'API documentation',
  issueKey: 'Issue key',
  label: 'Label',
  labelHint: 'What uses this key, for example “HubSpot sync”.',
  scope: 'Scope',
  scopeRead: 'read',
  scopeIngest: 'ingest',
  scopeSend: 'send',
  scopeHint:
    'read: reads messages through the API. ingest: sends messages in. send: replies to LINE friends through LINE.',
  scopeNames: { read: 'read', ingest: 'ingest', admin: 'admin', send: 'send' } as Record<KeyScope, string>,
  createKey: 'Create key',
  cancel: 'Cancel',
  keysOf: (hubId: string) => `Keys of hub ${hubId}`,
  colLabel: 'Label',
  colScope: 'Scope',
  colKey: 'Key',
  colCreated: 'Created',
  colLastUsed: 'Last used',
  /** After a column name: the zone its times are in. */
  inZone: (timeZone: string) => ` (${timeZone})`,
  colState: 'State',
  colActions: 'Actions',
  never: 'never',
  noLabel: '(no label)',
  // States are adjectives, never the Revoke button's own word.
  live: 'Active',
  revokedOn: 'Revoked on',
  noKeys: 'No keys yet. Issue one to call the API.',
  copyKey: 'Copy key',
  copied: 'Copied',
  copyFailed: 'Could not copy',
  showKey: 'Show key',
  hideKey: 'Hide key',
  revoke: 'Revoke',
  revokeKey: 'Revoke key',
  revokeQuestion: (label: string) => `Revoke the key “${label}”?`,
  revokeExplained: 'Every request made with it is refused from the next one on. This cannot be undone.',
  keyCreated: (label: string) =>
    `Key “${label}” created. It stays hidden here: copy it with the copy icon, or show it with the eye icon.`,
  keyRevoked: (label: string) => `Key “${label}” revoked.`,
  otherLanguage: '日本語',
  otherLanguageCode: 'ja' as Language,
  languageNav: 'Language',
  notFound: 'There is no such hub or key on this account.',
  backToKeys: 'Back to the API keys',
  // Outgoing webhooks (CONTRACT §10, §14): a page of each hub's own.
  conversations: 'Conversations',
  reports: 'Reports',
  auditLog: 'Audit log',
  webhooks: 'Webhooks',
  hubspotInbox: 'HubSpot inbox',
  /** After the link to a hub's webhooks: how many endpoints it has. */
  webhookCount: (count: number) =>
    count === 0 ? ' (no endpoint yet)' : ` (${count} endpoint${count === 1 ? '' : 's'})`,
  webhooksTitle: (hubId: string) => `chatlog — webhooks of hub ${hubId}`,
  webhooksOf: (hubId: string) => `Webhooks of hub ${hubId}`,
  webhooksIntro:
    'chatlog sends each change of this hub (a new or deleted message, a contact’s change) to these endpoints as it happens, signed as the Standard Webhooks specification says. An endpoint that does not answer 2xx is tried again for about a day.',
  addEndpoint: 'Add endpoint',
  url: 'URL',
  urlHint: 'Where chatlog sends the changes: an https URL of your receiver.',
  add: 'Add',
  noEndpoints: 'No endpoints yet. Add one to be told of new messages as they arrive.',
  endpointAdded: 'Endpoint added.',
  secretTitle: 'Signing secret',
  secretExplained:
    'Your receiver verifies every delivery with this secret. Copy it now and keep it with the receiver.',
  secretOnce: 'It will not be shown again.',
  /** Between two sentences: a space in English, none in Japanese. */
  sentenceGap: ' ',
  copySecret: 'Copy secret',
  urlRefused: (reason: string) => `This URL is refused: ${reason}.`,
  added: 'Added',
  events: 'Changes sent',
  allEvents: 'all',
  endpointLive: 'Active',
  endpointDisabled: 'Stopped on',
  endpointDisabledWhy: 'it answered 410 Gone',
  remove: 'Remove',
  removeEndpoint: 'Remove endpoint',
  removeQuestion: (url: string) => `Remove the endpoint ${url}?`,
  removeExplained: 'chatlog sends it nothing more, retries included. This cannot be undone.',
  endpointRemoved: 'Endpoint removed.',
  retryNow: 'Retry now',
  retried: (count: number) =>
    count === 0
      ? 'No delivery was waiting for a later try.'
      : `${count} ${count === 1 ? 'delivery' : 'deliveries'} will be tried again within seconds.`,
  deliveriesOf: (url: string) => `Recent deliveries to ${url}`,
  noDeliveries: 'No deliveries yet: the next change of this hub is sent here.',
  colTime: 'Time',
  colType: 'Type',
  colStatus: 'Status',
  colAttempts: 'Attempts',
  deliveryStates: {
    pending: 'Waiting',
    delivered: 'Delivered',
    failed: 'Failed',
    skipped: 'Not sent',
  } as Record<DeliveryState, string>,
  /** After a delivery's state: what the endpoint answered, or what went wrong. */
  statusDetail: (detail: string) => ` (${detail})`,
  /** Why a delivery failed, as the worker says it (webhooks.delivery.ts, webhooks.url.ts). */
  deliveryError: (reason: string) => reason,
  nextTry: 'next try',
  endpointNotFound: 'There is no such endpoint on this hub.',
};

export type Words = typeof en;

const ja: Words = {
  title: 'chatlog — API キー',
  signInTitle: 'chatlog にサインイン',
  signInIntro: 'HubSpot ポータルの API キーの発行・コピー・無効化ができます。',
  email: 'メールアドレス',
  password: 'パスワード',
  signIn: 'サインイン',
  signOut: 'サインアウト',
  signedInAs: 'サインイン中:',
  wrongCredentials: 'メールアドレスまたはパスワードが正しくありません。',
  throttled: (minutes: number) => `失敗が続いたため制限中です。${minutes} 分後にもう一度お試しください。`,
  formExpired: 'フォームの有効期限が切れました。ページを再読み込みしてやり直してください。',
  heading: 'API キー',
  hub: (hubId: string) => `ハブ ${hubId}`,
  noHubs:
    'このアカウントにはまだハブがありません。管理者に `chatlog account add --hub` の実行を依頼してください。',
  apiUrl: 'API の URL',
  mcp: 'MCP(アシスタント用)',
  mcpUse:
    'Claude などのアシスタントは、スコープ read のキーでここからこのハブを読みます。read のキーの横の吹き出しアイコンで、キーを入れたこの行をコピーできます:',
  copyMcp: 'このキーを入れた Claude Code のコマンドをコピー',
  timeZone: 'タイムゾーン',
  timeZoneUse: 'from と to の日付、およびこのページの日時',
  curlExample: (hasMessages: boolean): string =>
    hasMessages
      ? '例:最新のメッセージまでの 1 週間(点の部分をキーに置き換えてください)'
      : '例:直近 7 日間。メッセージはまだありません(点の部分をキーに置き換えてください)',
  apiDocs: 'API ドキュメント',
  issueKey: 'キーを発行',
  label: 'ラベル',
  labelHint: 'このキーの用途(例:「HubSpot 連携」)。',
  scope: 'スコープ',
  scopeRead: '読み取り(read)',
  scopeIngest: '取り込み(ingest)',
  scopeSend: '送信(send)',
  scopeHint:
    '読み取り: メッセージ API で読む。取り込み: メッセージを送り込む。送信: LINE の友だちに LINE で返信する。',
  scopeNames: { read: '読み取り', ingest: '取り込み', admin: '管理', send: '送信' },
  createKey: 'キーを作成',
  cancel: 'キャンセル',
  keysOf: (hubId: string) => `ハブ ${hubId} のキー`,
  colLabel: 'ラベル',
  colScope: 'スコープ',
  colKey: 'キー',
  colCreated: '作成日時',
  colLastUsed: '最終使用',
  inZone: (timeZone: string) => `(${timeZone})`,
  colState: '状態',
  colActions: '操作',
  never: '未使用',
  noLabel: '(ラベルなし)',
  live: '有効',
  revokedOn: '失効済み',
  noKeys: 'キーはまだありません。API を使うにはキーを発行してください。',
  copyKey: 'キーをコピー',
  copied: 'コピーしました',
  copyFailed: 'コピーできませんでした',
  showKey: 'キーを表示',
  hideKey: 'キーを隠す',
  revoke: '無効化',
  revokeKey: 'キーを無効化',
  revokeQuestion: (label: string) => `キー「${label}」を無効化しますか?`,
  revokeExplained: 'このキーを使うリクエストは次回から拒否されます。元に戻せません。',
  keyCreated: (label: string) =>
    `キー「${label}」を作成しました。キーはここでは隠されています。コピーアイコンでコピーするか、目のアイコンで表示してください。`,
  keyRevoked: (label: string) => `キー「${label}」を無効化しました。`,
  otherLanguage: 'English',
  otherLanguageCode: 'en',
  languageNav: '言語',
  notFound: 'このアカウントにそのハブまたはキーはありません。',
  backToKeys: 'API キーに戻る',
  conversations: '会話',
  reports: 'レポート',
  auditLog: '監査ログ',
  webhooks: 'Webhook',
  hubspotInbox: 'HubSpotの受信トレイ',
  webhookCount: (count: number) => (count === 0 ? '(エンドポイントなし)' : `(エンドポイント ${count} 件)`),
  webhooksTitle: (hubId: string) => `chatlog — ハブ ${hubId} の Webhook`,
  webhooksOf: (hubId: string) => `ハブ ${hubId} の Webhook`,
  webhooksIntro:
    'このハブの変更(メッセージの追加・削除、連絡先の変更)を、発生するたびにこれらのエンドポイントへ送ります。署名は Standard Webhooks 仕様に従います。2xx を返さないエンドポイントには約 1 日のあいだ再送します。',
  addEndpoint: 'エンドポイントを追加',
  url: 'URL',
  urlHint: '変更の送信先となる受信側の https の URL。',
  add: '追加',
  noEndpoints: 'エンドポイントはまだありません。追加すると、新しいメッセージが届くたびに通知されます。',
  endpointAdded: 'エンドポイントを追加しました。',
  secretTitle: '署名シークレット',
  secretExplained:
    '受信側はこのシークレットで各配信を検証します。今すぐコピーして、受信側に保管してください。',
  secretOnce: 'このシークレットは二度と表示されません。',
  sentenceGap: '',
  copySecret: 'シークレットをコピー',
  urlRefused: (reason: string) => `この URL は使えません。${reason}`,
  added: '追加日時',
  events: '送信する変更',
  allEvents: 'すべて',
  endpointLive: '有効',
  endpointDisabled: '停止',
  endpointDisabledWhy: '410 Gone が返されたため',
  remove: '削除',
  removeEndpoint: 'エンドポイントを削除',
  removeQuestion: (url: string) => `エンドポイント ${url} を削除しますか?`,
  removeExplained: '再送も含め、以後このエンドポイントには何も送りません。元に戻せません。',
  endpointRemoved: 'エンドポイントを削除しました。',
  retryNow: '今すぐ再試行',
  retried: (count: number) =>
    count === 0
      ? '再試行を待っている配信はありませんでした。'
      : `${count} 件の配信を数秒以内に再試行します。`,
  deliveriesOf: (url: string) => `${url} への最近の配信`,
  noDeliveries: '配信はまだありません。このハブの次の変更からここへ送ります。',
  colTime: '日時',
  colType: '種類',
  colStatus: '結果',
  colAttempts: '試行回数',
  deliveryStates: {
    pending: '送信待ち',
    delivered: '配信済み',
    failed: '失敗',
    skipped: '送信せず',
  },
  statusDetail: (detail: string) => `(${detail})`,
  deliveryError: (reason: string) => deliveryErrorJa(reason),
  nextTry: '次回',
  endpointNotFound: 'このハブにそのエンドポイントはありません。',
};

export const WORDS: Record<Language, Words> = { en, ja };

/** The language of a request: the `lang` cookie the switch sets, else Accept-Language, else English. */
export function pickLanguage(cookie: string | undefined, acceptLanguage: string | undefined): Language {
  if (cookie === 'en' || cookie === 'ja') return cookie;
  let best: Language = 'en';
  let bestQ = 0;
  for (const part of (acceptLanguage ?? '').split(',')) {
    const [tag = '', ...params] = part.trim().toLowerCase().split(';');
    const q = Number(
      params
        .find((p) => p.trim().startsWith('q='))
        ?.trim()
        .slice(2) ?? '1',
    );
    const language =
      tag === 'ja' || tag.startsWith('ja-') ? 'ja' : tag === 'en' || tag.startsWith('en-') ? 'en' : undefined;
    if (language && Number.isFinite(q) && q > bestQ) {
      best = language;
      bestQ = q;
    }
  }
  return best;
}

/**
 * The worker's reasons for a failed delivery (webhooks.delivery.ts, webhooks.url.ts) in Japanese, so
 * that a Japanese sentence holds no English; one not listed here is shown as the worker wrote it.
 */
const DELIVERY_ERRORS_JA: Array<[RegExp, (...parts: string[]) => string]> = [
  [/^could not connect \((.+)\)$/, (code) => `接続できませんでした(${code})`],
  [/^no answer within (\S+) s$/, (seconds) => `${seconds} 秒以内に応答がありませんでした`],
  [/^a redirect \(never followed\)$/, () => 'リダイレクト(たどりません)'],
  [/^answered (\d+)$/, (status) => `${status} を返しました`],
  [/^answered 410 Gone$/, () => '410 Gone を返しました'],
  [/^(.+) does not resolve$/, (host) => `${host} の名前を解決できませんでした`],
  [
    /^(?:(.+): )?(\S+) is a private or loopback address \(CHATLOG_WEBHOOK_ALLOW_PRIVATE=true allows it\)$/,
    (host, address) =>
      `${host ? `${host}: ` : ''}${address} はプライベートまたはループバックのアドレスです(CHATLOG_WEBHOOK_ALLOW_PRIVATE=true で許可されます)`,
  ],
  [
    /^(?:(.+): )?(\S+) is a link-local, metadata or reserved address, never reached$/,
    (host, address) =>
      `${host ? `${host}: ` : ''}${address} はリンクローカル・メタデータ・予約済みのアドレスのため送信しません`,
  ],
  [/^a public endpoint must use https$/, () => '公開されたエンドポイントには https が必要です'],
  [/^the change was deleted first$/, () => '送信前に変更が削除されました'],
];

function deliveryErrorJa(reason: string): string {
  for (const [pattern, words] of DELIVERY_ERRORS_JA) {
    const match = pattern.exec(reason);
    if (match) return words(...match.slice(1).map((part) => part ?? ''));
  }
  return reason;
}
