// Markdown files imported as text (esbuild's "text" loader, chosen by `with { type: "text" }`).
declare module "*.md" {
  const text: string;
  export default text;
}
