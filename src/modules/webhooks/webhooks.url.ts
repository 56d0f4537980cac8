/**
 * Where chatlog may send outgoing webhooks (CONTRACT §10), so that an endpoint cannot turn chatlog
 * into a way into the network it runs in (SSRF). An endpoint is `https` to public addresses; with
 * CHATLOG_WEBHOOK_ALLOW_PRIVATE=true also to private and loopback addresses, and `http` to those
 * only. Link-local, cloud metadata, multicast, reserved and documentation addresses are never
 * reached. The name is resolved and every address checked when the endpoint is added, and again at
 * each delivery; a connection goes only to a checked address (`guardedLookup` checks and hands it
 * the address, `pinnedLookup` hands it one checkedAddresses allowed), so a name that changes its
 * answer between check and connect is checked on the address used.
 */
import dns from 'node:dns';
import net from 'node:net';

/** What an address is, for the rules above. */
export type AddressKind = 'public' | 'private' | 'forbidden';

type Range = [first: bigint, bits: number, width: 32 | 128, kind: AddressKind];

function v4(text: string): bigint {
  return text.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

function v6(text: string): bigint {
  // Expand `::` and an embedded dotted quad, then read eight groups of 16 bits.
  let head = text;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(head);
  if (dotted?.[1]) {
    const n = v4(dotted[1]);
    head = `${head.slice(0, -dotted[1].length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [left = '', right] = head.split('::');
  const leftGroups = left === '' ? [] : left.split(':');
  const rightGroups = right === undefined || right === '' ? [] : right.split(':');
  const groups =
    right === undefined
      ? leftGroups
      : [...leftGroups, ...Array(8 - leftGroups.length - rightGroups.length).fill('0'), ...rightGroups];
  return groups.reduce((n, group) => (n << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

/** Most specific first: the first range that holds an address decides its kind. */
const RANGES: Range[] = [
  // Cloud metadata services, whatever range they sit in.
  [v4('169.254.169.254'), 32, 32, 'forbidden'],
  [v4('169.254.170.2'), 32, 32, 'forbidden'],
  [v4('100.100.100.200'), 32, 32, 'forbidden'],
  [v6('fd00:ec2::254'), 128, 128, 'forbidden'],
  // IPv4.
  [v4('0.0.0.0'), 8, 32, 'forbidden'],
  [v4('10.0.0.0'), 8, 32, 'private'],
  [v4('100.64.0.0'), 10, 32, 'private'],
  [v4('127.0.0.0'), 8, 32, 'private'],
  [v4('169.254.0.0'), 16, 32, 'forbidden'],
  [v4('172.16.0.0'), 12, 32, 'private'],
  [v4('192.0.0.0'), 24, 32, 'forbidden'],
  [v4('192.0.2.0'), 24, 32, 'forbidden'],
  [v4('192.88.99.0'), 24, 32, 'forbidden'],
  [v4('192.168.0.0'), 16, 32, 'private'],
  [v4('198.18.0.0'), 15, 32, 'forbidden'],
  [v4('198.51.100.0'), 24, 32, 'forbidden'],
  [v4('203.0.113.0'), 24, 32, 'forbidden'],
  [v4('224.0.0.0'), 4, 32, 'forbidden'],
  [v4('240.0.0.0'), 4, 32, 'forbidden'],
  // IPv6 (addresses that embed an IPv4 one are read as that one, below).
  [v6('::'), 128, 128, 'forbidden'],
  [v6('::1'), 128, 128, 'private'],
  [v6('100::'), 64, 128, 'forbidden'],
  [v6('2001:db8::'), 32, 128, 'forbidden'],
  [v6('fc00::'), 7, 128, 'private'],
  [v6('fe80::'), 10, 128, 'forbidden'],
  [v6('fec0::'), 10, 128, 'forbidden'],
  [v6('ff00::'), 8, 128, 'forbidden'],
];

/** IPv6 prefixes whose addresses carry an IPv4 address, and where (a shift from the right). */
const EMBEDDING: Array<[prefix: bigint, bits: number, shift: bigint]> = [
  [v6('::ffff:0:0'), 96, 0n], // IPv4-mapped
  [v6('::'), 96, 0n], // IPv4-compatible (deprecated, still routed by some stacks)
  [v6('64:ff9b::'), 96, 0n], // NAT64
  [v6('2002::'), 16, 80n], // 6to4
];

function inRange(n: bigint, first: bigint, bits: number, width: number): boolean {
  const shift = BigInt(width - bits);
  return n >> shift === first >> shift;
}

/** The kind of an IP address (as `net.isIP` reads it); an unreadable one is forbidden. */
export function classifyAddress(address: string): AddressKind {
  const family = net.isIP(address);
  if (family === 0) return 'forbidden';
  let n = family === 4 ? v4(address) : v6(address.replace(/%.*$/, ''));
  let width: 32 | 128 = family === 4 ? 32 : 128;
  if (width === 128 && n > 1n) {
    const embedding = EMBEDDING.find(([prefix, bits]) => inRange(n, prefix, bits, 128));
    if (embedding) {
      n = (n >> embedding[2]) & 0xffffffffn;
      width = 32;
    }
  }
  for (const [first, bits, rangeWidth, kind] of RANGES) {
    if (rangeWidth === width && inRange(n, first, bits, width)) return kind;
  }
  return 'public';
}

export interface UrlPolicy {
  /** CHATLOG_WEBHOOK_ALLOW_PRIVATE: private and loopback addresses may be reached (and by http). */
  allowPrivate: boolean;
}

/** Why an address may not be reached under the policy and scheme, or undefined when it may. */
export function addressProblem(
  address: string,
  scheme: 'http:' | 'https:',
  policy: UrlPolicy,
): string | undefined {
  const kind = classifyAddress(address);
  if (kind === 'forbidden') return `${address} is a link-local, metadata or reserved address, never reached`;
  if (kind === 'private' && !policy.allowPrivate) {
    return `${address} is a private or loopback address (CHATLOG_WEBHOOK_ALLOW_PRIVATE=true allows it)`;
  }
  if (scheme === 'http:' && kind === 'public') return 'a public endpoint must use https';
  return undefined;
}

export type Resolve = (host: string) => Promise<string[]>;

/** Every address a name resolves to, as the operating system resolves it for a connection. */
export const resolveAll: Resolve = async (host) =>
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/** The endpoint, or why chatlog will not send to it. Checks the URL and every address its host has now. */
export async function checkEndpointUrl(
  text: string,
  policy: UrlPolicy,
  resolve: Resolve = resolveAll,
): Promise<{ ok: true; url: URL } | { ok: false; reason: string }> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'the URL is not an absolute http or https URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return { ok: false, reason: 'the URL must be https (or http to a private address, when allowed)' };
  }
  if (url.protocol === 'http:' && !policy.allowPrivate) {
    return {
      ok: false,
      reason: 'the URL must be https (http to a private address needs CHATLOG_WEBHOOK_ALLOW_PRIVATE=true)',
    };
  }
  const checked = await checkedAddresses(url.hostname, url.protocol, policy, resolve);
  return checked.ok ? { ok: true, url } : checked;
}

/**
 * Every address `hostname` (a name, or an address, bracketed or not) has now, each allowed under
 * the policy; or why not, naming the address refused.
 */
export async function checkedAddresses(
  hostname: string,
  scheme: 'http:' | 'https:',
  policy: UrlPolicy,
  resolve: Resolve = resolveAll,
): Promise<{ ok: true; addresses: string[] } | { ok: false; reason: string }> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  try {
    addresses = net.isIP(host) ? [host] : await resolve(host);
  } catch {
    return { ok: false, reason: `${hostname} does not resolve` };
  }
  if (addresses.length === 0) return { ok: false, reason: `${hostname} does not resolve` };
  for (const address of addresses) {
    const problem = addressProblem(address, scheme, policy);
    // A name says which address it resolved to; an address speaks for itself.
    if (problem) return { ok: false, reason: address === host ? problem : `${hostname}: ${problem}` };
  }
  return { ok: true, addresses };
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/** A `lookup` that connects to the first of addresses already checked (checkedAddresses). */
export function pinnedLookup(addresses: readonly string[]) {
  const first = addresses[0] ?? '';
  return (_host: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    if (options.all) callback(null, [{ address: first, family: net.isIP(first) }]);
    else callback(null, first, net.isIP(first));
  };
}

/**
 * A `lookup` for http(s).request at delivery: resolves the name, refuses the connection when any
 * address may not be reached, and otherwise connects to the first, checked address. Use it with a
 * connection per delivery (`agent: false`): a pooled connection is reused without a look-up (with
 * a pool, check each delivery with checkedAddresses and connect with pinnedLookup). Node connects to an IP address written in the URL without calling
 * it at all: check such a host with `addressProblem` first (attemptDelivery does).
 */
export function guardedLookup(scheme: 'http:' | 'https:', policy: UrlPolicy, resolve: Resolve = resolveAll) {
  return (host: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    (net.isIP(bare) ? Promise.resolve([bare]) : resolve(bare)).then(
      (addresses) => {
        const problem =
          addresses.length === 0
            ? `${host} does not resolve`
            : addresses.map((address) => addressProblem(address, scheme, policy)).find(Boolean);
        if (problem) {
          callback(Object.assign(new Error(problem), { code: 'ECHATLOGREFUSED' }), '');
          return;
        }
        const first = addresses[0] ?? '';
        if (options.all) callback(null, [{ address: first, family: net.isIP(first) }]);
        else callback(null, first, net.isIP(first));
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}
