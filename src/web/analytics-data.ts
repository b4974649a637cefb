/** The shapes of the analytics answers the dashboard reads, and the numbers it derives from them. */

export type MetricsStatus = "ok" | "reconnect" | "limited" | "unavailable";

export interface AnalyticsAccount {
  id: string;
  platform: string;
  username: string | null;
  metrics_status: MetricsStatus;
  posts_with_views: number;
  median_views: number | null;
  followers: number | null;
  followers_observed_at: string | null;
}

export interface Counts {
  views: number | null;
  likes: number | null;
  comments: number | null;
  shares: number | null;
  saves: number | null;
}

export interface AnalyticsDestination extends Counts {
  platform: string;
  account_id: string;
  username: string | null;
  url: string | null;
  published_at: string;
  engagement_rate: number | null;
  views_vs_account_median: number | null;
}

export interface AnalyticsPost {
  id: string;
  post_id: string | null;
  title: string;
  thumbnail_url: string | null;
  published_at: string;
  origin: "postonce" | "native";
  destinations: AnalyticsDestination[];
}

export interface AnalyticsDay {
  date: string;
  posts: number;
  views: number | null;
  engagement: number | null;
}

export interface Overview {
  range: { days: number; start: string; end: string };
  accounts: AnalyticsAccount[];
  posts: AnalyticsPost[];
  daily: AnalyticsDay[];
  truncated: boolean;
  refreshing: boolean;
  updated_at: string;
}

export interface TargetNumbers extends Counts {
  target_post_id: string;
  target_variant: string | null;
  platform: string;
  url: string | null;
  published_at: string | null;
  metrics_status: MetricsStatus;
  engagement_rate: number | null;
  last_updated: string | null;
}

/** What the user should do about an account's or a copy's numbers, by metrics_status; null when all is well. */
export const STATUS_ADVICE: Record<MetricsStatus, string | null> = {
  ok: null,
  reconnect: "Reconnect this account on the Accounts page: until then Crier cannot read its numbers.",
  limited: "Some numbers need a permission the account did not grant: reconnect it and allow access to its statistics.",
  unavailable:
    "The platform did not answer the last read: the numbers shown are from before. Crier tries again on its own.",
};

const integer = new Intl.NumberFormat();
const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 1 });

export const count = (n: number | null | undefined) => (n === null || n === undefined ? "—" : integer.format(n));
export const rate = (n: number | null) => (n === null ? "—" : percent.format(n));
export const times = (n: number | null) => (n === null ? "—" : `${n.toFixed(2)}×`);

/** A post's numbers over its copies, one value per column so the table can sort by it. */
export interface PostRow {
  post: AnalyticsPost;
  views: number | null;
  engagement: number | null;
  vsMedian: number | null;
}

const sum = (values: (number | null)[]) =>
  values.some((v) => v !== null) ? values.reduce<number>((a, v) => a + (v ?? 0), 0) : null;

export function postRow(post: AnalyticsPost): PostRow {
  const withViews = post.destinations.filter((d) => d.views !== null && d.views > 0);
  const views = sum(post.destinations.map((d) => d.views));
  const interactions = sum(withViews.map((d) => sum([d.likes, d.comments, d.shares, d.saves])));
  const viewsOfThose = sum(withViews.map((d) => d.views));
  const ratios = post.destinations.map((d) => d.views_vs_account_median).filter((v): v is number => v !== null);
  return {
    post,
    views,
    // Over the copies that have views, as the API's per-copy rate is: interactions of copies without views
    // (Bluesky) would inflate it.
    engagement: interactions !== null && viewsOfThose ? interactions / viewsOfThose : null,
    // A post on several accounts compares each copy with its own account's median: their mean.
    vsMedian: ratios.length ? ratios.reduce((a, b) => a + b, 0) / ratios.length : null,
  };
}
