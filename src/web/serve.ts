import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { dashboardBundle } from "./bundle.ts";

/** The dashboard's pages: every one is the same shell; the script routes on the path. */
export const PAGE_PATHS = [
  "/",
  "/sign-in",
  "/welcome",
  "/accounts",
  "/compose",
  "/calendar",
  "/posts",
  "/posts/:id",
  "/analytics",
  "/drafts",
  "/drafts/:id",
  "/media",
  "/import",
  "/workflows",
  "/workflows/:id",
  "/webhooks",
  "/preferences",
] as const;

const SECURITY_HEADERS = {
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
};

function shell(version: string) {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>Crier</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/dashboard.css?v=${version}">
<script type="module" src="/assets/dashboard.js?v=${version}"></script>
</head>
<body><div id="app"><p class="boot">Loading Crier…</p></div></body>
</html>`;
}

export function dashboardRoutes(ctx: AppContext) {
  // Media previews come from the storage's public URL and uploads go to its signed URL (S3 may be elsewhere).
  const storageOrigin = ctx.config.s3?.publicUrl ?? ctx.config.s3?.endpoint ?? "";
  const csp = [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob: ${storageOrigin} https:`,
    `media-src 'self' blob: ${storageOrigin} https:`,
    `connect-src 'self' ${storageOrigin}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
  const page = async () =>
    new Response(shell((await dashboardBundle()).version), {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": csp,
        ...SECURITY_HEADERS,
      },
    });
  const asset = (type: string, pick: (b: { js: string; css: string }) => string) => async () =>
    new Response(pick(await dashboardBundle()), {
      headers: { "content-type": type, "cache-control": "public, max-age=31536000, immutable", ...SECURITY_HEADERS },
    });
  const app = new Elysia({ name: "dashboard", detail: { hide: true } })
    .get(
      "/assets/dashboard.js",
      asset("text/javascript; charset=utf-8", (b) => b.js),
    )
    .get(
      "/assets/dashboard.css",
      asset("text/css; charset=utf-8", (b) => b.css),
    );
  // Elysia registers routes on the instance itself; the returned (retyped) instance is the same object.
  for (const path of PAGE_PATHS) app.get(path, page);
  return app;
}
