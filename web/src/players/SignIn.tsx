// Signing in as a guest: a name is all it takes (CreateGuest); the browser remembers the
// player (players/identity.ts). The bar at the top of the lobby shows who is signed in, with
// their profile and "Sign out"; signed out, it keeps the plain name field for tables joined
// without identity and offers the sign-in.
import type { JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText, playerName, setPlayerName } from "../api";
import { t } from "../i18n";
import { Modal } from "../table/Dialogs";
import type { Identity } from "./identity";
import { signInAsGuest, signOut, usePlayer } from "./session";

export function SignInDialog({ why, onDone, onCancel }: {
  why?: string; onDone: (me: Identity) => void; onCancel: () => void;
}): JSX.Element {
  const [name, setName] = useState(playerName() === "guest" ? "" : playerName());
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const field = useRef<HTMLInputElement>(null);
  // the name field, not the dialog's first button, takes the focus (after the dialog's own)
  useEffect(() => void setTimeout(() => field.current?.focus(), 0), []);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!name.trim()) return setError(t("common.signIn.nameNeeded"));
    setBusy(true);
    setError("");
    try {
      const me = await signInAsGuest(name);
      setPlayerName(me.name);
      onDone(me);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal id="sign-in" title={t("common.signIn.title")} onClose={onCancel}>
      {why && <p class="sign-in-why">{why}</p>}
      <form class="sign-in-form" onSubmit={submit}>
        <label for="guest-name">{t("common.signIn.name")}</label>
        <input id="guest-name" ref={field} value={name} maxLength={40} autoComplete="nickname" required
          onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <small class="muted">{t("common.signIn.remembered")}</small>
        {error && <div class="error" role="alert" id="sign-in-error">{error}</div>}
        <div class="action-row">
          <button type="submit" id="sign-in-submit" class="primary" disabled={busy}>{t("common.signIn.submit")}</button>
          <button type="button" class="secondary" onClick={onCancel}>{t("common.cancel")}</button>
        </div>
      </form>
    </Modal>
  );
}

/** The lobby header's player corner. */
export function PlayerBar(): JSX.Element {
  const { me, notice } = usePlayer();
  const [asking, setAsking] = useState(false);
  // "guest" is the API's name for a player without one: shown as an empty field in any language
  const [name, setName] = useState(playerName() === "guest" ? "" : playerName());
  if (me) {
    return (
      <div class="player-bar" id="player-bar" data-player={me.playerId}>
        <a class="player-name" id="me" href="#/profile" title={t("common.profile.own")}>
          <span class="avatar" aria-hidden="true">{me.name.slice(0, 1).toUpperCase()}</span>
          <span class="player-text"><b>{me.name}</b>{me.guest && <small> {t("common.signIn.guest")}</small>}</span>
        </a>
        <button type="button" id="sign-out" class="header-button" onClick={signOut}>{t("common.signIn.signOut")}</button>
      </div>
    );
  }
  return (
    <div class="player-bar" id="player-bar">
      <label class="name-field">{t("common.signIn.yourName")} <input id="name" value={name} maxLength={40} autoComplete="nickname"
        placeholder={t("common.signIn.namePlaceholder")}
        onInput={(e) => { const v = (e.target as HTMLInputElement).value; setName(v); setPlayerName(v); }} /></label>
      <button type="button" id="sign-in" class="header-button" onClick={() => setAsking(true)}>{t("common.signIn.submit")}</button>
      {notice && <span class="sign-in-notice" role="status">{t(notice)}</span>}
      {asking && <SignInDialog onDone={() => setAsking(false)} onCancel={() => setAsking(false)} />}
    </div>
  );
}
