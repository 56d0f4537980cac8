/** The account screen's words in English and Japanese (accessible names as CONTRACT §8 lists them). */

import type { KeyScope } from '../../store/store.js';

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
  scopeRead: 'read — the messages API',
  scopeIngest: 'ingest — sending messages in',
  scopeNames: { read: 'read', ingest: 'ingest', admin: 'admin' } as Record<KeyScope, string>,
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
  scopeRead: '読み取り(read)— メッセージ API で読む',
  scopeIngest: '取り込み(ingest)— メッセージを送り込む',
  scopeNames: { read: '読み取り', ingest: '取り込み', admin: '管理' },
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
