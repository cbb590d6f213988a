// The table's events, shown one after another at a pace a person can follow: each event is
// drawn and then held for a moment (a card in flight, a trick to look at) before the next one.
// Nothing is skipped: every event goes through `play`, in order. When the page is behind (the
// events replayed on opening or after a reconnect, a tab in the background, more waiting than
// a person would sit through) the waiting events are played at once, without holds, and the
// table is drawn as it now is.
import type { TableEvent } from "../gen/croupier/v1/croupier_pb";

/** More events waiting than this: the table catches up at once. */
export const MAX_BEHIND = 6;

/** What playing an event asks of the queue: how long to hold it, and what to do after. */
export interface Step { ms: number; then?: () => void }

export class EventQueue {
  private items: { event: TableEvent; live: boolean }[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private holds = new Set<string>();
  received = 0;
  processed = 0;
  caughtUp = 0;

  /** `play(event, animate, live)` draws one event; `changed` is told whenever the queue moved. */
  constructor(private play: (e: TableEvent, animate: boolean, live: boolean) => Step, private changed: () => void) {}

  get length(): number {
    return this.items.length;
  }

  /** Busy: an event waits, or the one drawn is still held. */
  get busy(): boolean {
    return this.items.length > 0 || this.timer !== undefined;
  }

  /** `live`: the event happened while the page was open (not a replay of what came before). */
  push(event: TableEvent, live: boolean): void {
    this.items.push({ event, live });
    this.received++;
    this.pump();
  }

  /** Holds the queue for a reason (a summary the player reads, a trick on show) until released. */
  hold(reason: string, on: boolean): void {
    if (on) this.holds.add(reason);
    else this.holds.delete(reason);
    if (!on) this.pump();
    this.changed();
  }

  held(reason: string): boolean {
    return this.holds.has(reason);
  }

  /** Forgets what waits (the stream starts again from the start). */
  clear(): void {
    this.items = [];
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.received = this.processed = this.caughtUp = 0;
    this.changed();
  }

  /** Plays every waiting event now, without holds (the tab came back to the front). */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.drain();
    this.changed();
  }

  private drain(): void {
    while (this.items.length) {
      const item = this.items.shift()!;
      this.processed++;
      this.caughtUp++;
      this.play(item.event, false, item.live).then?.();
    }
  }

  private pump(): void {
    if (this.timer !== undefined || this.holds.size) return;
    if (!this.items.length) {
      this.changed();
      return;
    }
    const behind = document.visibilityState === "hidden" || this.items.length > MAX_BEHIND || !this.items[0].live;
    if (behind) {
      this.drain();
      this.changed();
      return;
    }
    const item = this.items.shift()!;
    this.processed++;
    const step = this.play(item.event, true, item.live);
    this.changed();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      step.then?.();
      this.pump();
      this.changed();
    }, step.ms);
  }
}
