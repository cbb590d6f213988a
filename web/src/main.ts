// Croupier's reference browser client. The API types and the service descriptor are generated
// from protos/ (protoc-gen-es); calls go through @connectrpc/connect-web to the server's web
// port: Connect by default, gRPC-Web with ?transport=grpc-web. Plain DOM, no framework: the
// point is to show a frontend how to use the API, not a UI toolkit.
import { Code, createClient, type Client, ConnectError } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import { toJson, type JsonObject } from "@bufbuild/protobuf";
import {
  Croupier,
  GameInfoSchema,
  GameRecordSchema,
  GameViewSchema,
  SeatKind,
  TableStatus,
  EventKind,
  type GameInfo,
  type Table,
  type TableView,
  type TableEvent,
} from "./gen/croupier/v1/croupier_pb";

// The bot levels a worker knows (bots/levels.py); the API does not list them.
const BOT_LEVELS = ["random", "heuristic", "easy", "medium", "hard", "expert"];
// Tables a lobby page shows; the older ones are a click away (ListTables pages).
const LOBBY_PAGE = 20;

const params = new URLSearchParams(location.search);
const transport =
  params.get("transport") === "grpc-web"
    ? createGrpcWebTransport({ baseUrl: location.origin, useBinaryFormat: true })
    : createConnectTransport({ baseUrl: location.origin, useBinaryFormat: true });
const api: Client<typeof Croupier> = createClient(Croupier, transport);

const app = document.getElementById("app")!;

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

function showError(where: HTMLElement, err: unknown): void {
  const text = err instanceof ConnectError ? `${err.code ? codeName(err) : ""}: ${err.rawMessage}` : String(err);
  where.replaceChildren(el("div", { class: "error", role: "alert" }, text));
}

function codeName(err: ConnectError): string {
  // the gRPC status names, as the docs and the native API use them
  const names = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"];
  return names[err.code] ?? String(err.code);
}

// Seat tokens stay in this tab only: whoever holds one plays that seat.
function tokenFor(tableId: string): { seat: number; token: string } | null {
  const raw = sessionStorage.getItem(`croupier.seat.${tableId}`);
  return raw ? JSON.parse(raw) : null;
}
function auth(token: string | undefined): { headers?: Record<string, string> } {
  return token ? { headers: { authorization: `Bearer ${token}` } } : {};
}

function playerName(): string {
  return localStorage.getItem("croupier.name") || "guest";
}

// ---------------------------------------------------------------- lobby

let games: GameInfo[] = [];
let lobbyTimer: number | undefined;
let routed = 0; // counts page changes: work started for an earlier page stops there

