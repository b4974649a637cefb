/**
 * LinkedIn company pages (organizations) beside the member: which ones the member administers, and the
 * numbers LinkedIn gives only for organizations (share statistics, follower count). An organization
 * account holds the member's token (LinkedIn acts for a page through an administrator's token) and the
 * organization's URN as `author_urn`, so publishing, uploads and comments switch author by themselves.
 *
 * Sources (learn.microsoft.com/en-us/linkedin/marketing/community-management/…, read 2026-11-26):
 * - organizations/organization-access-control-by-role: `GET /rest/organizationAcls?q=roleAssignee&role=
 *   ADMINISTRATOR&state=APPROVED` lists the member's roles (organization URN, role, state), under
 *   rw_organization_admin (or r_organization_admin).
 * - organizations/organization-lookup-api: `GET /rest/organizations/{id}` (localizedName, vanityName)
 *   for an administered organization, and `GET /rest/networkSizes/{organization URN}?edgeType=
 *   COMPANY_FOLLOWED_BY_MEMBER` → `firstDegreeSize`, the follower count (the follower statistics page
 *   says it "no longer returns totalFollowerCounts. Use the networkSizes API").
 * - organizations/share-statistics: `GET /rest/organizationalEntityShareStatistics?q=organizationalEntity
 *   &organizationalEntity={urn}&shares=List(…)&ugcPosts=List(…)`, lifetime `totalShareStatistics`
 *   (impressionCount, clickCount, likeCount, commentCount, shareCount) per post, under
 *   rw_organization_admin for ADMINISTRATORs; data of the past 12 months only.
 * - shares/posts-api "Permissions": w_organization_social posts, comments and likes as an organization;
 *   r_organization_social reads its posts (both for ADMINISTRATOR and some poster roles).
 */
import type {
  ConnectContext,
  ConnectedIdentity,
  Credentials,
  PluginContext,
  PostMetrics,
} from "../../src/platform/sdk.ts";
import { connectCall } from "../../src/platform/oauth.ts";

/**
 * The scopes an organization account needs, asked for only when CRIER_LINKEDIN_ORGANIZATIONS is on:
 * LinkedIn grants them only to apps approved for the Community Management API, and refuses a consent
 * that asks for a scope the app lacks, so asking by default would break the member connect of every
 * other app.
 */
export const ORGANIZATION_SCOPES = ["w_organization_social", "r_organization_social", "rw_organization_admin"];

/** Whether the operator turned company pages on (CRIER_LINKEDIN_ORGANIZATIONS=true). */
export const organizationsEnabled = (settings: Record<string, string | undefined>) =>
  /^(1|true|yes|on)$/i.test(settings.ORGANIZATIONS ?? "");

export const isOrganization = (urn: unknown): urn is string =>
  typeof urn === "string" && urn.startsWith("urn:li:organization:");

type Headers = Record<string, string>;

interface Acl {
  organization?: string;
  organizationTarget?: string;
  role?: string;
  state?: string;
}

/**
 * One identity per organization the member administers (role ADMINISTRATOR, APPROVED): the remote id is
 * the organization's URN, the username its name as the page shows it (the vanity name, the page's
 * address, is kept in metadata), the credentials the
 * member's token with the organization as author.
 */
