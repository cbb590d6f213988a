// The game's own words (RISCOS, Oubli card, Re and Kontra...) explained once, in a fold under
// the centre: a tap opens it on a phone, where a tooltip never shows.
import type { JSX } from "preact";
import { t } from "../i18n";

export function Legend({ words }: { words: { word: string; text: string }[] }): JSX.Element {
  return (
    <details class="legend" id="legend">
      <summary>{t("games.legend", { list: words.map((w) => w.word).join(" · ") })}</summary>
      <dl>{words.map((w) => [<dt key={`${w.word}-t`}>{w.word}</dt>, <dd key={`${w.word}-d`}>{w.text}</dd>])}</dl>
    </details>
  );
}