async function lobby(): Promise<void> {
  const page = routed;
  const status = el("div", { id: "status" });
  const nameInput = el("input", { id: "name", value: playerName(), size: "12" });
  nameInput.addEventListener("change", () => localStorage.setItem("croupier.name", nameInput.value));
  const form = el("form", { id: "create" });
  const tables = el("tbody", { id: "tables" });
  const gameFilter = el("select", { id: "filter-game" }, el("option", { value: "" }, "any"));
  const statusFilter = el("select", { id: "filter-status" },
    ...[TableStatus.UNSPECIFIED, TableStatus.WAITING, TableStatus.PLAYING, TableStatus.FINISHED].map((st) =>
      el("option", { value: String(st) }, st === TableStatus.UNSPECIFIED ? "any" : TableStatus[st].toLowerCase())));
  const newer = el("button", { type: "button", id: "page-newer", disabled: "" }, "← newer");
  const older = el("button", { type: "button", id: "page-older", disabled: "" }, "older →");
  const pageLabel = el("span", { id: "page-number" }, "page 1");
  app.replaceChildren(
    el("h1", {}, "Croupier"),
    el("p", {}, "Your name: ", nameInput),
    el("h2", {}, "New table"),
    form,
    status,
    el("h2", {}, "Tables"),
    el("p", { class: "lobby-filters" }, "Game ", gameFilter, " Status ", statusFilter),
    el("table", { class: "lobby" },
      el("thead", {}, el("tr", {}, ...["Table", "Game", "Seats", "Status", ""].map((h) => el("th", {}, h)))),
      tables),
    el("p", { class: "lobby-pages" }, newer, " ", pageLabel, " ", older),
  );
  try {
    games = (await api.listGames({})).games;
  } catch (err) {
    showError(status, err);
    return;
  }
  buildCreateForm(form, status);
  gameFilter.append(...games.map((g) => el("option", { value: g.name }, g.title)));
  // A page token is the place of the last table of a page in the list's order (newest
  // first), bound to the filters it was given for: tables made since do not shift the later
  // pages, and a change of filter starts again from the first page.
  let tokens = [""]; // tokens[i]: the page_token that asks for page i
  let shown = 0;
  let asked = 0; // answers to an earlier request than the latest are dropped
  const refresh = async () => {
    const request = ++asked;
    try {
      const reply = await api.listTables({
        limit: LOBBY_PAGE, game: gameFilter.value, status: Number(statusFilter.value) as TableStatus,
        pageToken: tokens[shown],
      });
      if (request !== asked) return;
      tables.replaceChildren(...reply.tables.map(tableRow));
      tokens = tokens.slice(0, shown + 1);
      if (reply.nextPageToken) tokens.push(reply.nextPageToken);
      older.disabled = shown + 1 >= tokens.length;
      newer.disabled = shown === 0;
      pageLabel.textContent = `page ${shown + 1}`;
    } catch (err) {
      if (request !== asked) return;
      showError(status, err);
      if (shown > 0 && err instanceof ConnectError && err.code === Code.InvalidArgument) {
        tokens = [""]; // a page the server no longer takes: back to the first
        go(0);
      }
    }
  };
  const go = (page: number) => {
    shown = page;
    older.disabled = newer.disabled = true; // until this page's answer says where it stands
    void refresh();
  };
  older.addEventListener("click", () => go(shown + 1));
  newer.addEventListener("click", () => go(shown - 1));
  for (const filter of [gameFilter, statusFilter]) {
    filter.addEventListener("change", () => {
      tokens = [""];
      go(0);
    });
  }
  await refresh();
  if (page === routed) lobbyTimer = window.setInterval(refresh, 2000);
}

function tableRow(t: Table): HTMLElement {
  const seats = t.seats
    .map((s) => (s.occupied ? s.name || (s.isBot ? "bot" : "?") : s.kind === SeatKind.BOT ? `(bot ${s.botLevel})` : "(open)"))
    .join(", ");
  const actions = el("td");
  const open = t.seats.find((s) => !s.occupied && s.kind === SeatKind.HUMAN);
  const held = tokenFor(t.tableId);
  if (held) {
    // this tab already plays here: a second Join would take a second seat
    actions.append(el("a", { class: "return", href: `#/table/${t.tableId}` }, `Your seat ${held.seat}`));
  } else if (open && t.status !== TableStatus.FINISHED) {
    const join = el("button", { class: "join", "data-table": t.tableId }, "Join");
    join.addEventListener("click", () => joinTable(t.tableId));
    actions.append(join);
  }
  const watch = el("a", { class: "watch", href: `#/table/${t.tableId}` }, "Watch");
  actions.append(" ", watch);
  return el("tr", { "data-table": t.tableId },
    el("td", {}, t.tableId), el("td", {}, t.game), el("td", {}, seats),
    el("td", { class: "table-status" }, TableStatus[t.status] ?? ""), actions);
}

