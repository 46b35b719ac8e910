// Listen addresses (and node IPs) parsed as IPs, not compared as strings: "::0", "0:0:0:0:0:0:0:0"
// and "::ffff:0.0.0.0" are all the unspecified address (Go's net.IP.IsUnspecified, which also looks
// through IPv4-mapped IPv6), and every 127/8 or ::1 spelling is loopback. The safety net that keeps
// an unauthenticated port on loopback depends on this being right.
import { isIP } from "node:net";

/** 16 bytes of an IPv6 address or 4 of an IPv4 one; undefined when `s` is not an IP. */
export function parseIP(s: string): Uint8Array | undefined {
  const text = s.startsWith("[") && s.endsWith("]") ? s.slice(1, -1) : s;
  const family = isIP(text);
  if (family === 4) return Uint8Array.from(text.split(".").map(Number));
  if (family !== 6) return undefined;
  return parseIPv6(text);
}

function parseIPv6(text: string): Uint8Array {
  let s = text.split("%")[0]!;
  const out = new Uint8Array(16);
  // A trailing dotted quad ("::ffff:1.2.3.4") becomes two hex groups.
  const dot = s.lastIndexOf(".");
  if (dot >= 0) {
    const colon = s.lastIndexOf(":");
    const [a, b, c, d] = s
      .slice(colon + 1)
      .split(".")
      .map(Number) as [number, number, number, number];
    s = `${s.slice(0, colon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = s.split("::");
  const groups = (x: string) => (x === "" ? [] : x.split(":").map((g) => parseInt(g, 16)));
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** The IPv4 address inside an IPv4-mapped IPv6 one (::ffff:a.b.c.d), as Go's To4 does. */
function to4(ip: Uint8Array): Uint8Array | undefined {
  if (ip.length === 4) return ip;
  const mapped = ip.slice(0, 10).every((b) => b === 0) && ip[10] === 0xff && ip[11] === 0xff;
  return mapped ? ip.slice(12) : undefined;
}

/** 0.0.0.0, ::, and every other spelling of them ("" counts too: Go listens on all interfaces). */
export function isUnspecified(address: string): boolean {
  if (address === "") return true;
  const ip = parseIP(address);
  if (!ip) return false;
  const v4 = to4(ip);
  return (v4 ?? ip).every((b) => b === 0);
}

/** 127.0.0.0/8 (also IPv4-mapped) or ::1. */
export function isLoopback(address: string): boolean {
  const ip = parseIP(address);
  if (!ip) return false;
  const v4 = to4(ip);
  if (v4) return v4[0] === 127;
  return ip.slice(0, 15).every((b) => b === 0) && ip[15] === 1;
}

/** True when a listener on `address` is reachable only from this host. */
export function isLoopbackOnly(address: string): boolean {
  return !isUnspecified(address) && isLoopback(address);
}

/** 224.0.0.0/4 (also IPv4-mapped) or ff00::/8, as Go's IsMulticast. */
export function isMulticast(address: string): boolean {
  const ip = parseIP(address);
  if (!ip) return false;
  const v4 = to4(ip);
  return v4 ? (v4[0]! & 0xf0) === 0xe0 : ip[0] === 0xff;
}

/** 169.254.0.0/16 (also IPv4-mapped) or fe80::/10, as Go's IsLinkLocalUnicast. */
export function isLinkLocalUnicast(address: string): boolean {
  const ip = parseIP(address);
  if (!ip) return false;
  const v4 = to4(ip);
  return v4 ? v4[0] === 169 && v4[1] === 254 : ip[0] === 0xfe && (ip[1]! & 0xc0) === 0x80;
}

/** Two spellings of one address (an IPv4 address equals its IPv4-mapped IPv6 form), as Go's net.IP.Equal. */
export function sameIP(a: string, b: string): boolean {
  const [x, y] = [parseIP(a), parseIP(b)];
  if (!x || !y) return false;
  const [x4, y4] = [to4(x), to4(y)];
  if (x4 || y4) return !!x4 && !!y4 && x4.every((v, i) => v === y4[i]);
  return x.every((v, i) => v === y[i]);
}
