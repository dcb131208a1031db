import type { DateTime } from "luxon";
import { parseOffset, stepTime } from "./event-time.ts";
import { TIMED_STEPS, type Reminder, type ReminderState, type ReminderStep, type SkipReason, type TimedStep } from "./records.ts";

/** `remindTimeOffset` when none is given (interface 2.9). */
export const DEFAULT_REMIND_TIME_OFFSET = "PT3H";

/** The durable job that sends one timed step. */
export const SEND_STEP_JOB = "appointments.send-step";

export interface SendStepJob {
  companyId: string;
  reminderId: string;
  step: TimedStep;
}

/** One live job per reminder and step: replaced when the reminder moves, cancelled when it ends. */
export const stepJobKey = (reminderId: string, step: TimedStep) => `appointments:${reminderId}:${step}`;

/**
 * The REMINDER (event minus `remindTimeOffset`) and FOLLOW_UP (event plus
 * `followUpTimeOffset`, only when given) steps for the reminder's event time.
 * A step already handed to the outbox for this very event time keeps that
 * outcome (an update that does not move the appointment sends nothing again);
 * a step whose moment is already past when planned is skipped, not sent late.
 */
export function planTimedSteps(reminder: Reminder, event: DateTime, now: number): Reminder["steps"] {
  const steps = { ...reminder.steps };
  for (const step of TIMED_STEPS) {
    const sendAt = timedStepAt(reminder, event, step);
    const previous = reminder.steps[step];
    if (previous?.status === "queued" && previous.eventAt === reminder.eventAt) continue;
    if (sendAt === undefined) delete steps[step];
    else if (sendAt < now) steps[step] = { status: "skipped", reason: "time_passed", sendAt, eventAt: reminder.eventAt, at: now };
    else steps[step] = { status: "scheduled", sendAt, eventAt: reminder.eventAt };
  }
  return steps;
}

function timedStepAt(reminder: Reminder, event: DateTime, step: TimedStep): number | undefined {
  const text = step === "REMINDER" ? reminder.remindTimeOffset : reminder.followUpTimeOffset;
  const offset = text === undefined ? undefined : parseOffset(text);
  if (offset === undefined) return undefined;
  return stepTime(event, offset, step === "REMINDER" ? "before" : "after").toMillis();
}

/** Every planned step ends unsent (cancel, no-show). */
export function endScheduledSteps(steps: Reminder["steps"], reason: Extract<SkipReason, "canceled" | "no_show">, now: number): Reminder["steps"] {
  const ended = { ...steps };
  for (const step of TIMED_STEPS) {
    const planned = ended[step];
    if (planned?.status === "scheduled") ended[step] = { ...planned, status: "canceled", reason, at: now } satisfies ReminderStep;
  }
  return ended;
}

/** scheduled while a step is planned, completed once none is. */
export function progressOf(steps: Reminder["steps"]): Extract<ReminderState, "scheduled" | "completed"> {
  return TIMED_STEPS.some((step) => steps[step]?.status === "scheduled") ? "scheduled" : "completed";
}
