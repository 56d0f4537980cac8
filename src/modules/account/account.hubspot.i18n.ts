/** The HubSpot inbox page's words (CONTRACT §18), in English and Japanese. */
import type { Language } from './account.i18n.js';

export interface HubspotWords {
  link: string;
  title: (hubId: string) => string;
  intro: string;
  notReady: string;
  notConnected: string;
  connect: string;
  connectHint: string;
  connected: string;
  disconnected: string;
  disconnectedSince: string;
  nothingPublished: string;
  connectButton: string;
  inbox: string;
  portal: string;
  since: string;
  published: string;
  waiting: string;
  lastError: string;
  backfill: string;
  backfillOf: (published: number, total: number, done: boolean) => string;
  none: string;
  disconnect: string;
  disconnectHint: string;
  chooseTitle: string;
  chooseIntro: string;
  helpDesk: string;
  noInboxes: string;
  done: string;
  disconnectedNotice: string;
  hubspotRefusedDisable: (why: string) => string;
  declined: string;
  back: string;
}

const en: HubspotWords = {
  link: 'HubSpot inbox',
  title: (hubId) => `Hub ${hubId}: HubSpot inbox`,
  intro:
    "Connected to a HubSpot inbox, this hub's LINE messages appear there, on each friend's conversation, and what an agent answers there is sent to the friend on LINE and kept here.",
  notReady:
    'This chatlog has no HubSpot app yet. The operator sets CHATLOG_HUBSPOT_CLIENT_ID and CHATLOG_HUBSPOT_CLIENT_SECRET and runs `chatlog hubspot channel register` (README, "The HubSpot inbox").',
  notConnected: 'Not connected.',
  connect: 'Connect HubSpot',
  connectHint: 'HubSpot asks you to sign in and allow chatlog; then you choose the inbox here.',
  connected: 'Connected',
  disconnected: 'Disconnected',
  disconnectedSince: 'Disconnected at',
  nothingPublished: 'Nothing is published to HubSpot.',
  connectButton: 'Connect',
  inbox: 'Inbox',
  portal: 'HubSpot account',
  since: 'Connected at',
  published: 'Messages published',
  waiting: 'Messages waiting',
  lastError: 'Last error',
  backfill: 'Earlier messages (chatlog hubspot backfill)',
  backfillOf: (published, total, done) =>
    `${published.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} published${done ? '' : ', going on'}`,
  none: 'none',
  disconnect: 'Disconnect HubSpot',
  disconnectHint:
    'Stops publishing and turns the channel off in the inbox. What HubSpot already shows stays there.',
  chooseTitle: 'Choose the inbox',
  chooseIntro: 'The LINE conversations of this hub go to the inbox you choose.',
  helpDesk: 'help desk',
  noInboxes: 'This HubSpot account has no inbox. Create one in HubSpot, then press Connect HubSpot again.',
  done: 'Connected. New messages now appear in the inbox.',
  disconnectedNotice: 'Disconnected: nothing more is published.',
  hubspotRefusedDisable: (why) =>
    `Disconnected here, but HubSpot did not turn the channel off (${why}): remove it in HubSpot's inbox settings.`,
  declined: 'HubSpot says the authorization was not given. Nothing changed.',
  back: 'Back to the HubSpot inbox page',
};

const ja: HubspotWords = {
  link: 'HubSpotの受信トレイ',
  title: (hubId) => `ハブ ${hubId}: HubSpotの受信トレイ`,
  intro:
    'HubSpotの受信トレイにつなぐと、このハブのLINEのメッセージが友だちごとの会話としてそこに表示され、担当者がそこで返信した内容はLINEで友だちに送られ、ここにも保存されます。',
  notReady:
    'このchatlogにはまだHubSpotアプリがありません。運用者がCHATLOG_HUBSPOT_CLIENT_IDとCHATLOG_HUBSPOT_CLIENT_SECRETを設定し、`chatlog hubspot channel register`を実行します(README「The HubSpot inbox」)。',
  notConnected: 'つながっていません。',
  connect: 'HubSpotにつなぐ',
  connectHint: 'HubSpotでサインインしてchatlogを許可すると、この画面で受信トレイを選べます。',
  connected: 'つながっています',
  disconnected: '切断しています',
  disconnectedSince: '切断した日時',
  nothingPublished: 'HubSpotには何も送っていません。',
  connectButton: 'つなぐ',
  inbox: '受信トレイ',
  portal: 'HubSpotアカウント',
  since: 'つないだ日時',
  published: '送ったメッセージ',
  waiting: '送信待ちのメッセージ',
  lastError: '最後のエラー',
  backfill: '接続前のメッセージ(chatlog hubspot backfill)',
  backfillOf: (published, total, done) =>
    `${total.toLocaleString('ja-JP')}件中${published.toLocaleString('ja-JP')}件を送信${done ? '済み' : '(継続中)'}`,
  none: 'なし',
  disconnect: 'HubSpotとの接続を切る',
  disconnectHint: '送るのをやめ、受信トレイのチャネルを無効にします。HubSpotにすでにあるものは残ります。',
  chooseTitle: '受信トレイを選ぶ',
  chooseIntro: 'このハブのLINEの会話は、選んだ受信トレイに届きます。',
  helpDesk: 'ヘルプデスク',
  noInboxes:
    'このHubSpotアカウントには受信トレイがありません。HubSpotで作成してから、もう一度「HubSpotにつなぐ」を押してください。',
  done: 'つながりました。新しいメッセージは受信トレイに表示されます。',
  disconnectedNotice: '切断しました。これ以上は送りません。',
  hubspotRefusedDisable: (why) =>
    `ここでは切断しましたが、HubSpotはチャネルを無効にしませんでした(${why})。HubSpotの受信トレイの設定で削除してください。`,
  declined: 'HubSpotによると許可されませんでした。何も変わっていません。',
  back: 'HubSpotの受信トレイのページに戻る',
};

export const HUBSPOT_WORDS: Record<Language, HubspotWords> = { en, ja };