function buildCreateForm(form: HTMLFormElement, status: HTMLElement): void {
  const gameSelect = el("select", { id: "game" }, ...games.map((g) => el("option", { value: g.name }, g.title)));
  const players = el("input", { id: "players", type: "number", size: "3" });
  const seatsBox = el("div", { id: "seats" });
  const optionsBox = el("div", { id: "options" });
  const submit = el("button", { type: "submit", id: "create-button" }, "Create and sit down");
  const watchOnly = el("button", { type: "button", id: "create-watch" }, "Create bots-only and watch");

  const game = () => games.find((g) => g.name === gameSelect.value)!;
  const render = () => {
    const g = game();
    players.min = String(g.minPlayers);
    players.max = String(g.maxPlayers);
    let n = Number(players.value);
    if (!(n >= g.minPlayers && n <= g.maxPlayers)) n = g.minPlayers;
    players.value = String(n);
    seatsBox.replaceChildren(
      ...Array.from({ length: n }, (_, i) => {
        const sel = el("select", { class: "seat-kind", "data-seat": String(i), id: `seat-${i}` },
          el("option", { value: "human" }, "person"),
          ...BOT_LEVELS.map((l) => el("option", { value: l }, `bot: ${l}`)));
        if (i > 0) sel.value = "random";
        return el("label", {}, `Seat ${i} `, sel);
      }),
    );
    const info = toJson(GameInfoSchema, g) as JsonObject;
    const specs = (info.options as JsonObject[] | undefined) ?? [];
    optionsBox.replaceChildren(
      ...specs
        .filter((o) => o.type !== "cards")
        .map((o) => {
          const name = String(o.name);
          const input = el("input", { class: "option", "data-option": name, id: `option-${name}`, title: String(o.doc ?? "") });
          if (o.type === "bool") {
            input.type = "checkbox";
            input.checked = o.default === true;
          } else {
            input.type = o.type === "int" ? "number" : "text";
            input.value = o.default === undefined ? "" : String(o.default);
            input.size = 6;
          }
          input.dataset.type = String(o.type);
          return el("label", {}, `${name} `, input);
        }),
    );
  };
  gameSelect.addEventListener("change", render);
  players.addEventListener("change", render);
  render();

  const create = async (watch: boolean) => {
    const seats = [...seatsBox.querySelectorAll<HTMLSelectElement>(".seat-kind")].map((s) =>
      s.value === "human" && !watch
        ? { kind: SeatKind.HUMAN }
        : { kind: SeatKind.BOT, botLevel: s.value === "human" ? "random" : s.value },
    );
    const options: JsonObject = {};
    for (const input of optionsBox.querySelectorAll<HTMLInputElement>(".option")) {
      const name = input.dataset.option!;
      if (input.dataset.type === "bool") options[name] = input.checked;
      else if (input.dataset.type === "int") options[name] = Number(input.value);
      else if (input.value !== "") options[name] = input.value;
    }
    try {
      const table = await api.createTable({ game: game().name, players: Number(players.value), seats, options });
      if (watch) location.hash = `#/table/${table.tableId}`;
      else await joinTable(table.tableId);
    } catch (err) {
      showError(status, err);
    }
  };
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void create(false);
  });
  watchOnly.addEventListener("click", () => void create(true));
  form.append(
    el("label", {}, "Game ", gameSelect), " ", el("label", {}, "Players ", players),
    seatsBox, el("details", { open: "" }, el("summary", {}, "Options"), optionsBox), submit, " ", watchOnly,
  );
}

// A seat token of our own making: a join whose reply was lost is sent again with it and
// gets back the seat it took, never a second one (see docs/api.md).
function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_");
}

async function joinTable(tableId: string, seat?: number): Promise<void> {
  const status = document.getElementById("status") ?? app;
  const request = { tableId, seat, name: playerName(), token: newToken() };
  try {
    let reply;
    for (let attempt = 1; ; attempt++) {
      try {
        reply = await api.joinTable(request);
        break;
      } catch (err) {
        // unavailable or deadline exceeded: the seat may be ours already; ask again
        if (!(err instanceof ConnectError && [4, 14].includes(err.code)) || attempt >= 3) throw err;
        await new Promise((r) => setTimeout(r, 500 * attempt * (0.5 + Math.random() / 2)));
      }
    }
    sessionStorage.setItem(`croupier.seat.${tableId}`, JSON.stringify({ seat: reply.seat, token: reply.token }));
    location.hash = `#/table/${tableId}`;
  } catch (err) {
    showError(status, err);
  }
}

