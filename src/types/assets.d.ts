// Files imported `with { type: "file" }` resolve to a path (embedded in the compiled binary);
// `with { type: "text" }` to the file's text.
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.data" {
  const path: string;
  export default path;
}
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "*.sql" {
  const text: string;
  export default text;
}
