// The one D-Bus call bunlet makes on a raw socket (logind's Inhibit, whose reply carries an fd): its
// method-call encoding is checked against @homebridge/dbus-native's decoder, and its reply decoding
// against dbus-native's encoder (the real exchange with logind is test/integration/v2/shutdown-logind).
import { expect, test } from "bun:test";
// @ts-expect-error dbus-native's internals have no type declarations
import dbusMessage from "@homebridge/dbus-native/lib/message.js";
import { decodeMessage, encodeCall } from "../../../src/node/shutdown/inhibit-fd.ts";

const msg = dbusMessage as { unmarshall(b: Buffer): Record<string, unknown>; marshall(m: Record<string, unknown>): Buffer };

test("Inhibit(what, who, why, mode) encodes as dbus-native reads a method call", () => {
  const call = {
    destination: "org.freedesktop.login1",
    path: "/org/freedesktop/login1",
    interface: "org.freedesktop.login1.Manager",
    member: "Inhibit",
    args: ["shutdown", "kubelet", "Kubelet needs time to handle node shutdown", "delay"],
  };
  const m = msg.unmarshall(Buffer.from(encodeCall(call, 2)));
  expect(m).toMatchObject({
    type: 1,
    serial: 2,
    path: call.path,
    interface: call.interface,
    member: "Inhibit",
    destination: call.destination,
    signature: "ssss",
    body: call.args,
  });
});

test("Hello (no arguments) encodes without a signature or body", () => {
  const b = encodeCall({ destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "Hello", args: [] }, 1);
  // dbus-native cannot read a message without a body; its own encoding must be the same bytes.
  expect(Buffer.from(b).toString("hex")).toBe(
    msg
      .marshall({ type: 1, serial: 1, path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus", member: "Hello", destination: "org.freedesktop.DBus" })
      .toString("hex"),
  );
  expect(b.length % 8).toBe(0);
});

test("replies: a method return's fd index and an error's name, only once the whole message is there", () => {
  const ret = msg.marshall({ type: 2, serial: 7, replySerial: 2, destination: ":1.5", signature: "u", body: [0] });
  expect(decodeMessage(new Uint8Array(ret.subarray(0, ret.length - 1)))).toBeUndefined();
  const r = decodeMessage(new Uint8Array(ret))!;
  expect(r.size).toBe(ret.length);
  expect(r.msg).toMatchObject({ type: 2, replySerial: 2 });
  expect(Array.from(r.msg.body)).toEqual([0, 0, 0, 0]);

  const err = msg.marshall({
    type: 3,
    serial: 8,
    replySerial: 2,
    errorName: "org.freedesktop.DBus.Error.InvalidArgs",
    signature: "s",
    body: ["Invalid what specification nonsense"],
  });
  const both = new Uint8Array(Buffer.concat([err, ret]));
  const e = decodeMessage(both)!;
  expect(e.msg).toMatchObject({ type: 3, replySerial: 2, errorName: "org.freedesktop.DBus.Error.InvalidArgs" });
  expect(decodeMessage(both.subarray(e.size))!.msg.type).toBe(2);
});
