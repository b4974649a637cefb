/**
 * The LinkedIn emulator's company pages: the organizations of the sandbox, who administers which, and
 * the reads LinkedIn gives only for organizations. Written from LinkedIn's pages on learn.microsoft.com
 * (…/marketing/community-management/organizations/organization-access-control-by-role,
 * organization-lookup-api, share-statistics, follower-statistics, and …/shares/posts-api "Permissions"),
 * read 2026-11-26:
 * - organizationAcls `q=roleAssignee` lists the calling member's roles, filtered by `role` and `state`,
 *   under rw_organization_admin or r_organization_admin; other finders are not emulated (400).
 * - organizations/{id} answers for a page the member administers (else 403), under the same scopes.
 * - organizationalEntityShareStatistics needs rw_organization_admin and the ADMINISTRATOR role on the
 *   organization; `shares=List(…)`/`ugcPosts=List(…)` name posts of that organization (another's: 403),
 *   each answered with its lifetime totalShareStatistics.
 * - networkSizes/{organization URN} with `edgeType=COMPANY_FOLLOWED_BY_MEMBER` answers firstDegreeSize
 *   (the page names no permission beyond a member token; another edgeType is 400).
 * - Acting as an organization (posts, uploads, comments) needs w_organization_social and an APPROVED
 *   ADMINISTRATOR role (the roles that may also post, DIRECT_SPONSORED_CONTENT_POSTER and
 *   RECRUITING_POSTER, are not modelled); reading its posts needs r_organization_social.
 *
 * Sandbox rule: the sandbox member administers "Sandbox Company" (urn:li:organization:2414183) and is no
 * administrator of "Elsewhere Inc" (urn:li:organization:1337), whose pages it can neither read nor post as.
 */
import { LiError } from "./emulator-errors.ts";

export interface Organization {
  id: string;
  localizedName: string;
  vanityName: string;
  /** The member URNs holding an APPROVED ADMINISTRATOR role. */
  administrators: string[];
}

export const ORG_URN = (id: string) => `urn:li:organization:${id}`;

export function sandboxOrganizations(member: string): Organization[] {
  return [
    { id: "2414183", localizedName: "Sandbox Company", vanityName: "sandbox-company", administrators: [member] },
    { id: "1337", localizedName: "Elsewhere Inc", vanityName: "elsewhere-inc", administrators: [] },
  ];
}

/** The numbers organization share statistics report of a post. */
export interface ShareCounts {
  impressions: number;
  clicks: number;
  likes: number;
  comments: number;
  shares: number;
}

export interface OrgPost extends ShareCounts {
  urn: string;
  author: string;
}

export interface OrgContext {
  member: string;
  organizations: Organization[];
  granted(scope: string): boolean;
  posts(): OrgPost[];
  followers(): number;
}

const ADMIN_READ = ["rw_organization_admin", "r_organization_admin"];

export function findOrganization(orgs: Organization[], urn: string): Organization | undefined {
  return orgs.find((o) => ORG_URN(o.id) === urn);
}

/** Whether the member may act as (or read) the organization: its ADMINISTRATOR, with the scope asked. */
export function assertOrganizationRole(c: OrgContext, urn: string, scope: string, what: string): void {
  if (!c.granted(scope)) throw new LiError(403, `Not enough permissions to access: ${what}`, "ACCESS_DENIED");
  const org = findOrganization(c.organizations, urn);
  if (!org) throw new LiError(404, `Organization ${urn} not found`, "NOT_FOUND");
  if (!org.administrators.includes(c.member))
    throw new LiError(403, `Member is not an administrator of ${urn}: ${what}`, "ACCESS_DENIED");
}

/** `List(a,b)` of Rest.li 2.0 with percent-encoded items, as URLSearchParams already decoded it. */
function parseList(value: string | null): string[] | null {
  if (value === null) return [];
  const m = /^List\((.*)\)$/.exec(value);
  if (!m) return null;
  return m[1] ? m[1].split(",").map((s) => decodeURIComponent(s)) : [];
}

