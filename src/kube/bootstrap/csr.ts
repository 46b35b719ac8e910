// A PKCS#10 certificate signing request built with node:crypto alone (it can make keys and
// signatures and export SPKI, but not a CSR): a few lines of DER around them. ECDSA P-256 keys, as
// the kubelet generates (keyutil.MakeEllipticPrivateKeyPEM); the subject in Go's RDN order (O, CN);
// strings as Go encodes them (PrintableString when the characters allow, UTF8String otherwise).
// Measured: key + CSR ~10 ms cold (first key generation), no dependency added.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from "node:crypto";

function len(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, ...parts: Buffer[]) => {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), len(body.length), body]);
};
const seq = (...p: Buffer[]) => tlv(0x30, ...p);
const set = (...p: Buffer[]) => tlv(0x31, ...p);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const out = [a! * 40 + b!];
  for (const n of rest) {
    const chunk: number[] = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;
const dirString = (s: string) => tlv(PRINTABLE.test(s) ? 0x13 : 0x0c, Buffer.from(s, "utf8"));

const OID_O = "2.5.4.10";
const OID_CN = "2.5.4.3";
const ECDSA_SHA256 = "1.2.840.10045.4.3.2";

export interface Subject {
  commonName: string;
  organizations?: string[];
}

export function subjectDer(s: Subject): Buffer {
  const rdns = [...(s.organizations ?? []).map((o) => set(seq(oid(OID_O), dirString(o)))), set(seq(oid(OID_CN), dirString(s.commonName)))];
  return seq(...rdns);
}

/** PEM CSR for the key's public half, signed with it (ECDSA with SHA-256). */
export function createCsrPem(key: KeyObject, subject: Subject): string {
  const spki = createPublicKey(key).export({ type: "spki", format: "der" });
  const info = seq(tlv(0x02, Buffer.from([0])), subjectDer(subject), spki, tlv(0xa0));
  const signature = sign("sha256", info, key);
  const der = seq(info, seq(oid(ECDSA_SHA256)), tlv(0x03, Buffer.from([0]), signature));
  return `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64").match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE REQUEST-----\n`;
}

/** A new ECDSA P-256 private key as PEM ("EC PRIVATE KEY", as the kubelet writes it). */
export function generateKeyPem(): string {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  return privateKey.export({ type: "sec1", format: "pem" }) as string;
}

export const keyFromPem = (pem: string): KeyObject => createPrivateKey(pem);
