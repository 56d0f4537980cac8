/**
 * The API reference's words in Japanese (/docs with Accept-Language: ja): each summary and
 * description of the OpenAPI document, by its English text. A text with no entry here is shown in
 * English; test/modules/docs/docs.test.ts fails when one is missing, so a new or changed text gets
 * its Japanese in the same commit.
 */
export const DOCS_JA: Readonly<Record<string, string>> = {
  'The LINE chat messages of HubSpot portals ("hubs"), served back through one read-only JSON API. Every error is {"error":{"code","message"}}; the code is stable, the message is for people. Every answer carries Cache-Control: private, no-store. Any other path under /api, /ingest or /webhooks answers 404 not_found; a method a path of this document does not take, 405 method_not_allowed with Allow. (The server also has pages: /, /account and /docs.)':
    'HubSpot ポータル(「ハブ」)の LINE のチャットメッセージを、読み取り専用の JSON API ひとつで返します。エラーはすべて {"error":{"code","message"}} の形です。code は変わらず、message は人が読むためのものです。すべての応答に Cache-Control: private, no-store が付きます。/api、/ingest、/webhooks の下のそれ以外のパスには 404 not_found を返します。このドキュメントのパスが受け付けないメソッドには、Allow を付けて 405 method_not_allowed を返します。(サーバーには /、/account、/docs のページもあります。)',
  'This chatlog server.': 'この chatlog サーバー。',
  "The read API: a hub's messages, with an API key of scope read.":
    '読み取り API: スコープ read の API キーで、ハブのメッセージを読みます。',
  'The ingest API: messages and contacts from your systems, with a key of scope ingest.':
    '取り込み API: スコープ ingest のキーで、お使いのシステムからメッセージと連絡先を取り込みます。',
  'The LINE Messaging API webhook, signed with the channel secret.':
    'LINE Messaging API の Webhook。チャネルシークレットで署名されます。',
  'Outgoing webhooks: endpoints told of each change of a hub as it commits, signed as Standard Webhooks says, managed with a key of scope admin.':
    '送信 Webhook: ハブの変更がコミットされるたびに通知を受けるエンドポイント。Standard Webhooks に従って署名され、スコープ admin のキーで管理します。',
  "The change feed: every change to a hub's messages and contacts after a cursor, deletions included, with a key of scope read.":
    '変更フィード: カーソル以降にハブのメッセージと連絡先に加えられたすべての変更(削除を含む)。スコープ read のキーで使います。',
  'Media: the bytes of images, videos, audio and files LINE held, kept by chatlog, with a key of scope read.':
    'メディア: LINE が保持していた画像・動画・音声・ファイルのバイト列を、chatlog が保存したもの。スコープ read のキーで使います。',
  "Search: a hub's messages that contain every word of a query (Japanese without spaces, half-width kana and full-width Latin included), newest first, with a key of scope read.":
    '検索: クエリのすべての語を含むハブのメッセージを新しい順に返します(スペースなしの日本語、半角カナ、全角英字も対象)。スコープ read のキーで使います。',
  "A person's data: erasing a LINE friend of a hub and everything of it, with a key of scope admin.":
    '個人のデータ: ハブの LINE の友だちと、それに関するすべてのデータを消去します。スコープ admin のキーで使います。',
  'Liveness and readiness, for load balancers and orchestrators.':
    'ロードバランサーやオーケストレーター向けの死活確認(liveness)と準備完了確認(readiness)。',
  "A hub's contacts and their messages, for whole days in the hub's time zone":
    'ハブの連絡先とそのメッセージ(ハブのタイムゾーンでの日単位)',
  'Contacts in the order the hub first saw them, each with its messages oldest first; only contacts with a message in the range. HEAD answers the same headers without the body. Accept-Encoding br or gzip compresses the answer; the weak ETag answers If-None-Match with 304. A key with a rate limit adds RateLimit-Policy and RateLimit headers to every answer.':
    '連絡先はハブが最初に認識した順に並び、それぞれのメッセージは古い順です。範囲内にメッセージがある連絡先だけを返します。HEAD は本文なしで同じヘッダーを返します。Accept-Encoding に br または gzip を指定すると応答が圧縮されます。弱い ETag により、If-None-Match には 304 を返します。レート制限のあるキーでは、すべての応答に RateLimit-Policy ヘッダーと RateLimit ヘッダーが付きます。',
  'The HubSpot portal id, 1 to 20 digits.': 'HubSpot のポータル ID(1〜20 桁の数字)。',
  'An API key of scope read issued for this hub on the account screen.':
    'アカウント画面でこのハブ用に発行された、スコープ read の API キー。',
  "First day, included, in the hub's time zone.": '最初の日(この日を含む)。ハブのタイムゾーンで指定します。',
  'Last day, included.': '最後の日(この日を含む)。',
  "Read from and to in this IANA time zone instead of the hub's: a canonical name (Asia/Tokyo), a tzdb link (Japan, US/Pacific) or UTC. Abbreviations (JST, CST, PST, EST...) are ambiguous and refused with invalid_time_zone.":
    'from と to を、ハブのタイムゾーンではなくこの IANA タイムゾーンで解釈します。正規名(Asia/Tokyo)、tzdb のリンク(Japan、US/Pacific)または UTC を指定します。略称(JST、CST、PST、EST...)は曖昧なため、invalid_time_zone で拒否されます。',
  'The contacts with a message in the range.': '範囲内にメッセージがある連絡先。',
  'Always "private, no-store".': '常に "private, no-store"。',
  'Weak; send it back in If-None-Match.': '弱い ETag。If-None-Match で送り返してください。',
  'Only for a key with a rate limit: what is left.': 'レート制限のあるキーのみ: 残りの量。',
  'Only for a key with a rate limit: the limit.': 'レート制限のあるキーのみ: 上限。',
  '"Accept-Encoding"': '"Accept-Encoding"',
  'Not modified since the ETag sent in If-None-Match.':
    'If-None-Match で送られた ETag から変更されていません。',
  'The same ETag.': '同じ ETag。',
  'A bad hub id, parameter, date, range or time zone.':
    'ハブ ID、パラメーター、日付、範囲、またはタイムゾーンが不正です。',
  'A sentence for people; may change.': '人が読むための文。変わることがあります。',
  'No key, or not a live read key of this service (an ingest key is not one).':
    'キーがないか、このサービスの有効な read キーではありません(ingest キーは該当しません)。',
  'The key belongs to another hub.': 'キーが別のハブのものです。',
  'Only GET, HEAD.': 'GET、HEAD のみ。',
  '"GET, HEAD"': '"GET, HEAD"',
  'The request did not arrive whole within the time allowed; the connection is closed.':
    '許容時間内にリクエスト全体が届きませんでした。接続は閉じられます。',
  "The key's rate limit is used up.": 'キーのレート制限を使い切りました。',
  'Seconds until the key may ask again.': 'キーが再びリクエストできるまでの秒数。',
  'The remaining quota (IETF RateLimit header fields).':
    '残りの割り当て量(IETF の RateLimit ヘッダーフィールド)。',
  "The key's limit.": 'キーの上限。',
  'The request line or headers are over 16 KiB.': 'リクエスト行またはヘッダーが 16 KiB を超えています。',
  'An unexpected fault, logged on the server.': '予期しない障害。サーバーのログに記録されます。',
  'The store cannot answer now; retry after Retry-After seconds.':
    'ストアが現在応答できません。Retry-After 秒後に再試行してください。',
  'Seconds to wait before retrying.': '再試行までに待つ秒数。',
  "A hub's contacts and their messages, for whole days in the hub's time zone (headers only)":
    'ハブの連絡先とそのメッセージ(ハブのタイムゾーンでの日単位、ヘッダーのみ)',
  'The same checks, status and headers as GET (getMessages), with no body.':
    'GET (getMessages) と同じ検査、ステータス、ヘッダーを、本文なしで返します。',
  "A hub's changes after a cursor: the way to keep a copy in sync, deletions included":
    'カーソル以降のハブの変更: 削除を含めてコピーを同期させる方法',
  'Follow `cursor` from answer to answer. Without a cursor the feed starts at the oldest change kept, so the first pages are a complete copy of the hub. `hasMore: false` means you were caught up when the answer was made; with `wait` the answer is held until a change commits or the seconds pass (long polling). The key goes in `Authorization: Bearer <key>` (kept out of access logs) or in `apikey`, not both.':
    '応答から応答へ `cursor` をたどってください。カーソルなしでは保持されている最も古い変更からフィードが始まるため、最初のページ群でハブの完全なコピーが得られます。`hasMore: false` は、応答の作成時点で追いついていたことを意味します。`wait` を指定すると、変更がコミットされるか指定の秒数が経過するまで応答が保留されます(ロングポーリング)。キーは `Authorization: Bearer <key>`(アクセスログに残りません)または `apikey` のどちらか一方で送ります。両方は送れません。',
  'An API key of scope read for this hub, unless it is sent in Authorization.':
    'このハブのスコープ read の API キー(Authorization で送る場合は不要)。',
  'The cursor of a previous answer, unchanged (opaque).':
    '前回の応答のカーソル。変更せずに渡します(不透明な値)。',
  'At most this many changes (500 when absent).': '変更の最大件数(省略時は 500)。',
  'Seconds to hold the answer while nothing follows the cursor (0 when absent).':
    'カーソル以降に変更がない間、応答を保留する秒数(省略時は 0)。',
  'The changes after the cursor, oldest first.': 'カーソル以降の変更(古い順)。',
  'One change. Its type says which fields follow; new types may be added, and a client ignores a type it does not know.':
    '1 件の変更。type によって続くフィールドが決まります。新しい type が追加されることがあり、クライアントは知らない type を無視します。',
  "Strictly increasing along the hub's feed (a decimal string).":
    'ハブのフィードに沿って狭義単調増加します(10 進数の文字列)。',
  'When the change was committed (UTC, 24 characters).': '変更がコミットされた日時(UTC、24 文字)。',
  'The LINE friend.': 'LINE の友だち。',
  'message.created, message.deleted, contact.updated, contact.erased or retention.applied.':
    'message.created、message.deleted、contact.updated、contact.erased または retention.applied。',
  "The message's id (message.created, message.deleted): unique in the hub, never reused.":
    'メッセージの ID(message.created、message.deleted)。ハブ内で一意で、再利用されません。',
  'The HubSpot contact id, "" while unlinked (message.created, contact.updated).':
    'HubSpot の連絡先 ID。未リンクの間は ""(message.created、contact.updated)。',
  'The display name, "" while unknown (message.created, contact.updated).':
    '表示名。不明な間は ""(message.created、contact.updated)。',
  'message.created: the message as GET /messages renders it (sender read when the answer is made).':
    'message.created: GET /messages が返す形のメッセージ(sender は応答の作成時に読み取ったもの)。',
  'The text exactly as sent: line breaks, emoji and every other character kept. A message that is not text names its kind and id, one item per line (as JSON writes them): "[Sticker]\\nID: <stickerId>", "[Image]\\nID: <messageId>", "[Video]\\nID: <messageId>", "[Audio]\\nID: <messageId>", "[File]\\nID: <messageId>\\nName: <fileName>", "[Location]\\nID: <messageId>\\n<title>\\n<address>\\n<latitude>,<longitude>", and "[<Type>]\\nID: <messageId>" for a type LINE adds later. A line whose value LINE did not send is left out.':
    '送信されたとおりのテキスト。改行、絵文字、その他すべての文字がそのまま保たれます。テキスト以外のメッセージは、種類と ID を 1 行に 1 項目ずつ示します(JSON での表記): "[Sticker]\\nID: <stickerId>"、"[Image]\\nID: <messageId>"、"[Video]\\nID: <messageId>"、"[Audio]\\nID: <messageId>"、"[File]\\nID: <messageId>\\nName: <fileName>"、"[Location]\\nID: <messageId>\\n<title>\\n<address>\\n<latitude>,<longitude>"、LINE が後から追加する種類には "[<Type>]\\nID: <messageId>"。LINE が値を送らなかった行は省かれます。',
  'The kind of content: "text", "sticker", "image", "video", "audio", "file", "location", or another LINE message type as LINE names it. Messages from the ingest API or an import keep the contentType they were given ("text" when none was).':
    'コンテンツの種類: "text"、"sticker"、"image"、"video"、"audio"、"file"、"location"、または LINE が名付けたその他の LINE メッセージタイプ。取り込み API やインポートによるメッセージは、指定された contentType を保持します(指定がなければ "text")。',
  'message.created, for a message that came by LINE webhook: LINE\'s own "source" and "message" objects, as LINE sent them.':
    'message.created(LINE の Webhook で届いたメッセージの場合): LINE が送ったとおりの、LINE 自身の "source" オブジェクトと "message" オブジェクト。',
  'message.deleted: why ("unsend").': 'message.deleted: 理由("unsend")。',
  'retention.applied: every message created before this instant is gone.':
    'retention.applied: この時刻より前に作成されたメッセージはすべて削除されています。',
  'Where the next request starts.': '次のリクエストの開始位置。',
  'More changes follow now; false: you are caught up.':
    'すぐに取得できる変更がさらにあります。false: 追いついています。',
  'Both kinds of credentials, a bad hub id, or a bad parameter.':
    '両方の種類の認証情報、不正なハブ ID、または不正なパラメーター。',
  'No key, or not a live key of this service.': 'キーがないか、このサービスの有効なキーではありません。',
  'A key of another scope, or of another hub.': '別のスコープのキー、または別のハブのキーです。',
  'Only GET.': 'GET のみ。',
  '"GET"': '"GET"',
  'The changes after this cursor were dropped: start again without a cursor.':
    'このカーソル以降の変更は破棄されています。カーソルなしでやり直してください。',
  "A hub's messages that contain every word of a query, newest first":
    'クエリのすべての語を含むハブのメッセージ(新しい順)',
  '`q` and each message are compared after Unicode NFKC normalisation and lower-casing: `ｱｲﾌｫﾝ` finds `アイフォン`, `ＡＢＣ` finds `abc`. `q` is split on white space into words; a message matches when it contains every word as a substring (a word of one character works, and a Japanese word needs no spaces around it: `予約` finds `ご予約ありがとうございます`). Follow `cursor` for older results while `hasMore` is true. The key goes in `Authorization: Bearer <key>` (kept out of access logs) or in `apikey`, not both.':
    '`q` と各メッセージは、Unicode NFKC 正規化と小文字化の後に比較されます。`ｱｲﾌｫﾝ` で `アイフォン` が、`ＡＢＣ` で `abc` が見つかります。`q` は空白で語に分割され、すべての語を部分文字列として含むメッセージが一致します(1 文字の語も使え、日本語の語の前後に空白は不要です。`予約` で `ご予約ありがとうございます` が見つかります)。`hasMore` が true の間は、`cursor` をたどるとより古い結果を取得できます。キーは `Authorization: Bearer <key>`(アクセスログに残りません)または `apikey` のどちらか一方で送ります。両方は送れません。',
  '1 to 16 words separated by white space, each of 1 to 64 characters (after NFKC normalisation).':
    '空白で区切った 1〜16 語。各語は 1〜64 文字(NFKC 正規化後)。',
  "The first day (inclusive), in the hub's time zone or tz.":
    '最初の日(この日を含む)。ハブのタイムゾーンまたは tz で指定します。',
  'The last day (inclusive).': '最後の日(この日を含む)。',
  'An IANA time zone that reads from and to for this request.':
    'このリクエストで from と to を解釈する IANA タイムゾーン。',
  "Only this LINE friend's messages.": 'この LINE の友だちのメッセージのみ。',
  'At most this many results (20 when absent).': '結果の最大件数(省略時は 20)。',
  'The cursor of a previous answer to the same hub and q, unchanged (opaque).':
    '同じハブと q に対する前回の応答のカーソル。変更せずに渡します(不透明な値)。',
  'The matching messages, newest first (by createdAt, then the newest received).':
    '一致したメッセージ(新しい順。createdAt で並べ、同じ場合は後に受信したものが先)。',
  "The message's id: unique in the hub, never reused (as in the change feed).":
    'メッセージの ID。ハブ内で一意で、再利用されません(変更フィードと同じ)。',
  'The HubSpot contact id, "" while unlinked.': 'HubSpot の連絡先 ID。未リンクの間は ""。',
  'The display name, "" while unknown.': '表示名。不明な間は ""。',
  'The message as GET /messages renders it (sender read when the answer is made).':
    'GET /messages が返す形のメッセージ(sender は応答の作成時に読み取ったもの)。',
  'Where the next page starts (older results).': '次のページの開始位置(より古い結果)。',
  'Older results follow; false: this was the last page.':
    'より古い結果があります。false: これが最後のページです。',
  "A media message's content: the bytes LINE deletes after a while, kept by chatlog":
    'メディアメッセージのコンテンツ: LINE がしばらくすると削除するバイト列を、chatlog が保存したもの',
  'The bytes of an image, video, audio or file message whose content LINE held, downloaded by chatlog after the message came. 202 `content_pending` (with `Retry-After`) until the download is done. One byte range (`Range: bytes=...`) is answered 206; several ranges are answered whole. The key goes in `Authorization: Bearer <key>` (kept out of access logs) or in `apikey`, not both.':
    'LINE がコンテンツを保持していた画像・動画・音声・ファイルメッセージのバイト列。メッセージの到着後に chatlog がダウンロードしたものです。ダウンロードが終わるまでは 202 `content_pending`(`Retry-After` 付き)を返します。バイト範囲が 1 つ(`Range: bytes=...`)なら 206 で返し、複数の範囲なら全体を返します。キーは `Authorization: Bearer <key>`(アクセスログに残りません)または `apikey` のどちらか一方で送ります。両方は送れません。',
  "The message's id, as the change feed gives it (LINE's message id for LINE messages).":
    '変更フィードが示すメッセージの ID(LINE のメッセージでは LINE のメッセージ ID)。',
  'One byte range: bytes=FIRST-LAST, bytes=FIRST- or bytes=-COUNT.':
    '1 つのバイト範囲: bytes=FIRST-LAST、bytes=FIRST- または bytes=-COUNT。',
  'The ETag of a copy you have: 304 when it is current.':
    '手元にあるコピーの ETag。最新なら 304 を返します。',
  'The ETag of a copy you have part of: the range only of the same bytes.':
    '一部を持っているコピーの ETag。バイト列が同じ場合に限り、範囲を返します。',
  "The content's bytes, as LINE gave them.": 'LINE から受け取ったとおりのコンテンツのバイト列。',
  'Strong: the SHA-256 of the bytes, in quotes.': '強い ETag: バイト列の SHA-256 を引用符で囲んだもの。',
  'As LINE gave it (image/jpeg, video/mp4, ...).': 'LINE から受け取ったとおり(image/jpeg、video/mp4、...)。',
  'For files only: attachment, with the file name in filename* (RFC 6266, UTF-8) and an ASCII fallback in filename.':
    'ファイルのみ: attachment。ファイル名を filename*(RFC 6266、UTF-8)に、ASCII の代替名を filename に入れます。',
  'The download from LINE is still to come: ask again after Retry-After seconds.':
    'LINE からのダウンロードがまだ済んでいません。Retry-After 秒後にもう一度リクエストしてください。',
  'The byte range asked for.': '要求されたバイト範囲。',
  'bytes FIRST-LAST/SIZE': 'bytes FIRST-LAST/SIZE',
  'The copy named by If-None-Match is current.': 'If-None-Match で指定されたコピーは最新です。',
  'Both kinds of credentials, a bad hub id, or a repeated parameter.':
    '両方の種類の認証情報、不正なハブ ID、または重複したパラメーター。',
  'No message with this id whose content chatlog keeps, content LINE no longer had, or a download that failed.':
    'この ID のメッセージで chatlog がコンテンツを保存しているものがない、LINE にコンテンツがもう残っていなかった、またはダウンロードに失敗しました。',
  'The range starts past the end (Content-Range: bytes */SIZE).':
    '範囲の開始位置が末尾を超えています(Content-Range: bytes */SIZE)。',
  'The LINE Messaging API webhook of a hub': 'ハブの LINE Messaging API Webhook',
  "LINE's own schema of the body applies (events of any type, fields chatlog does not know are kept out of the way, never refused). The signature is checked before the body is read; 200 means every event is stored, or was already.":
    '本文には LINE 自身のスキーマが適用されます(あらゆる種類のイベントを受け付け、chatlog が知らないフィールドは処理の妨げにならず、拒否されることもありません)。署名は本文を読む前に検査されます。200 は、すべてのイベントが保存された(または保存済みだった)ことを意味します。',
  'Base64 HMAC-SHA256 of the raw body under the channel secret.':
    'チャネルシークレットを鍵とした生の本文の HMAC-SHA256 (Base64)。',
  'The bot user id of the channel.': 'チャネルのボットのユーザー ID。',
  "Webhook events as LINE sends them. Message events (text, sticker, image, video, audio, file, location) are stored; follow events ask LINE for the friend's name; others are accepted and ignored.":
    'LINE が送るとおりの Webhook イベント。メッセージイベント(text、sticker、image、video、audio、file、location)は保存されます。フォローイベントでは LINE に友だちの名前を問い合わせます。その他のイベントは受け付けて無視します。',
  'Every event is stored (or was already).': 'すべてのイベントが保存されました(または保存済みでした)。',
  'A correctly signed body that is not a webhook body.':
    '正しく署名されているものの、Webhook の本文ではない本文。',
  'A missing or wrong signature, or an unknown hub.': '署名がないか誤っている、または不明なハブです。',
  'No hub id in the path (/webhooks/line/).': 'パスにハブ ID がありません(/webhooks/line/)。',
  'Only POST.': 'POST のみ。',
  '"POST"': '"POST"',
  'Bodies are limited to 1 MiB.': '本文は 1 MiB までです。',
  'The body is not sent as Content-Type: application/json.':
    '本文が Content-Type: application/json で送られていません。',
  'Messages sent from the account side (at most 1,000), stored all or nothing':
    'アカウント側から送信したメッセージ(最大 1,000 件)。すべてを保存するか、何も保存しないかのどちらか',
  'Authorization: Bearer <ingest key>. The key is checked before the body is read. A message sent again with the same id is stored once and counted as a duplicate.':
    'Authorization: Bearer <ingest key>。キーは本文を読む前に検査されます。同じ id で再送されたメッセージは 1 回だけ保存され、重複として数えられます。',
  'Stored; messages whose id was already stored are counted as duplicates.':
    '保存しました。id がすでに保存済みのメッセージは重複として数えられます。',
  '"Authorization"': '"Authorization"',
  'A bad body (the message names the item and field) or hub id.':
    '本文(message で項目とフィールドを示します)またはハブ ID が不正です。',
  'No key, or not a live ingest key.': 'キーがないか、有効な ingest キーではありません。',
  'Bearer realm="chatlog"': 'Bearer realm="chatlog"',
  'The body is larger than 16 MiB.': '本文が 16 MiB を超えています。',
  'Link a LINE friend to a HubSpot contact (vid) and set its name':
    'LINE の友だちを HubSpot の連絡先(vid)にリンクし、名前を設定',
  'Authorization: Bearer <ingest key>. Fields left out keep their value; the answer is the contact as it now is.':
    'Authorization: Bearer <ingest key>。省略したフィールドは値がそのまま残ります。応答は更新後の連絡先です。',
  'The contact as it now is.': '更新後の連絡先。',
  'A bad body or id.': '本文または ID が不正です。',
  'No LINE id in the path (/ingest/line/{hubId}/contacts/).':
    'パスに LINE ID がありません(/ingest/line/{hubId}/contacts/)。',
  'Only PUT.': 'PUT のみ。',
  '"PUT"': '"PUT"',
  'The body is larger than 1 MiB.': '本文が 1 MiB を超えています。',
  "The hub's webhook endpoints (never their secrets)":
    'ハブの Webhook エンドポイント(シークレットは含みません)',
  'Every endpoint the hub has, oldest first, with the change types it is sent and whether it was disabled (an endpoint that answers 410 Gone is). A secret is shown only when its endpoint is added.':
    'ハブのすべてのエンドポイントを古い順に、送信する変更の種類と、無効化されているかどうか(410 Gone を返したエンドポイントは無効化されます)とともに返します。シークレットはエンドポイントを追加したときにだけ表示されます。',
  'An API key of scope admin for this hub, unless it is sent in Authorization.':
    'このハブのスコープ admin の API キー(Authorization で送る場合は不要)。',
  'Oldest first.': '古い順。',
  "The endpoint's id.": 'エンドポイントの ID。',
  'Where each change is POSTed.': '各変更の POST 先。',
  'The change types it is sent.': '送信する変更の種類。',
  'When it was added (UTC).': '追加された日時(UTC)。',
  'When it answered 410 Gone and was disabled; null while it is live.':
    '410 Gone を返して無効化された日時。有効な間は null。',
  'Both kinds of credentials, or a bad hub id.': '両方の種類の認証情報、または不正なハブ ID。',
  'A key of another scope (webhooks take an admin key), or of another hub.':
    '別のスコープのキー(Webhook には admin キーが必要です)、または別のハブのキーです。',
  'Only GET, POST.': 'GET、POST のみ。',
  '"GET, POST"': '"GET, POST"',
  'Adds an endpoint that is sent every change of the hub as it commits, signed':
    'ハブの変更がコミットされるたびに署名付きで送信を受けるエンドポイントを追加',
  'Each change is POSTed as the Standard Webhooks specification says (webhook-id, webhook-timestamp, webhook-signature headers; verify with any Standard Webhooks library and the secret). The secret is in this answer only. The URL must be https (http to a private address only when the server allows it); a name that resolves to a loopback, private, link-local or metadata address is refused.':
    '各変更は Standard Webhooks の仕様どおりに POST されます(webhook-id、webhook-timestamp、webhook-signature ヘッダー。任意の Standard Webhooks ライブラリとシークレットで検証できます)。シークレットはこの応答にしか含まれません。URL は https でなければなりません(http はサーバーが許可している場合にプライベートアドレスに対してのみ使えます)。ループバック、プライベート、リンクローカル、またはメタデータのアドレスに解決される名前は拒否されます。',
  'https://... of your receiver.': '受信側の https://...。',
  'The change types the endpoint is sent (section 9 of the contract); every type when absent.':
    'エンドポイントに送信する変更の種類(仕様(contract)の第 9 節)。省略時はすべての種類。',
  'The endpoint, and its signing secret (shown this once).':
    'エンドポイントと、その署名シークレット(この 1 回だけ表示されます)。',
  '`whsec_` and base64 of 32 random bytes.': '`whsec_` と、ランダムな 32 バイトの base64。',
  'Both kinds of credentials, a bad hub id, a body that is not an endpoint, or a refused URL.':
    '両方の種類の認証情報、不正なハブ ID、エンドポイントではない本文、または拒否された URL。',
  'Removes an endpoint: nothing more is sent to it': 'エンドポイントを削除: 以後は何も送信しません',
  'Deliveries not yet made are dropped with it; a change being retried is not tried again. The id is the one addWebhook answered (or listWebhooks lists).':
    'まだ行われていない配信はエンドポイントとともに破棄され、再試行中の変更も再び試行されません。id は addWebhook が返したもの(または listWebhooks が一覧に示すもの)です。',
  'Removed.': '削除しました。',
  'The hub has no endpoint of that id.': 'ハブにその ID のエンドポイントはありません。',
  'Only DELETE.': 'DELETE のみ。',
  '"DELETE"': '"DELETE"',
  "Erases a LINE friend of the hub and everything of it (a person's right to erasure)":
    'ハブの LINE の友だちと、それに関するすべてのデータを消去(個人の消去権)',
  'In one transaction: every message of the contact and its search entries, its media (the bytes are deleted within seconds unless another message of the hub holds them), its vid and name, and its earlier changes in the feed, which one contact.erased replaces. Messages that come from that LINE user later are stored as a new contact. Takes an admin key.':
    '1 つのトランザクションで次を消去します: 連絡先のすべてのメッセージとその検索エントリ、メディア(ハブの別のメッセージが同じバイト列を持っていない限り、バイト列は数秒以内に削除されます)、vid と名前、そしてフィード内のそれまでの変更(1 件の contact.erased に置き換えられます)。その LINE ユーザーから後で届いたメッセージは、新しい連絡先として保存されます。admin キーが必要です。',
  "The contact's LINE user id, as the read API shows it.":
    '読み取り API が示すとおりの、連絡先の LINE ユーザー ID。',
  'Erased.': '消去しました。',
  'The messages erased.': '消去されたメッセージの数。',
  'A key of another scope (erasure takes an admin key), or of another hub.':
    '別のスコープのキー(消去には admin キーが必要です)、または別のハブのキーです。',
  'The hub has no contact of that LINE id: nothing was erased.':
    'ハブにその LINE ID の連絡先はありません。何も消去されていません。',
  "HubSpot's webhook: a contact's privacy deletion erases the LINE friends linked to it":
    'HubSpot の Webhook: 連絡先のプライバシー削除で、その連絡先にリンクされた LINE の友だちを消去',
  'Signed by HubSpot with signature v3 (X-HubSpot-Signature-v3: base64 HMAC-SHA256 of method, URI, body and X-HubSpot-Request-Timestamp under the app client secret, CHATLOG_HUBSPOT_CLIENT_SECRET); a timestamp more than 5 minutes away is refused. For each contact.privacyDeletion event, every contact of hub portalId linked to vid objectId is erased, as DELETE /api/line/{hubId}/contacts/{lineId} does. Other events are acknowledged and ignored.':
    'HubSpot が署名 v3 で署名します(X-HubSpot-Signature-v3: メソッド、URI、本文、X-HubSpot-Request-Timestamp から、アプリのクライアントシークレット CHATLOG_HUBSPOT_CLIENT_SECRET を鍵として計算した HMAC-SHA256 の base64)。タイムスタンプが 5 分を超えてずれている場合は拒否されます。contact.privacyDeletion イベントごとに、ハブ portalId の連絡先のうち vid objectId にリンクされたものがすべて、DELETE /api/line/{hubId}/contacts/{lineId} と同じように消去されます。その他のイベントは受信を確認したうえで無視します。',
  'Base64 HMAC-SHA256 (signature v3).': 'Base64 の HMAC-SHA256(署名 v3)。',
  'Milliseconds since 1970, when HubSpot sent it.': 'HubSpot が送信した時刻(1970 年からのミリ秒数)。',
  'The HubSpot portal: the hub.': 'HubSpot ポータル、つまりハブ。',
  'The HubSpot contact (vid).': 'HubSpot の連絡先(vid)。',
  'Every privacy deletion is done: the contacts erased and their messages.':
    'すべてのプライバシー削除が完了しました: 消去された連絡先とそのメッセージ。',
  "HubSpot's custom-channel webhook: an agent's reply in the inbox is sent to the LINE friend":
    'HubSpot のカスタムチャネルの Webhook: 受信トレイで担当者が書いた返信を LINE の友だちに送る',
  "Signed as POST /webhooks/hubspot is (signature v3 under CHATLOG_HUBSPOT_CLIENT_SECRET). HubSpot does not document the payload; chatlog relies on what HubSpot sends: an object (or a list of them) with `type` OUTGOING_CHANNEL_MESSAGE_CREATED, `portalId`, `channelIntegrationThreadIds` and `message` (`id`, `channelAccountId`, `text`, `recipients[].deliveryIdentifier`, `client.clientType`). Each such reply of a connected hub becomes one send to the friend (CONTRACT §16; HubSpot's message id is its idempotency key, so a webhook delivered again sends nothing more), stored as You and not published back; HubSpot's message gets the status SENT or FAILED with LINE's reason. Other events, messages chatlog published itself, and channel accounts chatlog does not hold are acknowledged and ignored.":
    'POST /webhooks/hubspot と同じく署名されます(CHATLOG_HUBSPOT_CLIENT_SECRET による署名 v3)。HubSpot はこの本文を文書化していないため、chatlog は HubSpot が実際に送るものに従います: `type` が OUTGOING_CHANNEL_MESSAGE_CREATED で、`portalId`、`channelIntegrationThreadIds`、`message`(`id`、`channelAccountId`、`text`、`recipients[].deliveryIdentifier`、`client.clientType`)を持つオブジェクト(またはその配列)。つながっているハブへのそのような返信はそれぞれ友だちへの 1 件の送信になり(CONTRACT §16。HubSpot のメッセージ ID が冪等キーなので、同じ Webhook が再送されても二度は送りません)、You として保存され、HubSpot には送り返しません。HubSpot のメッセージには SENT、または LINE の理由を付けた FAILED の状態を設定します。その他のイベント、chatlog 自身が送ったメッセージ、chatlog が持たないチャネルアカウントは、受信を確認したうえで無視します。',
  'One event, or a list of them.': 'イベント 1 件、またはその配列。',
  'Each reply queued as a send (or found queued already), the rest ignored.':
    '返信はそれぞれ送信として受け付けられ(または受付済みのものが見つかり)、それ以外は無視されました。',
  'The send id (GET /api/line/{hubId}/sends/{id}).': '送信の ID(GET /api/line/{hubId}/sends/{id})。',
  'A correctly signed body that is not HubSpot webhook events.':
    '正しく署名されているものの、HubSpot の Webhook イベントではない本文。',
  'A correctly signed body that is not a list of HubSpot webhook events.':
    '正しく署名されているものの、HubSpot の Webhook イベントのリストではない本文。',
  'A missing or wrong signature, an old timestamp, or no client secret on this server.':
    '署名がないか誤っている、タイムスタンプが古い、またはこのサーバーにクライアントシークレットが設定されていません。',
  'The process runs': 'プロセスが動作中',
  'Liveness: 200 while the process runs, whatever the store does.':
    '死活確認(liveness): ストアの状態にかかわらず、プロセスが動作している間は 200 を返します。',
  'Alive.': '稼働中です。',
  'The process runs (headers only)': 'プロセスが動作中(ヘッダーのみ)',
  'The same checks, status and headers as GET (health), with no body.':
    'GET (health) と同じ検査、ステータス、ヘッダーを、本文なしで返します。',
  'The store answers and its schema is current': 'ストアが応答し、そのスキーマが最新',
  'Readiness: 503 while the store does not answer (route traffic elsewhere), else 200.':
    '準備完了確認(readiness): ストアが応答しない間は 503(トラフィックを別の宛先へ振り向けてください)、それ以外は 200 を返します。',
  'Ready for traffic.': 'トラフィックを受け付けられます。',
  'The store answers and its schema is current (headers only)':
    'ストアが応答し、そのスキーマが最新(ヘッダーのみ)',
  'The same checks, status and headers as GET (ready), with no body.':
    'GET (ready) と同じ検査、ステータス、ヘッダーを、本文なしで返します。',
  'An API key of scope read, issued for the hub on the account screen or with chatlog key issue.':
    'アカウント画面または chatlog key issue でハブ用に発行された、スコープ read の API キー。',
  'Authorization: Bearer <an API key of scope ingest>.':
    'Authorization: Bearer <スコープ ingest の API キー>。',
  'Authorization: Bearer <an API key of the scope the operation needs: read for the change feed, admin for webhooks>. Preferred: it stays out of access logs.':
    'Authorization: Bearer <操作に必要なスコープの API キー: 変更フィードには read、Webhook には admin>。推奨: アクセスログに残りません。',
  'The same key as the apikey query parameter instead (never both).':
    '代わりに同じキーをクエリパラメーター apikey で送ります(両方は送れません)。',
  '"You" for the account side, else the friend\'s name.': 'アカウント側は "You"、それ以外は友だちの名前。',
  'UTC with milliseconds, always 24 characters.': 'ミリ秒付きの UTC。常に 24 文字。',
  'The text, stored and answered as given (see Message.msg for the forms of other content).':
    'テキスト。与えられたとおりに保存され、返されます(その他のコンテンツの形式は Message.msg を参照)。',
  'The kind of content ("text", "sticker", "image"...); "text" when absent or null.':
    'コンテンツの種類("text"、"sticker"、"image"...)。省略時または null のときは "text"。',
  'Who sent it, as the read API will show it; "You" when absent or null.':
    '送信者。読み取り API で表示されるとおりの値です。省略時または null のときは "You"。',
  'Your id for the message: sent twice, stored once.':
    'メッセージに付ける独自の ID: 2 回送っても保存されるのは 1 回だけです。',
  'When the message was sent: any RFC 3339 date-time (`T`/`Z` in either case, any number of fraction digits, a leap second `23:59:60` UTC, `Z` or `±HH:MM`), from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z. Stored to the millisecond: further fraction digits are truncated, not rounded; a leap second is kept as 23:59:59.999 UTC. When the message arrives if absent.':
    'メッセージが送信された日時: 任意の RFC 3339 の date-time(`T`/`Z` は大文字・小文字どちらでも可、小数部の桁数は任意、UTC のうるう秒 `23:59:60`、`Z` または `±HH:MM`)で、0000-01-01T00:00:00Z から 9999-12-31T23:59:59.999Z まで。ミリ秒単位で保存されます: それより細かい小数部は四捨五入せずに切り捨てられ、うるう秒は 23:59:59.999 UTC として保存されます。省略時はメッセージの到着時刻。',
  'The HubSpot contact id; a whole number is stored as its decimal string.':
    'HubSpot の連絡先 ID。整数は 10 進数の文字列として保存されます。',
  'The display name.': '表示名。',
  "Replies to LINE friends: sent with LINE's push API once, and kept as messages from You, with a key of scope send.":
    'LINE の友だちへの返信: LINE のプッシュ API で一度だけ送信し、You からのメッセージとして保存します。スコープ send のキーで使います。',
  'Sends messages to a LINE friend of the hub (a reply), and keeps them':
    'ハブの LINE の友だちにメッセージを送信し(返信)、保存します',
  "Queued durably and answered 202; chatlog then pushes them with LINE's push API on LINE_API_BASE_URL, with the same X-Line-Retry-Key at every attempt, so LINE takes them once. Once LINE took them, each is stored as a message of the contact with sender You under its LINE id: the read API, the feed, search and outgoing webhooks show it. Sends of one contact reach LINE in the order accepted. LINE's 429, 5xx and network errors are retried for up to 24 hours; another refusal fails the send with LINE's words, and nothing is stored. Takes a key of scope send.":
    '確実にキューに保存してから 202 を返します。その後 chatlog が LINE_API_BASE_URL の LINE プッシュ API で送信します。すべての試行に同じ X-Line-Retry-Key を付けるため、LINE が受け付けるのは一度だけです。LINE が受け付けると、各メッセージは LINE のメッセージ ID で、送信者 You の連絡先のメッセージとして保存され、読み取り API、フィード、検索、送信 Webhook に表示されます。同じ連絡先への送信は、受け付けた順に LINE に届きます。LINE の 429、5xx、ネットワークエラーは最大 24 時間再試行します。それ以外の拒否では、LINE の言葉を付けて送信を失敗とし、何も保存しません。スコープ send のキーが必要です。',
  'An API key of scope send for this hub, unless it is sent in Authorization.':
    'このハブ用のスコープ send の API キー(Authorization で送る場合は不要)。',
  'The same key for the hub within 24 hours answers the first send and sends nothing again.':
    '同じハブで 24 時間以内に同じキーを使うと、最初の送信を返し、再送信はしません。',
  'Accepted: kept, and on its way to LINE (or the send this idempotency key named).':
    '受け付けました: 保存され、LINE へ送信中です(または、この冪等キーが指す送信)。',
  "The send's id (GET /api/line/{hubId}/sends/{id}).": '送信の ID(GET /api/line/{hubId}/sends/{id})。',
  'pending until LINE took it (sent) or refused it for good (failed).':
    'LINE が受け付ける(sent)か、最終的に拒否する(failed)までは pending です。',
  'Pushes to LINE made so far.': 'これまでに LINE へ行ったプッシュの回数。',
  "Why it failed, in LINE's words.": '失敗した理由(LINE の言葉のまま)。',
  "LINE's ids of the messages sent: each is stored as a message of the contact, sender You.":
    '送信したメッセージの LINE の ID。それぞれが送信者 You の連絡先のメッセージとして保存されます。',
  'Both kinds of credentials, a bad hub id, or a body that is not a send (naming the field).':
    '両方の種類の認証情報、不正なハブ ID、または送信として正しくない本文(該当フィールドを示します)。',
  'A key of another scope (this takes send), or of another hub.':
    '別のスコープのキー(ここでは send が必要です)、または別のハブのキー。',
  'The hub has no contact of that LINE id: nothing was sent.':
    'ハブにその LINE ID の連絡先がありません。何も送信していません。',
  'The hub has no LINE channel access token: nothing can be sent.':
    'ハブに LINE のチャネルアクセストークンがありません。送信できません。',
  "Where a send is: pending, sent (with its LINE message ids) or failed (with LINE's words)":
    '送信の状態: pending、sent(LINE のメッセージ ID 付き)または failed(LINE の言葉付き)',
  "The send's id, from its 202.": '202 の応答で返された送信の ID。',
  'An API key of scope send or read for this hub, unless it is sent in Authorization.':
    'このハブ用のスコープ send または read の API キー(Authorization で送る場合は不要)。',
  'The send.': '送信。',
  'A key of another scope (this takes send or read), or of another hub.':
    '別のスコープのキー(ここでは send または read が必要です)、または別のハブのキー。',
  'The hub has no send of that id.': 'ハブにその ID の送信がありません。',
  "A send of the hub, by the id its 202 gave. attempts counts the pushes made so far; error says why the last one did not go, in LINE's words, once it failed. Takes a key of scope send or read.":
    '202 の応答で返された ID によるハブの送信。attempts はこれまでのプッシュの回数です。失敗した場合、error に最後の試行が届かなかった理由を LINE の言葉のまま示します。スコープ send または read のキーが必要です。',
  'How well the account answers: messages, contacts, waits and response times per day':
    'アカウントの応答状況: 日ごとのメッセージ数、連絡先数、待ち件数、応答時間',
  "Per contact, over all of its messages in the order GET /messages gives them, a wait starts at a message from the friend that is the contact's first or follows one from the account, and ends at the next message from the account; it belongs to the day it starts on. Days are those of the hub (or `tz`); every day of the range is listed, oldest first. `hours[w][h]` counts messages from friends by weekday (0 = Monday) and hour. Figures reflect every write already answered. The key goes in `Authorization: Bearer <key>` (kept out of access logs) or in `apikey`, not both.":
    '連絡先ごとに、GET /messages と同じ順のすべてのメッセージについて、待ちは友だちからのメッセージのうち、その連絡先の最初のもの、またはアカウントからのメッセージの次のものから始まり、アカウントからの次のメッセージで終わります。待ちは始まった日に数えます。日はハブ(または `tz`)のタイムゾーンによります。範囲のすべての日を古い順に返します。`hours[w][h]` は友だちからのメッセージを曜日(0 = 月曜日)と時刻ごとに数えます。応答済みのすべての書き込みが反映されます。キーは `Authorization: Bearer <key>`(アクセスログに残りません)または `apikey` のどちらか一方で送ります。',
  'The last day (inclusive): at most 366 days, both counted.':
    '最終日(この日を含む)。両端を含めて最大 366 日です。',
  'An IANA time zone that reads the days for this request.':
    'このリクエストで日を読むための IANA タイムゾーン。',
  "The range's figures: totals, one row a day, and the weekday × hour grid.":
    '範囲の数値: 合計、1 日 1 行の表、曜日 × 時刻の表。',
  'The zone the days are read in (tz when given).': '日を読んだタイムゾーン(tz を指定した場合はその値)。',
  'The whole range (contacts: those with a message in it).':
    '範囲全体(連絡先: 範囲内にメッセージがある連絡先)。',
  'Messages from friends (every sender but You).': '友だちからのメッセージ(送信者が You 以外のすべて)。',
  'Messages from the account (sender You).': 'アカウントからのメッセージ(送信者 You)。',
  'Contacts with at least one message.': 'メッセージが 1 件以上ある連絡先。',
  'Contacts whose first message ever (of those kept) falls here.':
    '(保存されているうちで)最初のメッセージがこの日にある連絡先。',
  "Waits that start here: a friend's message that is the contact's first, or follows one from the account.":
    'この日に始まった待ち: 連絡先の最初のメッセージ、またはアカウントからのメッセージに続く友だちからのメッセージ。',
  'Of those waits, the ones the account answered before the end of the day `to`.':
    'そのうち、`to` の日の終わりまでにアカウントが応答した待ち。',
  'Of those waits, the ones not answered by the end of the day `to`.':
    'そのうち、`to` の日の終わりまでに応答がなかった待ち。',
  "The answered waits' response times in seconds (milliseconds as the fraction), nearest rank; null when none was answered.":
    '応答済みの待ちの応答時間(秒、小数部はミリ秒)、最近接順位法。応答済みの待ちがない場合は null。',
  'Every day of the range, oldest first; empty days with zeros and null response times.':
    '範囲のすべての日(古い順)。メッセージのない日は 0 と null の応答時間です。',
  'Messages from friends by weekday (0 = Monday … 6 = Sunday), then hour (0-23), in the zone.':
    '友だちからのメッセージを曜日(0 = 月曜日 … 6 = 日曜日)、時刻(0-23)ごとに数えたもの(そのタイムゾーンで)。',
  'How well the account answers: messages, contacts, waits and response times per day, and when friends write, with a key of scope read.':
    'アカウントの応答状況: 日ごとのメッセージ数、連絡先数、待ち件数、応答時間と、友だちがメッセージを送る時間帯(スコープ read のキー)。',
};