// ---------------------------------------------------------------- table

let streamAbort: AbortController | undefined;

async function tablePage(tableId: string): Promise<void> {
  let mine = tokenFor(tableId);
  const abort = new AbortController();
  streamAbort = abort;
  const header = el("div", { id: "header" });
  const status = el("div", { id: "status" });
  const board = el("div", { id: "board" });
  const log = el("ol", { id: "log" });
  const role = el("p", { id: "role" });
  const replay = el("div", { id: "replay", hidden: "" });
  app.replaceChildren(
    el("p", {}, el("a", { href: "#/" }, "← lobby")),
    header, status, replay, board, el("h3", {}, "Moves (click one to see the table as it was)"), log,
  );
  header.append(el("h1", {}, `Table ${tableId}`), role);
  const showRole = () => {
    role.replaceChildren(mine ? `You play seat ${mine.seat} ` : "Spectator");
    if (mine) {
      const leave = el("button", { id: "leave" }, "Leave seat");
      leave.addEventListener("click", async () => {
        try {
          await api.leaveTable({ tableId }, auth(mine?.token));
          sessionStorage.removeItem(`croupier.seat.${tableId}`);
          location.hash = "#/";
        } catch (err) {
          showError(status, err);
        }
      });
      role.append(leave);
    }
  };
  showRole();
  let last = 0n;
  let shown = -1n; // the version on the board: an older view (a late reply) never replaces it
  let view: TableView | undefined;
  // Stepping back through the game: every event brought this page's own view after it, so the
  // table as it was at any version is already here (no call to make, nothing more revealed).
  const past: TableView[] = [];
  let pinned = -1; // index in `past` of the view on the board, -1: the live table
  const pin = (i: number) => {
    pinned = Math.max(0, Math.min(i, past.length - 1));
    const v = past[pinned];
    for (const line of log.querySelectorAll(".pinned")) line.classList.remove("pinned");
    log.querySelector(`[data-version="${v.version}"]`)?.classList.add("pinned");
    const step = (label: string, id: string, to: number, enabled: boolean) => {
      const b = el("button", { type: "button", id }, label);
      b.disabled = !enabled;
      b.addEventListener("click", () => pin(to));
      return b;
    };
    const live = el("button", { type: "button", id: "replay-live" }, "Back to the table");
    live.addEventListener("click", unpin);
    replay.replaceChildren(
      `Replaying version ${v.version} (${pinned + 1} of ${past.length} events) `,
      step("◀", "replay-prev", pinned - 1, pinned > 0), " ",
      step("▶", "replay-next", pinned + 1, pinned + 1 < past.length), " ", live);
    replay.hidden = false;
    renderView(board, v, mine, status, refresh, false);
  };
  const unpin = () => {
    pinned = -1;
    replay.hidden = true;
    replay.replaceChildren();
    for (const line of log.querySelectorAll(".pinned")) line.classList.remove("pinned");
    if (view) renderView(board, view, mine, status, refresh);
  };
  log.addEventListener("click", (e) => {
    const line = (e.target as HTMLElement).closest<HTMLElement>("li[data-version]");
    const at = line ? past.findIndex((v) => String(v.version) === line.dataset.version) : -1;
    if (at >= 0) pin(at);
  });
  const show = (v: TableView | undefined) => {
    if (!v || v.version < shown) return;
    shown = v.version;
    view = v;
    if (pinned < 0) renderView(board, v, mine, status, refresh);
  };
  // after a refused move (another seat moved first, or the move is no longer legal) the
  // board is redrawn from the table as it is, whether or not the stream is up
  const refresh = async () => {
    try {
      show((await api.getView({ tableId }, auth(mine?.token))));
    } catch {
      // the stream's own retries report a lost server
    }
  };
  // Follow the stream; on a dropped connection resume from the last version seen, waiting a
  // little longer after each failure (with jitter, so tabs do not all come back at once).
  let delay = 1000;
  let failed = false;
  while (!abort.signal.aborted) {
    try {
      for await (const event of api.streamTable(
        { tableId, fromVersion: last },
        { ...auth(mine?.token), signal: abort.signal },
      )) {
        if (failed) {
          status.replaceChildren(); // connected again
          failed = false;
        }
        delay = 1000;
        last = event.version;
        if (event.view) past.push(event.view);
        log.append(eventLine(event));
        log.scrollTop = log.scrollHeight;
        show(event.view);
        if (event.kind === EventKind.END) {
          return;
        }
      }
      if (view?.result?.finished) return;
    } catch (err) {
      if (abort.signal.aborted) return;
      showError(status, err);
      failed = true;
      if (err instanceof ConnectError) {
        if (err.code === 7 && mine) {
          // the token no longer holds a seat here (given up, or taken over): watch instead
          sessionStorage.removeItem(`croupier.seat.${tableId}`);
          mine = null;
          showRole();
          continue;
        }
        if ([5, 7, 16].includes(err.code)) return; // not found, denied, unauthenticated
        if (err.code === 3) {
          last = 0n; // asked to resume past the table's version: replay it from the start
          shown = -1n;
          log.replaceChildren();
          past.length = 0;
          unpin();
        }
      }
    }
    await new Promise((r) => setTimeout(r, delay * (0.5 + Math.random() / 2)));
    delay = Math.min(delay * 2, 30_000);
  }
}

