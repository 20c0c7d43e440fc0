import { describe, expect, it } from 'vitest';
import { addressRefusal, webhookUrlProblem, type AddressAllowance } from './webhook-addresses.js';

const NONE: AddressAllowance = { loopback: false, privateNetworks: false };
const LOOPBACK: AddressAllowance = { loopback: true, privateNetworks: false };
const PRIVATE: AddressAllowance = { loopback: false, privateNetworks: true };
const BOTH: AddressAllowance = { loopback: true, privateNetworks: true };

/**
 * Every class of address, with the words its refusal holds and what opens it: `loopback` or
 * `private` (the allowance that takes it), or `never`.
 */
const REFUSED: Array<[address: string, words: string, opens: 'loopback' | 'private' | 'never']> = [
  ['127.0.0.1', 'is a loopback address', 'loopback'],
  ['127.8.9.10', 'is a loopback address', 'loopback'],
  ['::1', 'is a loopback address', 'loopback'],
  ['10.0.0.5', 'is a private address', 'private'],
  ['172.16.0.1', 'is a private address', 'private'],
  ['172.31.255.255', 'is a private address', 'private'],
  ['192.168.1.1', 'is a private address', 'private'],
  ['fc00::1', 'is a private (unique local) address', 'private'],
  ['fd12:3456::1', 'is a private (unique local) address', 'private'],
  ['100.64.0.1', 'is a carrier-grade NAT address', 'private'],
  ['100.127.255.254', 'is a carrier-grade NAT address', 'private'],
  ['169.254.1.1', 'is a link-local address', 'never'],
  ['fe80::1', 'is a link-local address', 'never'],
  ['fe80::1%eth0', 'is a link-local address', 'never'],
  ['169.254.169.254', 'is a cloud metadata address', 'never'],
  ['fd00:ec2::254', 'is a cloud metadata address', 'never'],
  ['fd00:ec2::254%eth0', 'is a cloud metadata address', 'never'],
  ['100.100.100.200', 'is a cloud metadata address', 'never'],
  ['0.0.0.0', 'is the unspecified address', 'never'],
  ['::', 'is the unspecified address', 'never'],
  ['224.0.0.1', 'is a multicast address', 'never'],
  ['239.255.255.250', 'is a multicast address', 'never'],
  ['ff02::1', 'is a multicast address', 'never'],
  ['255.255.255.255', 'is the broadcast address', 'never'],
  ['192.0.2.10', 'is a reserved address', 'never'],
  ['198.18.0.1', 'is a reserved address', 'never'],
  ['198.19.255.255', 'is a reserved address', 'never'],
  ['240.0.0.1', 'is a reserved address', 'never'],
  ['2001:db8::1', 'is a reserved address', 'never'],
  ['2001:2::1', 'is a benchmarking address', 'never'],
  ['fec0::1', 'is a site-local address', 'never'],
  // IPv6 forms of IPv4 addresses, judged by the IPv4 address inside.
  ['::ffff:127.0.0.1', 'is a loopback address', 'loopback'],
  ['::ffff:7f00:1', 'is a loopback address', 'loopback'],
  ['::ffff:10.0.0.5', 'is a private address', 'private'],
  ['::ffff:169.254.169.254', 'is a cloud metadata address', 'never'],
  ['64:ff9b::a00:5', 'is a private address (10.0.0.5, as a NAT64 address)', 'private'],
  ['64:ff9b::a9fe:a9fe', 'is a cloud metadata address (169.254.169.254, as a NAT64 address)', 'never'],
  // Tunnels' forms, refused whatever they carry: a relay may forward them anywhere.
  ['::7f00:1', 'is a loopback address (127.0.0.1, as an IPv4-compatible address)', 'never'],
  ['::808:808', 'is an IPv4-compatible address, which could reach any IPv4 address', 'never'],
  ['::ffff:0:a00:5', 'is a private address (10.0.0.5, as an IPv4-translated address)', 'never'],
  ['2002:7f00:1::', 'is a loopback address (127.0.0.1, as a 6to4 address)', 'never'],
  ['2002:808:808::1', 'is a 6to4 address, which could reach any IPv4 address', 'never'],
  // Teredo holds its client's IPv4 address inverted: 80ff:fffe is 127.0.0.1, f7f7:f7f7 is 8.8.8.8.
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'is a loopback address (127.0.0.1, as a Teredo address)', 'never'],
  [
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
    'is a Teredo address, which could reach any IPv4 address',
    'never',
  ],
  ['64:ff9b:1::a00:5', 'is a NAT64 address', 'never'],
  // Not addresses at all.
  ['not an address', 'is not an IP address', 'never'],
  ['', 'is not an IP address', 'never'],
  ['127.0.0.1:80', 'is not an IP address', 'never'],
  ['hooks.example.com', 'is not an IP address', 'never'],
];

describe('addressRefusal', () => {
  it.each(REFUSED)('refuses %s: it %s', (address, words) => {
    expect(addressRefusal(address, NONE)).toBe(`${address} ${words}`);
  });

  it.each(REFUSED)('takes %s only with the allowance that opens it (%s, %s)', (address, _words, opens) => {
    expect(addressRefusal(address, LOOPBACK) === null).toBe(opens === 'loopback');
    expect(addressRefusal(address, PRIVATE) === null).toBe(opens === 'private');
    expect(addressRefusal(address, BOTH) === null).toBe(opens !== 'never');
  });

  it.each([
    '93.184.215.14',
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4001:81c::200e',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('takes %s, a public address, whatever is allowed', (address) => {
    for (const allow of [NONE, LOOPBACK, PRIVATE, BOTH]) expect(addressRefusal(address, allow)).toBeNull();
  });
});

