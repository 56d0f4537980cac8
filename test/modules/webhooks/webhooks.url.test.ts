import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  type AddressKind,
  checkEndpointUrl,
  classifyAddress,
  guardedLookup,
} from '../../../src/modules/webhooks/webhooks.url.js';

/** The oracle: Node's own BlockList, filled from the ranges as their RFCs write them. */
const METADATA = ['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254'];
const PRIVATE: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['10.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  ['127.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['fc00::', 7, 'ipv6'],
];
const FORBIDDEN: Array<[string, number, 'ipv4' | 'ipv6']> = [
  ['0.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['192.0.0.0', 24, 'ipv4'],
  ['192.0.2.0', 24, 'ipv4'],
  ['192.88.99.0', 24, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['198.51.100.0', 24, 'ipv4'],
  ['203.0.113.0', 24, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::', 128, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['2001:db8::', 32, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['fec0::', 10, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
];
function list(ranges: Array<[string, number, 'ipv4' | 'ipv6']>): net.BlockList {
  const blocks = new net.BlockList();
  for (const [address, bits, family] of ranges) blocks.addSubnet(address, bits, family);
  return blocks;
}
const privateList = list(PRIVATE);
const forbiddenList = list(FORBIDDEN);
function oracle(address: string, family: 'ipv4' | 'ipv6'): AddressKind {
  if (METADATA.includes(address)) return 'forbidden';
  if (privateList.check(address, family)) return 'private';
  if (forbiddenList.check(address, family)) return 'forbidden';
  return 'public';
}

/** IPv4 addresses, half of them drawn near the edges of the ranges above. */
const edges = [...PRIVATE, ...FORBIDDEN]
  .filter(([, , f]) => f === 'ipv4')
  .map(([a]) => a.split('.').map(Number));
const ipv4 = fc
  .oneof(
    fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)),
    fc
      .tuple(fc.constantFrom(...edges), fc.integer({ min: -2, max: 2 }), fc.nat(255), fc.nat(255))
      .map(
        ([[a = 0, b = 0], db, c, d]) =>
          [a, Math.min(255, Math.max(0, b + db)), c, d] as [number, number, number, number],
      ),
  )
  .map((bytes) => bytes.join('.'));

const group = fc.nat(0xffff).map((n) => n.toString(16));
const ipv6Prefixes = ['fc00', 'fd00', 'fe80', 'febf', 'fec0', 'ff02', '2001:db8', '100', '2001', '2a00', '0'];
const ipv6 = fc
  .tuple(fc.constantFrom(...ipv6Prefixes), fc.array(group, { minLength: 7, maxLength: 7 }))
  .map(([prefix, rest]) => [...prefix.split(':'), ...rest].slice(0, 8).join(':'))
  // The canonical, compressed form, as a resolver gives it.
  .map((address) => new URL(`http://[${address}]/`).hostname.slice(1, -1));

test('every IPv4 address is classified as the ranges say (oracle: net.BlockList)', () => {
  fc.assert(
    fc.property(ipv4, (address) => classifyAddress(address) === oracle(address, 'ipv4')),
    { numRuns: 20_000 },
  );
});

test('every IPv6 address is classified as the ranges say', () => {
  fc.assert(
    fc.property(ipv6, (address) => {
      const embedsIpv4 =
        /^::(ffff:)?[0-9a-f]*:?[0-9a-f]*$|^64:ff9b::|^2002:/.test(address) &&
        address !== '::1' &&
        address !== '::';
      fc.pre(!embedsIpv4);
      return classifyAddress(address) === oracle(address, 'ipv6');
    }),
    { numRuns: 20_000 },
  );
});

test('an IPv6 address that carries an IPv4 one is that IPv4 address', () => {
  fc.assert(
    fc.property(ipv4, (address) => {
      const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
      const hex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
      const kind = classifyAddress(address);
      return (
        classifyAddress(`::ffff:${address}`) === kind &&
        classifyAddress(`::ffff:${hex}`) === kind &&
        classifyAddress(`64:ff9b::${address}`) === kind &&
        classifyAddress(`2002:${hex}::1`) === kind
      );
    }),
    { numRuns: 5_000 },
  );
});

test('the cloud metadata addresses are never reached, whatever range they sit in', () => {
  for (const address of [...METADATA, '::ffff:169.254.169.254'])
    assert.equal(classifyAddress(address), 'forbidden');
  assert.equal(classifyAddress('not an address'), 'forbidden');
  assert.equal(classifyAddress('fe80::1%eth0'), 'forbidden');
});

test('an endpoint URL: https to public addresses; private ones and http only when allowed', async () => {
  const names: Record<string, string[]> = {
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'mixed.example.com': ['93.184.216.34', '10.0.0.5'],
    'internal.example': ['10.1.2.3'],
    'metadata.example': ['169.254.169.254'],
  };
  const resolve = async (host: string) => {
    const found = names[host];
    if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return found;
  };
  const closed = { allowPrivate: false };
  const open = { allowPrivate: true };
  const verdict = async (url: string, policy: { allowPrivate: boolean }) => {
    const result = await checkEndpointUrl(url, policy, resolve);
    return result.ok ? 'ok' : result.reason;
  };
  assert.equal(await verdict('https://hooks.example.com/chatlog', closed), 'ok');
  assert.match(await verdict('http://hooks.example.com/chatlog', closed), /must be https/);
  assert.match(await verdict('http://hooks.example.com/chatlog', open), /public endpoint must use https/);
  assert.match(await verdict('https://mixed.example.com/', closed), /10\.0\.0\.5 is a private/);
  assert.equal(await verdict('https://mixed.example.com/', open), 'ok');
  assert.equal(await verdict('http://internal.example/', open), 'ok');
  assert.match(await verdict('https://metadata.example/', open), /never reached/);
  assert.match(await verdict('https://[::1]:8443/', closed), /::1 is a private/);
  assert.equal(await verdict('https://[::1]:8443/', open), 'ok');
  assert.match(await verdict('https://nowhere.example/', closed), /does not resolve/);
  assert.match(await verdict('ftp://hooks.example.com/', open), /must be https/);
  assert.match(await verdict('hooks.example.com/x', open), /not an absolute/);
  assert.match(await verdict('https://2130706433/', closed), /127\.0\.0\.1 is a private/);
});

test('at delivery, the connection goes only to an address that passed the check', async (t) => {
  const server = http.createServer((_request, response) => response.end('delivered'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server?.close());
  const { port } = server.address() as net.AddressInfo;
  const get = (policy: { allowPrivate: boolean }) =>
    new Promise<string>((resolve) => {
      const request = http.get(
        {
          host: 'receiver.test',
          port,
          path: '/',
          // A connection per delivery: a pooled one would skip the look-up.
          agent: false,
          lookup: guardedLookup('http:', policy, async () => ['127.0.0.1']),
        },
        (response) => {
          let body = '';
          response.on('data', (chunk) => {
            body += chunk;
          });
          response.on('end', () => resolve(body));
        },
      );
      request.on('error', (error: NodeJS.ErrnoException) => resolve(`${error.code}: ${error.message}`));
    });
  assert.equal(await get({ allowPrivate: true }), 'delivered');
  assert.match(await get({ allowPrivate: false }), /^ECHATLOGREFUSED: 127\.0\.0\.1 is a private/);
});
