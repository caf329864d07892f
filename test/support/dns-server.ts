import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import ipaddr from 'ipaddr.js';

/**
 * A tiny authoritative DNS responder over UDP for tests: answers A, AAAA and MX questions from a
 * fixed table, NXDOMAIN for names it does not know, an empty answer (NODATA) for a known name
 * without that record type, SERVFAIL for names listed in `servfail`, REFUSED for those in `refused`. Enough for node:dns's
 * Resolver (pointed at it with DNS_SERVER=127.0.0.1:<port>); no recursion, no TCP, no EDNS.
 */
export interface DnsRecords {
  A?: string[];
  AAAA?: string[];
  /** `exchange: ""` is a null MX (RFC 7505: the domain accepts no mail). */
  MX?: { priority: number; exchange: string }[];
}

export interface DnsServer {
  /** `127.0.0.1:<port>`, the form DNS_SERVER takes. */
  address: string;
  /** Questions received, as `name TYPE` (lower case). */
  queries: string[];
  stop(): Promise<void>;
}

const TYPES: Record<number, keyof DnsRecords> = { 1: 'A', 28: 'AAAA', 15: 'MX' };

function encodeName(name: string): Buffer {
  const labels = name.replace(/\.$/, '').split('.').filter(Boolean);
  return Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'ascii')])), Buffer.from([0])]);
}

/** Reads the question name starting at `offset`; answers it and the offset just past it. */
function readName(msg: Buffer, offset: number): [string, number] {
  const labels: string[] = [];
  let at = offset;
  while (at < msg.length && msg[at] !== 0) {
    const len = msg[at] as number;
    labels.push(msg.subarray(at + 1, at + 1 + len).toString('ascii'));
    at += 1 + len;
  }
  return [labels.join('.').toLowerCase(), at + 1];
}

function rdata(type: keyof DnsRecords, value: string | { priority: number; exchange: string }): Buffer {
  if (type === 'MX') {
    const mx = value as { priority: number; exchange: string };
    const pref = Buffer.alloc(2);
    pref.writeUInt16BE(mx.priority);
    return Buffer.concat([pref, encodeName(mx.exchange)]);
  }
  return Buffer.from(ipaddr.parse(value as string).toByteArray());
}

function answer(query: Buffer, zone: Record<string, DnsRecords>, servfail: Set<string>, refused: Set<string>): Buffer | null {
  if (query.length < 12) return null;
  const [name, end] = readName(query, 12);
  const qtype = query.readUInt16BE(end);
  const question = query.subarray(12, end + 4);
  const records = zone[name];
  const type = TYPES[qtype];
  let rcode = 0;
  const answers: Buffer[] = [];
  if (servfail.has(name)) rcode = 2;
  else if (refused.has(name)) rcode = 5;
  else if (!records) rcode = 3;
  else if (type) {
    for (const value of (records[type] ?? []) as (string | { priority: number; exchange: string })[]) {
      const data = rdata(type, value);
      const head = Buffer.alloc(12);
      head.writeUInt16BE(0xc00c, 0); // pointer to the question's name
      head.writeUInt16BE(qtype, 2);
      head.writeUInt16BE(1, 4); // class IN
      head.writeUInt32BE(60, 6);
      head.writeUInt16BE(data.length, 10);
      answers.push(head, data);
    }
  }
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0); // same id
  header.writeUInt16BE(0x8400 | rcode, 2); // response, authoritative
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length / 2, 6);
  return Buffer.concat([header, question, ...answers]);
}

export async function startDnsServer(
  zone: Record<string, DnsRecords>,
  options: { servfail?: string[]; refused?: string[] } = {},
): Promise<DnsServer> {
  const lowerZone = Object.fromEntries(Object.entries(zone).map(([k, v]) => [k.toLowerCase(), v]));
  const servfail = new Set(options.servfail?.map((s) => s.toLowerCase()));
  const refused = new Set(options.refused?.map((s) => s.toLowerCase()));
  const queries: string[] = [];
  const socket: Socket = createSocket('udp4');
  socket.on('message', (msg: Buffer, from: RemoteInfo) => {
    try {
      const [name, end] = readName(msg, 12);
      queries.push(`${name} ${TYPES[msg.readUInt16BE(end)] ?? msg.readUInt16BE(end)}`);
      const reply = answer(msg, lowerZone, servfail, refused);
      if (reply) socket.send(reply, from.port, from.address);
    } catch {
      // A malformed packet gets no answer, as from a real server.
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