/** Answers the organization routes; null when the path is none of them. */
export function organizationRoute(c: OrgContext, method: string, path: string, url: URL): Response | null {
  if (method !== "GET") return null;
  if (path === "/rest/organizationAcls") {
    if (!ADMIN_READ.some((s) => c.granted(s)))
      throw new LiError(403, "Not enough permissions to access: organizationAcls.FINDER-roleAssignee", "ACCESS_DENIED");
    if (url.searchParams.get("q") !== "roleAssignee")
      throw new LiError(400, "Only the roleAssignee finder is supported here", "BAD_REQUEST");
    const role = url.searchParams.get("role");
    const state = url.searchParams.get("state");
    const elements = c.organizations
      .filter((o) => o.administrators.includes(c.member))
      .map((o) => ({ roleAssignee: c.member, role: "ADMINISTRATOR", state: "APPROVED", organization: ORG_URN(o.id) }))
      .filter((a) => (!role || a.role === role) && (!state || a.state === state));
    return Response.json({ elements, paging: { start: 0, count: elements.length, total: elements.length } });
  }
  const org = /^\/rest\/organizations\/(\d+)$/.exec(path);
  if (org) {
    if (!ADMIN_READ.some((s) => c.granted(s)))
      throw new LiError(403, "Not enough permissions to access: organizations.GET", "ACCESS_DENIED");
    const o = c.organizations.find((x) => x.id === org[1]);
    if (!o) throw new LiError(404, `Organization ${org[1]} not found`, "NOT_FOUND");
    if (!o.administrators.includes(c.member))
      throw new LiError(403, "Member is not an administrator of the organization", "ACCESS_DENIED");
    return Response.json({
      id: Number(o.id),
      $URN: ORG_URN(o.id),
      localizedName: o.localizedName,
      vanityName: o.vanityName,
    });
  }
  const size = /^\/rest\/networkSizes\/(.+)$/.exec(path);
  if (size) {
    const urn = decodeURIComponent(size[1]);
    if (url.searchParams.get("edgeType") !== "COMPANY_FOLLOWED_BY_MEMBER")
      throw new LiError(400, "edgeType must be COMPANY_FOLLOWED_BY_MEMBER for an organization", "BAD_REQUEST");
    if (!findOrganization(c.organizations, urn)) throw new LiError(404, `${urn} not found`, "NOT_FOUND");
    return Response.json({ firstDegreeSize: c.followers() });
  }
  if (path === "/rest/organizationalEntityShareStatistics") {
    if (url.searchParams.get("q") !== "organizationalEntity")
      throw new LiError(400, "q must be organizationalEntity", "BAD_REQUEST");
    const urn = url.searchParams.get("organizationalEntity") ?? "";
    assertOrganizationRole(c, urn, "rw_organization_admin", "organizationalEntityShareStatistics.FINDER");
    const shares = parseList(url.searchParams.get("shares"));
    const ugcPosts = parseList(url.searchParams.get("ugcPosts"));
    if (!shares || !ugcPosts) throw new LiError(400, "shares and ugcPosts take List(...)", "BAD_REQUEST");
    const elements = [...shares, ...ugcPosts].map((id) => {
      const p = c.posts().find((x) => x.urn === id);
      if (!p || p.author !== urn) throw new LiError(403, `${id} is not a post of ${urn}`, "ACCESS_DENIED");
      return {
        organizationalEntity: urn,
        [id.startsWith("urn:li:ugcPost:") ? "ugcPost" : "share"]: id,
        totalShareStatistics: {
          impressionCount: p.impressions,
          uniqueImpressionsCount: p.impressions,
          clickCount: p.clicks,
          likeCount: p.likes,
          commentCount: p.comments,
          shareCount: p.shares,
          engagement: p.impressions ? (p.clicks + p.likes + p.comments + p.shares) / p.impressions : 0,
        },
      };
    });
    return Response.json({ elements, paging: { start: 0, count: elements.length } });
  }
  return null;
}
