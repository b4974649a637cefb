/**
 * What the platform said the last time numbers were read (spec: metrics_status), shared by the engine that
 * records it and the analytics module that reports it.
 */
export const METRICS_STATUSES = ["ok", "reconnect", "limited", "unavailable"] as const;
export type MetricsStatus = (typeof METRICS_STATUSES)[number];

/**
 * The status of a failed read from the HTTP answer behind it: a refused token asks for a reconnect, a
 * missing permission limits the numbers, anything else (5xx, timeouts, refused connections) is passing.
 */
export function metricsStatusOf(failure: { status?: number; kind?: string } | undefined): MetricsStatus {
  if (failure?.kind === "auth_expired" || failure?.status === 401) return "reconnect";
  if (failure?.status === 403) return "limited";
  return "unavailable";
}
