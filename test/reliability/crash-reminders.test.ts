import assert from "node:assert/strict";
import { it } from "node:test";
import { waitUntil } from "../support/wait.ts";
import { CrashableServer, sleep, tally } from "./support.ts";

const PHONES = ["+19148445001", "+19148445002", "+19148445003"];
const REMINDER_TEXT = "Your appointment is in an hour.";

it("reminders due while the server is down: each fires once after the restart, late, and its lateness is logged", { timeout: 60_000 }, async () => {
  const server = new CrashableServer();
  try {
    await server.start();
    const tactical = (method: string, path: string, body?: unknown) => server.request(method, path, body, server.legacyToken);
    const type = await tactical("POST", "/events/types", { type: "Haircut" });
    assert.equal(type.status, 200);
    assert.equal((await tactical("POST", "/events/types/messages", { eventType: { uuid: type.json.uuid }, messageType: "REMINDER", text: REMINDER_TEXT })).status, 200);

    // Appointments an hour and a few seconds away, reminded an hour before: due in 3, 3.5 and 4 seconds.
    const base = Math.ceil(Date.now() / 1000) * 1000 + 3_000;
    const dueAt: number[] = [];
    for (const [index, phone] of PHONES.entries()) {
      const eventAt = base + 3_600_000 + index * 1000;
      dueAt.push(eventAt - 3_600_000);
      const eventDateTime = new Date(eventAt).toISOString().slice(0, 19);
      const created = await tactical("POST", "/events/reminders", { eventType: { uuid: type.json.uuid }, phone, eventDateTime, subscriberTimeZone: "UTC", remindTimeOffset: "PT1H" });
      assert.equal(created.status, 200, JSON.stringify(created.json));
    }
    assert.ok(Date.now() < dueAt[0]!, "created before the first is due");
    await server.crash();
    assert.deepEqual(server.sentTexts(), [], "nothing was due before the crash");

    // Down while every reminder falls due, and a second more.
    await sleep(Math.max(...dueAt) + 1_000 - Date.now());
    const restartedAt = Date.now();
    await server.start();
    await waitUntil("every reminder sent", () => server.sentTexts().length >= PHONES.length, 20_000);
    // Time for a duplicate to show, if the restart were to send one.
    await sleep(1_500);

    const texts = server.sentTexts();
    assert.deepEqual([...tally(texts.map((text) => text.to))].sort(), PHONES.map((phone) => [phone, 1]));
    for (const text of texts) assert.match(text.body, /Your appointment is in an hour\./);
    const late = server.allLogs().filter((entry) => entry.msg === "reminder step sent late");
    assert.equal(late.length, PHONES.length, "each late reminder is logged once");
    for (const entry of late) {
      assert.equal(entry.step, "REMINDER");
      const due = Date.parse(entry.dueAt as string);
      assert.ok(dueAt.includes(due), `due at ${entry.dueAt}`);
      assert.ok((entry.lateByMs as number) >= restartedAt - due, `late by ${entry.lateByMs} ms`);
    }
    await server.stop();
  } finally {
    await server.dispose();
  }
});