describe('webhookUrlProblem', () => {
  it('takes https to a name or a public address', () => {
    expect(webhookUrlProblem('https://hooks.example.com/placard?x=1', NONE)).toBeNull();
    expect(webhookUrlProblem('https://93.184.215.14:8443/in', NONE)).toBeNull();
    expect(webhookUrlProblem('https://[2606:4700:4700::1111]/in', NONE)).toBeNull();
  });

  const SETTING =
    "this machine is open only to the operator's own endpoints, where PLACARD_WEBHOOKS_ALLOW_LOOPBACK=true is set for the server and for the placard command";

  it('refuses plain http, but to this machine where loopback is allowed, naming the setting', () => {
    const https = `must use https: plain http goes only to this machine; ${SETTING}`;
    expect(webhookUrlProblem('http://hooks.example.com/', NONE)).toBe(https);
    expect(webhookUrlProblem('http://hooks.example.com/', BOTH)).toBe(
      'must use https: plain http goes only to this machine',
    );
    expect(webhookUrlProblem('http://10.0.0.5/', BOTH)).toBe(
      'must use https: plain http goes only to this machine',
    );
    expect(webhookUrlProblem('http://dev.localhost:3000/', LOOPBACK)).toBe(
      'must use https: plain http goes only to this machine',
    );
    expect(webhookUrlProblem('http://127.0.0.1:3000/', LOOPBACK)).toBeNull();
    expect(webhookUrlProblem('http://127.1.2.3:3000/', LOOPBACK)).toBeNull();
    expect(webhookUrlProblem('http://localhost:3000/', LOOPBACK)).toBeNull();
    expect(webhookUrlProblem('http://[::1]:3000/', LOOPBACK)).toBeNull();
    expect(webhookUrlProblem('ftp://hooks.example.com/', NONE)).toBe('must use https, not ftp');
  });

  it('says every problem of a URL at once', () => {
    expect(webhookUrlProblem('http://10.0.0.1/', NONE)).toBe(
      `must use https, and must not go to 10.0.0.1, a private address: plain http goes only to this machine; ${SETTING}; give the receiver's public host name or address`,
    );
    expect(webhookUrlProblem('http://127.0.0.1:3000/', NONE)).toBe(
      `must use https, and must not go to 127.0.0.1, a loopback address: plain http goes only to this machine; ${SETTING}`,
    );
    expect(webhookUrlProblem('http://localhost:3000/', NONE)).toBe(
      `must use https, and must not name this machine (localhost): plain http goes only to this machine; ${SETTING}`,
    );
  });

  it('refuses a literal address as addressRefusal does, in whatever spelling the URL gives it', () => {
    const refused = (address: string) =>
      `must not go to ${address}: give the receiver's public host name or address`;
    expect(webhookUrlProblem('https://10.1.2.3/', NONE)).toBe(refused('10.1.2.3, a private address'));
    expect(webhookUrlProblem('https://10.1.2.3/', PRIVATE)).toBeNull();
    expect(webhookUrlProblem('https://169.254.169.254/latest/meta-data', BOTH)).toBe(
      refused('169.254.169.254, a cloud metadata address'),
    );
    // URLs normalize their hosts: these are all 127.0.0.1.
    for (const url of ['https://2130706433/', 'https://0x7f.1/', 'https://127.1/'])
      expect(webhookUrlProblem(url, NONE)).toBe(`must not go to 127.0.0.1, a loopback address: ${SETTING}`);
    expect(webhookUrlProblem('https://[::ffff:127.0.0.1]/', NONE)).toBe(
      `must not go to ::ffff:7f00:1, a loopback address: ${SETTING}`,
    );
    expect(webhookUrlProblem('https://[::127.0.0.1]/', NONE)).toBe(
      refused('::7f00:1, a loopback address (127.0.0.1, as an IPv4-compatible address)'),
    );
  });

  it('refuses the names of this machine unless loopback is allowed', () => {
    for (const host of ['localhost', 'LOCALHOST', 'localhost.', 'dev.localhost', 'localhost.localdomain']) {
      expect(webhookUrlProblem(`https://${host}:3000/`, NONE)).toBe(
        `must not name this machine (${host.toLowerCase()}): ${SETTING}`,
      );
      expect(webhookUrlProblem(`https://${host}:3000/`, LOOPBACK)).toBeNull();
    }
  });

  it('refuses what is not a URL, credentials, fragments and very long URLs', () => {
    expect(webhookUrlProblem('hooks.example.com/placard', NONE)).toBe(
      'must be a full URL, such as https://hooks.example.com/placard, not "hooks.example.com/placard"',
    );
    expect(webhookUrlProblem('https://', NONE)).toMatch(/^must be a full URL/);
    for (const url of ['https://user:secret@hooks.example.com/', 'https://user@hooks.example.com/'])
      expect(webhookUrlProblem(url, NONE)).toMatch(/^must not hold a user name or password/);
    for (const url of ['https://hooks.example.com/#x', 'https://hooks.example.com/in#'])
      expect(webhookUrlProblem(url, NONE)).toMatch(/^must not have a fragment/);
    const long = `https://hooks.example.com/${'a'.repeat(2_000 - 26)}`;
    expect(long).toHaveLength(2_000);
    expect(webhookUrlProblem(long, NONE)).toBeNull();
    expect(webhookUrlProblem(`${long}a`, NONE)).toBe('must be at most 2,000 characters; this one has 2001');
  });
});
