// The new-table form: the game, the player count (reset to the game's own on every change of
// game), who sits where (you, an open seat, a bot level), and the game's options with words
// and their documentation; fixed decks and the like stay under "Advanced".
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { JSX } from "preact";
import { useState } from "preact/hooks";
import { api, errorText, joinTable } from "../api";
import { SeatKind, type GameInfo } from "../gen/croupier/v1/croupier_pb";
import { gameTitle, optionWords, t } from "../i18n";
import { BOT_LEVELS, DEFAULT_BOT, levelText } from "./levels";

// an option as ListGames gives it: its words and its fold are the game's own (OptionSpec)
interface Spec { name: string; type: string; default?: JsonValue; doc?: string; label?: string; advanced?: boolean }

function OptionField({ game, spec, value, onChange }: {
  game: string; spec: Spec; value: JsonValue | undefined; onChange: (v: JsonValue) => void;
}): JSX.Element {
  const label = optionWords(game, spec.name, "label", spec.label || spec.name.replace(/_/g, " "));
  const doc = spec.doc ? optionWords(game, spec.name, "doc", spec.doc) : "";
  const id = `option-${spec.name}`;
  const help = doc ? <small class="option-doc" id={`${id}-doc`}>{doc}</small> : null;
  if (spec.type === "bool") {
    return (
      <div class="option bool">
        <label><input type="checkbox" id={id} data-option={spec.name} checked={value === true}
          aria-describedby={`${id}-doc`} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} /> {label}</label>
        {help}
      </div>
    );
  }
  return (
    <div class="option">
      <label for={id}>{label}</label>
      <input id={id} data-option={spec.name} type={spec.type === "int" ? "number" : "text"} inputMode={spec.type === "int" ? "numeric" : undefined}
        value={value === undefined || value === null ? "" : String(value)} aria-describedby={`${id}-doc`}
        onInput={(e) => onChange((e.target as HTMLInputElement).value)} />
      {help}
    </div>
  );
}

export function CreateForm({ games, onError, infoJson }: {
  games: GameInfo[]; onError: (e: string) => void; infoJson: (g: GameInfo) => JsonObject;
}): JSX.Element {
  const [gameName, setGameName] = useState(games[0].name);
  const game = games.find((g) => g.name === gameName) ?? games[0];
  const specs = ((infoJson(game).options as JsonObject[] | undefined) ?? []) as unknown as Spec[];
  const [players, setPlayers] = useState(game.minPlayers);
  const [seats, setSeats] = useState<string[]>(() => seatDefaults(game.minPlayers));
  const [values, setValues] = useState<Record<string, JsonValue>>({});
  const [turnSeconds, setTurnSeconds] = useState("0");
  const [busy, setBusy] = useState(false);

  const pickGame = (name: string) => {
    const g = games.find((x) => x.name === name)!;
    setGameName(name);
    setPlayers(g.minPlayers);
    setSeats(seatDefaults(g.minPlayers));
    setValues({});
  };
  const pickPlayers = (n: number) => {
    setPlayers(n);
    setSeats((s) => Array.from({ length: n }, (_, i) => s[i] ?? (i === 0 ? "you" : DEFAULT_BOT)));
  };
  const value = (s: Spec) => (s.name in values ? values[s.name] : s.default);

  const create = async (watch: boolean) => {
    const options: JsonObject = {};
    for (const s of specs) {
      if (!(s.name in values)) continue;
      const v = values[s.name];
      if (s.type === "int") options[s.name] = Number(v);
      else if (s.type === "bool") options[s.name] = v === true;
      else if (v !== "") options[s.name] = v;
    }
    if (Number(turnSeconds) > 0) options.turn_seconds = Number(turnSeconds);
    const seatSpecs = seats.map((s) => (s === "you" && !watch) || s === "open"
      ? { kind: SeatKind.HUMAN } : { kind: SeatKind.BOT, botLevel: s === "you" ? DEFAULT_BOT : s });
    setBusy(true);
    try {
      const table = await api.createTable({ game: game.name, players, seats: seatSpecs, options });
      if (watch) location.hash = `#/table/${table.tableId}`;
      else await joinTable(table.tableId, seats.indexOf("you") >= 0 ? seats.indexOf("you") : undefined);
    } catch (err) {
      onError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const main = specs.filter((s) => !s.advanced);
  const advanced = specs.filter((s) => s.advanced);
  return (
    <form id="create" class="create-form" onSubmit={(e) => { e.preventDefault(); void create(false); }}>
      <div class="form-row">
        <label for="game">{t("common.lobby.game")}</label>
        <select id="game" value={gameName} onChange={(e) => pickGame((e.target as HTMLSelectElement).value)}>
          {games.map((g) => <option key={g.name} value={g.name}>{gameTitle(g.name, g.title)}</option>)}
        </select>
      </div>
      <div class="form-row">
        <label for="players">{t("common.create.players")}</label>
        {game.minPlayers === game.maxPlayers ? <span id="players" data-value={players}>{players}</span> : (
          <select id="players" value={String(players)} onChange={(e) => pickPlayers(Number((e.target as HTMLSelectElement).value))}>
            {Array.from({ length: game.maxPlayers - game.minPlayers + 1 }, (_, i) => game.minPlayers + i)
              .map((n) => <option key={n} value={String(n)}>{n}</option>)}
          </select>
        )}
      </div>
      <fieldset id="seats" class="seats-field">
        <legend>{t("common.create.seats")}</legend>
        {seats.map((s, i) => (
          <label key={`${gameName}-${i}`} class="seat-choice">{t("common.create.seat", { n: i })}
            <select class="seat-kind" id={`seat-${i}`} data-seat={i} value={s}
              onChange={(e) => setSeats(seats.map((x, k) => (k === i ? (e.target as HTMLSelectElement).value : x)))}>
              <option value="you">{t("common.create.you")}</option>
              <option value="open">{t("common.create.openSeat")}</option>
              {BOT_LEVELS.map((l) => <option key={l} value={l}>{levelText(l)}</option>)}
            </select>
          </label>
        ))}
      </fieldset>
      <div id="options" class="options">
        {main.map((s) => <OptionField key={`${gameName}-${s.name}`} game={gameName} spec={s} value={value(s)}
          onChange={(v) => setValues({ ...values, [s.name]: v })} />)}
      </div>
      <details id="advanced">
        <summary>{t("common.create.advanced")}</summary>
        <div class="options">
          {advanced.map((s) => <OptionField key={`${gameName}-${s.name}`} game={gameName} spec={s} value={value(s)}
            onChange={(v) => setValues({ ...values, [s.name]: v })} />)}
          <div class="option">
            <label for="option-turn_seconds">{t("common.create.turnTimer")}</label>
            <input id="option-turn_seconds" type="number" value={turnSeconds} onInput={(e) => setTurnSeconds((e.target as HTMLInputElement).value)} />
            <small class="option-doc">{t("common.create.turnTimerDoc")}</small>
          </div>
        </div>
      </details>
      <div class="action-row">
        <button type="submit" id="create-button" class="primary" disabled={busy}>{t("common.create.sit")}</button>
        <button type="button" id="create-watch" class="secondary" disabled={busy} onClick={() => void create(true)}>{t("common.create.watch")}</button>
      </div>
    </form>
  );
}

function seatDefaults(n: number): string[] {
  return Array.from({ length: n }, (_, i) => (i === 0 ? "you" : DEFAULT_BOT));
}
