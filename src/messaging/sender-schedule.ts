/**
 * When the texts of one sender number may go out, so that no more than its rate start in any window
 * (a second, or longer for a rate under one a second).
 *
 * A delivery job that waited for the sender's limiter held a slot of the job runner while it waited:
 * a thousand texts due at once held every slot while they trickled out at 10 a second, and opt-ins
 * queued after them were processed 10 a second. So texts fall due at the sender's rate when they are
 * sent (`reserve`), and a delivery that would still have to wait one text's share of the window or
 * longer (the runner was late, or a restarted process planned afresh beside the plan of the one
 * before) goes back to the queue for the next free time instead (`holdBack`). That time is its own:
 * when it comes back it goes through, and the sender's limiter waits for the window if texts before it
 * went out late, so a text is held back at most once and the slot it was given is never left empty.
 * Times handed out never decrease, and while texts are held back every text of the sender that was
 * not goes behind them, so a sender's texts keep their order within a process.
 */
export class SenderSchedule {
  readonly #perWindow: number;
  readonly #windowMs: number;
  /** One text's share of the window: a text that would wait less goes through, and its limiter waits. */
  readonly #intervalMs: number;
  /** Due times handed out, the latest window's worth, oldest first. */
  readonly #reserved: number[] = [];
  /** When texts let through go to the provider (the limiter's wait included), the latest window's worth, oldest first. */
  readonly #starts: number[] = [];
  /** The latest time handed to a held-back text: until then, a text that was not held back goes behind. */
  #heldUntil = 0;
  /** The texts held back that have not come back yet, with the time each was given, earliest first. */
  readonly #held = new Map<string, number>();

  constructor(ratePerSecond: number) {
    this.#perWindow = Math.max(1, Math.floor(ratePerSecond));
    this.#windowMs = (this.#perWindow / ratePerSecond) * 1000;
    this.#intervalMs = this.#windowMs / this.#perWindow;
  }

  /** The earliest time at or after `now` that leaves no window with more than the rate's texts. */
  reserve(now: number): number {
    const times = this.#reserved;
    let at = Math.max(now, times.at(-1) ?? now);
    if (times.length === this.#perWindow) at = Math.max(at, times[0]! + this.#windowMs);
    push(times, at, this.#perWindow);
    return at;
  }

  /**
   * For the text `textId` about to go out at `now`: undefined when it may (its start is noted; the
   * limiter may still wait less than one interval, or for a text held back before, until the window frees),
   * else the time to try again.
   */
  holdBack(now: number, textId: string): number | undefined {
    const heldBefore = this.#held.delete(textId);
    const starts = this.#starts;
    const freeAt = Math.max(now, starts.at(-1) ?? now, starts.length === this.#perWindow ? starts[0]! + this.#windowMs : now);
    const behindHeld = !heldBefore && now < this.#heldUntil;
    if (heldBefore || (!behindHeld && freeAt - now < this.#intervalMs)) {
      push(starts, freeAt, this.#perWindow);
      return undefined;
    }
    const at = this.reserve(freeAt);
    this.#forgetHeldBefore(now - HELD_TEXT_FORGOTTEN_AFTER_MS);
    this.#held.set(textId, at);
    return (this.#heldUntil = at);
  }

  /** Texts held back that never came back (sent by another process, or erased): their times are long past. */
  #forgetHeldBefore(time: number): void {
    for (const [textId, at] of this.#held) {
      if (at >= time) return;
      this.#held.delete(textId);
    }
  }
}

/** How long past its time a held-back text may come back and still go through as held (a very late runner). */
const HELD_TEXT_FORGOTTEN_AFTER_MS = 10 * 60_000;

/** Appends `value`, keeping the last `keep` values. */
function push(values: number[], value: number, keep: number): void {
  values.push(value);
  if (values.length > keep) values.shift();
}
