import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";
import { it } from "node:test";
import { consoleSms } from "../../adapters/sms/console/index.ts";
import { fileSms } from "../../adapters/sms/file/index.ts";
import { memorySms } from "../../adapters/sms/memory/index.ts";
import { smsSenderConformance } from "../../src/testkit/index.ts";
import { temporaryDirectory } from "../support/temp-dir.ts";

smsSenderConformance("memory", () => {
  const sender = memorySms();
  return { sender, deliveredCount: () => sender.sent.length };
});

smsSenderConformance("console", () => {
  const lines: string[] = [];
  return { sender: consoleSms({ write: (line) => void lines.push(line) }), deliveredCount: () => lines.length };
});

const sentLines = (path: string) => readFileSync(path, "utf8").split("\n").filter((line) => line !== "");

smsSenderConformance("file", () => {
  const path = join(temporaryDirectory("file-sms"), "sent.jsonl");
  return { sender: fileSms({ path }), deliveredCount: () => sentLines(path).length };
});

it("file SMS: a key sent by an earlier process is not sent again; a line cut short by a crash does not count", async () => {
  const path = join(temporaryDirectory("file-sms"), "sent.jsonl");
  const message = { from: "+15550000000", to: "+15555550100", body: "Once", idempotencyKey: "k" };
  const first = await fileSms({ path }).send(message);
  writeFileSync(path, `${readFileSync(path, "utf8")}{"sms":{"idempotencyKey":"cut`, { flag: "w" });
  const restarted = fileSms({ path });
  assert.equal((await restarted.send(message)).providerMessageId, first.providerMessageId);
  await restarted.send({ ...message, idempotencyKey: "cut" });
  const lines = sentLines(path);
  assert.equal(lines.length, 3, "the first, the cut line, and the resent one");
  assert.equal(JSON.parse(lines[2]!).sms.idempotencyKey, "cut");
});
