export interface RouteLike {
  method: string;
  path: string;
}

const matchers = new WeakMap<RouteLike[], { pattern: RegExp; method: string }[]>();

const toPattern = (path: string) =>
  new RegExp(
    `^${path
      .split("/")
      .map((part) =>
        part.startsWith(":") ? "[^/]+" : part === "*" ? ".*" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
      )
      .join("/")}/?$`,
  );

/**
 * The methods the app answers on a path, for a 405's Allow header; empty when no route has the path,
 * which makes it a 404.
 */
export function allowedMethods(routes: RouteLike[], path: string): string[] {
  let compiled = matchers.get(routes);
  if (!compiled) {
    compiled = routes.map((r) => ({ pattern: toPattern(r.path), method: r.method.toUpperCase() }));
    matchers.set(routes, compiled);
  }
  const methods = new Set(compiled.filter((m) => m.pattern.test(path)).map((m) => m.method));
  return [...methods].filter((m) => m !== "ALL").sort();
}
