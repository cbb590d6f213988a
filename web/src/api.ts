// The Connect client generated from protos/ and what every page needs around it: the seat
// tokens this tab holds, the bearer header, readable errors, and a retrying JoinTable.
import { createClient, type Client, ConnectError } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { Croupier } from "./gen/croupier/v1/croupier_pb";

const params = new URLSearchParams(location.search);
const transport =
  params.get("transport") === "grpc-web"
    ? createGrpcWebTransport({ baseUrl: location.origin, useBinaryFormat: true })
    : createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true });
export const api: Client<typeof Croupier> = createClient(Croupier, transport);

// the gRPC status names, as the docs and the native API use them
const CODE_NAMES = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
  "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
  "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"];

export function errorText(err: unknown): string {
  if (err instanceof ConnectError) return `${CODE_NAMES[err.code] ?? err.code}: ${err.rawMessage}`;
  return String(err);
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

/** Takes a seat (retrying a lost reply with the same token) and opens the table page. */
export async function joinTable(tableId: string, seat?: number): Promise<void> {
  const request = { tableId, seat, name: playerName(), token: newToken() };
  for (let attempt = 1; ; attempt++) {
    try {
      const reply = await api.joinTable(request);
      sessionStorage.setItem(`croupier.seat.${tableId}`, JSON.stringify({ seat: reply.seat, token: reply.token }));
      location.hash = `#/table/${tableId}`;
      return;
    } catch (err) {
      // unavailable or deadline exceeded: the seat may be ours already; ask again
      if (!(err instanceof ConnectError && [4, 14].includes(err.code)) || attempt >= 3) throw err;
      await new Promise((r) => setTimeout(r, 500 * attempt * (0.5 + Math.random() / 2)));
    }
  }
}
