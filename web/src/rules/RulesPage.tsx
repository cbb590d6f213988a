// A game's rules inside the client (#/rules/<game>): the rulebook of seeds/<game>.md, in the
// player's language where a translation is written, else in English with a line that says so.
// Markdown becomes HTML with `marked`, cleaned by DOMPurify before it reaches the page.
import DOMPurify from "dompurify";
import { marked } from "marked";
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { gameTitle, t, useLanguage } from "../i18n";
import { PageHeader } from "../players/MatchPage";
import { RULEBOOKS } from "./docs";
import { RULE_GAMES, rulesHref } from "./href";
import { addStyles } from "../i18n/styles";
import css from "./rules.css" with { type: "text" };

addStyles("rules", css);

export function RulesPage({ game }: { game: string }): JSX.Element {
  const lng = useLanguage();
  const books = RULEBOOKS[game];
  const shown = books ? (books[lng] ? lng : "en") : "";
  const key = `${game}/${shown}`;
  // the rendered rulebook with what it is of: a language change never shows the old one as new
  const [doc, setDoc] = useState<{ key: string; html: string } | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    if (!books) return;
    let stop = false;
    books[shown]().then(
      (m) => !stop && setDoc({ key, html: DOMPurify.sanitize(marked.parse(m.default, { async: false })) }),
      () => !stop && setFailed(true));
    return () => { stop = true; };
  }, [key]);
  const title = gameTitle(game);
  const html = doc?.key === key ? doc.html : null;
  return (
    <div class="page rules-page" id="rules" data-game={game} data-shown={shown}>
      <PageHeader title={books ? t("common.rules.title", { game: title }) : t("common.rules.heading")} />
      <nav class="rules-games" aria-label={t("common.rules.others")}>
        {RULE_GAMES.map((g) => (
          <a key={g} href={rulesHref(g)} class={`rules-tab ${g === game ? "current" : ""}`}
            aria-current={g === game ? "page" : undefined}>{gameTitle(g)}</a>
        ))}
      </nav>
      <section class="panel rules-body">
        {!books && <p id="rules-unknown">{t("common.rules.unknown", { game })}</p>}
        {books && shown !== lng && (
          <p class="rules-note" id="rules-in-english" lang={lng}>{t("common.rules.englishOnly")}</p>
        )}
        {failed && <div class="error" role="alert">{t("common.rules.failed")}</div>}
        {books && html === null && !failed && <p class="muted">{t("common.loading")}</p>}
        {html !== null && <article class="rulebook" lang={shown} dangerouslySetInnerHTML={{ __html: html }} />}
      </section>
    </div>
  );
}
