// Small shared pieces of the table: a row of shown cards, labelled lines in the centre.
import type { ComponentChildren, JSX } from "preact";
import { CardView } from "../cards/Card";
import type { Back, Face } from "../cards/faces";

export function CardRow({ cards, face, back, small, cls }: {
  cards: string[]; face: (code: string) => Face | null; back: Back; small?: boolean; cls?: string;
}): JSX.Element {
  return (
    <span class={`card-row ${cls ?? ""}`}>
      {cards.map((c, i) => <CardView key={`${c}-${i}`} code={c} face={face(c)} back={back} small={small} />)}
    </span>
  );
}

export function CentreLine({ label, children }: { label: string; children: ComponentChildren }): JSX.Element {
  return <div class="line"><b>{label}: </b>{children}</div>;
}

export function Info({ label, children }: { label: string; children: ComponentChildren }): JSX.Element {
  return <div class="info"><div class="info-label">{label}</div>{children}</div>;
}

export function Badge({ text, tone }: { text: string; tone?: string }): JSX.Element {
  return <span class={`badge ${tone ?? ""}`}>{text}</span>;
}
