// The signed-in player for the whole page: checked once at start (WhoAmI: a token the server
// no longer takes means signing in again), signed in as a guest (CreateGuest), signed out, or
// dropped when the server refuses the token later. Components follow it with usePlayer().
import { Code, ConnectError } from "@connectrpc/connect";
import { useEffect, useState } from "preact/hooks";
import { api, IDENTITY_REFUSED } from "../api";
import { forgetIdentity, rememberIdentity, storedIdentity, type Identity } from "./identity";

export interface Session {
  checked: boolean;          // WhoAmI has answered (or could not be asked)
  me: Identity | null;
  notice: string;            // why the player was signed out (a catalogue key), if the server did it
}

let session: Session = { checked: false, me: storedIdentity(), notice: "" };
const listeners = new Set<() => void>();

function set(next: Partial<Session>): void {
  session = { ...session, ...next };
  listeners.forEach((l) => l());
}

/** The signed-in player now (outside components). */
export function currentPlayer(): Identity | null {
  return session.me;
}

export function usePlayer(): Session {
  const [, tick] = useState(0);
  const seen = session;
  useEffect(() => {
    const on = () => tick((n) => n + 1);
    listeners.add(on);
    if (session !== seen) on(); // changed between the render and this effect
    return () => void listeners.delete(on);
  }, []);
  return session;
}

// the notice is a key: it is put into words when shown, in the language of that moment
const REFUSED_NOTICE = "common.signIn.refused";

// the api's interceptor saw the server refuse the token; another tab signed in or out
window.addEventListener(IDENTITY_REFUSED, () => set({ me: null, notice: REFUSED_NOTICE }));
window.addEventListener("storage", (e) => {
  if (e.key === null || e.key === "croupier.identity") set({ me: storedIdentity() });
});

/** Asks the server whether the stored token still works; refused or expired: forgotten. */
export async function checkIdentity(): Promise<void> {
  const me = storedIdentity();
  if (!me) return set({ checked: true, me: null });
  if (me.expiresAt > 0 && me.expiresAt * 1000 < Date.now()) {
    forgetIdentity();
    return set({ checked: true, me: null, notice: REFUSED_NOTICE });
  }
  try {
    const player = await api.whoAmI({});
    set({ checked: true, me: rememberIdentity(player, me.token) });
  } catch (err) {
    if (err instanceof ConnectError && err.code === Code.Unauthenticated) {
      forgetIdentity();
      set({ checked: true, me: null, notice: REFUSED_NOTICE });
    } else {
      set({ checked: true }); // the server is not there: keep the token, the calls will say
    }
  }
}

export async function signInAsGuest(name: string): Promise<Identity> {
  const reply = await api.createGuest({ name: name.trim() });
  const me = rememberIdentity(reply.player!, reply.token);
  set({ me, notice: "" });
  return me;
}

export function signOut(): void {
  forgetIdentity();
  set({ me: null, notice: "" });
}
