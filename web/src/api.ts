// The Connect client generated from protos/ and what every page needs around it: the
// player's identity token on every call, the seat tokens this tab holds for tables joined
// without one, readable errors, and a retrying JoinTable.
import { Code, createClient, type Client, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { Croupier } from "./gen/croupier/v1/croupier_pb";
import { forgetIdentity, identityToken, storedIdentity } from "./players/identity";

/** Sent on `window` when the server refused the identity token (expired, or not its own). */
export const IDENTITY_REFUSED = "croupier-identity-refused";

// Every call carries the signed-in player's identity token unless it names a seat token of
// its own (a table joined without identity): at a table where the player holds a seat, the
// identity acts for that seat.
const withIdentity: Interceptor = (next) => async (req) => {
  const token = req.header.has("authorization") ? "" : identityToken();
  if (token) req.header.set("authorization", `Bearer ${token}`);
  try {
    return await next(req);
  } catch (err) {
    if (token && err instanceof ConnectError && err.code === Code.Unauthenticated && identityToken() === token) {
      forgetIdentity();
      window.dispatchEvent(new Event(IDENTITY_REFUSED));
    }
    throw err;
  }
};

const params = new URLSearchParams(location.search);
const options = { baseUrl: location.origin, useBinaryFormat: true, interceptors: [withIdentity] };
const transport = params.get("transport") === "grpc-web" ? createGrpcWebTransport(options) : createConnectTransport(options);
export const api: Client<typeof Croupier> = createClient(Croupier, transport);

// the gRPC status names, as the docs and the native API use them
const CODE_NAMES = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
  "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
  "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"];

export function errorText(err: unknown): string {
  if (err instanceof ConnectError) return `${CODE_NAMES[err.code] ?? err.code}: ${err.rawMessage}`;
  return String(err);
}

/** A refused seat in words a player reads: whose it is and what happens now (the server's
 * own words are errorText's, for a tooltip). */
export function seatRefusal(err: unknown, seat?: number, owner?: string): string | null {
  if (!(err instanceof ConnectError) || err.code !== Code.PermissionDenied) return null;
  const which = seat === undefined ? "That seat" : `Seat ${seat}`;
  return `${which} belongs to ${owner || "another player"}: only they can sit there. You are watching the table.`;
}

export interface Held { seat: number; token: string }

// Seat tokens stay in this tab only: whoever holds one plays that seat.
export function tokenFor(tableId: string): Held | null {
  const raw = sessionStorage.getItem(`croupier.seat.${tableId}`);
  if (!raw) return null;
  try {
    return JSON.parse(raw) as Held;
  } catch {
    return null;
  }
}
export function forgetSeat(tableId: string): void {
  sessionStorage.removeItem(`croupier.seat.${tableId}`);
}
export function auth(token: string | undefined): { headers?: Record<string, string> } {
  return token ? { headers: { authorization: `Bearer ${token}` } } : {};
}

export function playerName(): string {
  return localStorage.getItem("croupier.name") || "guest";
}
export function setPlayerName(name: string): void {
  localStorage.setItem("croupier.name", name);
}

// A seat token of our own making: a join whose reply was lost is sent again with it and
// gets back the seat it took, never a second one (see docs/api.md).
function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_");
}

/** Takes a seat (retrying a lost reply with the same token) and opens the table page. A
 * signed-in player's seat is bound to them: their identity token acts for it from any tab or
 * device, so no seat token is kept; without identity the seat token stays in this tab. */
export async function joinTable(tableId: string, seat?: number, open = true): Promise<number> {
  const me = storedIdentity();
  const signedIn = !!me;
  const request = { tableId, seat, name: me ? me.name : playerName(), token: signedIn ? "" : newToken() };
  for (let attempt = 1; ; attempt++) {
    try {
      const reply = await api.joinTable(request);
      if (!signedIn) sessionStorage.setItem(`croupier.seat.${tableId}`, JSON.stringify({ seat: reply.seat, token: reply.token }));
      if (open) location.hash = `#/table/${tableId}`;
      return reply.seat;
    } catch (err) {
      // unavailable or deadline exceeded: the seat may be ours already; ask again
      if (!(err instanceof ConnectError && [4, 14].includes(err.code)) || attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 500 * attempt * (0.5 + Math.random() / 2)));
    }
  }
}