export async function organizationIdentities(
  c: ConnectContext,
  headers: Headers,
  memberCredentials: Credentials,
): Promise<ConnectedIdentity[]> {
  const acls = await connectCall<{ elements?: Acl[] }>(
    c,
    "Listing the LinkedIn pages you administer",
    "GET",
    "/rest/organizationAcls?q=roleAssignee&role=ADMINISTRATOR&state=APPROVED&count=100",
    { headers },
  );
  const urns = [
    ...new Set(
      (acls.elements ?? [])
        .filter((a) => a.role === "ADMINISTRATOR" && a.state === "APPROVED")
        .map((a) => a.organization ?? a.organizationTarget)
        .filter(isOrganization),
    ),
  ];
  const out: ConnectedIdentity[] = [];
  for (const urn of urns) {
    const id = urn.slice("urn:li:organization:".length);
    const org = await connectCall<{ localizedName?: string; vanityName?: string }>(
      c,
      `Reading the LinkedIn page ${urn}`,
      "GET",
      `/rest/organizations/${encodeURIComponent(id)}`,
      { headers },
    );
    out.push({
      remoteId: urn,
      username: org.localizedName ?? org.vanityName ?? urn,
      avatarUrl: null,
      credentials: { ...memberCredentials, author_urn: urn, member_urn: memberCredentials.author_urn },
      metadata: {
        kind: "organization",
        organization_urn: urn,
        name: org.localizedName ?? null,
        vanity_name: org.vanityName ?? null,
        page_url: org.vanityName ? `https://www.linkedin.com/company/${org.vanityName}` : null,
      },
    });
  }
  return out;
}

/** Rest.li 2.0 list syntax: `List(a,b)` with each URN percent-encoded and the parentheses and commas left as they are. */
const restliList = (urns: string[]) => `List(${urns.map(encodeURIComponent).join(",")})`;

interface ShareStatistics {
  share?: string;
  ugcPost?: string;
  totalShareStatistics?: {
    impressionCount?: number;
    clickCount?: number;
    likeCount?: number;
    commentCount?: number;
    shareCount?: number;
  };
}

/**
 * Lifetime statistics of an organization's posts, one call for all of them (shares and ugcPosts go in
 * separate lists). The query string is written out rather than passed as `query`: a URL's search params
 * would percent-encode the List( ) syntax LinkedIn wants literal.
 */
export async function organizationMetrics(
  ctx: PluginContext,
  headers: Headers,
  ids: string[],
): Promise<Record<string, PostMetrics>> {
  const org = String(ctx.credentials.author_urn);
  const shares = ids.filter((id) => id.startsWith("urn:li:share:"));
  const ugcPosts = ids.filter((id) => id.startsWith("urn:li:ugcPost:"));
  const out: Record<string, PostMetrics> = {};
  if (shares.length || ugcPosts.length) {
    const lists = [
      ...(shares.length ? [`shares=${restliList(shares)}`] : []),
      ...(ugcPosts.length ? [`ugcPosts=${restliList(ugcPosts)}`] : []),
    ];
    const res = await ctx.http.request<{ elements?: ShareStatistics[] }>(
      "GET",
      `/rest/organizationalEntityShareStatistics?q=organizationalEntity&organizationalEntity=${encodeURIComponent(org)}&${lists.join("&")}`,
      { headers },
    );
    if (!res.ok) throw new Error(`LinkedIn share statistics of ${org}: ${res.outcome.reason}`);
    for (const e of res.body.elements ?? []) {
      const id = e.share ?? e.ugcPost;
      const s = e.totalShareStatistics;
      if (!id || !s) continue;
      out[id] = {
        views: s.impressionCount ?? null,
        likes: s.likeCount ?? null,
        comments: s.commentCount ?? null,
        shares: s.shareCount ?? null,
        saves: null,
      };
    }
  }
  // A post LinkedIn has no statistics for (older than its 12-month window, or not this page's) is unknown, not zero.
  for (const id of ids) out[id] ??= { views: null, likes: null, comments: null, shares: null, saves: null };
  return out;
}

/** The page's follower count (networkSizes, edge type COMPANY_FOLLOWED_BY_MEMBER). */
export async function organizationFollowers(ctx: PluginContext, headers: Headers): Promise<number | null> {
  const urn = String(ctx.credentials.author_urn);
  const res = await ctx.http.request<{ firstDegreeSize?: number }>(
    "GET",
    `/rest/networkSizes/${encodeURIComponent(urn)}`,
    { query: { edgeType: "COMPANY_FOLLOWED_BY_MEMBER" }, headers },
  );
  if (!res.ok) throw new Error(`LinkedIn follower count of ${urn}: ${res.outcome.reason}`);
  return typeof res.body.firstDegreeSize === "number" ? res.body.firstDegreeSize : null;
}
