// A component's own style sheet, added to the page once as a <style> element. The sheet is
// imported as text, so it works whatever the build does with CSS (no extra file to link).
const added = new Set<string>();

export function addStyles(id: string, css: string): void {
  if (added.has(id) || typeof document === "undefined") return;
  added.add(id);
  const el = document.createElement("style");
  el.dataset.styles = id;
  el.textContent = css;
  document.head.append(el);
}
