/**
 * The dashboard bundle built ahead of time by scripts/build.ts and embedded in the executable (paths in
 * the executable's own file system). From source it stays unset and the bundle is built on first request.
 */
export interface EmbeddedDashboard {
  js: string;
  css: string;
}

let embedded: EmbeddedDashboard | undefined;

export function embedDashboard(files: EmbeddedDashboard) {
  embedded = files;
}

export function embeddedDashboard(): EmbeddedDashboard | undefined {
  return embedded;
}
