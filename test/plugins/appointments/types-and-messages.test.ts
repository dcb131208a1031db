import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { badRequest, ok, startAppointmentsKit, tactical } from "./support.ts";

describe("appointment types", () => {
  it("POST /events/types {type} → {uuid, type}; GET reads it; another company's or an unknown uuid is a 404", async () => {
    const t = await startAppointmentsKit();
    const created = ok(await tactical(t, "POST", "/events/types", { type: "Haircut" }));
    assert.deepEqual(Object.keys(created).sort(), ["type", "uuid"]);
    assert.equal(created.type, "Haircut");
    assert.deepEqual(ok(await tactical(t, "GET", `/events/types/${created.uuid}`)), created);
    const other = (await t.kit.provisionCompany({ name: "Other" })).output.legacyToken as string;
    assert.equal((await tactical(t, "GET", `/events/types/${created.uuid}`, undefined, other)).status, 404);
    assert.equal((await tactical(t, "GET", "/events/types/00000000-0000-4000-8000-000000000000")).status, 404);
    assert.notEqual(ok(await tactical(t, "POST", "/events/types", { type: "Haircut" })).uuid, created.uuid, "each create is a new type");
    await t.stop();
  });

  it("needs a non-empty string type, a legacy token, and the tactical routes only", async () => {
    const t = await startAppointmentsKit();
    assert.deepEqual(badRequest(await tactical(t, "POST", "/events/types", {})).paths, ["type"]);
    assert.deepEqual(badRequest(await tactical(t, "POST", "/events/types", { type: 7 })).paths, ["type"]);
    assert.deepEqual(badRequest(await tactical(t, "POST", "/events/types", { type: "  " })).paths, ["type"]);
    assert.deepEqual(badRequest(await tactical(t, "POST", "/events/types", { type: "x".repeat(257) })).paths, ["type"]);
    assert.deepEqual(badRequest(await tactical(t, "POST", "/events/types", [])).paths, ["body"]);
    const withApiKey = await tactical(t, "POST", "/events/types", { type: "Haircut" }, t.company.apiKey);
    assert.equal(withApiKey.status, 401);
    assert.equal((await tactical(t, "POST", "/events/types", { type: "Haircut" }, "rk_leg_wrong")).status, 401);
    assert.equal((await t.request({ method: "POST", url: "/events/types", body: { type: "x" }, token: null })).status, 401);
    await t.stop();
  });
});

