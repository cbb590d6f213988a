// Files imported as text (esbuild's "text" loader, chosen by `with { type: "text" }`): the
// rulebooks (markdown) and the style sheets that components add to the page themselves.
declare module "*.md" {
  const text: string;
  export default text;
}
declare module "*.css" {
  const text: string;
  export default text;
}