function eventLine(e: TableEvent): HTMLElement {
  const kind = EventKind[e.kind]?.toLowerCase() ?? "event";
  const who = e.seat >= 0 ? `seat ${e.seat}${e.name ? ` (${e.name})` : ""}` : "";
  const text = e.kind === EventKind.MOVE
    ? `${who}: ${e.move}${e.auto ? " (played by the server: time ran out)" : ""}`
    : `${kind} ${who}`;
  return el("li", { class: `event event-${kind}`, "data-version": String(e.version) }, `#${e.version} ${text}`);
}

// A move refused ABORTED (the table moved on from the version it was sent at) is sent again
// at the new version while it still means what it meant: still among the seat's legal moves,
// the table waiting for the same seats (onTurn), at most MAX_RESENDS times in a row. Usually
// only another seat's optional move came in between (a declined announcement, a Dos call).
// Every client of ours follows this rule (bots/resend.py for the Python ones).
const MAX_RESENDS = 3;

function stillStands(move: string, sentAt: TableView, fresh: TableView): boolean {
  const seats = (v: TableView) => [...v.onTurn].sort((a, b) => a - b).join(",");
  return fresh.version > sentAt.version && fresh.legalMoves.includes(move) && seats(fresh) === seats(sentAt);
}

async function submitMove(tableId: string, move: string, sentAt: TableView, token?: string): Promise<void> {
  let at = sentAt;
  for (let resends = 0; ; resends++) {
    try {
      await api.submitMove({ tableId, move, expectedVersion: at.version }, auth(token));
      return;
    } catch (err) {
      if (!(err instanceof ConnectError) || err.code !== Code.Aborted || resends >= MAX_RESENDS) throw err;
      const fresh = await api.getView({ tableId }, auth(token));
      if (!stillStands(move, at, fresh)) throw err;
      at = fresh;
    }
  }
}