describe("appointment messages", () => {
  it("create, retrieve and update with any subset; macros are the {names} of the text, recomputed on update", async () => {
    const t = await startAppointmentsKit();
    const { uuid: eventType } = ok(await tactical(t, "POST", "/events/types", { type: "Haircut" }));
    const created = ok(
      await tactical(t, "POST", "/events/types/messages", {
        eventType: { uuid: eventType },
        messageType: "REMINDER",
        text: "Hi {firstName}, {service} at {eventTime}. {firstName}, reply STOP to end. {not a macro} {}",
      }),
    );
    assert.deepEqual(Object.keys(created).sort(), ["eventType", "macros", "messageType", "text", "uuid"]);
    assert.deepEqual(created.eventType, { uuid: eventType });
    assert.equal(created.messageType, "REMINDER");
    assert.deepEqual(created.macros, ["firstName", "service", "eventTime"]);
    assert.deepEqual(ok(await tactical(t, "GET", `/events/types/messages/${created.uuid}`)), created);

    const updated = ok(await tactical(t, "PUT", `/events/types/messages/${created.uuid}`, { text: "See you {when}" }));
    assert.deepEqual(updated, { ...created, text: "See you {when}", macros: ["when"] });
    const retyped = ok(await tactical(t, "PUT", `/events/types/messages/${created.uuid}`, { messageType: "FOLLOW_UP" }));
    assert.equal(retyped.messageType, "FOLLOW_UP");
    assert.equal(retyped.text, "See you {when}");
    assert.deepEqual(ok(await tactical(t, "PUT", `/events/types/messages/${created.uuid}`, {})), retyped, "an empty subset changes nothing");
    await t.stop();
  });

  it("ignores uuid and macros in a request, so a client can PUT back what it read", async () => {
    const t = await startAppointmentsKit();
    const { uuid: eventType } = ok(await tactical(t, "POST", "/events/types", { type: "Haircut" }));
    const created = ok(
      await tactical(t, "POST", "/events/types/messages", { eventType: { uuid: eventType }, messageType: "CONFIRMATION", text: "Booked: {when}", uuid: "mine", macros: ["x"] }),
    );
    assert.notEqual(created.uuid, "mine");
    assert.deepEqual(created.macros, ["when"]);
    const putBack = ok(await tactical(t, "PUT", `/events/types/messages/${created.uuid}`, { ...created, text: "Booked for {when}, {firstName}", uuid: "other", macros: [] }));
    assert.equal(putBack.uuid, created.uuid);
    assert.deepEqual(putBack.macros, ["when", "firstName"]);
    await t.stop();
  });

  it("one message per type × messageType: a second create is a 400 naming messageType and the message to update", async () => {
    const t = await startAppointmentsKit();
    const { uuid: eventType } = ok(await tactical(t, "POST", "/events/types", { type: "Haircut" }));
    const first = ok(await tactical(t, "POST", "/events/types/messages", { eventType: { uuid: eventType }, messageType: "REMINDER", text: "One" }));
    const second = await tactical(t, "POST", "/events/types/messages", { eventType: { uuid: eventType }, messageType: "REMINDER", text: "Two" });
    assert.deepEqual(badRequest(second).paths, ["messageType"]);
    assert.match(second.json<any>().error.details[0].message, new RegExp(first.uuid));
    assert.equal(ok(await tactical(t, "GET", `/events/types/messages/${first.uuid}`)).text, "One");
    const other = ok(await tactical(t, "POST", "/events/types/messages", { eventType: { uuid: eventType }, messageType: "NO_SHOW", text: "Missed" }));
    assert.deepEqual(badRequest(await tactical(t, "PUT", `/events/types/messages/${other.uuid}`, { messageType: "REMINDER" })).paths, ["messageType"]);
    await t.stop();
  });

  it("refuses bad input with a 400 naming the field; unknown or foreign uuids are 404 (the message) or 400 (the type it names)", async () => {
    const t = await startAppointmentsKit();
    const { uuid: eventType } = ok(await tactical(t, "POST", "/events/types", { type: "Haircut" }));
    const post = (body: unknown) => tactical(t, "POST", "/events/types/messages", body);
    assert.deepEqual(badRequest(await post({})).paths, ["eventType", "messageType", "text"]);
    assert.deepEqual(badRequest(await post({ eventType: { uuid: eventType }, messageType: "LATER", text: "x" })).paths, ["messageType"]);
    assert.deepEqual(badRequest(await post({ eventType: { uuid: eventType }, messageType: "REMINDER", text: 5 })).paths, ["text"]);
    assert.deepEqual(badRequest(await post({ eventType: { uuid: eventType }, messageType: "REMINDER", text: "x".repeat(1601) })).paths, ["text"]);
    assert.deepEqual(badRequest(await post({ eventType: [eventType], messageType: "REMINDER", text: "x" })).paths, ["eventType"]);
    assert.deepEqual(badRequest(await post({ eventType: { uuid: "unknown" }, messageType: "REMINDER", text: "x" })).paths, ["eventType.uuid"]);

    const other = await t.kit.provisionCompany({ name: "Other" });
    const foreign = await tactical(t, "POST", "/events/types/messages", { eventType: { uuid: eventType }, messageType: "REMINDER", text: "x" }, other.output.legacyToken as string);
    assert.deepEqual(badRequest(foreign).paths, ["eventType.uuid"]);
    const message = ok(await post({ eventType: { uuid: eventType }, messageType: "REMINDER", text: "x" }));
    assert.equal((await tactical(t, "GET", `/events/types/messages/${message.uuid}`, undefined, other.output.legacyToken as string)).status, 404);
    assert.equal((await tactical(t, "PUT", `/events/types/messages/${message.uuid}`, { text: "y" }, other.output.legacyToken as string)).status, 404);
    assert.equal((await tactical(t, "PUT", "/events/types/messages/unknown", { text: "y" })).status, 404);
    assert.deepEqual(badRequest(await tactical(t, "PUT", `/events/types/messages/${message.uuid}`, { eventType: { uuid: "unknown" } })).paths, ["eventType.uuid"]);
    assert.deepEqual(badRequest(await tactical(t, "PUT", `/events/types/messages/${message.uuid}`, { text: null })).paths, ["text"]);
    assert.equal(ok(await tactical(t, "GET", `/events/types/messages/${message.uuid}`)).text, "x");
    await t.stop();
  });
});
