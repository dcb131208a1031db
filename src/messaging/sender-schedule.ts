/**
 * When the texts of one sender number may go out, so that no more than its rate start in any window
 * (a second, or longer for a rate under one a second).
 *
 * A delivery job that waited for the sender's limiter held a slot of the job runner while it waited:
 * a thousand texts due at once held every slot while they trickled out at 10 a second, and opt-ins
 * queued after them were processed 10 a second. So texts fall due at the sender's rate when they are
 * sent (`reserve`), and a delivery that would still have to wait (the runner was late, or a restarted
 * process planned afresh beside the plan of the one before) goes back to the queue for a later free
 * time instead (`holdBack`). Times handed out never decrease, and while texts are held back every text
 * of the sender that was not goes behind them, so a sender's texts keep their order within a process.
 */
export class SenderSchedule {
  readonly #perWindow: number;
  readonly #windowMs: number;
  /** Due times handed out, the latest window's worth, oldest first. */
  readonly #reserved: number[] = [];
  /** When texts were handed to the provider, the latest window's worth, oldest first. */
  readonly #started: number[] = [];
  /** The latest time handed to a held-back text: until then, a text that was not held back goes behind. */
  #heldUntil = 0;
  /** The times handed to held-back texts that have not come back yet, with how many texts got each. */
  readonly #held = new Map<number, number>();

  constructor(ratePerSecond: number) {
    this.#perWindow = Math.max(1, Math.floor(ratePerSecond));
    this.#windowMs = (this.#perWindow / ratePerSecond) * 1000;
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
   * For a text due at `dueAt` about to go out at `now`: undefined when it may (its start is noted), else
   * the time to try again.
   */
  holdBack(now: number, dueAt: number): number | undefined {
    const heldBefore = this.#held.get(dueAt);
    if (heldBefore !== undefined) {
      if (heldBefore > 1) this.#held.set(dueAt, heldBefore - 1);
      else this.#held.delete(dueAt);
    }
    const started = this.#started;
    const windowFull = started.length === this.#perWindow && started[0]! + this.#windowMs > now;
    if (windowFull || (heldBefore === undefined && now < this.#heldUntil)) {
      const at = this.reserve(windowFull ? started[0]! + this.#windowMs : now);
      this.#held.set(at, (this.#held.get(at) ?? 0) + 1);
      return (this.#heldUntil = at);
    }
    push(started, now, this.#perWindow);
    return undefined;
  }
}

/** Appends `value`, keeping the last `keep` values. */
function push(values: number[], value: number, keep: number): void {
  values.push(value);
  if (values.length > keep) values.shift();
}