function cards(text: string): string[] {
  const t = text.trim();
  if (!t) return [];
  // Dou Dizhu writes hands as rank letters without spaces ("3345TTBR"); other games space
  // their cards, so one card alone ("b7", "12") stays whole
  return /^[3-9TJQKA2BR+]+$/.test(t) ? [...t].filter((c) => c !== "+") : t.split(/\s+/);
}

function cardRow(text: string, cls: string): HTMLElement {
  return el("div", { class: `cards ${cls}` }, ...cards(text).map((c) => el("span", { class: "card" }, c)));
}

function renderView(
  board: HTMLElement, v: TableView, mine: { seat: number } | null, status: HTMLElement,
  refresh: () => Promise<void>, live = true,
): void {
  const table = v.table!;
  const game = v.view?.game;
  const gv = game?.value as Record<string, unknown> | undefined;
  const seats = el("div", { id: "seats" },
    ...table.seats.map((s, i) => {
      const total = v.result?.totals[i];
      // the seat the table waits for (others in to_act may act out of turn, but need not)
      const waitedFor = (v.onTurn.length ? v.onTurn : v.toAct).includes(i);
      const cls = ["seat", waitedFor ? "to-act" : "", mine?.seat === i ? "me" : ""].join(" ");
      const size = (gv?.handSizes as number[] | undefined)?.[i];
      return el("div", { class: cls, "data-seat": String(i) },
        el("strong", {}, `Seat ${i}`),
        ` ${s.name || (s.occupied ? "" : "(empty)")}${s.isBot ? " (bot)" : ""}${s.away ? " (away: the server plays for it)" : ""}`,
        el("div", {}, `score ${total ?? 0}`), size !== undefined ? el("div", {}, `${size} cards`) : "");
    }));

  const centre = el("div", { id: "centre" }, ...centrePieces(game?.case, gv));
  const hand = gv && typeof gv.hand === "string" && gv.hand ? cardRow(gv.hand, "hand") : el("div", { class: "cards hand" });
  const moves = el("div", { id: "moves" });
  if (live && mine && v.legalMoves.length) {
    moves.append(el("span", {}, "Your move: "));
    for (const m of v.legalMoves) {
      const b = el("button", { class: "move", "data-move": m }, m);
      b.addEventListener("click", async () => {
        for (const other of moves.querySelectorAll("button")) other.disabled = true;
        try {
          await submitMove(table.tableId, m, v, tokenFor(table.tableId)?.token);
          status.replaceChildren();
        } catch (err) {
          showError(status, err);
          for (const other of moves.querySelectorAll("button")) other.disabled = false;
          await refresh();
        }
      });
      moves.append(b);
    }
  }
  if (live && mine && v.onTurn.length && !v.onTurn.includes(mine.seat) && !v.result?.finished) {
    // optional moves (an announcement...) may be on offer meanwhile, above
    moves.append(el("span", { class: "waiting" }, ` Waiting for seat ${v.onTurn.join(", ")}`));
  }
  const over = v.result?.finished
    ? el("div", { id: "game-over", role: "status" },
        `Game over. ${v.result.winners.length ? `Winners: seat ${v.result.winners.join(", ")}` : "No winner"}. Totals: ${v.result.totals.join(" / ")}` +
          ` (last deal: ${v.result.lastDeal.join(" / ")}) `, recordButton(table.tableId, status), " ",
        againButton(table, live ? mine : null, status))
    : "";
  const details = el("details", { id: "state" }, el("summary", {}, "Everything this seat may see"),
    el("pre", {}, v.view ? JSON.stringify(toJson(GameViewSchema, v.view), null, 1) : ""));
  board.replaceChildren(
    el("p", { id: "version" }, `${table.game} · version ${v.version} · ${TableStatus[table.status] ?? ""}`),
    seats, centre, el("h3", {}, mine ? "Your hand" : ""), hand, moves, over, details,
  );
}

