/** The Reports page's words (CONTRACT §17), in English and Japanese. */
import type { Language } from './account.i18n.js';

export interface ReportWords {
  reports: string;
  title: (hubId: string) => string;
  heading: (hubId: string) => string;
  intro: string;
  from: string;
  to: string;
  show: string;
  rangeHint: string;
  badRange: string;
  tooLong: string;
  badDay: (name: string, text: string) => string;
  downloadCsv: string;
  showTable: string;
  totals: string;
  fromFriends: string;
  fromAccount: string;
  contacts: string;
  newContacts: string;
  waits: string;
  answered: string;
  unanswered: string;
  median: string;
  p90: string;
  day: string;
  messagesChart: string;
  messagesChartDesc: (friends: number, account: number, busiest: string | undefined) => string;
  responseChart: string;
  responseChartDesc: (median: string, slowest: string | undefined) => string;
  hoursChart: string;
  hoursChartDesc: (busiest: string | undefined) => string;
  noAnswers: string;
  weekdays: readonly string[];
  hour: string;
  weekday: string;
  duration: (seconds: number | null) => string;
  waitsExplained: string;
  backToKeys: string;
  conversations: string;
}

const durationIn =
  (units: { none: string; s: string; min: string; h: string }) =>
  (seconds: number | null): string => {
    if (seconds === null) return units.none;
    if (seconds < 60) return `${Math.round(seconds)}${units.s}`;
    if (seconds < 3600) return `${(seconds / 60).toFixed(1)}${units.min}`;
    return `${(seconds / 3600).toFixed(1)}${units.h}`;
  };

const en: ReportWords = {
  reports: 'Reports',
  title: (hubId) => `Reports of hub ${hubId} – chatlog`,
  heading: (hubId) => `Reports of hub ${hubId}`,
  intro:
    'How many friends wrote, how fast the account answered, and when people write. Days are those of the hub’s time zone.',
  from: 'From',
  to: 'To',
  show: 'Show',
  rangeHint: 'At most 366 days, both included. Days of the time zone',
  badRange: 'The first day must not be after the last day.',
  tooLong: 'A report covers at most 366 days.',
  badDay: (name, text) => `${name}: “${text}” is not a day (write YYYY-MM-DD).`,
  downloadCsv: 'Download CSV',
  showTable: 'Show table',
  totals: 'Totals',
  fromFriends: 'From friends',
  fromAccount: 'From the account',
  contacts: 'Contacts',
  newContacts: 'New contacts',
  waits: 'Waits',
  answered: 'Answered',
  unanswered: 'Not answered',
  median: 'Median response',
  p90: '90% answered within',
  day: 'Day',
  messagesChart: 'Messages per day',
  messagesChartDesc: (friends, account, busiest) =>
    `${friends} messages from friends and ${account} from the account.${busiest ? ` The busiest day: ${busiest}.` : ''}`,
  responseChart: 'Median response time per day',
  responseChartDesc: (median, slowest) =>
    `Median response over the range: ${median}.${slowest ? ` The slowest day: ${slowest}.` : ''}`,
  hoursChart: 'When friends write (weekday × hour)',
  hoursChartDesc: (busiest) => (busiest ? `The busiest hour: ${busiest}.` : 'No message from friends.'),
  noAnswers: 'No answered wait',
  weekdays: ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'],
  hour: 'Hour',
  weekday: 'Weekday',
  duration: durationIn({ none: '–', s: ' s', min: ' min', h: ' h' }),
  waitsExplained:
    'A wait starts when a friend writes first or after the account’s message, and ends at the account’s next message; it counts on the day it starts. One not answered by the end of the last day is not answered.',
  backToKeys: 'Back to your keys',
  conversations: 'Conversations',
};

const ja: ReportWords = {
  reports: 'レポート',
  title: (hubId) => `ハブ ${hubId} のレポート – chatlog`,
  heading: (hubId) => `ハブ ${hubId} のレポート`,
  intro:
    '友だちからのメッセージ数、アカウントの応答の速さ、メッセージが届く時間帯。日はハブのタイムゾーンによります。',
  from: '開始日',
  to: '終了日',
  show: '表示',
  rangeHint: '両端を含めて最大 366 日。日のタイムゾーン',
  badRange: '開始日は終了日より後にできません。',
  tooLong: 'レポートは最大 366 日です。',
  badDay: (name, text) => `${name}:「${text}」は日付ではありません(YYYY-MM-DD で入力してください)。`,
  downloadCsv: 'CSV をダウンロード',
  showTable: '表を表示',
  totals: '合計',
  fromFriends: '友だちから',
  fromAccount: 'アカウントから',
  contacts: '連絡先',
  newContacts: '新しい連絡先',
  waits: '待ち',
  answered: '応答済み',
  unanswered: '未応答',
  median: '応答時間の中央値',
  p90: '90% の応答時間',
  day: '日付',
  messagesChart: '日ごとのメッセージ数',
  messagesChartDesc: (friends, account, busiest) =>
    `友だちから ${friends} 件、アカウントから ${account} 件。${busiest ? `最も多い日: ${busiest}。` : ''}`,
  responseChart: '日ごとの応答時間の中央値',
  responseChartDesc: (median, slowest) =>
    `範囲全体の応答時間の中央値: ${median}。${slowest ? `最も遅い日: ${slowest}。` : ''}`,
  hoursChart: '友だちがメッセージを送る時間帯(曜日 × 時刻)',
  hoursChartDesc: (busiest) =>
    busiest ? `最も多い時間帯: ${busiest}。` : '友だちからのメッセージはありません。',
  noAnswers: '応答済みの待ちなし',
  weekdays: ['月', '火', '水', '木', '金', '土', '日'],
  hour: '時',
  weekday: '曜日',
  duration: durationIn({ none: '–', s: ' 秒', min: ' 分', h: ' 時間' }),
  waitsExplained:
    '待ちは、友だちが最初に、またはアカウントのメッセージの後にメッセージを送った時に始まり、アカウントの次のメッセージで終わります。始まった日に数えます。最終日の終わりまでに応答がない待ちは未応答です。',
  backToKeys: 'キーの一覧に戻る',
  conversations: '会話',
};

export const REPORT_WORDS: Record<Language, ReportWords> = { en, ja };
