/**
 * A platform's machine-readable contract (its lexicons, its protocol codec) as an emulator loads it.
 *
 * The contract packages are development dependencies: the test suites check every request an adapter
 * sends against them, but a production install (`npm install --omit=dev`) and the compiled binary do not
 * carry them. The emulators also serve sandbox profiles in production, so they load a contract lazily and
 * go on with their own documented rules where it is absent. Under `bun test` a missing contract is an
 * error instead: a test run must never pass because a check silently did not happen.
 */

/** Loads `specifier` once on first call; null when the package is not installed outside tests. */
export function contractPackage<T>(specifier: string): () => Promise<T | null> {
  let loading: Promise<T | null> | undefined;
  return () =>
    (loading ??= load<T>(specifier).catch((e: unknown) => {
      if (process.env.NODE_ENV === "test")
        throw new Error(`the contract package ${specifier} is required by the tests: ${String(e)}`);
      return null;
    }));
}

// A parameter, not a literal, so the bundler of the binary does not pull the package in.
const load = <T>(specifier: string): Promise<T> => import(specifier) as Promise<T>;