// The finished game's record (ExportRecord: every move unmasked, the seed, the result), saved
// as JSON; a private table's needs this tab's seat token.
function recordButton(tableId: string, status: HTMLElement): HTMLElement {
  const b = el("button", { type: "button", id: "record" }, "Download the record");
  b.addEventListener("click", async () => {
    try {
      const record = await api.exportRecord({ tableId }, auth(tokenFor(tableId)?.token));
      const text = JSON.stringify(toJson(GameRecordSchema, record), null, 1);
      const link = el("a", {
        href: URL.createObjectURL(new Blob([text], { type: "application/json" })),
        download: `croupier-${tableId}.json`,
      });
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
    } catch (err) {
      showError(status, err);
    }
  });
  return b;
}

// A new table like a finished one: same game, players, options and seats (a person's seat
// stays a person's, a bot's keeps its level); whoever played here sits down at the same seat,
// a spectator watches. A deck option comes back as its digest ("sha256:..."), not the cards:
// the new table deals from its own seed instead.
function againButton(table: Table, mine: { seat: number } | null, status: HTMLElement): HTMLElement {
  const b = el("button", { type: "button", id: "play-again" }, mine ? "Play again" : "New table like this");
  b.addEventListener("click", async () => {
    const options = Object.fromEntries(Object.entries(table.options ?? {})
      .filter(([, value]) => !(typeof value === "string" && value.startsWith("sha256:"))));
    const seats = table.seats.map((s) => s.kind === SeatKind.BOT
      ? { kind: SeatKind.BOT, botLevel: s.botLevel }
      : { kind: SeatKind.HUMAN });
    try {
      const fresh = await api.createTable({ game: table.game, players: table.players, seats, options });
      if (mine) await joinTable(fresh.tableId, mine.seat);
      else location.hash = `#/table/${fresh.tableId}`;
    } catch (err) {
      showError(status, err);
    }
  });
  return b;
}

