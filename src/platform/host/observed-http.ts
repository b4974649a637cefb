/**
 * Plugins' metrics, fetchRecent and accountStats throw a plain error when the platform refuses; why it
 * refused is in the HTTP answer. The engine (and crier accounts check) hands them a ProviderHttp that remembers the last failed
 * answer, so the status (reconnect, limited, unavailable) comes from what the platform said.
 */
import type { ProviderHttp, ProviderResult } from "../sdk.ts";

export interface ObservedFailure {
  status?: number;
  kind: string;
}

export function observedHttp(http: ProviderHttp): {
  http: ProviderHttp;
  lastFailure(): ObservedFailure | undefined;
  reset(): void;
} {
  let last: ObservedFailure | undefined;
  const wrapped: ProviderHttp = {
    get baseUrl() {
      return http.baseUrl;
    },
    get timeoutMs() {
      return http.timeoutMs;
    },
    get webSocket() {
      return http.webSocket;
    },
    async request<T>(
      method: string,
      path: string,
      opts?: Parameters<ProviderHttp["request"]>[2],
    ): Promise<ProviderResult<T>> {
      const res = await http.request<T>(method, path, opts);
      if (!res.ok) last = { status: res.status, kind: res.outcome.kind };
      return res;
    },
  };
  return {
    http: wrapped,
    lastFailure: () => last,
    reset: () => {
      last = undefined;
    },
  };
}
