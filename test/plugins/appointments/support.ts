import assert from "node:assert/strict";
import { appointmentsPlugin } from "../../../plugins/appointments/index.ts";
import type { InjectResponse } from "../../../src/index.ts";
import { defaultPlugins, startTestKit, type Json, type TestKit, type TestKitOptions } from "../../support/test-kit.ts";

export const PHONE = "+19148440001";
export const HOUR = 3_600_000;
export const MINUTE = 60_000;

/** A test kit with the appointments plugin (and accounts, subscriptions). */
export function startAppointmentsKit(options: TestKitOptions = {}): Promise<TestKit> {
  return startTestKit({ plugins: [...defaultPlugins(), appointmentsPlugin()], ...options });
}

/** A request on the tactical routes with the company's legacy token. */
export function tactical(t: TestKit, method: string, url: string, body?: Json, token?: string): Promise<InjectResponse> {
  return t.request({ method, url, body, token: token ?? t.company.legacyToken });
}

/** The JSON of a 200, failing with the answer otherwise. */
export function ok(response: InjectResponse): Json {
  assert.equal(response.status, 200, `expected 200, got ${response.status}: ${response.body}`);
  return response.json();
}

/** The error of a 400 and its detail paths. */
export function badRequest(response: InjectResponse): { code: string; message: string; paths: string[] } {
  assert.equal(response.status, 400, `expected 400, got ${response.status}: ${response.body}`);
  const { error } = response.json<Json>();
  return { code: error.code, message: error.message, paths: (error.details ?? []).map((detail: Json) => detail.path) };
}

/** An appointment type with the given messages; returns its uuid. */
export async function typeWithMessages(t: TestKit, messages: Partial<Record<string, string>>, name = "Haircut"): Promise<string> {
  const { uuid } = ok(await tactical(t, "POST", "/events/types", { type: name }));
  for (const [messageType, text] of Object.entries(messages)) {
    ok(await tactical(t, "POST", "/events/types/messages", { eventType: { uuid }, messageType, text }));
  }
  return uuid;
}

/** The five messages, each naming itself and the customer. */
export const ALL_MESSAGES = {
  CONFIRMATION: "Hi {firstName}, your {service} is booked for {eventDate} at {eventTime}.",
  REMINDER: "Reminder: {service} at {eventTime} today.",
  FOLLOW_UP: "Thanks for coming, {firstName}!",
  CANCELLATION: "Your {service} on {eventDate} is canceled.",
  NO_SHOW: "We missed you today, {firstName}.",
};

/**
 * Ada's haircut at 15:00 in New York on 8 March 2026, the day DST starts (EDT,
 * UTC-4, so 19:00Z), reminded PT3H before and followed up PT24H after.
 */
export function adaReminder(eventType: string, extra: Json = {}): Json {
  return {
    eventType: { uuid: eventType },
    phone: PHONE,
    firstName: "Ada",
    eventDateTime: "2026-03-08T15:00:00",
    subscriberTimeZone: "America/New_York",
    remindTimeOffset: "PT3H",
    followUpTimeOffset: "PT24H",
    metadata: { service: "haircut" },
    ...extra,
  };
}

/** Moves the fake clock to an instant, running every job due on the way. */
export async function advanceTo(t: TestKit, iso: string): Promise<void> {
  await t.scheduler.advance(Date.parse(iso) - t.clock.now());
}

export function createReminder(t: TestKit, body: Json): Promise<InjectResponse> {
  return tactical(t, "POST", "/events/reminders", body);
}

/** The bodies of the texts the memory provider delivered to a number. */
export const textsTo = (t: TestKit, phone = PHONE): string[] => t.sms.sentTo(phone).map((message) => message.body);

/** Queued jobs of the appointments plugin, as `[step, runAt ISO]`. */
export async function pendingSends(t: TestKit): Promise<Array<[string, string]>> {
  const jobs = await t.kit.jobs.list({ type: "appointments.send-step", status: "queued" });
  return jobs.map((job) => [(job.payload as Json).step, new Date(job.runAt).toISOString()]);
}

/** The bodies of the appointment texts (not opt-in notices) the provider delivered to a number. */
export async function appointmentTexts(t: TestKit, phone = PHONE): Promise<string[]> {
  const kinds = new Map((await t.kit.outbox.list({ to: phone })).map((message) => [message.id, message.kind]));
  return t.sms
    .sentTo(phone)
    .filter((sms) => kinds.get(sms.idempotencyKey)?.startsWith("appointment_"))
    .map((sms) => sms.body);
}

/** Opts a phone in to TRANSACTIONAL texts at once (single opt-in) and runs the job. */
export async function activeTextSubscriber(t: TestKit, phone = PHONE): Promise<void> {
  await t.kit.plugin("subscriptions").optIn(t.company.companyId, { user: { phone }, locale: "en-US", subscriptionType: "TRANSACTIONAL", singleOptIn: true });
  await t.scheduler.flush();
}

/** The subscriber texts STOP to the company's number. */
export async function textStop(t: TestKit, phone = PHONE): Promise<void> {
  const company = await t.kit.plugin("accounts").getCompany(t.company.companyId);
  await t.sms.deliverInbound({ from: phone, to: company!.senderNumber!, body: "STOP" });
  await t.scheduler.flush();
}