// Dedicated pieces where a game has a table worth drawing; the JSON above covers the rest.
function centrePieces(kind: string | undefined, g: Record<string, unknown> | undefined): (Node | string)[] {
  if (!g) return [];
  const out: (Node | string)[] = [];
  const line = (label: string, text: string) => el("div", { class: "line" }, el("b", {}, `${label}: `), text);
  switch (kind) {
    case "douDizhu": {
      if ((g.landlord as number) >= 0) out.push(line("Landlord", `seat ${g.landlord} (bid ${g.bid})`));
      else {
        const bids = (g.bidding as { seat: number; move: string }[]) ?? [];
        out.push(line("Bidding", (bids.map((b) => `seat ${b.seat}: ${b.move}`).join(" · ") || "nobody has bid yet") +
          ((g.bid as number) > 0 ? ` (highest: ${g.bid})` : "")));
      }
      if (g.kitty) out.push(el("div", {}, el("b", {}, "Kitty: "), cardRow(String(g.kitty), "kitty")));
      if (g.toBeat) out.push(el("div", { class: "trick" }, el("b", {}, `To beat (seat ${g.toBeatSeat}): `), cardRow(String(g.toBeat), "to-beat")));
      const plays = (g.plays as { seat: number; move: string }[]) ?? [];
      if (plays.length) out.push(line("Last plays", plays.slice(-3).map((p) => `seat ${p.seat}: ${p.move}`).join(" · ")));
      break;
    }
    case "doppelkopf": {
      const trick = g.trick as { leader: number; cards: string } | undefined;
      const contract = DOPPELKOPF_CONTRACTS[(g.contract as number) ?? 0] ?? String(g.contract);
      const declarer = (g.declarer as number) ?? -1;
      out.push(line("Game", declarer >= 0 ? `${contract} (seat ${declarer})` : contract));
      if (g.toFollow) out.push(line("To follow", String(g.toFollow)));
      if (trick && trick.cards) out.push(el("div", { class: "trick" }, el("b", {}, `Trick (led by seat ${trick.leader}): `), cardRow(trick.cards, "trick-cards")));
      else {
        const done = (g.tricks as { leader: number; cards: string; winner: number }[]) ?? [];
        const prev = done[done.length - 1];
        if (prev) out.push(el("div", { class: "trick" }, el("b", {}, `Last trick (won by seat ${prev.winner}): `), cardRow(prev.cards, "trick-cards")));
      }
      const pts = g.points as number[] | undefined;
      if (pts?.length) out.push(line("Card points", pts.join(" / ")));
      break;
    }
    case "sobeEDesce": {
      if (g.trump) out.push(line("Trumps", String(g.trump) + (g.turnedCard ? ` (turned: ${g.turnedCard})` : "")));
      if ((g.chooser as number) >= 0) out.push(line("Chooser", `seat ${g.chooser}`));
      const decisions = (g.decisions as { seat: number; plays: boolean; exchanged: number }[]) ?? [];
      if (decisions.length) {
        out.push(line("Decisions", decisions.map((d) =>
          `seat ${d.seat}: ${d.plays ? (d.exchanged ? `plays, exchanged ${d.exchanged}` : "plays") : "passes"}`).join(" · ")));
      }
      const tricks = (g.tricks as { leader: number; cards: string[] }[]) ?? [];
      const open = tricks[tricks.length - 1];
      if (open?.cards.length) out.push(el("div", { class: "trick" }, el("b", {}, `Trick (led by seat ${open.leader}): `), cardRow(open.cards.join(" "), "trick-cards")));
      const won = g.won as number[] | undefined;
      if (won?.length) out.push(line("Tricks won", won.join(" / ")));
      const scores = g.scores as number[] | undefined;
      if (scores?.length) out.push(line("Scores (down to 0 wins)", scores.join(" / ")));
      break;
    }
    case "dobro": {
      out.push(line("Value in play", String(g.value ?? 0)));
      if (g.auctionCards) out.push(el("div", { class: "trick" }, el("b", {}, "Auction: "), cardRow(String(g.auctionCards), "trick-cards")));
      if (g.announcement) out.push(line("Announced", String(g.announcement)));
      out.push(line("Draw pile", String(g.drawPile ?? 0)));
      break;
    }
    case "dos": {
      if (g.row) out.push(el("div", { class: "trick" }, el("b", {}, "Centre row: "), cardRow(String(g.row), "trick-cards")));
      const matches = (g.matches as { cards: string; target: string }[]) ?? [];
      if (matches.length) out.push(line("Matched this turn", matches.map((m) => `${m.cards} on ${m.target}`).join(" · ")));
      if ((g.bonusOwed as number) > 0) out.push(line("Bonus cards to add", String(g.bonusOwed)));
      if ((g.dosWindow as number) >= 0) out.push(line("Dos window", `seat ${g.dosWindow} may be caught`));
      out.push(line("Draw pile", String(g.drawPile ?? 0)));
      const totals = g.totals as (number | string)[] | undefined;
      if (totals?.length) out.push(line("Match points", totals.join(" / ")));
      break;
    }
    default:
      break;
  }
  return out;
}

// Doppelkopf's contract numbers (engines/doppelkopf/moves.py CONTRACT_NAMES)
const DOPPELKOPF_CONTRACTS = ["normal game", "marriage", "diamond solo", "heart solo", "spade solo",
  "club solo", "queen solo", "jack solo", "ace solo", "pure club solo", "pure spade solo",
  "pure heart solo", "pure diamond solo"];

// ---------------------------------------------------------------- routing

function route(): void {
  routed += 1;
  if (lobbyTimer !== undefined) window.clearInterval(lobbyTimer);
  lobbyTimer = undefined;
  streamAbort?.abort();
  const m = location.hash.match(/^#\/table\/([\w-]+)/);
  if (m) void tablePage(m[1]);
  else void lobby();
}
window.addEventListener("hashchange", route);
route();
