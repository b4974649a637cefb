import { Elysia } from "elysia";
// Served by Crier itself so /docs works offline and behind strict networks (no CDN).
import swaggerBundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import swaggerCssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };

export const DOCS_ASSETS = {
  bundle: "/docs/assets/swagger-ui-bundle.js",
  css: "/docs/assets/swagger-ui.css",
};

export function docsAssets() {
  return new Elysia({ name: "docs-assets" })
    .get(
      DOCS_ASSETS.bundle,
      () =>
        new Response(Bun.file(swaggerBundlePath), {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
        }),
      { detail: { hide: true } },
    )
    .get(
      DOCS_ASSETS.css,
      () =>
        new Response(Bun.file(swaggerCssPath), {
          headers: { "content-type": "text/css; charset=utf-8", "cache-control": "public, max-age=86400" },
        }),
      { detail: { hide: true } },
    );
}
