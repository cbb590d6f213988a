// The table's motion, drawn with the Web Animations API on the elements Preact has already put
// in place (FLIP: measure where a thing comes from, let it be drawn where it ends, animate the
// difference away). Nothing here changes what the table shows: a player who asks for reduced
// motion, or a tab that is catching up, sees the same table without the flight.

/** True where the player asked their system for less motion. */
export function reducedMotion(): boolean {
  return typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;
}

// flights started on this page, for the tests that check that the table moves
let flights = 0;
function counted(): void {
  flights++;
  document.body.dataset.flights = String(flights);
}

function centreOf(r: DOMRect): [number, number] {
  return [r.left + r.width / 2, r.top + r.height / 2];
}

/** Draws `el` as if it came from `from` (a rect measured before, or now) to where it is. */
export function flyIn(el: HTMLElement, from: DOMRect, ms = 380, delay = 0): void {
  if (reducedMotion() || !el.animate) return;
  counted();
  const to = el.getBoundingClientRect();
  const [fx, fy] = centreOf(from);
  const [tx, ty] = centreOf(to);
  el.animate([
    { transform: `translate(${fx - tx}px, ${fy - ty}px) scale(.55)`, opacity: 0.4 },
    { transform: "translate(0, 0) scale(1)", opacity: 1 },
  ], { duration: ms, delay, easing: "cubic-bezier(.2,.7,.3,1)", fill: "backwards" });
}

/** Sends `el` to `to` (a seat) and lets it fade there; resolves when it has arrived. */
export function flyOut(el: HTMLElement, to: DOMRect | null, ms = 420): Promise<void> {
  if (reducedMotion() || !el.animate) return Promise.resolve();
  counted();
  const from = el.getBoundingClientRect();
  const [fx, fy] = centreOf(from);
  const [tx, ty] = to ? centreOf(to) : [fx, fy + 30];
  const a = el.animate([
    { transform: "translate(0, 0) scale(1)", opacity: 1 },
    { transform: `translate(${tx - fx}px, ${ty - fy}px) scale(.4)`, opacity: 0 },
  ], { duration: ms, easing: "cubic-bezier(.5,0,.8,.4)", fill: "forwards" });
  return a.finished.then(() => undefined, () => undefined);
}

/** A short pulse on an element (a count of cards that changed, a seat that drew). */
export function pulse(el: Element | null): void {
  if (!el || reducedMotion() || !(el as HTMLElement).animate) return;
  (el as HTMLElement).animate([{ transform: "scale(1)" }, { transform: "scale(1.25)" }, { transform: "scale(1)" }],
    { duration: 360, easing: "ease-out" });
}

/** Where a seat sits on the page now (its box), for cards that come from it or go to it. */
export function seatRect(seat: number): DOMRect | null {
  return document.querySelector(`.seat[data-seat="${seat}"]`)?.getBoundingClientRect() ?? null;
}

let audio: AudioContext | null = null;

/** A short two-tone chime for "your turn" (WebAudio: no sound file to load). */
export function chime(): void {
  try {
    const Ctx = window.AudioContext ?? (window as unknown as { webkitAudioContext?: typeof AudioContext }).webkitAudioContext;
    if (!Ctx) return;
    audio = audio ?? new Ctx();
    const now = audio.currentTime;
    [660, 880].forEach((hz, i) => {
      const osc = audio!.createOscillator();
      const gain = audio!.createGain();
      osc.frequency.value = hz;
      gain.gain.setValueAtTime(0.0001, now + i * 0.14);
      gain.gain.exponentialRampToValueAtTime(0.15, now + i * 0.14 + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + i * 0.14 + 0.22);
      osc.connect(gain).connect(audio!.destination);
      osc.start(now + i * 0.14);
      osc.stop(now + i * 0.14 + 0.25);
    });
  } catch {
    // no sound where the browser allows none: the banner and the title still say it
  }
}
