// Where a webhook may be delivered (D19): the addresses and URLs refused so that an endpoint cannot
// make Placard reach into its own machine or network (server-side request forgery). The ranges are
// ipaddr.js's, a maintained table of the special-purpose address registries; what it does not say
// (which IPv6 forms carry an IPv4 address, and where) is read here.
import ipaddr from 'ipaddr.js';

/** What the operator allows beside public addresses (`PLACARD_WEBHOOKS_ALLOW_LOOPBACK`, `…_PRIVATE`). */
export interface AddressAllowance {
  loopback: boolean;
  privateNetworks: boolean;
}

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * The cloud providers' instance metadata services, refused whatever the allowance: they hand out the
 * machine's credentials to whoever asks. 169.254.169.254 (AWS, GCP, Azure, Oracle…) is link-local
 * and so refused anyway; AWS's IPv6 one is a unique local address and Alibaba's a carrier-grade NAT
 * one, both of which the private-networks allowance would otherwise open.
 */
const METADATA = ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200'].map((text) => ipaddr.parse(text));

/** ipaddr.js's range names, in words; any other name is said as it is. */
const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  uniqueLocal: 'a private (unique local) address',
  carrierGradeNat: 'a carrier-grade NAT address',
  linkLocal: 'a link-local address',
  unspecified: 'the unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  reserved: 'a reserved address',
  benchmarking: 'a benchmarking address',
  deprecatedSiteLocal: 'a site-local address',
  rfc6052: 'a NAT64 address',
  rfc6145: 'an IPv4-translated address',
  '6to4': 'a 6to4 address',
  teredo: 'a Teredo address',
};

/** Ranges the loopback allowance opens, and those the private-networks allowance opens. */
const LOOPBACK_RANGES = new Set(['loopback']);
const PRIVATE_RANGES = new Set(['private', 'uniqueLocal', 'carrierGradeNat']);

/** IPv4 from two 16-bit IPv6 parts. */
const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/**
 * The IPv4 address an IPv6 address carries, where its form says which: IPv4-compatible (`::a.b.c.d`,
 * deprecated), IPv4-translated (`::ffff:0:a.b.c.d`), NAT64's well-known prefix (`64:ff9b::a.b.c.d`),
 * 6to4 (`2002:aabb:ccdd::`) and Teredo (its client's address, stored inverted). IPv4-mapped ones
 * (`::ffff:a.b.c.d`) are turned into IPv4 by `ipaddr.process` before this is asked.
 * `reachesAny`: the form is a tunnel or relay, which may forward to any address, so it is refused
 * even when the IPv4 address is public; only NAT64 goes exactly where its IPv4 address says (an
 * IPv6-only network with DNS64 gives every IPv4-only receiver such an address).
 */
function embeddedIpv4(address: ipaddr.IPv6): { ipv4: ipaddr.IPv4; reachesAny: boolean } | null {
  const [a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0] = address.parts;
  const range = address.range();
  if (range === 'rfc6052' && a === 0x64 && b === 0xff9b && c === 0)
    return { ipv4: ipv4Of(g, h), reachesAny: false };
  if (range === 'rfc6145') return { ipv4: ipv4Of(g, h), reachesAny: true };
  if (range === '6to4') return { ipv4: ipv4Of(b, c), reachesAny: true };
  if (range === 'teredo') return { ipv4: ipv4Of(g ^ 0xffff, h ^ 0xffff), reachesAny: true };
  // ::/96 but :: and ::1: ipaddr.js calls these unicast, and a host with an automatic tunnel
  // (Linux's sit0) sends them to the IPv4 address inside.
  if (a === 0 && b === 0 && c === 0 && d === 0 && e === 0 && f === 0 && (g !== 0 || h > 1))
    return { ipv4: ipv4Of(g, h), reachesAny: true };
  return null;
}

