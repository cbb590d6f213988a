// Words for the options of ListGames: a label a person reads, and whether the option is one of
// the "advanced" ones (fixed decks, seats, bounds) that stay folded away.
export interface OptionLabel { label: string; advanced?: boolean }

export const OPTION_LABELS: Record<string, Record<string, OptionLabel>> = {
  dou_dizhu: {
    deals: { label: "Deals in the match" },
    max_redeals: { label: "All-pass redeals before a forced landlord", advanced: true },
    deck: { label: "Fixed deck (card codes)", advanced: true },
    face_up: { label: "Face-up card index", advanced: true },
    dealer: { label: "First dealer (seat, -1 random)", advanced: true },
  },
  doppelkopf: {
    deals: { label: "Deals in the session" },
    target_points: { label: "End at this many points (0: none)" },
    bistro: { label: "Bistro (Kneipe) rules" },
    duel: { label: "Duel: people at seats 0 and 2 against computers" },
    tournament: { label: "Tournament display (no helper info)", advanced: true },
    deck: { label: "Fixed deck (card codes)", advanced: true },
    dealer: { label: "First dealer (seat, -1 random)", advanced: true },
  },
  dobro: {
    rounds: { label: "Rounds (0: one per player)" },
    manual_draw: { label: "Draw by hand (forgetting and the Oubli card)" },
    deck: { label: "Fixed deck (card codes)", advanced: true },
    opener: { label: "First opener (seat, -1 random)", advanced: true },
  },
  dos: {
    target: { label: "Points that win the match" },
    official_no_match: { label: "Official rule: add a card when you match nothing" },
    max_turns: { label: "Turn limit of a round", advanced: true },
    deck: { label: "Fixed deck (card codes)", advanced: true },
    dealer: { label: "First dealer (seat, -1 random)", advanced: true },
  },
  sobe_e_desce: {
    start_score: { label: "Starting score (first to 0 wins)" },
    max_deals: { label: "Most deals in a match", advanced: true },
    deck: { label: "Fixed deck (card codes)", advanced: true },
    dealer: { label: "First dealer (seat, -1 random)", advanced: true },
  },
};

export function optionLabel(game: string, name: string): OptionLabel {
  return OPTION_LABELS[game]?.[name] ?? { label: name.replace(/_/g, " "), advanced: true };
}
