// The rulebooks, as markdown text: seeds/<game>.md (English) and seeds/<game>.<lang>.md where a
// translation is written. Each is its own dynamic import, so a bundle built with code splitting
// loads a rulebook only when its page opens. To add a translation: write seeds/<game>.<lang>.md
// and add its line here.
type Loader = () => Promise<{ default: string }>;

export const RULEBOOKS: Record<string, Record<string, Loader>> = {
  dou_dizhu: {
    en: () => import("../../../seeds/dou_dizhu.md", { with: { type: "text" } }),
    zh: () => import("../../../seeds/dou_dizhu.zh.md", { with: { type: "text" } }),
  },
  doppelkopf: {
    en: () => import("../../../seeds/doppelkopf.md", { with: { type: "text" } }),
    de: () => import("../../../seeds/doppelkopf.de.md", { with: { type: "text" } }),
  },
  dobro: {
    en: () => import("../../../seeds/dobro.md", { with: { type: "text" } }),
    fr: () => import("../../../seeds/dobro.fr.md", { with: { type: "text" } }),
  },
  dos: { en: () => import("../../../seeds/dos.md", { with: { type: "text" } }) },
  sobe_e_desce: {
    en: () => import("../../../seeds/sobe_e_desce.md", { with: { type: "text" } }),
    pt: () => import("../../../seeds/sobe_e_desce.pt.md", { with: { type: "text" } }),
  },
};
