// Waiting for a match: the ticket as the server tells it (WatchTicket, or GetTicket every
// second where the stream cannot be had): the time waited, the players found, when bots take
// the empty seats; Cancel gives the ticket up. Matched: the seat the ticket holds is taken with
// the player's identity and the table opens (the waiting page is replaced in the history, so
// "back" from the table does not land here).
import { Code, ConnectError } from "@connectrpc/connect";
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, errorText, joinTable } from "../api";
import { MatchMode, TicketStatus, type Ticket } from "../gen/croupier/v1/croupier_pb";
import { gameTitle, num, t } from "../i18n";
import { LanguagePicker } from "../i18n/LanguagePicker";
import { usePlayer } from "./session";

const POLL_MS = 1000;

function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

export function MatchPage({ ticketId }: { ticketId: string }): JSX.Element {
  const { me } = usePlayer();
  const [ticket, setTicket] = useState<Ticket>();
  const [seenAt, setSeenAt] = useState(Date.now()); // when `ticket` arrived, by this browser's clock
  const [now, setNow] = useState(Date.now());
  const [error, setError] = useState("");
  const [title, setTitle] = useState("");
  const [leaving, setLeaving] = useState(false);
  const joined = useRef(false);
  const watching = useRef<Promise<void>>(Promise.resolve()); // the watch, until it ends

  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), 250);
    return () => window.clearInterval(t);
  }, []);

  const take = async (tk: Ticket) => {
    if (joined.current) return;
    joined.current = true;
    try {
      await joinTable(tk.tableId, tk.seat, false);
      location.replace(`#/table/${tk.tableId}`);
    } catch (err) {
      joined.current = false;
      setError(t("common.match.seatFailed", { error: errorText(err) }));
    }
  };

  useEffect(() => {
    if (!me) return;
    const abort = new AbortController();
    const seen = (t: Ticket) => {
      setTicket(t);
      setSeenAt(Date.now());
      if (t.status === TicketStatus.MATCHED) void take(t);
    };
    const waiting = (t: Ticket | undefined) => !t || t.status === TicketStatus.WAITING;
    const run = async () => {
      let last: Ticket | undefined;
      try {
        for await (const t of api.watchTicket({ ticketId }, { signal: abort.signal })) {
          last = t;
          seen(t);
          setError("");
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        if (err instanceof ConnectError && [Code.NotFound, Code.PermissionDenied, Code.InvalidArgument].includes(err.code)) {
          setError(errorText(err));
          return;
        }
      }
      // the stream ended or could not be had: ask every second while the ticket waits (the
      // asking keeps it alive)
      while (!abort.signal.aborted && waiting(last)) {
        try {
          last = await api.getTicket({ ticketId }, { signal: abort.signal });
          seen(last);
          setError("");
        } catch (err) {
          if (abort.signal.aborted) return;
          setError(errorText(err));
          if (err instanceof ConnectError && [Code.NotFound, Code.PermissionDenied].includes(err.code)) return;
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
      }
    };
    watching.current = run();
    return () => abort.abort();
  }, [ticketId, me?.playerId]);

  const game = ticket?.game ?? "";
  useEffect(() => {
    if (game) api.listGames({}).then((r) => setTitle(r.games.find((g) => g.name === game)?.title ?? game), () => setTitle(game));
  }, [game]);

  const cancel = async () => {
    setLeaving(true);
    try {
      await api.cancelTicket({ ticketId });
      // the server ends the watch with the cancelled ticket: leave once it has (not cut)
      await Promise.race([watching.current, new Promise((r) => setTimeout(r, 2000))]);
      location.hash = "#/";
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.FailedPrecondition) {
        // matched meanwhile: the table is there, so go and sit down
        try {
          const tk = await api.getTicket({ ticketId });
          setTicket(tk);
          if (tk.status === TicketStatus.MATCHED) return void take(tk);
          location.hash = "#/";
        } catch (again) {
          setError(errorText(again));
        }
      } else setError(errorText(err));
    } finally {
      setLeaving(false);
    }
  };

  if (!me) {
    return (
      <div class="page match-page">
        <PageHeader title={t("common.playNow.heading")} />
        <section class="panel"><p>{t("common.match.signIn")}</p><a class="button-link" href="#/">{t("common.backToLobby")}</a></section>
      </div>
    );
  }
  const since = (now - seenAt) / 1000;
  const open = ticket?.status === TicketStatus.WAITING;
  const waited = ticket ? ticket.waitedSeconds + (open ? since : 0) : 0;
  const n = ticket?.players ?? 0;
  const found = ticket ? Math.min(n, Math.max(1, ticket.playersFound)) : 0;
  // when bots come, counted from the ticket's own clock (created + waited), not this browser's
  const botsIn = ticket && ticket.botsAt > 0 ? ticket.botsAt - (ticket.createdAt + ticket.waitedSeconds) - since : undefined;
  const rated = ticket?.mode === MatchMode.RATED;
  const status = ticket ? TicketStatus[ticket.status] : "";
  return (
    <div class="page match-page">
      <PageHeader title={title ? t("common.match.title", { game: gameTitle(game, title) }) : t("common.playNow.heading")} />
      <section class="panel waiting-panel" id="match" data-status={status} data-ticket={ticketId} aria-live="polite">
        {!ticket && !error && <p class="muted">{t("common.match.asking")}</p>}
        {ticket && (
          <>
            <h2>{open ? t("common.match.looking") : ticket.status === TicketStatus.MATCHED ? t("common.match.matched")
              : ticket.status === TicketStatus.CANCELLED ? t("common.match.cancelled") : t("common.match.expired")}</h2>
            <div class="waited" id="waited" data-seconds={Math.floor(waited)}>
              <span class="waited-clock">{clock(waited)}</span>
              <span class="muted">{t("common.match.waited")}</span>
            </div>
            <div class="found" id="found" data-found={found} data-players={n}
              aria-label={t("common.match.found", { found, n })}>
              {Array.from({ length: n }, (_, i) => (
                <span key={i} class={`found-seat ${i < found ? "here" : ""}`} aria-hidden="true">{i === 0 ? t("common.badge.you") : i < found ? "✓" : "?"}</span>
              ))}
            </div>
            <p class="found-words">{t("common.match.found", { found, n })} · {rated ? t("common.match.rated", { rating: num(ticket.rating, 1) }) : t("common.match.quick")}</p>
            {open && botsIn !== undefined && (
              <p class="bots-at" id="bots-at">{botsIn > 0.5 ? t("common.match.botsIn", { s: Math.ceil(botsIn) })
                : t("common.match.botsNow")}</p>
            )}
          </>
        )}
        {error && <div class="error" role="alert">{error}</div>}
        <div class="action-row">
          {(open || !ticket) && (
            <button type="button" id="cancel-match" class="secondary" disabled={leaving} onClick={() => void cancel()}>{t("common.cancel")}</button>
          )}
          {ticket && !open && ticket.status !== TicketStatus.MATCHED && <a class="button-link" href="#/">{t("common.backToLobby")}</a>}
        </div>
      </section>
    </div>
  );
}

/** The header of the pages besides the lobby and the table: back to the lobby, the title, the
 * language. */
export function PageHeader({ title }: { title: string }): JSX.Element {
  return (
    <header class="page-header">
      <a href="#/" class="back" aria-label={t("common.backToLobby")}>←&nbsp;<span class="back-word">{t("common.lobby.heading")}</span></a>
      <h1>{title}</h1>
      <LanguagePicker />
    </header>
  );
}
