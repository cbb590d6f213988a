// Where the browser's identity token comes from: the one module that knows.
//
// Guests: the server signs the token (CreateGuest) and this browser keeps it in localStorage,
// so the player stays signed in across reloads and tabs. A frontend with accounts of its own
// hands its identity provider's token instead: make `identityToken()` return that token (one
// line) and leave the guest sign-in out; everything else (the bearer header on every call,
// WhoAmI, seats bound to the player) stays as it is.
import type { Player } from "../gen/croupier/v1/croupier_pb";

const KEY = "croupier.identity";

/** The signed-in player as this browser remembers them, with their token. */
export interface Identity { token: string; playerId: string; name: string; guest: boolean; expiresAt: number }

export function storedIdentity(): Identity | null {
  const raw = localStorage.getItem(KEY);
  if (!raw) return null;
  try {
    const id = JSON.parse(raw) as Identity;
    return typeof id.token === "string" && id.token ? id : null;
  } catch {
    return null;
  }
}

/** The token sent as `authorization: Bearer <token>`; "" when nobody is signed in. */
export function identityToken(): string {
  return storedIdentity()?.token ?? "";
}

export function rememberIdentity(player: Player, token: string): Identity {
  const id: Identity = { token, playerId: player.playerId, name: player.name, guest: player.guest, expiresAt: player.expiresAt };
  localStorage.setItem(KEY, JSON.stringify(id));
  return id;
}

export function forgetIdentity(): void {
  localStorage.removeItem(KEY);
}
