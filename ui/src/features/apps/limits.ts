// Bounds on what an MCP App's frame may send the window: every message is measured and
// counted before it is parsed further, so a frame that floods or sends huge messages costs a
// bounded amount of work and is then cut off. The numbers are generous for real apps (a chart
// or a form sends a handful of messages a second) and tiny next to what a flood would send.

/** The largest message accepted from a frame, as JSON text. */
export const MESSAGE_MAX_BYTES = 256 * 1024;
/** Messages a frame may send in a burst, and how many more it earns per second. */
export const BURST = 40;
export const PER_SECOND = 20;
/** Tool calls one frame may have outstanding at once (each waits for the approval dialog). */
export const CALLS_IN_FLIGHT = 1;
/** Refusals after which the frame is closed for good. */
export const STRIKES_MAX = 50;
/** The frame's height is kept between these (pixels). */
export const HEIGHT_MIN = 60;
export const HEIGHT_MAX = 2000;
/** Log lines an app may leave in its panel; older ones scroll away. */
export const LOG_LINES = 50;
/** The longest log line kept. */
export const LOG_LINE_MAX = 2000;

/** A token bucket: `take()` says whether one more message may pass now. */
export class RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly burst = BURST,
    private readonly perSecond = PER_SECOND,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.tokens = burst;
    this.last = now();
  }

  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** The size of a structured-cloned message as JSON text, or null when it is not JSON at all. */
export function messageSize(data: unknown): number | null {
  try {
    const text = JSON.stringify(data);
    return typeof text === "string" ? new TextEncoder().encode(text).length : null;
  } catch {
    return null;
  }
}

/** A height the frame asked for, clamped; null when it is not a number. */
export function clampHeight(h: unknown): number | null {
  if (typeof h !== "number" || !Number.isFinite(h)) return null;
  return Math.round(Math.min(HEIGHT_MAX, Math.max(HEIGHT_MIN, h)));
}
