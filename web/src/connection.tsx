// Whether the client can reach the server, in one place, so that a lost connection is shown
// as a calm "Reconnecting…" and never as an error code.
//
//   useConnection(): "online" | "reconnecting"   a hook; re-renders the caller on a change
//   connection(): the same, read once
//   callFailed() / callSucceeded()               api.ts reports every call's network outcome
//   streamDown() / streamUp()                    the table page's stream: lost / flowing again
//   <ConnectionBanner/>                          a small bar at the top of the page while
//                                                reconnecting, then "Connected again." briefly
//
// The state is "reconnecting" while the browser says it is offline, while a stream is down,
// or after a call failed for the network until a later call gets through.
import { useEffect, useState } from "preact/hooks";
import { t, useLanguage } from "./i18n";

export type ConnectionState = "online" | "reconnecting";

let callsDown = false;
let streamLost = false;
let offline = typeof navigator !== "undefined" && navigator.onLine === false;
let current: ConnectionState = compute();
const listeners = new Set<(s: ConnectionState) => void>();

function compute(): ConnectionState {
  return callsDown || streamLost || offline ? "reconnecting" : "online";
}

function update(): void {
  const next = compute();
  if (next === current) return;
  current = next;
  for (const listener of listeners) listener(next);
}

/** A call could not reach the server (the network, or a server that is restarting). */
export function callFailed(): void {
  callsDown = true;
  update();
}

/** A call got an answer from the server (a refusal counts: the server is there). */
export function callSucceeded(): void {
  callsDown = false;
  update();
}

/** The table page's stream was lost; it retries on its own. Pair with `streamUp`. */
export function streamDown(): void {
  streamLost = true;
  update();
}

/** The stream delivers again (or was closed on purpose). */
export function streamUp(): void {
  streamLost = false;
  callsDown = false; // a flowing stream proves the server is reachable
  update();
}

export function connection(): ConnectionState {
  return current;
}

if (typeof window !== "undefined") {
  window.addEventListener("offline", () => {
    offline = true;
    update();
  });
  window.addEventListener("online", () => {
    offline = false;
    update();
  });
}

export function useConnection(): ConnectionState {
  const [state, setState] = useState(current);
  useEffect(() => {
    listeners.add(setState);
    setState(current);
    return () => void listeners.delete(setState);
  }, []);
  return state;
}

const BAR = {
  position: "fixed", top: "0.5rem", left: "50%", transform: "translateX(-50%)", zIndex: 1000,
  padding: "0.4rem 1rem", borderRadius: "999px", font: "inherit", fontSize: "0.9rem",
  boxShadow: "0 2px 8px rgba(0,0,0,0.3)", width: "max-content", maxWidth: "calc(100vw - 2rem)",
  textAlign: "center", pointerEvents: "none",
} as const;

/** "Connection lost. Reconnecting…" while not online; "Connected again." for 2 s after. */
export function ConnectionBanner() {
  useLanguage();
  const state = useConnection();
  const [back, setBack] = useState(false);
  const [was, setWas] = useState(state);
  useEffect(() => {
    if (was === "reconnecting" && state === "online") {
      setBack(true);
      const timer = setTimeout(() => setBack(false), 2000);
      setWas(state);
      return () => clearTimeout(timer);
    }
    setWas(state);
    if (state === "reconnecting") setBack(false);
    return undefined;
  }, [state]);
  if (state === "online" && !back) return null;
  const down = state === "reconnecting";
  return (
    <div id="connection" class={`connection-banner ${down ? "reconnecting" : "online"}`}
      role="status" aria-live="polite" data-state={state}
      style={{ ...BAR, background: down ? "#7a5a00" : "#1d6b3a", color: "#fff" }}>
      {down && <span aria-hidden="true" style={{ marginRight: "0.5rem" }}>⟳</span>}
      {t(down ? "errors.connection.reconnecting" : "errors.connection.back")}
    </div>
  );
}