/** Why `address` is refused, in words after "is" (e.g. `a loopback address`), or null. */
function refusedClass(address: Address, allow: AddressAllowance): string | null {
  // By value, so a zone (`fd00:ec2::254%eth0`) does not hide one.
  const bytes = address.toByteArray().join('.');
  if (METADATA.some((metadata) => metadata.toByteArray().join('.') === bytes))
    return 'a cloud metadata address';
  if (address.kind() === 'ipv6') {
    const embedded = embeddedIpv4(address as ipaddr.IPv6);
    if (embedded !== null) {
      const inner = refusedClass(embedded.ipv4, allow);
      const form = RANGE_WORDS[address.range()] ?? 'an IPv4-compatible address';
      if (inner !== null) return `${inner} (${embedded.ipv4.toString()}, as ${form})`;
      if (embedded.reachesAny) return `${form}, which could reach any IPv4 address`;
      return null;
    }
  }
  const range = address.range();
  if (range === 'unicast') return null;
  if (LOOPBACK_RANGES.has(range) && allow.loopback) return null;
  if (PRIVATE_RANGES.has(range) && allow.privateNetworks) return null;
  return RANGE_WORDS[range] ?? `a special-purpose address (${range})`;
}

/**
 * Null when a webhook may be delivered to `address` (an IP address as text), else why not, e.g.
 * `127.0.0.1 is a loopback address`. Only public (`unicast`) addresses are taken, plus loopback or
 * private networks (RFC 1918, unique local, carrier-grade NAT) when allowed; link-local and metadata
 * addresses never. An IPv6 form of an IPv4 address is judged by the IPv4 address (`::ffff:127.0.0.1`
 * is loopback); a tunnel's form (6to4, Teredo, IPv4-compatible) is refused whatever it carries.
 */
export function addressRefusal(address: string, allow: AddressAllowance): string | null {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const refused = refusedClass(ipaddr.process(address), allow);
  return refused === null ? null : `${address} is ${refused}`;
}

/** The longest URL registered: longer ones are not receivers' addresses. */
const MAX_URL_LENGTH = 2_000;

/** A name of this machine, which needs no DNS to say so (RFC 6761 gives all of `.localhost` to it). */
const isLocalName = (host: string) => /(^|\.)localhost\.?$/.test(host) || host === 'localhost.localdomain';

/** What the person registering a refused URL is told beside its problems. */
const HTTP_ONLY_HERE = 'plain http goes only to this machine';
/** The setting that opens this machine; the `placard` command checks with its own environment. */
const THIS_MACHINE =
  "this machine is open only to the operator's own endpoints, where PLACARD_WEBHOOKS_ALLOW_LOOPBACK=true is set for the server and for the placard command";
const PUBLIC = "give the receiver's public host name or address";

/**
 * Null when `url` may be registered as a webhook endpoint, else what is wrong with it, worded to
 * follow the field's name (`url must use https …`): every problem at once, then what to do. Checked
 * without DNS: a name is resolved, and every address it resolves to checked, at each delivery
 * (`services/webhook-sender.ts`), as it may change after registering.
 */
export function webhookUrlProblem(url: string, allow: AddressAllowance): string | null {
  if (url.length > MAX_URL_LENGTH) return `must be at most 2,000 characters; this one has ${url.length}`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `must be a full URL, such as https://hooks.example.com/placard, not "${url}"`;
  }
  if (parsed.username !== '' || parsed.password !== '')
    return 'must not hold a user name or password: deliveries are signed, and the receiver checks the signature instead';
  // `hash` is empty for a bare `#` too; the serialized URL keeps it.
  if (parsed.href.includes('#')) return 'must not have a fragment (the part from #): remove it';
  const problems: string[] = [];
  const notes = new Set<string>();
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = ipaddr.isValid(host);
  const loopbackHost = host === 'localhost' || (literal && ipaddr.process(host).range() === 'loopback');
  if (parsed.protocol === 'http:') {
    if (!(loopbackHost && allow.loopback)) {
      problems.push('must use https');
      notes.add(HTTP_ONLY_HERE);
      if (!allow.loopback) notes.add(THIS_MACHINE);
    }
  } else if (parsed.protocol !== 'https:') {
    problems.push(`must use https, not ${parsed.protocol.replace(/:$/, '')}`);
  }
  if (!literal && isLocalName(host) && !allow.loopback) {
    problems.push(`must not name this machine (${host})`);
    notes.add(THIS_MACHINE);
  }
  const refused = literal ? refusedClass(ipaddr.process(host), allow) : null;
  if (refused !== null) {
    problems.push(`must not go to ${host}, ${refused}`);
    notes.add(ipaddr.process(host).range() === 'loopback' ? THIS_MACHINE : PUBLIC);
  }
  if (problems.length === 0) return null;
  return `${problems.join(', and ')}${notes.size === 0 ? '' : `: ${[...notes].join('; ')}`}`;
}
