// The connection to the server as the player sees it: a table's stream says when it is cut
// (streamDown) and when events flow again (streamUp); a banner says so in words, never with
// a transport's status names, and goes away by itself once the connection is back.
import { createElement, type JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { t } from "./i18n";

let down = false;
const listeners = new Set<(down: boolean) => void>();

function set(next: boolean): void {
  if (down === next) return;
  down = next;
  listeners.forEach((f) => f(down));
}

/** The stream (or a call) failed for want of the server: the banner shows until streamUp. */
export function streamDown(_cause?: unknown): void {
  set(true);
}

/** Events arrive again. */
export function streamUp(): void {
  set(false);
}

export function useConnection(): { down: boolean } {
  const [now, setNow] = useState(down);
  useEffect(() => {
    listeners.add(setNow);
    setNow(down);
    return () => void listeners.delete(setNow);
  }, []);
  return { down: now };
}

export function ConnectionBanner(): JSX.Element | null {
  const { down: lost } = useConnection();
  if (!lost) return null;
  return createElement("div", { class: "connection-banner", id: "connection-banner", role: "status" },
    t("table.connection.down"));
}
