// The rules page loaded on demand: the markdown renderer, the sanitiser and the rulebooks are
// only needed there (with code splitting they stay out of the first download).
import type { JSX } from "preact";
import { useEffect, useState } from "preact/hooks";
import { t } from "../i18n";

type Page = (props: { game: string }) => JSX.Element;

export function LazyRulesPage({ game }: { game: string }): JSX.Element {
  const [page, setPage] = useState<{ Page: Page } | null>(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    import("./RulesPage").then((m) => setPage({ Page: m.RulesPage }), () => setFailed(true));
  }, []);
  if (failed) return <div class="error" role="alert">{t("common.rules.failed")}</div>;
  return page ? <page.Page game={game} /> : <p class="loading">{t("common.loading")}</p>;
}
