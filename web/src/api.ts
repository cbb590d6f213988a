// The Connect client generated from protos/ and what every page needs around it: the
// player's identity token on every call, the seat tokens this tab holds for tables joined
// without one, errors in the player's words (the server's reason codes, translated), the
// connection's state (connection.tsx), and a retrying JoinTable.
import { Code, createClient, type Client, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { callFailed, callSucceeded } from "./connection";
import { Croupier } from "./gen/croupier/v1/croupier_pb";
import { ErrorInfoSchema } from "./gen/google/rpc/error_details_pb";
import { i18n, t } from "./i18n";
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
    const res = await next(req);
    callSucceeded();
    return res;
  } catch (err) {
    if (isNetworkFailure(err)) callFailed();
    else if (err instanceof ConnectError && err.code !== Code.Canceled) callSucceeded();
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

/** A refusal's reason code and parameters (a google.rpc.ErrorInfo of domain "croupier" in the
 * error's details, docs/api.md#reason-codes); null for errors the server did not explain. */
export interface Refusal { reason: string; meta: Record<string, string> }

export function refusal(err: unknown): Refusal | null {
  if (!(err instanceof ConnectError)) return null;
  const info = err.findDetails(ErrorInfoSchema).find((d) => d.domain === "croupier");
  return info ? { reason: info.reason, meta: { ...info.metadata } } : null;
}

/** The reason code of a refusal, "" for none: for a page that acts on a kind of refusal. */
export function reasonOf(err: unknown): string {
  return refusal(err)?.reason ?? "";
}

// refusals that mean "the server is not there right now": the same as a lost connection
const RETRY_REASONS = new Set(["SHUTTING_DOWN", "STORE_UNAVAILABLE"]);

/** The call never got the server's own answer: the network, a proxy, a server restarting. */
export function isNetworkFailure(err: unknown): boolean {
  if (!(err instanceof ConnectError)) return err instanceof TypeError; // fetch's own failure
  const why = refusal(err);
  if (why) return RETRY_REASONS.has(why.reason);
  return [Code.Unknown, Code.Unavailable, Code.DeadlineExceeded].includes(err.code) || err.cause instanceof TypeError;
}

// parameters a message's plural needs even where a refusal has none to give
const DEFAULTS: Record<string, number> = { owed: 0 };

function values(meta: Record<string, string>): Record<string, string | number> {
  const out: Record<string, string | number> = { ...DEFAULTS };
  for (const [k, v] of Object.entries(meta)) out[k] = /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
  return out;
}

/** The error in the player's words: the reason code's message in the current language, with
 * its parameters; the server's own (English) message for a code this client does not know;
 * "Reconnecting…" for a lost connection. Never a status name. */
export function errorText(err: unknown): string {
  if (isNetworkFailure(err)) {
    const why = refusal(err);
    return why ? translated(why) ?? t("errors.connection.reconnecting") : t("errors.connection.reconnecting");
  }
  if (err instanceof ConnectError) {
    const why = refusal(err);
    return (why && translated(why)) || err.rawMessage || t("errors.unexpected");
  }
  return t("errors.unexpected");
}

/** The server's own explanation (English, for a tooltip or a bug report). */
export function errorDetail(err: unknown): string {
  if (err instanceof ConnectError) return err.rawMessage;
  return err instanceof Error ? err.message : String(err);
}

function translated(why: Refusal): string | null {
  const key = `errors.${why.reason}`;
  if (!/^[A-Z][A-Z0-9_]*$/.test(why.reason) || !i18n.exists(key)) return null;
  try {
    const text = t(key, values(why.meta));
    return text && text !== key && text !== why.reason ? text : null;
  } catch {
    return null; // a parameter the message needs and the refusal lacks: the server's words
  }
}

/** A refused seat in words a player reads: whose it is and what happens now (the server's
 * own words are errorDetail's, for a tooltip). */
export function seatRefusal(err: unknown, seat?: number, owner?: string): string | null {
  if (!(err instanceof ConnectError) || err.code !== Code.PermissionDenied) return null;
  return t("errors.seat.refused", { seat: seat === undefined ? "none" : seat, owner: owner || t("errors.seat.anotherPlayer") });
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
